#include "api/batch/v1/cronjob_view.h"

#include "api/meta/time_util.h"
#include "gtest/gtest.h"

namespace batchd::api::batch_v1 {
namespace {

TEST(CronJobViewTest, ParsesSpecAndStatus) {
  const Json cj = Json::parse(R"({
    "metadata": {"name": "c", "namespace": "ns"},
    "spec": {"schedule": "*/5 * * * *", "timeZone": "Europe/Paris",
             "startingDeadlineSeconds": 30, "concurrencyPolicy": "Replace", "suspend": true,
             "successfulJobsHistoryLimit": 2, "failedJobsHistoryLimit": 0,
             "jobTemplate": {"spec": {"parallelism": 2}}},
    "status": {"active": [{"name": "c-1", "uid": "u1"}, "junk", {"name": "c-2", "uid": "u2"}],
               "lastScheduleTime": "2026-01-01T00:05:00Z",
               "lastSuccessfulTime": "not a time"}})");
  const CronJobSpecView spec = CronJobSpecView::Parse(cj);
  EXPECT_EQ(spec.schedule, "*/5 * * * *");
  EXPECT_EQ(spec.time_zone, "Europe/Paris");
  EXPECT_EQ(spec.starting_deadline_seconds, 30);
  EXPECT_EQ(spec.concurrency_policy, ConcurrencyPolicy::kReplace);
  EXPECT_TRUE(spec.suspend);
  EXPECT_EQ(spec.successful_jobs_history_limit, 2);
  EXPECT_EQ(spec.failed_jobs_history_limit, 0);
  ASSERT_NE(spec.job_template, nullptr);
  EXPECT_EQ((*spec.job_template)["spec"]["parallelism"], 2);

  const CronJobStatusView status = CronJobStatusView::Parse(cj);
  ASSERT_EQ(status.active.size(), 2u);  // The non-object entry is skipped.
  EXPECT_EQ(status.active_entries, 3u);   // But counted.
  EXPECT_EQ(status.active[1].name, "c-2");
  EXPECT_TRUE(status.HasActiveUid("u1"));
  EXPECT_FALSE(status.HasActiveUid("c-1"));
  EXPECT_TRUE(status.HasActiveName("c-2"));
  EXPECT_FALSE(status.HasActiveName("u2"));
  EXPECT_EQ(status.last_schedule_time, *meta::ParseRfc3339("2026-01-01T00:05:00Z"));
  EXPECT_EQ(status.last_successful_time, std::nullopt);  // Unparsable reads as unset.
}

TEST(CronJobViewTest, DefaultsWhenAbsentOrMistyped) {
  const Json cj = Json::parse(R"({"spec": {"schedule": 5, "timeZone": 1,
                                           "concurrencyPolicy": "Sometimes",
                                           "jobTemplate": "x"},
                                  "status": {"active": {}}})");
  const CronJobSpecView spec = CronJobSpecView::Parse(cj);
  EXPECT_EQ(spec.schedule, "");
  EXPECT_EQ(spec.time_zone, std::nullopt);
  EXPECT_EQ(spec.starting_deadline_seconds, std::nullopt);
  EXPECT_EQ(spec.concurrency_policy, ConcurrencyPolicy::kUnknown);
  EXPECT_FALSE(spec.suspend);
  EXPECT_EQ(spec.successful_jobs_history_limit, std::nullopt);
  EXPECT_EQ(spec.job_template, nullptr);
  EXPECT_EQ(CronJobSpecView::Parse(Json::object()).concurrency_policy, ConcurrencyPolicy::kAllow);
  const CronJobStatusView status = CronJobStatusView::Parse(cj);
  EXPECT_TRUE(status.active.empty());
  EXPECT_EQ(status.active_entries, 0u);
  EXPECT_EQ(status.last_schedule_time, std::nullopt);
}

}  // namespace
}  // namespace batchd::api::batch_v1
