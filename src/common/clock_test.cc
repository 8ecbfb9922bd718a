#include "common/testing/fake_clock.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace batchd {
namespace {

TEST(FakeClockTest, FiresTimersInDueOrderThenSequence) {
  FakeClock clock;
  std::vector<std::string> fired;
  clock.ScheduleAfter(absl::Seconds(2), [&] { fired.push_back("b"); });
  clock.ScheduleAfter(absl::Seconds(1), [&] { fired.push_back("a"); });
  clock.ScheduleAfter(absl::Seconds(2), [&] { fired.push_back("c"); });
  clock.Advance(absl::Milliseconds(1500));
  EXPECT_EQ(fired, (std::vector<std::string>{"a"}));
  clock.Advance(absl::Seconds(1));
  EXPECT_EQ(fired, (std::vector<std::string>{"a", "b", "c"}));
}

TEST(FakeClockTest, CancelAndNestedTimers) {
  FakeClock clock;
  absl::Time start = clock.Now();
  int count = 0;
  auto id = clock.ScheduleAfter(absl::Seconds(1), [&] { ++count; });
  EXPECT_TRUE(clock.Cancel(id));
  EXPECT_FALSE(clock.Cancel(id));
  clock.ScheduleAfter(absl::Seconds(1), [&] {
    ++count;
    clock.ScheduleAfter(absl::Seconds(1), [&] { count += 10; });
  });
  clock.Advance(absl::Seconds(5));
  EXPECT_EQ(count, 11);
  EXPECT_EQ(clock.Now(), start + absl::Seconds(5));
}

}  // namespace
}  // namespace batchd
