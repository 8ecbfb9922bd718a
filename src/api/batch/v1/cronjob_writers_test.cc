#include "api/batch/v1/cronjob_writers.h"

#include "api/batch/v1/cronjob_view.h"
#include "api/meta/time_util.h"
#include "gtest/gtest.h"

namespace batchd::api::batch_v1 {
namespace {

TEST(CronJobWritersTest, ActiveReferencesAreAddedAndRemoved) {
  Json cj = {{"status", {{"active", "junk"}}}};
  const Json job = Json::parse(R"({"metadata": {"name": "c-1", "namespace": "ns", "uid": "u1",
                                                "resourceVersion": "7", "labels": {"a": "b"}}})");
  AddCronJobActive(cj, job);
  EXPECT_EQ(cj["status"]["active"], Json::parse(R"([{"apiVersion": "batch/v1", "kind": "Job",
    "namespace": "ns", "name": "c-1", "uid": "u1", "resourceVersion": "7"}])"));
  cj["status"]["active"].push_back("not an object");
  cj["status"]["active"].push_back({{"name", "c-2"}, {"uid", "u2"}});
  EXPECT_TRUE(CronJobStatusView::Parse(cj).HasActiveUid("u1"));
  EXPECT_TRUE(RemoveCronJobActive(cj, "u1"));
  EXPECT_FALSE(RemoveCronJobActive(cj, "u1"));
  const CronJobStatusView v = CronJobStatusView::Parse(cj);
  EXPECT_FALSE(v.HasActiveUid("u1"));
  EXPECT_TRUE(v.HasActiveUid("u2"));
  EXPECT_EQ(v.active_entries, 2u);  // The non-object entry is kept.
  Json none = Json::object();
  EXPECT_FALSE(RemoveCronJobActive(none, "u1"));
  EXPECT_EQ(none, Json::object());
}

TEST(CronJobWritersTest, ScheduleAndSuccessTimes) {
  Json cj = Json::object();
  const absl::Time t = *meta::ParseRfc3339("2026-01-01T00:05:00Z");
  SetCronJobLastScheduleTime(cj, t);
  SetCronJobLastSuccessfulTime(cj, t + absl::Seconds(30));
  const CronJobStatusView v = CronJobStatusView::Parse(cj);
  EXPECT_EQ(v.last_schedule_time, t);
  EXPECT_EQ(v.last_successful_time, t + absl::Seconds(30));
  EXPECT_EQ(cj["status"]["lastScheduleTime"], "2026-01-01T00:05:00Z");
}

TEST(CronJobWritersTest, JobFromTemplate) {
  const Json tmpl = Json::parse(R"({"metadata": {"labels": {"a": "b"}, "annotations": "junk",
                                                 "name": "ignored"},
                                    "spec": {"parallelism": 2}})");
  EXPECT_EQ(NewJobFromTemplate(&tmpl, "c-1", "ns"), Json::parse(R"({
    "apiVersion": "batch/v1", "kind": "Job",
    "metadata": {"name": "c-1", "namespace": "ns", "labels": {"a": "b"}},
    "spec": {"parallelism": 2}})"));
  EXPECT_EQ(NewJobFromTemplate(nullptr, "c-1", "ns")["spec"], Json::object());
}

}  // namespace
}  // namespace batchd::api::batch_v1
