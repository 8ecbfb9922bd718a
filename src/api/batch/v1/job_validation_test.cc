#include <functional>
#include <string>
#include <vector>

#include "api/batch/v1/batch_v1.h"
#include "api/batch/v1/internal/test_fixtures.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace batchd::api::batch_v1 {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::Created;
using testing::Messages;
using testing::RawJob;

Json Pfp(const char* rules) { return Json::parse(std::string(R"({"rules":)") + rules + "}"); }

TEST(ValidateJobTest, Table) {
  struct Case {
    std::string name;
    std::function<void(Json&)> mutate;  // Applied before defaulting.
    std::vector<std::string> want;
  };
  const Case cases[] = {
      {"valid", [](Json&) {}, {}},
      {"negative parallelism", [](Json& j) { j["spec"]["parallelism"] = -1; },
       {"spec.parallelism: Invalid value: -1: must be greater than or equal to 0"}},
      {"negative completions", [](Json& j) { j["spec"]["completions"] = -2; },
       {"spec.completions: Invalid value: -2: must be greater than or equal to 0"}},
      {"negative backoffLimit", [](Json& j) { j["spec"]["backoffLimit"] = -1; },
       {"spec.backoffLimit: Invalid value: -1: must be greater than or equal to 0"}},
      {"negative activeDeadlineSeconds", [](Json& j) { j["spec"]["activeDeadlineSeconds"] = -5; },
       {"spec.activeDeadlineSeconds: Invalid value: -5: must be greater than or equal to 0"}},
      {"negative ttl", [](Json& j) { j["spec"]["ttlSecondsAfterFinished"] = -1; },
       {"spec.ttlSecondsAfterFinished: Invalid value: -1: must be greater than or equal to 0"}},
      {"restartPolicy Always",
       [](Json& j) { j["spec"]["template"]["spec"]["restartPolicy"] = "Always"; },
       {"spec.template.spec.restartPolicy: Required value: valid values: \"OnFailure\", \"Never\""}},
      {"restartPolicy defaulted", [](Json& j) { j["spec"]["template"]["spec"].erase("restartPolicy"); },
       {"spec.template.spec.restartPolicy: Required value: valid values: \"OnFailure\", \"Never\""}},
      {"unknown completionMode", [](Json& j) { j["spec"]["completionMode"] = "Foo"; },
       {"spec.completionMode: Unsupported value: \"Foo\": supported values: \"NonIndexed\", \"Indexed\""}},
      {"Indexed needs completions",
       [](Json& j) {
         j["spec"]["completionMode"] = "Indexed";
         j["spec"]["parallelism"] = 2;
       },
       {"spec.completions: Required value: when completion mode is Indexed"}},
      {"Indexed parallelism cap",
       [](Json& j) {
         j["spec"]["completionMode"] = "Indexed";
         j["spec"]["completions"] = 5;
         j["spec"]["parallelism"] = 100001;
       },
       {"spec.parallelism: Invalid value: 100001: must be less than or equal to 100000 when "
        "completion mode is Indexed"}},
      {"backoffLimitPerIndex needs Indexed", [](Json& j) { j["spec"]["backoffLimitPerIndex"] = 1; },
       {"spec.backoffLimitPerIndex: Invalid value: 1: requires indexed completion mode"}},
      {"maxFailedIndexes needs backoffLimitPerIndex",
       [](Json& j) {
         j["spec"]["completionMode"] = "Indexed";
         j["spec"]["completions"] = 3;
         j["spec"]["maxFailedIndexes"] = 1;
       },
       {"spec.backoffLimitPerIndex: Required value: when maxFailedIndexes is specified"}},
      {"maxFailedIndexes above completions",
       [](Json& j) {
         j["spec"]["completionMode"] = "Indexed";
         j["spec"]["completions"] = 3;
         j["spec"]["backoffLimitPerIndex"] = 1;
         j["spec"]["maxFailedIndexes"] = 5;
       },
       {"spec.maxFailedIndexes: Invalid value: 5: must be less than or equal to completions"}},
      {"FailIndex needs backoffLimitPerIndex",
       [](Json& j) {
         j["spec"]["podFailurePolicy"] =
             Pfp(R"([{"action":"FailIndex","onExitCodes":{"operator":"In","values":[1]}}])");
       },
       {"spec.podFailurePolicy.rules[0].action: Invalid value: \"FailIndex\": requires the "
        "backoffLimitPerIndex to be set"}},
      {"unknown action",
       [](Json& j) {
         j["spec"]["podFailurePolicy"] =
             Pfp(R"([{"action":"Retry","onExitCodes":{"operator":"In","values":[1]}}])");
       },
       {"spec.podFailurePolicy.rules[0].action: Unsupported value: \"Retry\": supported values: "
        "\"Count\", \"FailIndex\", \"FailJob\", \"Ignore\""}},
      {"exit code 0 with In",
       [](Json& j) {
         j["spec"]["podFailurePolicy"] =
             Pfp(R"([{"action":"FailJob","onExitCodes":{"operator":"In","values":[0,1]}}])");
       },
       {"spec.podFailurePolicy.rules[0].onExitCodes.values[0]: Invalid value: 0: must not be 0 "
        "for the In operator"}},
      {"exit codes unsorted and duplicated",
       [](Json& j) {
         j["spec"]["podFailurePolicy"] =
             Pfp(R"([{"action":"FailJob","onExitCodes":{"operator":"NotIn","values":[3,1,1]}}])");
       },
       {"spec.podFailurePolicy.rules[0].onExitCodes.values[2]: Duplicate value: 1",
        "spec.podFailurePolicy.rules[0].onExitCodes.values: Invalid value: [3,1,1]: must be ordered"}},
      {"unknown container and operator",
       [](Json& j) {
         j["spec"]["podFailurePolicy"] = Pfp(
             R"([{"action":"FailJob","onExitCodes":{"containerName":"x","operator":"Gt","values":[1]}}])");
       },
       {"spec.podFailurePolicy.rules[0].onExitCodes.operator: Unsupported value: \"Gt\": "
        "supported values: \"In\", \"NotIn\"",
        "spec.podFailurePolicy.rules[0].onExitCodes.containerName: Invalid value: \"x\": must be "
        "one of the container or initContainer names in the pod template"}},
      {"neither requirement",
       [](Json& j) { j["spec"]["podFailurePolicy"] = Pfp(R"([{"action":"Ignore"}])"); },
       {"spec.podFailurePolicy.rules[0]: Invalid value: null: specifying one of OnExitCodes and "
        "OnPodConditions is required"}},
      {"both requirements",
       [](Json& j) {
         j["spec"]["podFailurePolicy"] = Pfp(
             R"([{"action":"Ignore","onExitCodes":{"operator":"In","values":[1]},
                  "onPodConditions":[{"type":"DisruptionTarget"}]}])");
       },
       {"spec.podFailurePolicy.rules[0]: Invalid value: null: specifying both OnExitCodes and "
        "OnPodConditions is not supported"}},
      {"too many rules",
       [](Json& j) {
         Json rules = Json::array();
         for (int i = 0; i < 21; ++i) {
           rules.push_back(Json::parse(R"({"action":"Ignore","onExitCodes":{"operator":"In","values":[1]}})"));
         }
         j["spec"]["podFailurePolicy"] = {{"rules", rules}};
       },
       {"spec.podFailurePolicy.rules: Too many: 21: must have at most 20 items"}},
      {"podFailurePolicy needs Never",
       [](Json& j) {
         j["spec"]["template"]["spec"]["restartPolicy"] = "OnFailure";
         j["spec"]["podFailurePolicy"] = Pfp(R"([{"action":"Ignore","onPodConditions":[{"type":"X"}]}])");
       },
       {"spec.template.spec.restartPolicy: Invalid value: \"OnFailure\": only \"Never\" is "
        "supported when podFailurePolicy is specified"}},
      {"podFailurePolicy needs Failed replacement",
       [](Json& j) {
         j["spec"]["podReplacementPolicy"] = "TerminatingOrFailed";
         j["spec"]["podFailurePolicy"] = Pfp(R"([{"action":"Ignore","onPodConditions":[{"type":"X"}]}])");
       },
       {"spec.podReplacementPolicy: Unsupported value: \"TerminatingOrFailed\": supported values: "
        "\"Failed\""}},
      {"unknown podReplacementPolicy", [](Json& j) { j["spec"]["podReplacementPolicy"] = "Never"; },
       {"spec.podReplacementPolicy: Unsupported value: \"Never\": supported values: \"Failed\", "
        "\"TerminatingOrFailed\""}},
      {"successPolicy needs Indexed",
       [](Json& j) { j["spec"]["successPolicy"] = Json::parse(R"({"rules":[{"succeededCount":1}]})"); },
       {"spec.successPolicy: Invalid value: {\"rules\":[{\"succeededCount\":1}]}: requires indexed "
        "completion mode"}},
      {"successPolicy bad indexes and count",
       [](Json& j) {
         j["spec"]["completionMode"] = "Indexed";
         j["spec"]["completions"] = 5;
         j["spec"]["successPolicy"] = Json::parse(
             R"({"rules":[{"succeededIndexes":"1-0"},{"succeededCount":6},
                          {"succeededIndexes":"0,2","succeededCount":3},{}]})");
       },
       {"spec.successPolicy.rules[0].succeededIndexes: Invalid value: \"1-0\": error parsing "
        "succeededIndexes: non-increasing order, previous: 1, current: 0",
        "spec.successPolicy.rules[1].succeededCount: Invalid value: 6: must be less than or equal "
        "to 5 (the number of specified completions)",
        "spec.successPolicy.rules[2].succeededCount: Invalid value: 3: must be less than or equal "
        "to 2 (the number of indexes in the specified succeededIndexes field)",
        "spec.successPolicy.rules[3]: Required value: at least one of succeededCount or "
        "succeededIndexes must be specified"}},
      {"managedBy not a domain path", [](Json& j) { j["spec"]["managedBy"] = "foo"; },
       {"spec.managedBy: Invalid value: \"foo\": must be a domain-prefixed path (such as "
        "\"acme.io/foo\")"}},
      {"managedBy ok", [](Json& j) { j["spec"]["managedBy"] = "kueue.x-k8s.io/multikueue"; }, {}},
      {"manual selector mismatch",
       [](Json& j) {
         j["spec"]["manualSelector"] = true;
         j["spec"]["selector"] = {{"matchLabels", {{"app", "a"}}}};
         j["spec"]["template"]["metadata"]["labels"] = {{"app", "b"}};
       },
       {"spec.template.metadata.labels: Invalid value: {\"app\":\"b\"}: `selector` does not match "
        "template `labels`"}},
      {"manual selector missing",
       [](Json& j) { j["spec"]["manualSelector"] = true; },
       {"spec.selector: Required value",
        "spec.template.metadata.labels: Invalid value: {}: `selector` does not match template "
        "`labels`"}},
      {"manual selector with expressions matches",
       [](Json& j) {
         j["spec"]["manualSelector"] = true;
         j["spec"]["selector"] = Json::parse(
             R"({"matchExpressions":[{"key":"app","operator":"In","values":["a","b"]},
                                     {"key":"tier","operator":"DoesNotExist"}]})");
         j["spec"]["template"]["metadata"]["labels"] = {{"app", "b"}};
       },
       {}},
      {"bad selector operator",
       [](Json& j) {
         j["spec"]["manualSelector"] = true;
         j["spec"]["selector"] = Json::parse(R"({"matchExpressions":[{"key":"app","operator":"Is"}]})");
       },
       {"spec.selector.matchExpressions[0].operator: Invalid value: \"Is\": not a valid selector "
        "operator"}},
      {"conflicting job-name label",
       [](Json& j) { j["spec"]["template"]["metadata"]["labels"] = {{"job-name", "other"}}; },
       {"spec.template.metadata.labels[job-name]: Invalid value: "
        "{\"batch.kubernetes.io/controller-uid\":\"uid-1\",\"batch.kubernetes.io/job-name\":\"pi\","
        "\"controller-uid\":\"uid-1\",\"job-name\":\"other\"}: must be 'pi'"}},
      {"indexed pod hostname too long",
       [](Json& j) {
         j["metadata"]["name"] = std::string(60, 'a');
         j["spec"]["completionMode"] = "Indexed";
         j["spec"]["completions"] = 1000;
       },
       {"metadata.name: Invalid value: \"" + std::string(60, 'a') +
        "\": will not able to create pod with invalid DNS label: " + std::string(60, 'a') + "-999"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Json job = RawJob();
    c.mutate(job);
    EXPECT_EQ(Messages(ValidateJob(Created(job))), c.want);
  }
}

TEST(ValidateJobTest, MetadataLeftToTheRegistry) {
  // ObjectMeta rules run in the registry for every kind; the hook adds only
  // Job-specific checks, so a bad name is not reported twice.
  Json job = RawJob();
  job["metadata"]["name"] = "Pi";
  EXPECT_THAT(Messages(ValidateJob(Created(job))), IsEmpty());
}

TEST(ValidateJobTest, GeneratedSelectorMustMatchUid) {
  Json job = Created(RawJob());
  job["spec"]["selector"]["matchLabels"]["batch.kubernetes.io/controller-uid"] = "other";
  job["spec"]["template"]["metadata"]["labels"]["batch.kubernetes.io/controller-uid"] = "other";
  EXPECT_THAT(Messages(ValidateJob(job)),
              ElementsAre(HasSubstr("spec.template.metadata.labels[batch.kubernetes.io/controller-uid]: "
                                    "Invalid value:"),
                          HasSubstr("spec.selector: Invalid value: {\"matchLabels\":{\"batch.kubernetes.io/"
                                    "controller-uid\":\"other\"}}: `selector` not auto-generated")));
}

TEST(ValidateJobTemplateSpecTest, Table) {
  struct Case {
    std::string name;
    Json spec_patch;
    std::vector<std::string> want;
  };
  const Case cases[] = {
      {"valid", Json::object(), {}},
      {"selector set", {{"selector", {{"matchLabels", {{"a", "b"}}}}}},
       {"spec.jobTemplate.spec.selector: Invalid value: {\"matchLabels\":{\"a\":\"b\"}}: "
        "`selector` will be auto-generated"}},
      {"manualSelector true", {{"manualSelector", true}},
       {"spec.jobTemplate.spec.manualSelector: Unsupported value: true: supported values: "
        "\"nil\", \"false\""}},
      {"negative parallelism", {{"parallelism", -1}},
       {"spec.jobTemplate.spec.parallelism: Invalid value: -1: must be greater than or equal to 0"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Json tmpl = testing::RawCronJob()["spec"]["jobTemplate"];
    tmpl["spec"].update(c.spec_patch);
    EXPECT_EQ(Messages(ValidateJobTemplateSpec(tmpl, Path("spec").Child("jobTemplate"))), c.want);
  }
}

}  // namespace
}  // namespace batchd::api::batch_v1
