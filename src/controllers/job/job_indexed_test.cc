// Job controller, Indexed mode: indexes, env injection, completedIndexes,
// backoffLimitPerIndex / maxFailedIndexes / FailIndex, successPolicy,
// elastic scale-down.
#include "api/batch/v1/batch_v1.h"
#include "controllers/job/job_test_env.h"

namespace batchd::controllers::job::testing {
namespace {

using api::testing::MakeJob;

Json Indexed(const std::string& name, int completions, int parallelism) {
  return MakeJob(name)
      .Completions(completions)
      .Parallelism(parallelism)
      .Set(Json::json_pointer("/spec/completionMode"), "Indexed")
      .Obj();
}

int IndexOf(const Json& pod) {
  return std::stoi(api::meta::GetAnnotation(pod, api::batch_v1::kJobCompletionIndexAnnotation)
                       .value_or("-1"));
}

Json PodForIndex(const std::vector<Json>& pods, int ix) {
  for (const Json& p : pods) {
    if (IndexOf(p) == ix) return p;
  }
  return Json();
}

TEST_F(JobControllerTest, IndexedCreatesIndexesWithEnvAndHostname) {
  Json job = Indexed("ix", 3, 3);
  job["spec"]["template"]["spec"]["initContainers"] =
      Json::array({{{"name", "init"}, {"image", "busybox"}}});
  CreateJob(job);
  std::vector<Json> pods = ActivePods("ix");
  ASSERT_EQ(pods.size(), 3u);
  std::set<int> seen;
  for (const Json& p : pods) {
    int ix = IndexOf(p);
    seen.insert(ix);
    SCOPED_TRACE(ix);
    EXPECT_EQ(p["metadata"]["generateName"], "ix-" + std::to_string(ix) + "-");
    EXPECT_EQ(api::meta::GetLabel(p, api::batch_v1::kJobCompletionIndexAnnotation),
              std::to_string(ix));
    EXPECT_EQ(p["spec"]["hostname"], "ix-" + std::to_string(ix));
    for (const char* list : {"containers", "initContainers"}) {
      const Json& env = p["spec"][list][0]["env"];
      ASSERT_TRUE(env.is_array()) << list;
      EXPECT_EQ(env.back()["name"], "JOB_COMPLETION_INDEX");
      EXPECT_EQ(env.back()["valueFrom"]["fieldRef"]["fieldPath"],
                "metadata.labels['batch.kubernetes.io/job-completion-index']");
    }
  }
  EXPECT_EQ(seen, (std::set<int>{0, 1, 2}));
}

TEST_F(JobControllerTest, IndexedCompletedIndexesAndReplacement) {
  CreateJob(Indexed("ix", 5, 2));
  struct Step {
    std::string name;
    int finish_index;
    int exit_code;
    std::string want_completed;
    int want_succeeded;
  };
  const Step steps[] = {
      {"index 1 succeeds", 1, 0, "1", 1},
      {"index 0 succeeds", 0, 0, "0,1", 2},
      {"index 2 fails", 2, 1, "0,1", 2},
  };
  for (const auto& s : steps) {
    SCOPED_TRACE(s.name);
    Json p = PodForIndex(ActivePods("ix"), s.finish_index);
    ASSERT_FALSE(p.is_null());
    Finish(p, s.exit_code);
    EXPECT_EQ(Status("ix").value("completedIndexes", ""), s.want_completed);
    EXPECT_EQ(Count("ix", "succeeded"), s.want_succeeded);
  }
  Advance(absl::Seconds(10));
  std::set<int> active;
  for (const Json& p : ActivePods("ix")) active.insert(IndexOf(p));
  EXPECT_EQ(active, (std::set<int>{2, 3})) << "failed index 2 is retried first";
  for (int round = 0; round < 3; ++round) FinishAll("ix", 0);
  EXPECT_EQ(Status("ix").value("completedIndexes", ""), "0-4");
  EXPECT_EQ(Conditions("ix").back(), "Complete=True/CompletionsReached");
}

TEST_F(JobControllerTest, BackoffLimitPerIndexFailsOnlyThatIndex) {
  Json job = Indexed("pi", 3, 3);
  job["spec"]["backoffLimitPerIndex"] = 1;
  CreateJob(job);
  ASSERT_EQ(ActivePods("pi").size(), 3u);
  Finish(PodForIndex(ActivePods("pi"), 1), 1);
  EXPECT_EQ(ActivePods("pi").size(), 2u);
  Advance(absl::Seconds(10));
  Json retry = PodForIndex(ActivePods("pi"), 1);
  ASSERT_FALSE(retry.is_null()) << "index 1 retried after 10s";
  EXPECT_EQ(api::meta::GetAnnotation(retry, api::batch_v1::kJobIndexFailureCountAnnotation), "1");
  Finish(retry, 1);
  EXPECT_EQ(Status("pi").value("failedIndexes", ""), "1");
  Advance(absl::Seconds(60));
  EXPECT_TRUE(PodForIndex(ActivePods("pi"), 1).is_null()) << "failed index not retried";
  FinishAll("pi", 0);
  EXPECT_EQ(Status("pi").value("completedIndexes", ""), "0,2");
  EXPECT_EQ(Count("pi", "failed"), 2);
  EXPECT_EQ(Conditions("pi"), (std::vector<std::string>{"FailureTarget=True/FailedIndexes",
                                                        "Failed=True/FailedIndexes"}));
}

TEST_F(JobControllerTest, MaxFailedIndexesExceeded) {
  Json job = Indexed("mf", 4, 4);
  job["spec"]["backoffLimitPerIndex"] = 0;
  job["spec"]["maxFailedIndexes"] = 1;
  CreateJob(job);
  Finish(PodForIndex(ActivePods("mf"), 0), 1);
  EXPECT_TRUE(Conditions("mf").empty());
  Finish(PodForIndex(ActivePods("mf"), 3), 1);
  EXPECT_EQ(Status("mf").value("failedIndexes", ""), "0,3");
  EXPECT_EQ(Conditions("mf"),
            (std::vector<std::string>{"FailureTarget=True/MaxFailedIndexesExceeded",
                                      "Failed=True/MaxFailedIndexesExceeded"}));
  EXPECT_TRUE(ActivePods("mf").empty());
}

TEST_F(JobControllerTest, FailIndexRuleFailsIndexImmediately) {
  Json job = Indexed("fi", 2, 2);
  job["spec"]["backoffLimitPerIndex"] = 3;
  job["spec"]["podFailurePolicy"] = {{"rules", Json::array({ExitCodeRule("FailIndex", "In", {7})})}};
  CreateJob(job);
  Finish(PodForIndex(ActivePods("fi"), 0), 7);
  EXPECT_EQ(Status("fi").value("failedIndexes", ""), "0");
  Advance(absl::Minutes(1));
  EXPECT_TRUE(PodForIndex(ActivePods("fi"), 0).is_null());
}

TEST_F(JobControllerTest, SuccessPolicyCompletesEarly) {
  struct Case {
    std::string name;
    Json rule;
    std::vector<int> succeed;
    bool want_complete;
  };
  const Case cases[] = {
      {"succeededIndexes met", {{"succeededIndexes", "0"}}, {0}, true},
      {"succeededIndexes not met", {{"succeededIndexes", "0-1"}}, {0}, false},
      {"succeededCount met", {{"succeededCount", 2}}, {1, 3}, true},
      {"count within indexes", {{"succeededIndexes", "2-3"}, {"succeededCount", 1}}, {0, 1}, false},
  };
  int n = 0;
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string name = "sp" + std::to_string(n++);
    Json job = Indexed(name, 4, 4);
    job["spec"]["successPolicy"] = {{"rules", Json::array({c.rule})}};
    CreateJob(job);
    for (int ix : c.succeed) Finish(PodForIndex(ActivePods(name), ix), 0);
    if (c.want_complete) {
      EXPECT_EQ(Conditions(name), (std::vector<std::string>{"SuccessCriteriaMet=True/SuccessPolicy",
                                                            "Complete=True/SuccessPolicy"}));
      EXPECT_TRUE(ActivePods(name).empty()) << "lingering pods deleted";
    } else {
      EXPECT_TRUE(Conditions(name).empty());
    }
  }
}

TEST_F(JobControllerTest, ElasticIndexedScaleDown) {
  CreateJob(Indexed("el", 4, 4));
  Finish(PodForIndex(ActivePods("el"), 3), 0);
  EXPECT_EQ(Count("el", "succeeded"), 1);
  UpdateJobSpec("el", {{"completions", 2}, {"parallelism", 2}});
  std::set<int> active;
  for (const Json& p : ActivePods("el")) active.insert(IndexOf(p));
  EXPECT_EQ(active, (std::set<int>{0, 1}));
  EXPECT_EQ(Count("el", "succeeded"), 0) << "index 3 is out of range now";
  FinishAll("el", 0);
  EXPECT_EQ(Status("el").value("completedIndexes", ""), "0,1");
  EXPECT_EQ(Conditions("el").back(), "Complete=True/CompletionsReached");
}

}  // namespace
}  // namespace batchd::controllers::job::testing
