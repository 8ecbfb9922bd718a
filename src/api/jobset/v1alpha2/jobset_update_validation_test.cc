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
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

Json Stored(bool suspend) {
  Json js = MakeJobSet("js").ReplicatedJob("leader", 1).ReplicatedJob("workers", 2, 2).Obj();
  js["spec"]["suspend"] = suspend;
  js["spec"]["failurePolicy"] = {{"maxRestarts", 1}};
  SetDefaultsJobSet(js);
  return js;
}

std::vector<std::string> Update(const Json& old, const std::function<void(Json&)>& mutate) {
  Json js = old;
  mutate(js);
  SetDefaultsJobSet(js);
  std::vector<std::string> out;
  for (const FieldError& e : ValidateJobSetUpdate(js, old)) out.push_back(e.Message());
  return out;
}

Json& PodTemplate(Json& js, int i) {
  return js["spec"]["replicatedJobs"][i]["template"]["spec"]["template"];
}

TEST(ValidateJobSetUpdateTest, MutableFields) {
  const Json old = Stored(false);
  EXPECT_THAT(Update(old, [](Json& js) { js["spec"]["suspend"] = true; }), IsEmpty());
  EXPECT_THAT(Update(old, [](Json& js) { js["spec"]["ttlSecondsAfterFinished"] = 5; }), IsEmpty());
  EXPECT_THAT(Update(old, [](Json& js) { js["metadata"]["labels"] = {{"a", "b"}}; }), IsEmpty());
}

TEST(ValidateJobSetUpdateTest, ImmutableFields) {
  const Json old = Stored(false);
  EXPECT_THAT(Update(old, [](Json& js) { js["spec"]["replicatedJobs"][1]["replicas"] = 3; }),
              ElementsAre(HasSubstr("spec.replicatedJobs: Invalid value: ")));
  EXPECT_THAT(Update(old, [](Json& js) { js["spec"]["replicatedJobs"][1]["replicas"] = 3; })[0],
              HasSubstr(": field is immutable"));
  EXPECT_THAT(Update(old, [](Json& js) { js["spec"]["network"]["subdomain"] = "other"; }),
              ElementsAre("spec.network: Invalid value: \"object\": Value is immutable"));
  EXPECT_THAT(Update(old, [](Json& js) { js["spec"]["successPolicy"]["operator"] = "Any"; }),
              ElementsAre("spec.successPolicy: Invalid value: \"object\": Value is immutable"));
  EXPECT_THAT(Update(old, [](Json& js) { js["spec"]["failurePolicy"]["maxRestarts"] = 5; }),
              ElementsAre("spec.failurePolicy: Invalid value: \"object\": Value is immutable"));
  EXPECT_THAT(
      Update(old, [](Json& js) { js["spec"]["startupPolicy"]["startupPolicyOrder"] = "InOrder"; }),
      ElementsAre("spec.startupPolicy: Invalid value: \"object\": Value is immutable"));
  EXPECT_THAT(Update(old, [](Json& js) { js["spec"]["managedBy"] = "example.com/x"; }),
              ElementsAre("spec.managedBy: Invalid value: \"example.com/x\": field is immutable"));
  // Running: the scheduling fields of a template are immutable too.
  EXPECT_THAT(Update(old,
                     [](Json& js) {
                       PodTemplate(js, 0)["spec"]["nodeSelector"] = {{"zone", "a"}};
                     }),
              ElementsAre(HasSubstr("field is immutable")));
}

TEST(ValidateJobSetUpdateTest, SuspendedTemplatesTakeSchedulingEdits) {
  for (bool was_suspended : {true, false}) {
    SCOPED_TRACE(was_suspended);
    const Json old = Stored(was_suspended);
    auto edit = [](Json& js) {
      js["spec"]["suspend"] = true;
      Json& tmpl = PodTemplate(js, 1);
      tmpl["metadata"]["labels"] = {{"kueue.x-k8s.io/podset", "workers"}};
      tmpl["metadata"]["annotations"] = {{"a", "b"}};
      tmpl["spec"]["nodeSelector"] = {{"zone", "a"}};
      tmpl["spec"]["tolerations"] = {{{"key", "k"}, {"operator", "Exists"}}};
      tmpl["spec"]["schedulingGates"] = {{{"name", "g"}}};
    };
    EXPECT_THAT(Update(old, edit), IsEmpty());
    // Other template fields stay immutable while suspended.
    EXPECT_THAT(Update(old,
                       [&](Json& js) {
                         edit(js);
                         PodTemplate(js, 1)["spec"]["containers"][0]["image"] = "other";
                       }),
                ElementsAre(HasSubstr("field is immutable")));
  }
}

TEST(ValidateJobSetUpdateTest, NewSpecIsValidated) {
  const Json old = Stored(false);
  EXPECT_THAT(Update(old, [](Json& js) { js["spec"]["ttlSecondsAfterFinished"] = -1; }),
              ElementsAre(HasSubstr("in body should be greater than or equal to 0")));
}

TEST(ValidateJobSetStatusUpdateTest, Rules) {
  const Json old = Stored(false);
  auto status = [&](Json st) {
    Json js = old;
    js["status"] = std::move(st);
    std::vector<std::string> out;
    for (const FieldError& e : ValidateJobSetStatusUpdate(js, old)) out.push_back(e.Message());
    return out;
  };
  Json good = {{"restarts", 1},
               {"restartsCountTowardsMax", 1},
               {"terminalState", "Failed"},
               {"replicatedJobsStatus",
                {{{"name", "leader"}, {"ready", 0}, {"succeeded", 0}, {"failed", 1},
                  {"active", 0}, {"suspended", 0}}}},
               {"conditions", {{{"type", "Failed"}, {"status", "True"}, {"reason", "FailedJobs"},
                                {"message", "m"}, {"lastTransitionTime", "2026-01-01T00:00:00Z"}}}}};
  EXPECT_THAT(status(good), IsEmpty());
  EXPECT_THAT(status({{"restarts", -1}}),
              ElementsAre("status.restarts: Invalid value: -1: must be greater than or equal to 0"));
  EXPECT_THAT(status({{"terminalState", "Done"}}),
              ElementsAre("status.terminalState: Unsupported value: \"Done\": supported values: "
                          "\"Completed\", \"Failed\""));
  Json dup = good;
  dup["replicatedJobsStatus"].push_back(dup["replicatedJobsStatus"][0]);
  dup["replicatedJobsStatus"][1]["ready"] = -2;
  EXPECT_THAT(status(dup),
              ElementsAre("status.replicatedJobsStatus[1].name: Duplicate value: \"leader\"",
                          "status.replicatedJobsStatus[1].ready: Invalid value: -2: must be "
                          "greater than or equal to 0"));
  Json bad_cond = good;
  bad_cond["conditions"][0]["status"] = "Yes";
  EXPECT_THAT(status(bad_cond),
              ElementsAre(HasSubstr("status.conditions[0].status: Unsupported value: \"Yes\"")));
}

}  // namespace
}  // namespace batchd::api::jobset_v1alpha2
