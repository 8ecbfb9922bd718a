// Validation (with field paths), defaulting, conversion and printing of
// scheduling.k8s.io Workload and PodGroup, and the pod fields that reference
// them (spec.schedulingGroup, spec.workloadRef).
#include <string>
#include <vector>

#include "api/kind.h"
#include "api/scheduling/v1alpha2/scheduling_v1alpha2.h"
#include "gtest/gtest.h"

namespace batchd::api::scheduling_v1alpha2 {
namespace {

Json Gang(int min) { return {{"gang", {{"minCount", min}}}}; }
Json Basic() { return {{"basic", Json::object()}}; }

Json MakeWorkload(Json templates) {
  return {{"apiVersion", "scheduling.k8s.io/v1alpha2"},
          {"kind", "Workload"},
          {"metadata", {{"name", "wl"}, {"namespace", "default"}}},
          {"spec", {{"podGroupTemplates", std::move(templates)}}}};
}

Json MakePodGroup(Json policy) {
  return {{"apiVersion", "scheduling.k8s.io/v1alpha2"},
          {"kind", "PodGroup"},
          {"metadata", {{"name", "pg"}, {"namespace", "default"}}},
          {"spec", {{"schedulingPolicy", std::move(policy)}}}};
}

std::vector<std::string> Messages(const ErrorList& errs) {
  std::vector<std::string> out;
  for (const auto& e : errs) out.push_back(e.Message());
  return out;
}

TEST(WorkloadValidationTest, Cases) {
  struct Case {
    std::string name;
    Json templates;
    std::vector<std::string> want;
  };
  Json nine = Json::array();
  for (int i = 0; i < 9; ++i) {
    nine.push_back({{"name", "g" + std::to_string(i)}, {"schedulingPolicy", Basic()}});
  }
  std::vector<Case> cases = {
      {"valid", Json::array({{{"name", "workers"}, {"schedulingPolicy", Gang(4)}},
                             {{"name", "driver"}, {"schedulingPolicy", Basic()}}}),
       {}},
      {"empty", Json::array(), {"spec.podGroupTemplates: Required value"}},
      {"too many", nine,
       {"spec.podGroupTemplates: Too many: 9: must have at most 8 items"}},
      {"bad and duplicate names",
       Json::array({{{"name", "Bad_Name"}, {"schedulingPolicy", Basic()}},
                    {{"name", "a"}, {"schedulingPolicy", Basic()}},
                    {{"name", "a"}, {"schedulingPolicy", Basic()}}}),
       {"spec.podGroupTemplates[0].name: Invalid value: \"Bad_Name\": a lowercase RFC 1123 "
        "label must consist of lower case alphanumeric characters or '-', and must start and "
        "end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for "
        "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
        "spec.podGroupTemplates[2].name: Duplicate value: \"a\""}},
      {"both policies",
       Json::array({{{"name", "a"},
                     {"schedulingPolicy", {{"basic", Json::object()}, {"gang", {{"minCount", 1}}}}}}}),
       {"spec.podGroupTemplates[0].schedulingPolicy: Invalid value: "
        "{\"basic\":{},\"gang\":{\"minCount\":1}}: exactly one of `basic`, `gang` is required, "
        "but multiple fields are set"}},
      {"no policy", Json::array({{{"name", "a"}, {"schedulingPolicy", Json::object()}}}),
       {"spec.podGroupTemplates[0].schedulingPolicy: Invalid value: {}: exactly one of "
        "`basic`, `gang` is required"}},
      {"minCount zero", Json::array({{{"name", "a"}, {"schedulingPolicy", Gang(0)}}}),
       {"spec.podGroupTemplates[0].schedulingPolicy.gang.minCount: Invalid value: 0: must be "
        "greater than or equal to 1"}},
      {"disruption mode for basic",
       Json::array({{{"name", "a"}, {"schedulingPolicy", Basic()}, {"disruptionMode", "PodGroup"}}}),
       {"spec.podGroupTemplates[0].disruptionMode: Invalid value: \"PodGroup\": PodGroup is "
        "not allowed for the basic scheduling policy"}},
      {"unknown disruption mode",
       Json::array({{{"name", "a"}, {"schedulingPolicy", Gang(2)}, {"disruptionMode", "All"}}}),
       {"spec.podGroupTemplates[0].disruptionMode: Unsupported value: \"All\": supported "
        "values: \"Pod\", \"PodGroup\""}},
      {"unimplemented fields are refused",
       Json::array({{{"name", "a"},
                     {"schedulingPolicy", Gang(2)},
                     {"schedulingConstraints",
                      {{"topologyConstraints", Json::array({{{"topologyKey", "rack"}}})}}},
                     {"priority", 5}}}),
       {"spec.podGroupTemplates[0].schedulingConstraints: Forbidden: is not supported by batchd",
        "spec.podGroupTemplates[0].priority: Forbidden: is not supported by batchd"}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(Messages(ValidateWorkload(MakeWorkload(c.templates))), c.want);
  }
}

TEST(WorkloadValidationTest, SpecIsImmutable) {
  Json old = MakeWorkload(Json::array({{{"name", "a"}, {"schedulingPolicy", Gang(2)}}}));
  Json now = old;
  now["spec"]["podGroupTemplates"][0]["schedulingPolicy"] = Gang(3);
  ErrorList errs = ValidateWorkloadUpdate(now, old);
  ASSERT_EQ(errs.size(), 1u);
  EXPECT_EQ(errs[0].field, "spec.podGroupTemplates");
  EXPECT_EQ(errs[0].detail, "field is immutable");
}

TEST(PodGroupValidationTest, CasesAndDefaults) {
  Json pg = MakePodGroup(Gang(8));
  SetDefaultsPodGroup(pg);
  EXPECT_EQ(pg["spec"]["disruptionMode"], "Pod");
  EXPECT_TRUE(ValidatePodGroup(pg).empty());
  EXPECT_EQ(PodGroupPolicy(pg).gang, true);
  EXPECT_EQ(PodGroupPolicy(pg).min_count, 8);
  EXPECT_FALSE(PodGroupPolicy(pg).disrupt_whole);

  // disruptionMode PodGroup: accepted for a gang (the group is disrupted
  // whole), refused for the basic policy, immutable.
  Json group_mode = pg;
  group_mode["spec"]["disruptionMode"] = "PodGroup";
  EXPECT_TRUE(ValidatePodGroup(group_mode).empty());
  EXPECT_TRUE(PodGroupPolicy(group_mode).disrupt_whole);
  Json basic_group_mode = MakePodGroup(Basic());
  basic_group_mode["spec"]["disruptionMode"] = "PodGroup";
  EXPECT_EQ(Messages(ValidatePodGroup(basic_group_mode)),
            (std::vector<std::string>{"spec.disruptionMode: Invalid value: \"PodGroup\": "
                                      "PodGroup is not allowed for the basic scheduling policy"}));
  ErrorList mode_change = ValidatePodGroupUpdate(group_mode, pg);
  ASSERT_EQ(mode_change.size(), 1u);
  EXPECT_EQ(mode_change[0].field, "spec.disruptionMode");

  Json ref = pg;
  ref["spec"]["podGroupTemplateRef"] = {{"workload", {{"workloadName", "wl"}}}};
  EXPECT_EQ(Messages(ValidatePodGroup(ref)),
            (std::vector<std::string>{
                "spec.podGroupTemplateRef.workload.podGroupTemplateName: Required value"}));

  Json claims = pg;
  claims["spec"]["resourceClaims"] = Json::array({{{"name", "gpu"}}});
  EXPECT_EQ(Messages(ValidatePodGroup(claims)),
            (std::vector<std::string>{"spec.resourceClaims: Forbidden: is not supported by "
                                      "batchd"}));

  Json changed = pg;
  changed["spec"]["schedulingPolicy"] = Gang(4);
  ErrorList errs = ValidatePodGroupUpdate(changed, pg);
  ASSERT_EQ(errs.size(), 1u);
  EXPECT_EQ(errs[0].field, "spec.schedulingPolicy");
}

TEST(WorkloadConversionTest, V1alpha1RoundTrip) {
  Json v1 = {{"apiVersion", "scheduling.k8s.io/v1alpha1"},
             {"kind", "Workload"},
             {"metadata", {{"name", "wl"}, {"namespace", "default"}}},
             {"spec", {{"podGroups", Json::array({{{"name", "w"}, {"policy", Gang(3)}}})}}}};
  Json v2 = v1;
  WorkloadToV1alpha2(v2);
  EXPECT_EQ(v2["apiVersion"], "scheduling.k8s.io/v1alpha2");
  EXPECT_EQ(v2["spec"], Json::parse(R"({"podGroupTemplates":[{"name":"w",
                                      "schedulingPolicy":{"gang":{"minCount":3}}}]})"));
  EXPECT_TRUE(ValidateWorkload(v2).empty());
  EXPECT_EQ(WorkloadTemplatePolicy(v2, "w")->min_count, 3);
  EXPECT_FALSE(WorkloadTemplatePolicy(v2, "other").has_value());
  Json back = v2;
  WorkloadToV1alpha1(back);
  EXPECT_EQ(back, v1);
}

TEST(SchemeTest, KindsAreServed) {
  auto scheme = BuiltinScheme();
  const KindDef* pg = scheme->ByResource("scheduling.k8s.io", "v1alpha2", "podgroups");
  ASSERT_NE(pg, nullptr);
  EXPECT_TRUE(pg->has_status_subresource);
  const KindDef* v1 = scheme->ByResource("scheduling.k8s.io", "v1alpha1", "workloads");
  ASSERT_NE(v1, nullptr);
  EXPECT_EQ(&v1->StorageKind(), scheme->ByResource("scheduling.k8s.io", "v1alpha2", "workloads"));
  Json row_pg = MakePodGroup(Gang(8));
  auto cells = pg->row_cells(row_pg, absl::UnixEpoch());
  EXPECT_EQ(cells[0], "Gang");
  EXPECT_EQ(cells[1], 8);
  EXPECT_EQ(cells[2], "<none>");
}

Json MakePod() {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", "p"}, {"namespace", "default"}}},
          {"spec",
           {{"containers", Json::array({{{"name", "c"}, {"image", "busybox"}}})},
            {"restartPolicy", "Never"},
            {"dnsPolicy", "ClusterFirst"},
            {"terminationGracePeriodSeconds", 30}}}};
}

TEST(PodSchedulingGroupTest, ValidationAndImmutability) {
  const KindDef* pods = BuiltinScheme()->ByResource("", "v1", "pods");
  ASSERT_NE(pods, nullptr);
  Json pod = MakePod();
  pod["spec"]["schedulingGroup"] = {{"podGroupName", "Bad_Name"}};
  pod["spec"]["workloadRef"] = {{"name", "wl"}};
  pods->set_defaults(pod);
  std::vector<std::string> fields;
  for (const auto& e : pods->validate_create(pod)) fields.push_back(e.field);
  EXPECT_EQ(fields, (std::vector<std::string>{"spec.schedulingGroup.podGroupName",
                                              "spec.workloadRef.podGroup", "spec.workloadRef"}));

  Json old = MakePod();
  old["spec"]["schedulingGroup"] = {{"podGroupName", "pg"}};
  pods->set_defaults(old);
  ASSERT_TRUE(pods->validate_create(old).empty());
  Json now = old;
  now["spec"]["schedulingGroup"]["podGroupName"] = "other";
  ErrorList errs = pods->validate_update(now, old);
  ASSERT_EQ(errs.size(), 1u);
  EXPECT_EQ(errs[0].Message(),
            "spec.schedulingGroup: Invalid value: {\"podGroupName\":\"other\"}: field is "
            "immutable");
}

}  // namespace
}  // namespace batchd::api::scheduling_v1alpha2
