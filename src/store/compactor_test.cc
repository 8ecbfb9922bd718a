#include "store/compactor.h"

#include "absl/synchronization/mutex.h"
#include "common/testing/fake_clock.h"
#include "gtest/gtest.h"
#include "store/memory/memory_store.h"

namespace batchd::store {
namespace {

// Each tick compacts to what the previous tick saw: one interval of history
// always survives.
TEST(CompactorTest, TickCompactsToThePreviousTicksRevision) {
  FakeClock clock;
  MemoryStore store;
  Compactor c(store, clock, absl::Minutes(5));
  ASSERT_TRUE(store.Create("/a", "1").ok());
  EXPECT_EQ(*c.Tick(), 0);  // records 1
  ASSERT_TRUE(store.Update("/a", "2", 0).ok());
  ASSERT_TRUE(store.Update("/a", "3", 0).ok());
  EXPECT_EQ(*c.Tick(), 1);  // compacts to 1, records 3
  EXPECT_EQ(store.CompactedRevision(), 1);
  EXPECT_TRUE(store.RangeAtRevision("/", "", 0, 1).ok());
  EXPECT_EQ(*c.Tick(), 3);
  EXPECT_EQ(store.CompactedRevision(), 3);
  EXPECT_EQ(*c.Tick(), 0);  // nothing written since: nothing to do
}

// The schedule runs on the clock's timers; the compaction on its thread.
TEST(CompactorTest, ScheduleFollowsTheClock) {
  FakeClock clock;
  MemoryStore store;
  Compactor c(store, clock, absl::Minutes(5));
  c.Start();
  ASSERT_TRUE(store.Create("/a", "1").ok());
  clock.Advance(absl::Minutes(5));  // tick 1: records 1
  auto ticked = [&](int64_t n) { return c.WaitForTicks(n, absl::Seconds(60)); };
  ASSERT_TRUE(ticked(1));
  ASSERT_TRUE(store.Update("/a", "2", 0).ok());
  EXPECT_EQ(store.CompactedRevision(), 0);
  clock.Advance(absl::Minutes(5));  // tick 2: compacts to 1
  ASSERT_TRUE(ticked(2));
  EXPECT_EQ(store.CompactedRevision(), 1);
}

TEST(CompactorTest, ZeroIntervalNeverRuns) {
  FakeClock clock;
  MemoryStore store;
  Compactor c(store, clock, absl::ZeroDuration());
  c.Start();
  ASSERT_TRUE(store.Create("/a", "1").ok());
  clock.Advance(absl::Hours(1));
  EXPECT_EQ(c.ticks(), 0);
  EXPECT_EQ(store.CompactedRevision(), 0);
}

}  // namespace
}  // namespace batchd::store
