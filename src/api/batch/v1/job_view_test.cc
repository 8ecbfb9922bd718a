#include "api/batch/v1/job_view.h"

#include "api/meta/time_util.h"
#include "gtest/gtest.h"

namespace batchd::api::batch_v1 {
namespace {

TEST(JobViewTest, ParsesSpecStatusAndPolicies) {
  const Json job = Json::parse(R"({
    "metadata": {"name": "j", "namespace": "ns", "uid": "u"},
    "spec": {"parallelism": 3, "completions": 5, "completionMode": "Indexed",
             "backoffLimit": 2, "backoffLimitPerIndex": 1, "maxFailedIndexes": 4,
             "activeDeadlineSeconds": 60, "ttlSecondsAfterFinished": 0, "suspend": true,
             "managedBy": "kueue.x-k8s.io/multikueue",
             "podFailurePolicy": {"rules": [
               {"action": "FailJob", "onExitCodes": {"containerName": "main", "operator": "In",
                                                     "values": [1, 42]}},
               {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]},
               {"action": "Bogus", "onPodConditions": []}]},
             "successPolicy": {"rules": [{"succeededIndexes": "0-2", "succeededCount": 2},
                                         {"succeededCount": 1}]},
             "template": {"spec": {"restartPolicy": "OnFailure"}}},
    "status": {"startTime": "2024-01-01T00:00:00Z", "active": 2, "succeeded": 1, "failed": 3,
               "ready": 1, "completedIndexes": "1", "failedIndexes": "",
               "uncountedTerminatedPods": {"succeeded": ["a"], "failed": ["b", 7]},
               "conditions": [{"type": "Complete", "status": "True"}]}})");
  JobView v = JobView::Parse(job);
  EXPECT_EQ(v.meta.Key(), "ns/j");
  EXPECT_EQ(v.spec.parallelism, 3);
  EXPECT_EQ(v.spec.completions, 5);
  EXPECT_EQ(v.spec.completion_mode, CompletionMode::kIndexed);
  EXPECT_EQ(v.spec.backoff_limit, 2);
  EXPECT_EQ(v.spec.backoff_limit_per_index, 1);
  EXPECT_EQ(v.spec.max_failed_indexes, 4);
  EXPECT_EQ(v.spec.active_deadline_seconds, 60);
  EXPECT_EQ(v.spec.ttl_seconds_after_finished, 0);
  EXPECT_TRUE(v.spec.suspend);
  EXPECT_EQ(v.spec.managed_by, "kueue.x-k8s.io/multikueue");
  EXPECT_TRUE(v.spec.OnlyReplaceFailedPods());  // A podFailurePolicy implies it.
  ASSERT_TRUE(v.spec.pod_failure_policy.has_value());
  ASSERT_EQ(v.spec.pod_failure_policy->size(), 3u);
  const PodFailurePolicyRule& fail = (*v.spec.pod_failure_policy)[0];
  EXPECT_EQ(fail.action, PodFailurePolicyAction::kFailJob);
  ASSERT_TRUE(fail.on_exit_codes.has_value());
  EXPECT_EQ(fail.on_exit_codes->container_name, "main");
  EXPECT_EQ(fail.on_exit_codes->op, ExitCodesOperator::kIn);
  EXPECT_EQ(fail.on_exit_codes->values, (std::vector<int64_t>{1, 42}));
  const PodFailurePolicyRule& ignore = (*v.spec.pod_failure_policy)[1];
  ASSERT_TRUE(ignore.on_pod_conditions.has_value());
  EXPECT_EQ((*ignore.on_pod_conditions)[0].type, "DisruptionTarget");
  EXPECT_EQ((*ignore.on_pod_conditions)[0].status, "True");  // The default.
  EXPECT_EQ((*v.spec.pod_failure_policy)[2].action, PodFailurePolicyAction::kUnknown);
  EXPECT_EQ((*v.spec.pod_failure_policy)[2].action_name, "Bogus");
  ASSERT_TRUE(v.spec.success_policy.has_value());
  EXPECT_EQ((*v.spec.success_policy)[0].succeeded_indexes, "0-2");
  EXPECT_EQ((*v.spec.success_policy)[0].succeeded_count, 2);
  EXPECT_FALSE((*v.spec.success_policy)[1].succeeded_indexes.has_value());
  EXPECT_EQ(v.spec.template_restart_policy, core_v1::RestartPolicy::kOnFailure);
  ASSERT_NE(v.spec.pod_template, nullptr);

  EXPECT_EQ(v.status.StartTime(), absl::FromUnixSeconds(1704067200));
  EXPECT_FALSE(v.status.CompletionTime().has_value());
  EXPECT_EQ(v.status.active, 2);
  EXPECT_EQ(v.status.succeeded, 1);
  EXPECT_EQ(v.status.failed, 3);
  EXPECT_EQ(v.status.ready, 1);
  EXPECT_FALSE(v.status.terminating.has_value());
  EXPECT_EQ(v.status.completed_indexes, "1");
  EXPECT_EQ(v.status.failed_indexes, "");  // Present and empty.
  EXPECT_TRUE(v.status.has_uncounted);
  EXPECT_EQ(v.status.uncounted_succeeded, (std::vector<std::string_view>{"a"}));
  EXPECT_EQ(v.status.uncounted_failed, (std::vector<std::string_view>{"b"}));  // 7 is no UID.
  EXPECT_TRUE(v.Finished());
}

TEST(JobViewTest, FinishedTimeIsTheFirstTrueTerminalConditionWithATime) {
  const Json job = Json::parse(R"({"status": {"conditions": [
    {"type": "Failed", "status": "False", "lastTransitionTime": "2026-01-01T00:00:01Z"},
    {"type": "SuccessCriteriaMet", "status": "True", "lastTransitionTime": "2026-01-01T00:00:02Z"},
    {"type": "Complete", "status": "True", "lastTransitionTime": "garbage"},
    {"type": "Complete", "status": "True", "lastTransitionTime": "2026-01-01T00:00:04Z"},
    {"type": "Failed", "status": "True", "lastTransitionTime": "2026-01-01T00:00:05Z"}]}})");
  EXPECT_EQ(JobStatusView::Parse(job).FinishedTime(),
            *meta::ParseRfc3339("2026-01-01T00:00:04Z"));
  EXPECT_EQ(JobStatusView::Parse(Json::object()).FinishedTime(), std::nullopt);
  const Json running = Json::parse(R"({"status": {"conditions": [
    {"type": "Suspended", "status": "True", "lastTransitionTime": "2026-01-01T00:00:01Z"}]}})");
  EXPECT_EQ(JobStatusView::Parse(running).FinishedTime(), std::nullopt);
}

TEST(JobViewTest, DefaultsForAnEmptyJob) {
  const Json job = Json::object();
  JobView v = JobView::Parse(job);
  EXPECT_EQ(v.spec.parallelism, 1);
  EXPECT_FALSE(v.spec.completions.has_value());
  EXPECT_EQ(v.spec.completion_mode, CompletionMode::kNonIndexed);
  EXPECT_EQ(v.spec.backoff_limit, 6);
  EXPECT_FALSE(v.spec.pod_failure_policy.has_value());
  EXPECT_FALSE(v.spec.success_policy.has_value());
  EXPECT_FALSE(v.spec.OnlyReplaceFailedPods());
  EXPECT_EQ(v.spec.pod_template, nullptr);
  EXPECT_FALSE(v.status.has_uncounted);
  EXPECT_FALSE(v.status.failed_indexes.has_value());
  EXPECT_FALSE(v.status.StartTime().has_value());
  EXPECT_FALSE(v.Finished());
}

TEST(JobViewTest, PodReplacementPolicyFailed) {
  const Json job = Json::parse(R"({"spec": {"podReplacementPolicy": "Failed"},
    "status": {"conditions": [{"type": "Failed", "status": "False"}]}})");
  JobView v = JobView::Parse(job);
  EXPECT_EQ(v.spec.pod_replacement_policy, PodReplacementPolicy::kFailed);
  EXPECT_TRUE(v.spec.OnlyReplaceFailedPods());
  EXPECT_FALSE(v.Finished());
}

}  // namespace
}  // namespace batchd::api::batch_v1
