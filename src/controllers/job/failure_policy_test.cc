#include "controllers/job/failure_policy.h"

#include <gtest/gtest.h>

namespace batchd::controllers::job {
namespace {

using api::Json;
using api::batch_v1::PodFailurePolicyAction;

PolicyMatch Match(const Json& job, const Json& pod) {
  return MatchPodFailurePolicy(JobSpecView::Parse(job), PodView::Parse(pod));
}

Json FailedPod(int exit_code, const std::string& container = "main",
               Json conditions = Json::array()) {
  return {{"metadata", {{"name", "p"}, {"namespace", "ns"}}},
          {"status",
           {{"phase", "Failed"},
            {"conditions", conditions},
            {"containerStatuses",
             {{{"name", container},
               {"state", {{"terminated", {{"exitCode", exit_code}}}}}}}}}}};
}

// podFailurePolicy rule builders.
inline Json ExitCodeRule(const std::string& action, const std::string& op,
                         std::vector<int> values, const std::string& container = "") {
  Json req = {{"operator", op}, {"values", values}};
  if (!container.empty()) req["containerName"] = container;
  return {{"action", action}, {"onExitCodes", req}};
}
inline Json ConditionRule(const std::string& action, const std::string& type) {
  Json pattern = {{"type", type}};
  return {{"action", action}, {"onPodConditions", Json::array({pattern})}};
}

Json JobWithRules(Json rules) {
  return {{"spec", {{"podFailurePolicy", {{"rules", rules}}}}}};
}

TEST(MatchPodFailurePolicyTest, Rules) {
  struct Case {
    std::string name;
    Json rules;
    Json pod;
    std::optional<PodFailurePolicyAction> action;
    bool count;
    std::string message;
  };
  Json disruption = Json::array({{{"type", "DisruptionTarget"}, {"status", "True"}}});
  const Case cases[] = {
      {"FailJob on exit code",
       Json::array({ExitCodeRule("FailJob", "In", {42})}),
       FailedPod(42), PodFailurePolicyAction::kFailJob, true,
       "Container main for pod ns/p failed with exit code 42 matching FailJob rule at index 0"},
      {"In does not match other code",
       Json::array({ExitCodeRule("FailJob", "In", {42})}),
       FailedPod(1), std::nullopt, true, ""},
      {"NotIn matches other code",
       Json::array({ExitCodeRule("Count", "NotIn", {1})}),
       FailedPod(3), PodFailurePolicyAction::kCount, true, ""},
      {"containerName restricts",
       Json::array({ExitCodeRule("FailJob", "In", {42}, "other")}),
       FailedPod(42), std::nullopt, true, ""},
      {"Ignore on DisruptionTarget",
       Json::array({ConditionRule("Ignore", "DisruptionTarget")}),
       FailedPod(137, "main", disruption), PodFailurePolicyAction::kIgnore, false, ""},
      {"first matching rule wins, unknown action skipped",
       Json::array({ExitCodeRule("Bogus", "In", {5}), ExitCodeRule("Ignore", "In", {5}),
                    ExitCodeRule("FailJob", "In", {5})}),
       FailedPod(5), PodFailurePolicyAction::kIgnore, false, ""},
      {"FailJob on condition message",
       Json::array({ConditionRule("FailJob", "DisruptionTarget")}),
       FailedPod(1, "main", disruption), PodFailurePolicyAction::kFailJob, true,
       "Pod ns/p has condition DisruptionTarget matching FailJob rule at index 0"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const Json job = JobWithRules(c.rules);
    PolicyMatch m = Match(job, c.pod);
    EXPECT_EQ(m.action, c.action);
    EXPECT_EQ(m.count_failed, c.count);
    EXPECT_EQ(m.fail_job_message.value_or(""), c.message);
  }
}

TEST(BackoffTest, RemainingBackoff) {
  const absl::Time t0 = absl::FromUnixSeconds(1000);
  struct Case {
    std::string name;
    int failures;
    absl::Duration elapsed;
    absl::Duration want;
  };
  const Case cases[] = {
      {"no failures", 0, absl::ZeroDuration(), absl::ZeroDuration()},
      {"first failure 10s", 1, absl::Seconds(3), absl::Seconds(7)},
      {"second failure 20s", 2, absl::ZeroDuration(), absl::Seconds(20)},
      {"third failure 40s", 3, absl::Seconds(40), absl::ZeroDuration()},
      {"capped at 10 minutes", 12, absl::ZeroDuration(), absl::Minutes(10)},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(RemainingBackoff(c.failures, t0, t0 + c.elapsed), c.want);
  }
}

TEST(BackoffTest, SuccessResetsFailures) {
  const absl::Time t = absl::FromUnixSeconds(1000);
  BackoffRecord r = NextBackoffRecord({}, {}, {t, t + absl::Seconds(1)});
  EXPECT_EQ(r.failures_after_last_success, 2);
  EXPECT_EQ(r.last_failure, t + absl::Seconds(1));
  r = NextBackoffRecord(r, {t + absl::Seconds(5)}, {t + absl::Seconds(3), t + absl::Seconds(9)});
  EXPECT_EQ(r.failures_after_last_success, 1);
  EXPECT_EQ(r.last_failure, t + absl::Seconds(9));
}

TEST(IsPodFailedTest, TerminatingCountsUnlessOnlyFailedReplaced) {
  Json deleting = {{"metadata", {{"deletionTimestamp", "2026-01-01T00:00:00Z"}}},
                   {"status", {{"phase", "Running"}}}};
  Json job = {{"spec", Json::object()}};
  EXPECT_TRUE(IsPodFailed(PodView::Parse(deleting), JobSpecView::Parse(job)));
  job["spec"]["podReplacementPolicy"] = "Failed";
  EXPECT_FALSE(IsPodFailed(PodView::Parse(deleting), JobSpecView::Parse(job)));
}

TEST(PastBackoffLimitOnFailureTest, SumsRestarts) {
  Json job = {{"spec",
               {{"backoffLimit", 3}, {"template", {{"spec", {{"restartPolicy", "OnFailure"}}}}}}}};
  Json pod = {{"status",
               {{"phase", "Running"},
                {"containerStatuses", {{{"restartCount", 2}}}},
                {"initContainerStatuses", {{{"restartCount", 0}}}}}}};
  // Views are parsed afresh after each edit (they point into the JSON).
  auto past = [&] {
    const PodView view = PodView::Parse(pod);
    return PastBackoffLimitOnFailure(JobSpecView::Parse(job), {&view});
  };
  EXPECT_FALSE(past());
  pod["status"]["initContainerStatuses"][0]["restartCount"] = 1;
  EXPECT_TRUE(past());
  job["spec"]["template"]["spec"]["restartPolicy"] = "Never";
  EXPECT_FALSE(past());
}

}  // namespace
}  // namespace batchd::controllers::job
