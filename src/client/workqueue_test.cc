#include "client/workqueue.h"

#include "common/testing/fake_clock.h"
#include "gtest/gtest.h"

namespace batchd::client {
namespace {

TEST(WorkQueueTest, DeduplicatesAndRequeuesWhileProcessing) {
  FakeClock clock;
  WorkQueue q(clock);
  q.Add("a");
  q.Add("a");
  q.Add("b");
  EXPECT_EQ(q.Len(), 2u);
  std::string k;
  ASSERT_TRUE(q.TryGet(&k));
  EXPECT_EQ(k, "a");
  q.Add("a");  // Added while processing: not handed to a second worker.
  ASSERT_TRUE(q.TryGet(&k));
  EXPECT_EQ(k, "b");
  EXPECT_FALSE(q.TryGet(&k));
  q.Done("a");  // Now it comes back once.
  ASSERT_TRUE(q.TryGet(&k));
  EXPECT_EQ(k, "a");
  q.Done("a");
  q.Done("b");
  EXPECT_FALSE(q.TryGet(&k));
}

TEST(WorkQueueTest, AddAfterWaitsOnTheClock) {
  FakeClock clock;
  WorkQueue q(clock);
  q.AddAfter("a", absl::Seconds(10));
  q.AddAfter("a", absl::Seconds(5));  // The earlier wake-up wins.
  std::string k;
  EXPECT_FALSE(q.TryGet(&k));
  clock.Advance(absl::Seconds(5));
  ASSERT_TRUE(q.TryGet(&k));
  q.Done("a");
  clock.Advance(absl::Seconds(10));
  EXPECT_FALSE(q.TryGet(&k));  // The replaced 10s timer was cancelled.
}

TEST(WorkQueueTest, RateLimitedBackoffDoublesAndForgetResets) {
  FakeClock clock;
  WorkQueue q(clock, RateLimit{.base = absl::Seconds(1), .max = absl::Seconds(4)});
  std::string k;
  const absl::Duration want[] = {absl::Seconds(1), absl::Seconds(2), absl::Seconds(4),
                                 absl::Seconds(4)};
  for (absl::Duration d : want) {
    q.AddRateLimited("a");
    clock.Advance(d - absl::Milliseconds(1));
    EXPECT_FALSE(q.TryGet(&k)) << d;
    clock.Advance(absl::Milliseconds(1));
    ASSERT_TRUE(q.TryGet(&k)) << d;
    q.Done("a");
  }
  EXPECT_EQ(q.Failures("a"), 4);
  q.Forget("a");
  EXPECT_EQ(q.Failures("a"), 0);
}

// client-go's default controller limiter: 5 ms doubling, capped at 1000 s.
TEST(WorkQueueTest, DefaultBackoffIsCappedAt1000Seconds) {
  FakeClock clock;
  WorkQueue q(clock);
  std::string k;
  for (int i = 0; i < 30; ++i) {
    q.AddRateLimited("a");
    clock.Advance(absl::Seconds(1000));
    ASSERT_TRUE(q.TryGet(&k)) << i;
    q.Done("a");
  }
  q.AddRateLimited("a");
  clock.Advance(absl::Seconds(999));
  EXPECT_FALSE(q.TryGet(&k));
  clock.Advance(absl::Seconds(1));
  EXPECT_TRUE(q.TryGet(&k));
}

// The overall bucket: 100 failures at once pass, the next ones wait 100 ms
// each (10 qps), whatever their own backoff.
TEST(WorkQueueTest, OverallBucketLimitsRetries) {
  FakeClock clock;
  WorkQueue q(clock);
  for (int i = 0; i < 100; ++i) q.AddRateLimited("k" + std::to_string(i));
  q.AddRateLimited("late1");
  q.AddRateLimited("late2");
  std::string k;
  clock.Advance(absl::Milliseconds(5));
  int ready = 0;
  while (q.TryGet(&k)) ++ready;
  EXPECT_EQ(ready, 100);
  clock.Advance(absl::Milliseconds(94));
  EXPECT_FALSE(q.TryGet(&k));
  clock.Advance(absl::Milliseconds(1));
  ASSERT_TRUE(q.TryGet(&k));
  EXPECT_EQ(k, "late1");
  clock.Advance(absl::Milliseconds(100));
  ASSERT_TRUE(q.TryGet(&k));
  EXPECT_EQ(k, "late2");
}

// A key deep in backoff is retried at once on an event (Add), and by the
// periodic retry of failures (RetryBackedOff) when its wait runs past the
// horizon; its failure count stays.
TEST(WorkQueueTest, BackedOffKeysComeBackEarly) {
  FakeClock clock;
  WorkQueue q(clock, RateLimit{.base = absl::Seconds(100), .max = absl::Seconds(1000)});
  std::string k;
  q.AddRateLimited("a");
  q.AddRateLimited("b");
  q.Add("a");  // an event on a's object
  ASSERT_TRUE(q.TryGet(&k));
  EXPECT_EQ(k, "a");
  q.Forget("a");  // it succeeded (as the controller does)
  q.Done("a");
  EXPECT_FALSE(q.TryGet(&k));
  EXPECT_EQ(q.RetryBackedOff(absl::Seconds(100)), 0);  // b is due in 100 s: not past it
  EXPECT_EQ(q.RetryBackedOff(absl::Seconds(30)), 1);
  ASSERT_TRUE(q.TryGet(&k));
  EXPECT_EQ(k, "b");
  q.Done("b");
  EXPECT_EQ(q.Failures("b"), 1);
  clock.Advance(absl::Seconds(200));
  std::vector<std::string> later;
  while (q.TryGet(&k)) {
    later.push_back(k);
    q.Done(k);
  }
  EXPECT_EQ(later, std::vector<std::string>{"a"});  // a's old timer; b's was cancelled
}

}  // namespace
}  // namespace batchd::client
