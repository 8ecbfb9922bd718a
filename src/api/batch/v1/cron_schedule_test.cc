#include "api/batch/v1/cron_schedule.h"

#include <string>

#include "absl/time/civil_time.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace batchd::api::batch_v1 {
namespace {

absl::TimeZone Zone(const std::string& name) {
  absl::TimeZone tz;
  EXPECT_TRUE(absl::LoadTimeZone(name, &tz)) << name;
  return tz;
}

// RFC 3339 with an explicit offset, so DST cases are unambiguous.
absl::Time T(const std::string& s) {
  absl::Time t;
  std::string err;
  EXPECT_TRUE(absl::ParseTime(absl::RFC3339_full, s, &t, &err)) << s << ": " << err;
  return t;
}

std::string Show(absl::Time t, absl::TimeZone tz) {
  if (t == absl::InfiniteFuture()) return "never";
  return absl::FormatTime("%Y-%m-%dT%H:%M:%S%Ez", t, tz);
}

TEST(CronScheduleTest, Next) {
  struct Case {
    std::string name;
    std::string spec;
    std::string zone;
    std::string after;
    std::string want;  // In `zone`; "never" for no activation.
  };
  const Case cases[] = {
      {"every 5 min", "*/5 * * * *", "UTC", "2024-01-01T00:00:00+00:00", "2024-01-01T00:05:00+00:00"},
      {"every 5 min mid-interval", "*/5 * * * *", "UTC", "2024-01-01T00:04:59.5+00:00",
       "2024-01-01T00:05:00+00:00"},
      {"strictly after", "*/5 * * * *", "UTC", "2024-01-01T00:05:00+00:00", "2024-01-01T00:10:00+00:00"},
      {"range with step", "1-10/2 * * * *", "UTC", "2024-01-01T00:09:00+00:00", "2024-01-01T01:01:00+00:00"},
      {"N/step means N-max", "5/20 * * * *", "UTC", "2024-01-01T00:46:00+00:00", "2024-01-01T01:05:00+00:00"},
      {"list", "0 6,18 * * *", "UTC", "2024-01-01T07:00:00+00:00", "2024-01-01T18:00:00+00:00"},
      {"leap day from March", "0 0 29 2 *", "UTC", "2024-03-01T00:00:00+00:00", "2028-02-29T00:00:00+00:00"},
      {"leap day from 2023", "0 0 29 2 *", "UTC", "2023-01-01T00:00:00+00:00", "2024-02-29T00:00:00+00:00"},
      {"never: Feb 30", "0 0 30 2 *", "UTC", "2024-01-01T00:00:00+00:00", "never"},
      {"dom or dow: monday first", "0 0 1 * 1", "UTC", "2024-09-01T00:00:00+00:00",
       "2024-09-02T00:00:00+00:00"},
      {"dom or dow: the 1st (a Tuesday)", "0 0 1 * 1", "UTC", "2024-09-30T00:00:00+00:00",
       "2024-10-01T00:00:00+00:00"},
      {"dom with star dow is AND", "0 0 1 * *", "UTC", "2024-09-01T00:00:00+00:00",
       "2024-10-01T00:00:00+00:00"},
      {"star/1 dow keeps AND", "0 0 1 * */1", "UTC", "2024-09-01T00:00:00+00:00",
       "2024-10-01T00:00:00+00:00"},
      {"question mark is star", "0 0 1 * ?", "UTC", "2024-09-01T00:00:00+00:00",
       "2024-10-01T00:00:00+00:00"},
      {"sunday as 0", "0 12 * * 0", "UTC", "2024-09-02T00:00:00+00:00", "2024-09-08T12:00:00+00:00"},
      {"sunday as SUN", "0 12 * * SUN", "UTC", "2024-09-02T00:00:00+00:00", "2024-09-08T12:00:00+00:00"},
      {"names, mixed case", "0 9 * jan-Mar mon-FRI", "UTC", "2024-03-29T10:00:00+00:00",
       "2025-01-01T09:00:00+00:00"},
      {"hourly", "@hourly", "UTC", "2024-01-01T10:15:00+00:00", "2024-01-01T11:00:00+00:00"},
      {"daily", "@daily", "UTC", "2024-01-01T10:15:00+00:00", "2024-01-02T00:00:00+00:00"},
      {"midnight", "@midnight", "UTC", "2024-01-01T10:15:00+00:00", "2024-01-02T00:00:00+00:00"},
      {"weekly is sunday", "@weekly", "UTC", "2024-09-04T10:00:00+00:00", "2024-09-08T00:00:00+00:00"},
      {"monthly", "@monthly", "UTC", "2024-09-04T10:00:00+00:00", "2024-10-01T00:00:00+00:00"},
      {"yearly", "@yearly", "UTC", "2024-09-04T10:00:00+00:00", "2025-01-01T00:00:00+00:00"},
      {"annually", "@annually", "UTC", "2024-01-01T00:00:00+00:00", "2025-01-01T00:00:00+00:00"},
      {"every 90m drops sub-second", "@every 1h30m", "UTC", "2024-01-01T10:00:00.5+00:00",
       "2024-01-01T11:30:00+00:00"},
      {"tokyo 9am", "0 9 * * *", "Asia/Tokyo", "2024-01-01T09:00:00+09:00", "2024-01-02T09:00:00+09:00"},
      {"CRON_TZ prefix wins", "CRON_TZ=Asia/Tokyo 0 9 * * *", "Asia/Tokyo", "2024-01-01T00:00:00+00:00",
       "2024-01-02T09:00:00+09:00"},
      // America/New_York: 2024-03-10 02:00 EST -> 03:00 EDT; 2024-11-03 02:00 EDT -> 01:00 EST.
      {"spring forward skips 02:30", "30 2 * * *", "America/New_York", "2024-03-10T00:00:00-05:00",
       "2024-03-11T02:30:00-04:00"},
      {"spring forward hourly", "0 * * * *", "America/New_York", "2024-03-10T01:00:00-05:00",
       "2024-03-10T03:00:00-04:00"},
      {"spring forward half hours", "*/30 * * * *", "America/New_York", "2024-03-10T01:30:00-05:00",
       "2024-03-10T03:00:00-04:00"},
      {"midnight before spring forward", "0 0 * * *", "America/New_York", "2024-03-09T12:00:00-05:00",
       "2024-03-10T00:00:00-05:00"},
      {"fall back first 01:30", "30 1 * * *", "America/New_York", "2024-11-03T00:00:00-04:00",
       "2024-11-03T01:30:00-04:00"},
      {"fall back repeats 01:30", "30 1 * * *", "America/New_York", "2024-11-03T01:30:00-04:00",
       "2024-11-03T01:30:00-05:00"},
      {"after the repeat, next day", "30 1 * * *", "America/New_York", "2024-11-03T01:30:00-05:00",
       "2024-11-04T01:30:00-05:00"},
      {"sao paulo midnight", "0 0 * * *", "America/Sao_Paulo", "2024-01-01T12:00:00-03:00",
       "2024-01-02T00:00:00-03:00"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto s = CronSchedule::Parse(c.spec);
    ASSERT_TRUE(s.ok()) << s.status();
    const absl::TimeZone tz = Zone(c.zone);
    EXPECT_EQ(Show(s->Next(T(c.after), tz), tz), c.want);
  }
}

TEST(CronScheduleTest, EveryFiveMinutesForADay) {
  auto s = CronSchedule::Parse("*/5 * * * *");
  ASSERT_TRUE(s.ok());
  absl::Time t = T("2024-06-01T00:00:00+00:00");
  for (int i = 1; i <= 288; ++i) {
    const absl::Time next = s->Next(t, absl::UTCTimeZone());
    ASSERT_EQ(next - t, absl::Minutes(5)) << i;
    t = next;
  }
  EXPECT_EQ(Show(t, absl::UTCTimeZone()), "2024-06-02T00:00:00+00:00");
}

TEST(CronScheduleTest, ParseErrors) {
  struct Case {
    std::string spec;
    std::string want;
  };
  const Case cases[] = {
      {"", "empty spec string"},
      {"* * * *", "expected exactly 5 fields, found 4: [* * * *]"},
      {"0 0 * * * *", "expected exactly 5 fields, found 6: [0 0 * * * *]"},
      {"60 * * * *", "end of range (60) above maximum (59): 60"},
      {"* 24 * * *", "end of range (24) above maximum (23): 24"},
      {"* * 0 * *", "beginning of range (0) below minimum (1): 0"},
      {"* * * 13 *", "end of range (13) above maximum (12): 13"},
      {"* * * * 7", "end of range (7) above maximum (6): 7"},
      {"5-1 * * * *", "beginning of range (5) beyond end of range (1): 5-1"},
      {"*/0 * * * *", "step of range should be a positive number: */0"},
      {"a * * * *", "failed to parse int from a: strconv.Atoi: parsing \"a\": invalid syntax"},
      {"-1 * * * *",
       "failed to parse int from : strconv.Atoi: parsing \"\": invalid syntax"},
      {"1-2-3 * * * *", "too many hyphens: 1-2-3"},
      {"1/2/3 * * * *", "too many slashes: 1/2/3"},
      {"@foo", "unrecognized descriptor: @foo"},
      {"@Daily", "unrecognized descriptor: @Daily"},
      {"@every x", "failed to parse duration @every x: time: invalid duration \"x\""},
      {"TZ=Nowhere/Land * * * * *", "provided bad location Nowhere/Land: unknown time zone Nowhere/Land"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.spec);
    auto s = CronSchedule::Parse(c.spec);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(s.status().message(), c.want);
  }
}

TEST(CronScheduleTest, AcceptedSpecs) {
  for (const char* spec : {"* * * * *", "0 0 * * *", "  0   0 * * *  ", "1,2,,3 * * * *",
                           "TZ=UTC 0 * * * *", "@every 1s", "@every 300ms"}) {
    SCOPED_TRACE(spec);
    EXPECT_TRUE(CronSchedule::Parse(spec).ok());
  }
  EXPECT_TRUE(CronSchedule::Parse("@every 300ms")->is_every());
  EXPECT_FALSE(CronSchedule::Parse("@hourly")->is_every());
}

}  // namespace
}  // namespace batchd::api::batch_v1
