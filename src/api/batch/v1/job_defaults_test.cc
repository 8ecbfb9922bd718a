#include <functional>
#include <string>

#include "api/batch/v1/batch_v1.h"
#include "api/batch/v1/internal/test_fixtures.h"
#include "gtest/gtest.h"

namespace batchd::api::batch_v1 {
namespace {

using testing::RawJob;

TEST(SetDefaultsJobTest, Table) {
  struct Case {
    std::string name;
    std::function<void(Json&)> mutate;
    Json want_spec_subset;  // Every member must be present and equal.
    std::vector<std::string> want_absent;
  };
  const Case cases[] = {
      {"nothing set",
       [](Json&) {},
       {{"completions", 1}, {"parallelism", 1}, {"backoffLimit", 6},
        {"completionMode", "NonIndexed"}, {"suspend", false}, {"manualSelector", false},
        {"podReplacementPolicy", "TerminatingOrFailed"}},
       {}},
      {"parallelism only is a work queue",
       [](Json& j) { j["spec"]["parallelism"] = 3; },
       {{"parallelism", 3}},
       {"completions"}},
      {"completions only",
       [](Json& j) { j["spec"]["completions"] = 5; },
       {{"completions", 5}, {"parallelism", 1}},
       {}},
      {"backoffLimitPerIndex makes backoffLimit MaxInt32",
       [](Json& j) {
         j["spec"]["backoffLimitPerIndex"] = 2;
         j["spec"]["completionMode"] = "Indexed";
       },
       {{"backoffLimit", 2147483647}, {"completionMode", "Indexed"}},
       {}},
      {"explicit values kept",
       [](Json& j) {
         j["spec"]["backoffLimit"] = 0;
         j["spec"]["suspend"] = true;
         j["spec"]["manualSelector"] = true;
         j["spec"]["podReplacementPolicy"] = "Failed";
       },
       {{"backoffLimit", 0}, {"suspend", true}, {"manualSelector", true},
        {"podReplacementPolicy", "Failed"}},
       {}},
      {"podFailurePolicy implies Failed replacement",
       [](Json& j) {
         j["spec"]["podFailurePolicy"] = Json::parse(
             R"({"rules":[{"action":"Ignore","onPodConditions":[{"type":"DisruptionTarget"}]}]})");
       },
       {{"podReplacementPolicy", "Failed"},
        {"podFailurePolicy",
         Json::parse(R"({"rules":[{"action":"Ignore",
                         "onPodConditions":[{"type":"DisruptionTarget","status":"True"}]}]})")}},
       {}},
      {"pattern status kept when set",
       [](Json& j) {
         j["spec"]["podFailurePolicy"] = Json::parse(
             R"({"rules":[{"action":"Ignore","onPodConditions":[{"type":"X","status":"False"}]}]})");
       },
       {{"podFailurePolicy",
         Json::parse(R"({"rules":[{"action":"Ignore",
                         "onPodConditions":[{"type":"X","status":"False"}]}]})")}},
       {}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Json job = RawJob();
    c.mutate(job);
    SetDefaultsJob(job);
    for (const auto& [k, v] : c.want_spec_subset.items()) {
      ASSERT_TRUE(job["spec"].contains(k)) << k;
      EXPECT_EQ(job["spec"][k], v) << k;
    }
    for (const std::string& k : c.want_absent) EXPECT_FALSE(job["spec"].contains(k)) << k;
  }
}

TEST(SetDefaultsJobTest, PodTemplateDefaulted) {
  Json job = RawJob();
  job["spec"]["template"]["spec"].erase("restartPolicy");
  SetDefaultsJob(job);
  // SetDefaults_PodSpec runs on the template (restartPolicy Always, which
  // Job validation then rejects, exactly as Kubernetes does).
  EXPECT_EQ(job["spec"]["template"]["spec"]["restartPolicy"], "Always");
  EXPECT_EQ(job["spec"]["template"]["spec"]["dnsPolicy"], "ClusterFirst");
}

TEST(SetDefaultsJobTest, LabelsCopiedFromTemplateOnlyWhenEmpty) {
  struct Case {
    std::string name;
    Json job_labels;  // null: absent.
    Json want;
  };
  const Case cases[] = {
      {"absent", nullptr, {{"app", "pi"}}},
      {"empty", Json::object(), {{"app", "pi"}}},
      {"own labels kept", {{"team", "a"}}, {{"team", "a"}}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Json job = RawJob();
    job["spec"]["template"]["metadata"]["labels"] = {{"app", "pi"}};
    if (!c.job_labels.is_null()) job["metadata"]["labels"] = c.job_labels;
    SetDefaultsJob(job);
    EXPECT_EQ(job["metadata"]["labels"], c.want);
  }
}

TEST(PrepareJobForCreateTest, GeneratesSelectorAndLabels) {
  Json job = RawJob();
  job["status"] = {{"active", 3}};
  SetDefaultsJob(job);
  PrepareJobForCreate(job);
  EXPECT_EQ(job["status"], Json::object());
  EXPECT_EQ(job["spec"]["selector"],
            Json::parse(R"({"matchLabels":{"batch.kubernetes.io/controller-uid":"uid-1"}})"));
  EXPECT_EQ(job["spec"]["template"]["metadata"]["labels"], Json::parse(R"({
      "batch.kubernetes.io/controller-uid": "uid-1", "batch.kubernetes.io/job-name": "pi",
      "controller-uid": "uid-1", "job-name": "pi"})"));
}

TEST(PrepareJobForCreateTest, UnlabelledJobGetsGeneratedLabelsInRegistryOrder) {
  // The registry prepares, then defaults (Kubernetes defaults again when it
  // decodes the stored object), so an unlabelled Job ends up with the
  // generated labels, as `kubectl get job -o yaml` shows on a real cluster.
  Json job = RawJob();
  PrepareJobForCreate(job);
  SetDefaultsJob(job);
  EXPECT_EQ(job["metadata"]["labels"], job["spec"]["template"]["metadata"]["labels"]);
  EXPECT_EQ(job["metadata"]["labels"]["batch.kubernetes.io/job-name"], "pi");
}

TEST(PrepareJobForCreateTest, KeepsUserLabelsAndManualSelector) {
  Json job = RawJob();
  job["spec"]["template"]["metadata"]["labels"] = {{"job-name", "mine"}, {"app", "x"}};
  SetDefaultsJob(job);
  PrepareJobForCreate(job);
  EXPECT_EQ(job["spec"]["template"]["metadata"]["labels"]["job-name"], "mine");
  EXPECT_EQ(job["spec"]["template"]["metadata"]["labels"]["app"], "x");

  Json manual = RawJob();
  manual["spec"]["manualSelector"] = true;
  manual["spec"]["selector"] = {{"matchLabels", {{"app", "x"}}}};
  SetDefaultsJob(manual);
  PrepareJobForCreate(manual);
  EXPECT_EQ(manual["spec"]["selector"], Json::parse(R"({"matchLabels":{"app":"x"}})"));
  EXPECT_FALSE(manual["spec"]["template"].contains("metadata"));
}

TEST(PrepareJobForCreateTest, RestoredBackupGetsItsOwnSelector) {
  // `kubectl get job -o yaml` of the object this one was, then `kubectl apply`.
  Json job = RawJob();
  job["metadata"]["labels"] = {{"controller-uid", "old"}, {"app", "x"}};
  job["spec"]["selector"] = {{"matchLabels", {{"batch.kubernetes.io/controller-uid", "old"}}}};
  job["spec"]["template"]["metadata"]["labels"] = {
      {"batch.kubernetes.io/controller-uid", "old"}, {"controller-uid", "old"},
      {"batch.kubernetes.io/job-name", "pi"}, {"job-name", "pi"}, {"app", "x"}};
  SetDefaultsJob(job);
  PrepareJobForCreate(job);
  EXPECT_EQ(job["spec"]["selector"],
            Json::parse(R"({"matchLabels":{"batch.kubernetes.io/controller-uid":"uid-1"}})"));
  EXPECT_EQ(job["spec"]["template"]["metadata"]["labels"], Json::parse(R"({
      "batch.kubernetes.io/controller-uid": "uid-1", "batch.kubernetes.io/job-name": "pi",
      "controller-uid": "uid-1", "job-name": "pi", "app": "x"})"));
  EXPECT_EQ(job["metadata"]["labels"], Json::parse(R"({"controller-uid": "uid-1", "app": "x"})"));
  EXPECT_TRUE(ValidateJob(job).empty());
}

TEST(SetDefaultsCronJobTest, SpecAndTemplate) {
  Json cj = testing::RawCronJob();
  SetDefaultsCronJob(cj);
  EXPECT_EQ(cj["spec"]["concurrencyPolicy"], "Allow");
  EXPECT_EQ(cj["spec"]["suspend"], false);
  EXPECT_EQ(cj["spec"]["successfulJobsHistoryLimit"], 3);
  EXPECT_EQ(cj["spec"]["failedJobsHistoryLimit"], 1);
  const Json& job_spec = cj["spec"]["jobTemplate"]["spec"];
  // JobSpec defaults are not applied to templates; pod spec defaults are.
  EXPECT_FALSE(job_spec.contains("backoffLimit"));
  EXPECT_FALSE(job_spec.contains("completions"));
  EXPECT_EQ(job_spec["template"]["spec"]["dnsPolicy"], "ClusterFirst");

  Json set = testing::RawCronJob();
  set["spec"]["concurrencyPolicy"] = "Forbid";
  set["spec"]["successfulJobsHistoryLimit"] = 0;
  SetDefaultsCronJob(set);
  EXPECT_EQ(set["spec"]["concurrencyPolicy"], "Forbid");
  EXPECT_EQ(set["spec"]["successfulJobsHistoryLimit"], 0);
}

}  // namespace
}  // namespace batchd::api::batch_v1
