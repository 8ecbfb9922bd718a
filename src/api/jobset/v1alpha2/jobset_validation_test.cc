#include <functional>
#include <string>
#include <vector>

#include "api/jobset/v1alpha2/jobset_v1alpha2.h"
#include "api/testing/jobset_builders.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace batchd::api::jobset_v1alpha2 {
namespace {

using api::testing::MakeJobSet;

// leader (1 Job of 1 pod) and workers (2 Jobs of 2 pods each).
Json Base() { return MakeJobSet("js").ReplicatedJob("leader", 1, 1).ReplicatedJob("workers", 2, 2).Obj(); }

Json& Rjob(Json& js, int i) { return js["spec"]["replicatedJobs"][i]; }

std::vector<std::string> Validate(Json js) {
  SetDefaultsJobSet(js);
  std::vector<std::string> out;
  for (const FieldError& e : ValidateJobSet(js)) out.push_back(e.Message());
  return out;
}

struct Case {
  std::string name;
  std::function<void(Json&)> mutate;
  // Each error message contains the matching entry, in order.
  std::vector<std::string> want;
};

void RunCases(const std::vector<Case>& cases) {
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Json js = Base();
    c.mutate(js);
    std::vector<std::string> got = Validate(js);
    ASSERT_EQ(got.size(), c.want.size()) << ::testing::PrintToString(got);
    for (size_t i = 0; i < got.size(); ++i) EXPECT_THAT(got[i], ::testing::HasSubstr(c.want[i]));
  }
}

TEST(ValidateJobSetTest, NamesAndReplicatedJobs) {
  const std::string long_group(64, 'g');
  RunCases({
      {"valid", [](Json&) {}, {}},
      {"job names too long",
       [](Json& js) { js["metadata"]["name"] = std::string(56, 'a'); },
       {"spec.replicatedJobs[0].name: Invalid value: \"" + std::string(56, 'a') +
            "-leader-0\": JobSet name is too long, job names generated for this JobSet will "
            "exceed 63 characters",
        "spec.replicatedJobs[0].name: Invalid value: \"" + std::string(56, 'a') +
            "-leader-0\": JobSet name is too long, pod names generated",
        "spec.replicatedJobs[1].name: Invalid value: \"" + std::string(56, 'a') +
            "-workers-1\": JobSet name is too long, job names generated",
        "spec.replicatedJobs[1].name: Invalid value: \"" + std::string(56, 'a') +
            "-workers-1\": JobSet name is too long, pod names generated"}},
      {"pod names too long", [](Json& js) { js["metadata"]["name"] = std::string(50, 'a'); },
       {"spec.replicatedJobs[0].name: Invalid value: \"" + std::string(50, 'a') +
            "-leader-0\": JobSet name is too long, pod names generated for this JobSet will "
            "exceed 63 characters",
        "spec.replicatedJobs[1].name: Invalid value: \"" + std::string(50, 'a') +
            "-workers-1\": JobSet name is too long, pod names"}},
      {"duplicate names", [](Json& js) { Rjob(js, 1)["name"] = "leader"; },
       {"spec.replicatedJobs[1].name: Duplicate value: \"leader\""}},
      {"name required", [](Json& js) { Rjob(js, 1)["name"] = ""; },
       {"spec.replicatedJobs[1].name: Required value"}},
      {"groupName not DNS-1035", [](Json& js) { Rjob(js, 0)["groupName"] = "Bad_Group"; },
       {"spec.replicatedJobs[0].groupName: Invalid value: \"Bad_Group\": a DNS-1035 label "
        "must consist of lower case alphanumeric characters"}},
      {"groupName too long", [&](Json& js) { Rjob(js, 0)["groupName"] = long_group; },
       {"spec.replicatedJobs[0].groupName: Invalid value: \"" + long_group +
        "\": .spec.replicatedJob[].groupName is too long, must be less than 63 characters"}},
      {"negative replicas", [](Json& js) { Rjob(js, 1)["replicas"] = -1; },
       {"spec.replicatedJobs[1].replicas: Invalid value: -1: spec.replicatedJobs[1].replicas "
        "in body should be greater than or equal to 0"}},
      {"replicas times parallelism overflows",
       [](Json& js) { Rjob(js, 1)["replicas"] = 1 << 30; },
       {"spec.replicatedJobs[1].replicas: Invalid value: 1073741824: the product of replicas "
        "and parallelism must not exceed 2147483647 for replicatedJob 'workers'"}},
      {"template validated as a JobTemplateSpec",
       [](Json& js) { Rjob(js, 1)["template"]["spec"]["backoffLimit"] = -1; },
       {"spec.replicatedJobs[1].template.spec.backoffLimit: Invalid value: -1: must be greater "
        "than or equal to 0"}},
      {"template pod restartPolicy Always",
       [](Json& js) {
         Rjob(js, 0)["template"]["spec"]["template"]["spec"]["restartPolicy"] = "Always";
       },
       {"spec.replicatedJobs[0].template.spec.template.spec.restartPolicy: Required value: "
        "valid values: \"OnFailure\", \"Never\""}},
      {"template with a selector",
       [](Json& js) { Rjob(js, 0)["template"]["spec"]["selector"] = {{"matchLabels", {{"a", "b"}}}}; },
       {"spec.replicatedJobs[0].template.spec.selector: Invalid value: {\"matchLabels\":{\"a\":"
        "\"b\"}}: `selector` will be auto-generated"}},
      {"template without containers", [](Json& js) { Rjob(js, 0)["template"] = nullptr; },
       {"spec.replicatedJobs[0].template.spec.template.spec.containers: Required value"}},
  });
}

TEST(ValidateJobSetTest, DependsOnAndStartupPolicy) {
  auto add_c = [](Json& js) {
    js["spec"]["replicatedJobs"].push_back(Rjob(js, 1));
    Rjob(js, 2)["name"] = "c";
  };
  RunCases({
      {"depends on an earlier job",
       [](Json& js) { Rjob(js, 1)["dependsOn"] = {{{"name", "leader"}, {"status", "Ready"}}}; },
       {}},
      {"depends on an unknown job",
       [](Json& js) { Rjob(js, 1)["dependsOn"] = {{{"name", "nope"}, {"status", "Ready"}}}; },
       {"spec.replicatedJobs[1].dependsOn[0].name: Invalid value: \"nope\": replicatedJob: "
        "workers cannot depend on replicatedJob: nope"}},
      {"depends on a later job",
       [&](Json& js) {
         add_c(js);
         Rjob(js, 1)["dependsOn"] = {{{"name", "c"}, {"status", "Complete"}}};
       },
       {"spec.replicatedJobs[1].dependsOn[0].name: Invalid value: \"c\": replicatedJob: "
        "workers cannot depend on replicatedJob: c"}},
      {"depends on itself",
       [](Json& js) { Rjob(js, 1)["dependsOn"] = {{{"name", "workers"}, {"status", "Ready"}}}; },
       {"replicatedJob: workers cannot depend on replicatedJob: workers"}},
      {"first job depends",
       [](Json& js) { Rjob(js, 0)["dependsOn"] = {{{"name", "workers"}, {"status", "Ready"}}}; },
       {"spec.replicatedJobs[0].dependsOn: Forbidden: DependsOn can't be set for the first "
        "ReplicatedJob",
        "spec.replicatedJobs[0].dependsOn[0].name: Invalid value: \"workers\": replicatedJob: "
        "leader cannot depend on replicatedJob: workers"}},
      {"more than one dependency",
       [&](Json& js) {
         add_c(js);
         Rjob(js, 2)["dependsOn"] = {{{"name", "leader"}, {"status", "Ready"}},
                                     {{"name", "workers"}, {"status", "Ready"}}};
       },
       {"spec.replicatedJobs[2].dependsOn: Too many: 2: must have at most 1 items"}},
      {"unknown dependency status",
       [](Json& js) { Rjob(js, 1)["dependsOn"] = {{{"name", "leader"}, {"status", "Running"}}}; },
       {"spec.replicatedJobs[1].dependsOn[0].status: Unsupported value: \"Running\": supported "
        "values: \"Ready\", \"Complete\""}},
      {"InOrder with dependsOn",
       [](Json& js) {
         js["spec"]["startupPolicy"] = {{"startupPolicyOrder", "InOrder"}};
         Rjob(js, 1)["dependsOn"] = {{{"name", "leader"}, {"status", "Ready"}}};
       },
       {"spec: Invalid value: \"object\": StartupPolicy and DependsOn APIs are mutually "
        "exclusive"}},
      {"unknown startup order",
       [](Json& js) { js["spec"]["startupPolicy"] = {{"startupPolicyOrder", "Random"}}; },
       {"spec.startupPolicy.startupPolicyOrder: Unsupported value: \"Random\""}},
  });
}

TEST(ValidateJobSetTest, FailureAndSuccessPolicies) {
  RunCases({
      {"rules ok",
       [](Json& js) {
         js["spec"]["failurePolicy"] = {
             {"maxRestarts", 3},
             {"rules",
              {{{"name", "a,b:c_1"}, {"action", "FailJobSet"},
                {"onJobFailureReasons", {"PodFailurePolicy"}},
                {"onJobFailureMessagePatterns", {"exit code [0-9]+"}},
                {"targetReplicatedJobs", {"workers"}}}}}};
       },
       {}},
      {"negative maxRestarts", [](Json& js) { js["spec"]["failurePolicy"]["maxRestarts"] = -1; },
       {"spec.failurePolicy.maxRestarts: Invalid value: -1: must be greater than or equal to 0"}},
      {"unknown action",
       [](Json& js) { js["spec"]["failurePolicy"]["rules"] = {{{"name", "r"}, {"action", "Retry"}}}; },
       {"spec.failurePolicy.rules[0].action: Unsupported value: \"Retry\": supported values: "
        "\"FailJobSet\", \"RestartJobSet\", \"RestartJobSetAndIgnoreMaxRestarts\""}},
      {"rule name regex",
       [](Json& js) { js["spec"]["failurePolicy"]["rules"] = {{{"name", "1rule-"}, {"action", "FailJobSet"}}}; },
       {"spec.failurePolicy.rules[0].name: Invalid value: \"1rule-\": invalid failure policy "
        "rule name '1rule-', a failure policy rule name must start with an alphabetic "
        "character"}},
      {"rule name too long",
       [](Json& js) {
         js["spec"]["failurePolicy"]["rules"] = {{{"name", std::string(129, 'r')}, {"action", "FailJobSet"}}};
       },
       {"invalid failure policy rule name of length 129, the rule name must be at least 1 "
        "characters long and at most 128 characters long"}},
      {"duplicate rule names",
       [](Json& js) {
         js["spec"]["failurePolicy"]["rules"] = {{{"name", "r"}, {"action", "FailJobSet"}},
                                                 {{"name", "s"}, {"action", "FailJobSet"}},
                                                 {{"name", "r"}, {"action", "RestartJobSet"}}};
       },
       {"spec.failurePolicy.rules[2].name: Invalid value: \"r\": rule names are not unique, "
        "rules with indices [0 2] all have the same name 'r'"}},
      {"unknown failure reason",
       [](Json& js) {
         js["spec"]["failurePolicy"]["rules"] = {
             {{"name", "r"}, {"action", "FailJobSet"}, {"onJobFailureReasons", {"OOMKilled"}}}};
       },
       {"spec.failurePolicy.rules[0].onJobFailureReasons[0]: Invalid value: \"OOMKilled\": "
        "invalid job failure reason 'OOMKilled' in failure policy is not a recognized job "
        "failure reason"}},
      {"bad message pattern",
       [](Json& js) {
         js["spec"]["failurePolicy"]["rules"] = {
             {{"name", "r"}, {"action", "FailJobSet"}, {"onJobFailureMessagePatterns", {"(a"}}}};
       },
       {"spec.failurePolicy.rules[0].onJobFailureMessagePatterns[0]: Invalid value: \"(a\": "
        "invalid regular expression: missing )"}},
      {"unknown rule target",
       [](Json& js) {
         js["spec"]["failurePolicy"]["rules"] = {
             {{"name", "r"}, {"action", "FailJobSet"}, {"targetReplicatedJobs", {"nope"}}}};
       },
       {"spec.failurePolicy.rules[0].targetReplicatedJobs[0]: Invalid value: \"nope\": invalid "
        "replicatedJob name 'nope' in failure policy does not appear in .spec.ReplicatedJobs"}},
      {"unknown restart strategy",
       [](Json& js) { js["spec"]["failurePolicy"]["restartStrategy"] = "Soon"; },
       {"spec.failurePolicy.restartStrategy: Unsupported value: \"Soon\""}},
      {"unknown success target",
       [](Json& js) { js["spec"]["successPolicy"] = {{"operator", "Any"}, {"targetReplicatedJobs", {"x"}}}; },
       {"spec.successPolicy.targetReplicatedJobs[0]: Invalid value: \"x\": invalid "
        "replicatedJob name 'x' does not appear in .spec.ReplicatedJobs"}},
      {"unknown success operator",
       [](Json& js) { js["spec"]["successPolicy"] = {{"operator", "Most"}}; },
       {"spec.successPolicy.operator: Unsupported value: \"Most\": supported values: \"All\", "
        "\"Any\""}},
  });
}

TEST(ValidateJobSetTest, NetworkCoordinatorManagedByTtl) {
  RunCases({
      {"subdomain not a DNS name", [](Json& js) { js["spec"]["network"]["subdomain"] = "Net_1"; },
       {"spec.network.subdomain: Invalid value: \"Net_1\": a lowercase RFC 1123 subdomain",
        "spec.network.subdomain: Invalid value: \"Net_1\": a DNS-1035 label"}},
      {"subdomain too long",
       [](Json& js) { js["spec"]["network"]["subdomain"] = std::string(64, 'n'); },
       {": .spec.network.subdomain is too long, must be less than 63 characters"}},
      {"coordinator ok", [](Json& js) { js["spec"]["coordinator"] = {{"replicatedJob", "workers"}, {"jobIndex", 1}, {"podIndex", 1}}; },
       {}},
      {"coordinator missing rjob",
       [](Json& js) { js["spec"]["coordinator"] = {{"replicatedJob", "boss"}}; },
       {"spec.coordinator.replicatedJob: Invalid value: \"boss\": coordinator replicatedJob "
        "boss does not exist"}},
      {"coordinator job index out of range",
       [](Json& js) { js["spec"]["coordinator"] = {{"replicatedJob", "workers"}, {"jobIndex", 2}}; },
       {"spec.coordinator.jobIndex: Invalid value: 2: coordinator job index 2 is invalid for "
        "replicatedJob workers"}},
      {"coordinator pod index out of range",
       [](Json& js) {
         js["spec"]["coordinator"] = {{"replicatedJob", "workers"}, {"jobIndex", 1}, {"podIndex", 2}};
       },
       {"spec.coordinator.podIndex: Invalid value: 2: coordinator pod index 2 is invalid for "
        "replicatedJob workers job index 1"}},
      {"coordinator not indexed",
       [](Json& js) {
         Rjob(js, 0)["template"]["spec"]["completionMode"] = "NonIndexed";
         js["spec"]["coordinator"] = {{"replicatedJob", "leader"}};
       },
       {"spec.coordinator.replicatedJob: Invalid value: \"leader\": job for coordinator pod "
        "must be indexed completion mode, and completions number must be set"}},
      {"coordinator endpoint too long",
       [](Json& js) {
         js["spec"]["network"]["subdomain"] = std::string(50, 's');
         js["spec"]["coordinator"] = {{"replicatedJob", "leader"}};
       },
       {"spec.coordinator: Invalid value: \"js-leader-0-0." + std::string(50, 's') +
        "\": spec will lead to invalid label value"}},
      {"managedBy not a domain path", [](Json& js) { js["spec"]["managedBy"] = "kueue"; },
       {"spec.managedBy: Invalid value: \"kueue\": must be a domain-prefixed path (such as "
        "\"acme.io/foo\")"}},
      {"managedBy too long",
       [](Json& js) { js["spec"]["managedBy"] = "example.com/" + std::string(60, 'm'); },
       {"spec.managedBy: Too long: may not be more than 63 bytes"}},
      {"negative ttl", [](Json& js) { js["spec"]["ttlSecondsAfterFinished"] = -1; },
       {"spec.ttlSecondsAfterFinished: Invalid value: -1: spec.ttlSecondsAfterFinished in body "
        "should be greater than or equal to 0"}},
  });
}

// A claim `name` mounted by the workers' container.
void AddClaim(Json& js, const std::string& name, Json spec = Json::object()) {
  js["spec"]["volumeClaimPolicies"].push_back(
      {{"templates", Json::array({{{"metadata", {{"name", name}}}, {"spec", spec}}})}});
  Rjob(js, 1)["template"]["spec"]["template"]["spec"]["containers"][0]["volumeMounts"].push_back(
      {{"name", name}, {"mountPath", "/" + name}});
}

TEST(ValidateJobSetTest, VolumeClaimPolicies) {
  RunCases({
      {"a claim mounted by the workers",
       [](Json& js) {
         AddClaim(js, "ckpt", {{"accessModes", {"ReadWriteOnce"}},
                               {"resources", {{"requests", {{"storage", "1Gi"}}}}}});
       },
       {}},
      {"duplicate and bad names, too long",
       [](Json& js) {
         AddClaim(js, "ckpt");
         js["spec"]["volumeClaimPolicies"].push_back(
             {{"templates", Json::array({{{"metadata", {{"name", "ckpt"}}}}})}});
         AddClaim(js, "bad.name");
         AddClaim(js, std::string(61, 'c'));
       },
       {// A claim with a bad name gets no volume: its mount mounts nothing.
        "spec.replicatedJobs[1].template.spec.template.spec.containers[0].volumeMounts[1].name: "
        "Not found: \"bad.name\"",
        "spec.volumeClaimPolicies[1].templates[0].metadata.name: Invalid value: \"ckpt\": names "
        "must be unique for VolumeClaimPolicies template",
        "spec.volumeClaimPolicies[2].templates[0].metadata.name: Invalid value: \"bad.name\": "
        "must not contain dots",
        "spec.volumeClaimPolicies[3].templates[0].metadata.name: Invalid value: \"" +
            std::string(61, 'c') + "\": VolumeClaimPolicies template name is too long"}},
      {"not mounted; a template volume of that name; a namespace",
       [](Json& js) {
         js["spec"]["volumeClaimPolicies"] = {
             {{"templates",
               Json::array({{{"metadata", {{"name", "data"}, {"namespace", "x"}}}}})}}};
         Rjob(js, 0)["template"]["spec"]["template"]["spec"]["volumes"] = {
             {{"name", "data"}, {"emptyDir", Json::object()}}};
       },
       {"spec.volumeClaimPolicies[0]: Invalid value: \"object\": namespace cannot be set",
        "spec.replicatedJobs[0].template.spec.template.spec.volumes[0].name: Invalid value: "
        "\"data\": volume name conflicts with VolumeClaimPolicy template name: data",
        "spec.replicatedJobs: Invalid value: \"array\": replicatedJob containers don't have a "
        "matching volumeMount: data from VolumeClaimPolicies"}},
      {"what a node-local directory cannot honour",
       [](Json& js) {
         AddClaim(js, "ckpt", {{"volumeName", "pv-1"}, {"volumeMode", "Block"}});
         js["spec"]["volumeClaimPolicies"][0]["retentionPolicy"] = {{"whenDeleted", "Keep"}};
       },
       {"spec.volumeClaimPolicies[0].retentionPolicy.whenDeleted: Unsupported value: \"Keep\"",
        "spec.volumeClaimPolicies[0].templates[0].spec.volumeName: Forbidden: volumeName is not "
        "supported by batchd: a claim is a new, empty node-local directory",
        "spec.volumeClaimPolicies[0].templates[0].spec.volumeMode: Unsupported value: \"Block\""}},
  });
}

TEST(ValidateJobSetTest, InPlaceRestartNeedsEveryPodAtOnce) {
  RunCases({
      {"parallelism == completions",
       [](Json& js) { js["spec"]["failurePolicy"]["restartStrategy"] = "InPlaceRestart"; },
       {}},
      {"completions unset or different",
       [](Json& js) {
         js["spec"]["failurePolicy"]["restartStrategy"] = "InPlaceRestart";
         Rjob(js, 0)["template"]["spec"].erase("completions");
         Rjob(js, 0)["template"]["spec"]["completionMode"] = "NonIndexed";
         Rjob(js, 1)["template"]["spec"]["completions"] = 4;
       },
       {"spec.replicatedJobs[0].template.spec.completions: Invalid value: null: must be set and "
        "equal to parallelism with the InPlaceRestart restart strategy",
        "spec.replicatedJobs[1].template.spec.completions: Invalid value: 4"}},
  });
}

TEST(ValidateJobSetTest, ExclusivePlacementAnnotations) {
  const std::string kEx = "alpha.jobset.sigs.k8s.io/exclusive-topology";
  const std::string kNs = "alpha.jobset.sigs.k8s.io/node-selector";
  RunCases({
      {"on the JobSet", [&](Json& js) { js["metadata"]["annotations"][kEx] = "rack"; }, {}},
      {"on a template with the node-selector strategy",
       [&](Json& js) {
         Rjob(js, 1)["template"]["metadata"]["annotations"] = {{kEx, "cloud.io/rack"}, {kNs, "true"}};
       },
       {}},
      {"not a label key",
       [&](Json& js) { js["metadata"]["annotations"][kEx] = "rack name"; },
       {"metadata.annotations[" + kEx + "]: Invalid value: \"rack name\": must be a node label "
        "key: name part must consist of alphanumeric characters"}},
      {"node-selector without exclusive-topology at its level",
       [&](Json& js) {
         js["metadata"]["annotations"][kEx] = "rack";
         Rjob(js, 1)["template"]["metadata"]["annotations"] = {{kNs, "true"}};
       },
       {"spec.replicatedJobs[1].template.metadata.annotations[" + kNs + "]: Invalid value: "
        "\"true\": has no effect without the " + kEx + " annotation beside it"}},
  });
}

TEST(ValidateJobSetTest, NotYetSupportedFieldsAreForbidden) {
  RunCases({
      {"RestartJob actions",
       [](Json& js) {
         js["spec"]["failurePolicy"]["rules"] = {{{"name", "a"}, {"action", "RestartJob"}},
                                                 {{"name", "b"}, {"action", "RestartJobAndIgnoreMaxRestarts"}}};
       },
       {"spec.failurePolicy.rules[0].action: Forbidden: the RestartJob and "
        "RestartJobAndIgnoreMaxRestarts failure policy actions are not supported by batchd yet",
        "spec.failurePolicy.rules[1].action: Forbidden"}},
  });
}

}  // namespace
}  // namespace batchd::api::jobset_v1alpha2
