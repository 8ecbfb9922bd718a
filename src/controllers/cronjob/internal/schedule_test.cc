#include "controllers/cronjob/internal/schedule.h"

#include <optional>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace batchd::controllers::cronjob::internal {
namespace {

const absl::Time kT0 = absl::FromUnixSeconds(1767225600);  // 2026-01-01T00:00:00Z

api::batch_v1::CronSchedule Sched(const std::string& s) {
  auto r = api::batch_v1::CronSchedule::Parse(s);
  EXPECT_TRUE(r.ok()) << r.status();
  return *r;
}

TEST(ScheduleTest, MostRecentScheduleTime) {
  struct Case {
    std::string name, schedule;
    ScheduleInputs in;
    absl::Duration now;  // After kT0.
    bool use_deadline;
    std::optional<absl::Duration> want;  // After kT0.
    int64_t want_missed;
  };
  std::vector<Case> cases = {
      {"nothing due yet", "* * * * *", {kT0, {}, {}}, absl::Seconds(59), true, {}, 0},
      {"exactly due", "* * * * *", {kT0, {}, {}}, absl::Minutes(1), true, absl::Minutes(1), 1},
      {"several missed: latest",
       "* * * * *",
       {kT0, {}, {}},
       absl::Seconds(330),
       true,
       absl::Minutes(5),
       5},
      {"from lastScheduleTime",
       "* * * * *",
       {kT0, kT0 + absl::Minutes(5), {}},
       absl::Seconds(330),
       true,
       {},
       0},
      {"deadline cuts the search", "0 * * * *", {kT0, {}, 60}, absl::Minutes(65), true, {}, 0},
      {"deadline ignored when asked",
       "0 * * * *",
       {kT0, {}, 60},
       absl::Minutes(65),
       false,
       absl::Hours(1),
       1},
      {"many missed",
       "* * * * *",
       {kT0, {}, {}},
       absl::Hours(48) + absl::Seconds(3),
       true,
       absl::Hours(48),
       2880},
      {"irregular weekdays",
       "0 9 * * 1-5",
       {kT0, {}, {}},
       absl::Hours(24 * 60),
       true,
       absl::Hours(24 * 57 + 9),
       0},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto got = MostRecentScheduleTime(c.in, kT0 + c.now, Sched(c.schedule), absl::UTCTimeZone(),
                                      c.use_deadline);
    ASSERT_TRUE(got.ok()) << got.status();
    ASSERT_EQ(got->time.has_value(), c.want.has_value());
    if (c.want) {
      EXPECT_EQ(*got->time, kT0 + *c.want);
    }
    if (c.want_missed > 0) {
      EXPECT_EQ(got->missed, c.want_missed);
    }
  }
}

TEST(ScheduleTest, NextScheduleDelayAndNames) {
  ScheduleInputs in{kT0, kT0 + absl::Minutes(1), {}};
  EXPECT_EQ(NextScheduleDelay(in, kT0 + absl::Seconds(70), Sched("* * * * *"), absl::UTCTimeZone()),
            absl::Seconds(50) + absl::Milliseconds(100));
  EXPECT_EQ(NextScheduleDelay(in, kT0, Sched("0 0 30 2 *"), absl::UTCTimeZone()), std::nullopt);
  EXPECT_EQ(JobName("hello", kT0 + absl::Minutes(3)), "hello-29453763");
  absl::TimeZone tokyo;
  ASSERT_TRUE(absl::LoadTimeZone("Asia/Tokyo", &tokyo));
  EXPECT_EQ(FormatScheduledTimestamp(kT0, tokyo), "2026-01-01T09:00:00+09:00");
  EXPECT_EQ(FormatScheduledTimestamp(kT0, absl::UTCTimeZone()), "2026-01-01T00:00:00Z");
}

}  // namespace
}  // namespace batchd::controllers::cronjob::internal
