#include "agent/sim/go_duration.h"

#include "gtest/gtest.h"

namespace batchd::agent::sim {
namespace {

TEST(GoDurationTest, Parses) {
  struct Case {
    std::string in;
    absl::Duration want;
  };
  std::vector<Case> cases = {
      {"0", absl::ZeroDuration()},
      {"90s", absl::Seconds(90)},
      {"1h", absl::Hours(1)},
      {"500ms", absl::Milliseconds(500)},
      {"1h30m", absl::Minutes(90)},
      {"1.5h", absl::Minutes(90)},
      {".5s", absl::Milliseconds(500)},
      {"1.s", absl::Seconds(1)},
      {"-2m", absl::Minutes(-2)},
      {"+3s", absl::Seconds(3)},
      {"10us", absl::Microseconds(10)},
      {"10\xC2\xB5s", absl::Microseconds(10)},
      {"7ns", absl::Nanoseconds(7)},
      {"1m0.000000001s", absl::Minutes(1) + absl::Nanoseconds(1)},
      {"0.1234567891s", absl::Nanoseconds(123456789)},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.in);
    auto d = ParseGoDuration(c.in);
    ASSERT_TRUE(d.ok()) << d.status();
    EXPECT_EQ(*d, c.want);
  }
}

TEST(GoDurationTest, Errors) {
  struct Case {
    std::string in;
    std::string want;
  };
  std::vector<Case> cases = {
      {"", "time: invalid duration \"\""},
      {"1", "time: missing unit in duration \"1\""},
      {"1d", "time: unknown unit \"d\" in duration \"1d\""},
      {"s", "time: invalid duration \"s\""},
      {".s", "time: invalid duration \".s\""},
      {"-", "time: invalid duration \"-\""},
      {"3000000h", "time: invalid duration \"3000000h\""},
      {"1h 2m", "time: unknown unit \"h \" in duration \"1h 2m\""},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.in);
    auto d = ParseGoDuration(c.in);
    ASSERT_FALSE(d.ok());
    EXPECT_EQ(d.status().message(), c.want);
  }
}

}  // namespace
}  // namespace batchd::agent::sim
