#include "store/compactor.h"

#include <utility>
#include <vector>

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

// With an agreement each tick is one round: the compactor hands it its
// compact time and its previous round's revision and keeps what the round
// answers; a failed round changes nothing (the next tick repeats it).
TEST(CompactorTest, AgreementRoundsCarryTimeAndRevision) {
  FakeClock clock;
  MemoryStore store;
  std::vector<std::pair<int64_t, int64_t>> calls;
  bool fail = false;
  Compactor c(store, clock, absl::Minutes(5),
              [&](int64_t time, int64_t revision) -> absl::StatusOr<CompactRound> {
                calls.emplace_back(time, revision);
                if (fail) return absl::UnavailableError("etcd down");
                CompactRound r;
                r.time = time + 1;
                r.revision = 10 * (time + 1);
                r.compacted = revision;
                return r;
              });
  EXPECT_EQ(*c.Tick(), 0);
  EXPECT_EQ(*c.Tick(), 10);
  fail = true;
  EXPECT_FALSE(c.Tick().ok());
  fail = false;
  EXPECT_EQ(*c.Tick(), 20);
  EXPECT_EQ(calls, (std::vector<std::pair<int64_t, int64_t>>{{0, 0}, {1, 10}, {2, 20}, {2, 20}}));
  EXPECT_EQ(store.CompactedRevision(), 0);  // the agreement compacts, not the compactor
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
