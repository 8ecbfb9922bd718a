#include "api/batch/v1/job_status_writer.h"

#include "api/batch/v1/job_view.h"
#include "api/meta/time_util.h"
#include "gtest/gtest.h"

namespace batchd::api::batch_v1 {
namespace {

TEST(JobStatusWriterTest, TimesAreWholeSecondsAndReadBack) {
  Json job = Json::object();
  EXPECT_TRUE(JobStatusJson(job).is_null());
  const absl::Time t = *meta::ParseRfc3339("2024-05-01T12:00:00.750Z");
  const absl::Time written = SetJobStartTime(job, t);
  EXPECT_EQ(job["status"]["startTime"], "2024-05-01T12:00:00Z");
  EXPECT_EQ(written, *meta::ParseRfc3339("2024-05-01T12:00:00Z"));
  EXPECT_EQ(JobStatusView::Parse(job).StartTime(), written);
  SetJobCompletionTime(job, t);
  EXPECT_EQ(JobStatusView::Parse(job).completion_time, "2024-05-01T12:00:00Z");
  ClearJobStartTime(job);
  EXPECT_FALSE(job["status"].contains("startTime"));
  EXPECT_EQ(&JobStatusJson(job), &job["status"]);
}

TEST(JobStatusWriterTest, ClearStartTimeNeverCreatesTheStatus) {
  Json job = {{"spec", {{"suspend", true}}}};
  EXPECT_FALSE(ClearJobStartTime(job)) << "no status";
  EXPECT_FALSE(job.contains("status"));
  job["status"] = {{"startTime", "2026-01-01T00:00:00Z"}, {"active", 1}};
  EXPECT_TRUE(ClearJobStartTime(job));
  EXPECT_EQ(JobStatusView::Parse(job).start_time, "");
  EXPECT_EQ(job["status"], Json({{"active", 1}}));
  EXPECT_FALSE(ClearJobStartTime(job));
}

TEST(JobStatusWriterTest, CountersAreOmittedAtZeroReadyAndTerminatingAreNot) {
  Json job = Json::object();
  SetJobActive(job, 2);
  SetJobSucceeded(job, 3);
  SetJobFailed(job, 1);
  SetJobReady(job, 0);
  SetJobTerminating(job, 0);
  EXPECT_EQ(job["status"], Json::parse(R"({"active": 2, "succeeded": 3, "failed": 1,
                                           "ready": 0, "terminating": 0})"));
  SetJobActive(job, 0);
  SetJobSucceeded(job, 0);
  SetJobFailed(job, -1);
  EXPECT_EQ(job["status"], Json::parse(R"({"ready": 0, "terminating": 0})"));
  const JobStatusView v = JobStatusView::Parse(job);
  EXPECT_EQ(v.ready, 0);
  EXPECT_EQ(v.terminating, 0);
}

TEST(JobStatusWriterTest, UncountedTerminatedPodsLeaveOutEmptyLists) {
  Json job = {{"status", {{"uncountedTerminatedPods", {{"failed", {"x"}}}}}}};
  SetJobUncountedTerminatedPods(job, {"a", "b"}, {});
  EXPECT_EQ(job["status"]["uncountedTerminatedPods"], Json::parse(R"({"succeeded": ["a", "b"]})"));
  const JobStatusView v = JobStatusView::Parse(job);
  EXPECT_TRUE(v.has_uncounted);
  EXPECT_EQ(v.uncounted_succeeded, (std::vector<std::string_view>{"a", "b"}));
  EXPECT_TRUE(v.uncounted_failed.empty());
  SetJobUncountedTerminatedPods(job, {}, {});
  EXPECT_EQ(job["status"]["uncountedTerminatedPods"], Json::object());
}

TEST(JobStatusWriterTest, CompletedIndexesAreRemovedWhenEmpty) {
  Json job = Json::object();
  EXPECT_FALSE(SetJobCompletedIndexes(job, ""));  // Unset and "" are the same.
  EXPECT_FALSE(job["status"].contains("completedIndexes"));
  EXPECT_TRUE(SetJobCompletedIndexes(job, "0-2"));
  EXPECT_EQ(JobStatusView::Parse(job).completed_indexes, "0-2");
  EXPECT_FALSE(SetJobCompletedIndexes(job, "0-2"));
  EXPECT_TRUE(SetJobCompletedIndexes(job, ""));
  EXPECT_FALSE(job["status"].contains("completedIndexes"));
}

TEST(JobStatusWriterTest, FailedIndexesAreWrittenEvenWhenEmpty) {
  Json job = Json::object();
  EXPECT_TRUE(SetJobFailedIndexes(job, ""));  // From unset.
  EXPECT_EQ(JobStatusView::Parse(job).failed_indexes, "");
  EXPECT_FALSE(SetJobFailedIndexes(job, ""));
  EXPECT_TRUE(SetJobFailedIndexes(job, "1,3"));
  EXPECT_EQ(JobStatusView::Parse(job).failed_indexes, "1,3");
  job["status"]["failedIndexes"] = 7;  // Mistyped: any string is a change.
  EXPECT_TRUE(SetJobFailedIndexes(job, "1,3"));
}

}  // namespace
}  // namespace batchd::api::batch_v1
