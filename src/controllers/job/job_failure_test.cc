// Job controller failure semantics: backoffLimit and its re-creation
// delays, OnFailure restarts, podFailurePolicy, activeDeadlineSeconds,
// podReplacementPolicy, two-phase termination.
#include "controllers/job/job_test_env.h"

namespace batchd::controllers::job::testing {
namespace {

using api::testing::MakeJob;

Json WithPolicy(Json job, Json rules) {
  job["spec"]["podFailurePolicy"] = {{"rules", rules}};
  return job;
}

TEST_F(JobControllerTest, BackoffLimitWithExponentialDelays) {
  CreateJob(MakeJob("b").Set(Json::json_pointer("/spec/backoffLimit"), 2).Obj());
  // Each failure waits 10s·2^(n−1) before the replacement appears.
  struct Step {
    std::string name;
    absl::Duration delay;
  };
  const Step steps[] = {{"after 1st failure", absl::Seconds(10)},
                        {"after 2nd failure", absl::Seconds(20)}};
  for (const auto& s : steps) {
    SCOPED_TRACE(s.name);
    auto pods = ActivePods("b");
    ASSERT_EQ(pods.size(), 1u);
    Finish(pods[0], 1);
    EXPECT_TRUE(ActivePods("b").empty());
    Advance(s.delay - absl::Seconds(1));
    EXPECT_TRUE(ActivePods("b").empty()) << "replacement too early";
    Advance(absl::Seconds(1));
    EXPECT_EQ(ActivePods("b").size(), 1u) << "replacement due";
  }
  EXPECT_TRUE(Conditions("b").empty());
  Finish(ActivePods("b")[0], 1);
  EXPECT_EQ(Count("b", "failed"), 3);
  EXPECT_EQ(Conditions("b"), (std::vector<std::string>{"FailureTarget=True/BackoffLimitExceeded",
                                                       "Failed=True/BackoffLimitExceeded"}));
  Json failed = Status("b")["conditions"][1];
  EXPECT_EQ(failed["message"], "Job has reached the specified backoff limit");
  EXPECT_FALSE(Status("b").contains("completionTime"));
  EXPECT_EQ(CountEvents("BackoffLimitExceeded"), 1);
  Advance(absl::Minutes(5));
  EXPECT_TRUE(ActivePods("b").empty()) << "no pods after failure";
}

TEST_F(JobControllerTest, SuccessResetsBackoff) {
  CreateJob(MakeJob("r").Completions(3).Parallelism(1).Obj());
  Finish(ActivePods("r")[0], 1);
  Advance(absl::Seconds(10));
  Finish(ActivePods("r")[0], 0);
  ASSERT_EQ(ActivePods("r").size(), 1u) << "a success creates the next pod at once";
  Finish(ActivePods("r")[0], 1);
  Advance(absl::Seconds(9));
  EXPECT_TRUE(ActivePods("r").empty());
  Advance(absl::Seconds(1));
  EXPECT_EQ(ActivePods("r").size(), 1u) << "delay restarted at 10s";
}

TEST_F(JobControllerTest, OnFailureRestartCountsReachBackoffLimit) {
  Json job = MakeJob("of").Set(Json::json_pointer("/spec/backoffLimit"), 2).Obj();
  job["spec"]["template"]["spec"]["restartPolicy"] = "OnFailure";
  CreateJob(job);
  Json pod = ActivePods("of")[0];
  pod["status"]["phase"] = "Running";
  pod["status"]["containerStatuses"] = Json::array(
      {{{"name", "main"}, {"ready", false}, {"restartCount", 2}, {"image", "busybox"},
        {"imageID", ""}, {"state", {{"running", {{"startedAt", "2026-01-01T00:00:00Z"}}}}}}});
  ASSERT_TRUE(base_.UpdateStatus(pods_, pod).ok());
  Settle();
  EXPECT_EQ(Conditions("of"), (std::vector<std::string>{"FailureTarget=True/BackoffLimitExceeded",
                                                        "Failed=True/BackoffLimitExceeded"}));
  EXPECT_TRUE(Pods("of").empty());
}

TEST_F(JobControllerTest, PodFailurePolicyActions) {
  struct Case {
    std::string name;
    Json rules;
    int exit_code;
    Json pod_conditions;
    std::vector<std::string> want_conditions;
    int want_failed;
    size_t want_active;
  };
  Json disruption = Json::array({{{"type", "DisruptionTarget"}, {"status", "True"}}});
  const Case cases[] = {
      {"FailJob on exit code 42",
       Json::array({ExitCodeRule("FailJob", "In", {42})}),
       42, Json::array(),
       {"FailureTarget=True/PodFailurePolicy", "Failed=True/PodFailurePolicy"}, 1, 0},
      {"Ignore on DisruptionTarget",
       Json::array({ConditionRule("Ignore", "DisruptionTarget")}),
       137, disruption, {}, 0, 1},
      {"Count is default handling",
       Json::array({ExitCodeRule("Count", "In", {3})}),
       3, Json::array(), {}, 1, 0},
  };
  int n = 0;
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string name = "pfp" + std::to_string(n++);
    CreateJob(WithPolicy(MakeJob(name).Obj(), c.rules));
    auto pods = ActivePods(name);
    ASSERT_EQ(pods.size(), 1u);
    Finish(pods[0], c.exit_code, c.pod_conditions);
    EXPECT_EQ(Conditions(name), c.want_conditions);
    EXPECT_EQ(Count(name, "failed"), c.want_failed);
    EXPECT_EQ(ActivePods(name).size(), c.want_active);
  }
  Json msg = Status("pfp0")["conditions"][1]["message"];
  EXPECT_EQ(msg, "Container main for pod default/" +
                     api::meta::GetName(Pods("pfp0")[0]) +
                     " failed with exit code 42 matching FailJob rule at index 0");
}

TEST_F(JobControllerTest, FailJobTerminatesOtherPodsBeforeFailed) {
  Json job = WithPolicy(MakeJob("fj").Completions(3).Parallelism(3).Obj(),
                        Json::array({ExitCodeRule("FailJob", "In", {42})}));
  CreateJob(job);
  auto pods = ActivePods("fj");
  ASSERT_EQ(pods.size(), 3u);
  // Give the other pods a node so deletion is graceful (they terminate).
  for (int i = 1; i < 3; ++i) Bind(pods[i]);
  Finish(pods[0], 42);
  EXPECT_EQ(Conditions("fj"), (std::vector<std::string>{"FailureTarget=True/PodFailurePolicy"}))
      << "Failed waits for terminating pods";
  EXPECT_EQ(Count("fj", "terminating"), 2);
  EXPECT_EQ(Count("fj", "active"), 0);
  // The node finishes killing them.
  for (const Json& p : Pods("fj")) {
    if (api::meta::IsBeingDeleted(p) && p["status"].value("phase", "") != "Failed") {
      Finish(p, 143);
    }
  }
  EXPECT_EQ(Conditions("fj"), (std::vector<std::string>{"FailureTarget=True/PodFailurePolicy",
                                                        "Failed=True/PodFailurePolicy"}));
  EXPECT_EQ(Count("fj", "failed"), 3);
  EXPECT_EQ(Count("fj", "terminating"), 0);
}

TEST_F(JobControllerTest, ActiveDeadlineFailsJob) {
  CreateJob(MakeJob("d").Set(Json::json_pointer("/spec/activeDeadlineSeconds"), 60).Obj());
  ASSERT_EQ(ActivePods("d").size(), 1u);
  Advance(absl::Seconds(59));
  EXPECT_TRUE(Conditions("d").empty());
  Advance(absl::Seconds(1));
  EXPECT_EQ(Conditions("d"), (std::vector<std::string>{"FailureTarget=True/DeadlineExceeded",
                                                       "Failed=True/DeadlineExceeded"}));
  EXPECT_EQ(Status("d")["conditions"][1]["message"],
            "Job was active longer than specified deadline");
  EXPECT_TRUE(Pods("d").empty());
  EXPECT_EQ(CountEvents("DeadlineExceeded"), 1);
}

TEST_F(JobControllerTest, PodReplacementPolicyFailedWaitsForTerminalPod) {
  struct Case {
    std::string name;
    std::string policy;
    size_t want_active_while_terminating;
  };
  const Case cases[] = {{"TerminatingOrFailed replaces at once", "TerminatingOrFailed", 1},
                        {"Failed waits", "Failed", 0}};
  int n = 0;
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string name = "rp" + std::to_string(n++);
    CreateJob(MakeJob(name)
                  .Set(Json::json_pointer("/spec/podReplacementPolicy"), c.policy)
                  .Set(Json::json_pointer("/spec/backoffLimit"), 5)
                  .Obj());
    Json p = ActivePods(name)[0];
    Bind(p);
    ASSERT_TRUE(base_.Delete(pods_, "default", api::meta::GetName(p)).ok());
    Settle();
    EXPECT_EQ(Count(name, "terminating"), 1);
    Advance(absl::Seconds(10));  // Past any failure backoff.
    EXPECT_EQ(ActivePods(name).size(), c.want_active_while_terminating);
  }
}

}  // namespace
}  // namespace batchd::controllers::job::testing
