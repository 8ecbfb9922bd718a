#include "cli/pending_insight.h"

#include "api/meta/time_util.h"
#include "cli/queue_commands.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace batchd::cli {
namespace {

using api::Json;
using ::testing::HasSubstr;

TEST(ParseShortfall, TheCoresMessage) {
  auto s = ParseShortfall(
      "couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor "
      "on-demand, 1500m more needed");
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->resource, "cpu");
  EXPECT_EQ(s->flavor, "on-demand");
  EXPECT_EQ(s->more_needed_milli, 1500);
  auto mem = ParseShortfall("insufficient unused quota for memory in flavor a, 2Gi more needed");
  ASSERT_TRUE(mem.has_value());
  EXPECT_EQ(mem->more_needed_milli, int64_t{2} * 1024 * 1024 * 1024 * 1000);
  // Not a wait for quota: no shortfall.
  EXPECT_FALSE(ParseShortfall("insufficient quota for cpu in flavor a, request > maximum capacity "
                              "(5 > 4)").has_value());
  EXPECT_FALSE(ParseShortfall("LocalQueue lq doesn't exist").has_value());
  EXPECT_FALSE(ParseShortfall("insufficient unused quota for cpu in flavor a, x more needed"));
}

Json Admitted(const std::string& flavor, const std::string& cpu, const char* admitted_at,
              std::optional<int64_t> max_seconds, int64_t past = 0) {
  Json w = {{"spec", Json::object()},
            {"status",
             {{"admission",
               {{"clusterQueue", "cq"},
                {"podSetAssignments",
                 {{{"name", "main"}, {"flavors", {{"cpu", flavor}}},
                   {"resourceUsage", {{"cpu", cpu}}}}}}}},
              {"conditions",
               {{{"type", "Admitted"}, {"status", "True"}, {"lastTransitionTime", admitted_at}}}}}}};
  if (max_seconds) w["spec"]["maximumExecutionTimeSeconds"] = *max_seconds;
  if (past > 0) w["status"]["accumulatedPastExecutionTimeSeconds"] = past;
  return w;
}

TEST(EstimateStart, ReleasesInOrderOfExpectedEnd) {
  absl::Time now = *api::meta::ParseRfc3339("2026-01-01T00:10:00Z");
  QuotaShortfall s{"cpu", "f", 0};
  std::vector<Json> running = {
      Admitted("f", "2", "2026-01-01T00:00:00Z", 3600),       // ends 01:00, frees 2
      Admitted("f", "1", "2026-01-01T00:00:00Z", 1200),       // ends 00:20, frees 1
      Admitted("other", "8", "2026-01-01T00:00:00Z", 60),     // another flavor: ignored
      Admitted("f", "1", "2026-01-01T00:00:00Z", 1800, 900),  // 900 s already run: ends 00:15
  };
  EXPECT_EQ(EstimateStart(running, s, 1000, now), *api::meta::ParseRfc3339("2026-01-01T00:15:00Z"));
  EXPECT_EQ(EstimateStart(running, s, 2000, now), *api::meta::ParseRfc3339("2026-01-01T00:20:00Z"));
  EXPECT_EQ(EstimateStart(running, s, 4000, now), *api::meta::ParseRfc3339("2026-01-01T01:00:00Z"));
  // More than the known ends release: unknown.
  EXPECT_FALSE(EstimateStart(running, s, 4001, now).has_value());
  // A running workload without a known end releases nothing in the estimate.
  EXPECT_FALSE(EstimateStart({Admitted("f", "4", "2026-01-01T00:00:00Z", std::nullopt)}, s, 1000,
                             now)
                   .has_value());
  // An end already past counts as now.
  EXPECT_EQ(EstimateStart({Admitted("f", "1", "2026-01-01T00:00:00Z", 60)}, s, 1000, now), now);
}

TEST(RequestOf, CountTimesContainersWithLimitsForMissingRequests) {
  Json wl = Json::parse(R"({"spec": {"podSets": [
      {"count": 3, "template": {"spec": {"containers": [
          {"resources": {"requests": {"cpu": "500m"}}},
          {"resources": {"limits": {"cpu": "1"}}}]}}},
      {"template": {"spec": {"containers": [{"resources": {"requests": {"cpu": "2"}}}]}}}]}})");
  EXPECT_EQ(RequestOf(wl, "cpu"), 3 * 1500 + 2000);
  EXPECT_EQ(RequestOf(wl, "memory"), 0);
}

TEST(FormatWorkloads, PositionInQueueColumn) {
  Json pending = {{"metadata", {{"name", "w"}, {"namespace", "ns"}}},
                  {"spec", {{"queueName", "lq"}}}};
  std::map<std::string, int64_t> positions = {{"ns/w", 7}};
  std::string out = FormatWorkloads({pending}, false, absl::Now(), &positions);
  EXPECT_THAT(out, HasSubstr("POSITION IN QUEUE"));
  EXPECT_THAT(out, HasSubstr("EXEC TIME"));
  EXPECT_THAT(out, HasSubstr("Pending   7 "));
  EXPECT_THAT(FormatWorkloads({pending}, false, absl::Now()),
              ::testing::Not(HasSubstr("POSITION IN QUEUE")));
}

}  // namespace
}  // namespace batchd::cli
