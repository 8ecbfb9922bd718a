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
  WorkQueue q(clock, RateLimit{absl::Seconds(1), absl::Seconds(4)});
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

}  // namespace
}  // namespace batchd::client
