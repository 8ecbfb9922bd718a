#include "api/meta/time_util.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace batchd::api::meta {
namespace {

using absl::Hours;
using absl::Milliseconds;
using absl::Minutes;
using absl::Nanoseconds;
using absl::Seconds;

TEST(TimeUtilTest, FormatAndParse) {
  absl::Time t = absl::FromUnixSeconds(1714564800) + Milliseconds(123) + Nanoseconds(456789);
  EXPECT_EQ(FormatRfc3339(t), "2024-05-01T12:00:00Z");
  EXPECT_EQ(FormatRfc3339Micro(t), "2024-05-01T12:00:00.123456Z");
  EXPECT_EQ(FormatRfc3339(absl::UnixEpoch()), "1970-01-01T00:00:00Z");

  struct Case {
    std::string in;
    absl::Time want;
  };
  absl::Time base = absl::FromUnixSeconds(1714564800);
  std::vector<Case> cases = {
      {"2024-05-01T12:00:00Z", base},
      {"2024-05-01T12:00:00.5Z", base + Milliseconds(500)},
      {"2024-05-01T14:00:00+02:00", base},
      {"2024-05-01T07:30:00-04:30", base},
      {"2024-05-01T12:00:00.123456Z", base + absl::Microseconds(123456)},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.in);
    absl::StatusOr<absl::Time> got = ParseRfc3339(c.in);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(*got, c.want);
  }
  for (std::string bad :
       {"", "2024-05-01", "2024-05-01 12:00:00Z", "2024-05-01T12:00:00", "yesterday"}) {
    SCOPED_TRACE(bad);
    EXPECT_FALSE(ParseRfc3339(bad).ok());
  }
  EXPECT_EQ(*ParseRfc3339(FormatRfc3339Micro(t)), base + absl::Microseconds(123456));
}

// Expected strings from apimachinery's duration_test.go.
TEST(TimeUtilTest, HumanDuration) {
  struct Case {
    absl::Duration d;
    std::string want;
  };
  const absl::Duration day = Hours(24), year = Hours(24 * 365);
  std::vector<Case> cases = {
      {Seconds(1), "1s"},
      {Seconds(70), "70s"},
      {Seconds(190), "3m10s"},
      {Minutes(70), "70m"},
      {Hours(47), "47h"},
      {Hours(49), "2d1h"},
      {Hours(8 * 24 + 2), "8d"},
      {Hours(367 * 24), "367d"},
      {Hours(365 * 2 * 24 + 25), "2y1d"},
      {Hours(365 * 8 * 24 + 2), "8y"},
      {Seconds(-2), "<invalid>"},
      {Seconds(-2) + Nanoseconds(1), "0s"},
      {absl::ZeroDuration(), "0s"},
      {Seconds(1) - Milliseconds(1), "0s"},
      {Minutes(2) - Milliseconds(1), "119s"},
      {Minutes(2), "2m"},
      {Minutes(2) + Seconds(1), "2m1s"},
      {Minutes(10) - Milliseconds(1), "9m59s"},
      {Minutes(10), "10m"},
      {Minutes(10) + Seconds(1), "10m"},
      {Hours(3) - Milliseconds(1), "179m"},
      {Hours(3), "3h"},
      {Hours(3) + Minutes(1), "3h1m"},
      {Hours(8) - Milliseconds(1), "7h59m"},
      {Hours(8), "8h"},
      {Hours(8) + Minutes(59), "8h"},
      {2 * day - Milliseconds(1), "47h"},
      {2 * day, "2d"},
      {2 * day + Hours(1), "2d1h"},
      {8 * day - Milliseconds(1), "7d23h"},
      {8 * day, "8d"},
      {8 * day + Hours(23), "8d"},
      {2 * year - Milliseconds(1), "729d"},
      {2 * year, "2y"},
      {2 * year + Hours(23), "2y"},
      {2 * year + day - Milliseconds(1), "2y"},
      {2 * year + day, "2y1d"},
      {3 * year, "3y"},
      {8 * year - Milliseconds(1), "7y364d"},
      {8 * year, "8y"},
      {8 * year + 364 * day, "8y"},
      {9 * year, "9y"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(absl::FormatDuration(c.d));
    EXPECT_EQ(HumanDuration(c.d), c.want);
  }
}

TEST(TimeUtilTest, ShortHumanDuration) {
  struct Case {
    absl::Duration d;
    std::string want;
  };
  const absl::Duration day = Hours(24), year = Hours(24 * 365);
  std::vector<Case> cases = {
      {Seconds(-2), "<invalid>"},
      {Seconds(-2) + Nanoseconds(1), "0s"},
      {absl::ZeroDuration(), "0s"},
      {Seconds(1) - Milliseconds(1), "0s"},
      {Seconds(1), "1s"},
      {Seconds(2) - Milliseconds(1), "1s"},
      {Minutes(1) - Milliseconds(1), "59s"},
      {Minutes(1), "1m"},
      {Minutes(2) - Milliseconds(1), "1m"},
      {Hours(1) - Milliseconds(1), "59m"},
      {Hours(1), "1h"},
      {Hours(2) - Milliseconds(1), "1h"},
      {day - Milliseconds(1), "23h"},
      {day, "1d"},
      {2 * day - Milliseconds(1), "1d"},
      {year - Milliseconds(1), "364d"},
      {year, "1y"},
      {2 * year - Milliseconds(1), "1y"},
      {2 * year, "2y"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(absl::FormatDuration(c.d));
    EXPECT_EQ(ShortHumanDuration(c.d), c.want);
  }
}

}  // namespace
}  // namespace batchd::api::meta
