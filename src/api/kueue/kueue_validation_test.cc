// Defaults and validation of kueue.x-k8s.io v1beta2 objects: table-driven,
// asserting Kubernetes-style field paths and messages.
#include <gtest/gtest.h>

#include "api/kueue/internal/util.h"
#include "api/kueue/kueue.h"

namespace batchd::api::kueue {
namespace {

std::string Msg(const ErrorList& errs) { return errs.empty() ? "" : JoinMessages(errs); }

Json Cq(const std::string& spec) {
  Json cq = {{"apiVersion", "kueue.x-k8s.io/v1beta2"}, {"kind", "ClusterQueue"},
             {"metadata", {{"name", "cq"}}}, {"spec", Json::parse(spec)}};
  SetDefaultsClusterQueue(cq);
  return cq;
}

Json Wl(const std::string& spec) {
  Json wl = {{"apiVersion", "kueue.x-k8s.io/v1beta2"}, {"kind", "Workload"},
             {"metadata", {{"name", "wl"}, {"namespace", "ns"}}}, {"spec", Json::parse(spec)}};
  SetDefaultsWorkload(wl);
  return wl;
}

constexpr char kPod[] = R"({"spec":{"containers":[{"name":"c","image":"i"}]}})";

std::string PodSets(const std::string& extra) {
  return std::string(R"({"podSets":[{"name":"main","count":2,"template":)") + kPod + "}]" +
         extra + "}";
}

TEST(ClusterQueueTest, Defaults) {
  Json cq = Cq("{}");
  const Json& s = cq["spec"];
  EXPECT_EQ(s["queueingStrategy"], "BestEffortFIFO");
  EXPECT_EQ(s["stopPolicy"], "None");
  EXPECT_EQ(s["flavorFungibility"],
            Json::parse(R"({"whenCanBorrow":"MayStopSearch","whenCanPreempt":"TryNextFlavor"})"));
  EXPECT_EQ(s["preemption"], Json::parse(R"({"reclaimWithinCohort":"Never",
      "withinClusterQueue":"Never","borrowWithinCohort":{"policy":"Never"}})"));
  EXPECT_FALSE(s.contains("namespaceSelector"));
  Json strict = Cq(R"({"queueingStrategy":"StrictFIFO","fairSharing":{}})");
  EXPECT_EQ(strict["spec"]["queueingStrategy"], "StrictFIFO");
  EXPECT_EQ(strict["spec"]["fairSharing"]["weight"], "1");
}

TEST(ClusterQueueTest, Validate) {
  struct Case {
    std::string name;
    std::string spec;
    std::string want;
  };
  std::vector<Case> cases = {
      {"valid", R"({"cohortName":"team","resourceGroups":[{"coveredResources":["cpu","memory"],
         "flavors":[{"name":"default","resources":[{"name":"cpu","nominalQuota":"9",
         "borrowingLimit":"1","lendingLimit":"2"},{"name":"memory","nominalQuota":"36Gi"}]}]}]})",
       ""},
      {"borrowingLimit without cohort", R"({"resourceGroups":[{"coveredResources":["cpu"],
         "flavors":[{"name":"f","resources":[{"name":"cpu","nominalQuota":"1","borrowingLimit":"1"}]}]}]})",
       "spec.resourceGroups[0].flavors[0].resources[0].borrowingLimit: Forbidden: "
       "borrowingLimit must be nil when cohort is empty"},
      {"lendingLimit above nominal", R"({"cohortName":"c","resourceGroups":[{"coveredResources":["cpu"],
         "flavors":[{"name":"f","resources":[{"name":"cpu","nominalQuota":"1","lendingLimit":"2"}]}]}]})",
       "spec.resourceGroups[0].flavors[0].resources[0].lendingLimit: Invalid value: \"2\": "
       "must be less than or equal to the nominalQuota"},
      {"negative quota", R"({"resourceGroups":[{"coveredResources":["cpu"],
         "flavors":[{"name":"f","resources":[{"name":"cpu","nominalQuota":"-1"}]}]}]})",
       "spec.resourceGroups[0].flavors[0].resources[0].nominalQuota: Invalid value: \"-1\": "
       "must be greater than or equal to 0"},
      {"resource count mismatch", R"({"resourceGroups":[{"coveredResources":["cpu","memory"],
         "flavors":[{"name":"f","resources":[{"name":"cpu","nominalQuota":"1"}]}]}]})",
       "spec.resourceGroups[0].flavors[0].resources: Invalid value: null: must have the same "
       "number of resources as the coveredResources"},
      {"resource order", R"({"resourceGroups":[{"coveredResources":["cpu","memory"],
         "flavors":[{"name":"f","resources":[{"name":"memory","nominalQuota":"1"},
         {"name":"cpu","nominalQuota":"1"}]}]}]})",
       "[spec.resourceGroups[0].flavors[0].resources[0].name: Invalid value: \"memory\": must "
       "match the name in coveredResources, spec.resourceGroups[0].flavors[0].resources[1].name: "
       "Invalid value: \"cpu\": must match the name in coveredResources]"},
      {"flavor in two groups", R"({"resourceGroups":[
         {"coveredResources":["cpu"],"flavors":[{"name":"f","resources":[{"name":"cpu","nominalQuota":"1"}]}]},
         {"coveredResources":["memory"],"flavors":[{"name":"f","resources":[{"name":"memory","nominalQuota":"1"}]}]}]})",
       "spec.resourceGroups[1].flavors[0].name: Duplicate value: \"f\""},
      {"resource in two groups", R"({"resourceGroups":[
         {"coveredResources":["cpu"],"flavors":[{"name":"a","resources":[{"name":"cpu","nominalQuota":"1"}]}]},
         {"coveredResources":["cpu"],"flavors":[{"name":"b","resources":[{"name":"cpu","nominalQuota":"1"}]}]}]})",
       "spec.resourceGroups[1].coveredResources[0]: Duplicate value: \"cpu\""},
      {"reclaim never with borrowWithinCohort", R"({"preemption":{"reclaimWithinCohort":"Never",
         "borrowWithinCohort":{"policy":"LowerPriority"}}})",
       "spec.preemption: Invalid value: null: reclaimWithinCohort=Never and "
       "borrowWithinCohort.Policy!=Never"},
      {"preference needs TryNextFlavor", R"({"flavorFungibility":{"preference":"PreemptionOverBorrowing"}})",
       "spec.flavorFungibility: Invalid value: null: preference can only be set when both "
       "whenCanBorrow and whenCanPreempt are TryNextFlavor"},
      {"preference ok", R"({"flavorFungibility":{"whenCanBorrow":"TryNextFlavor",
         "whenCanPreempt":"TryNextFlavor","preference":"PreemptionOverBorrowing"}})", ""},
      {"bad enum", R"({"queueingStrategy":"LIFO"})",
       "spec.queueingStrategy: Unsupported value: \"LIFO\": supported values: \"StrictFIFO\", "
       "\"BestEffortFIFO\""},
      {"bad cohort name", R"({"cohortName":"Team_A"})",
       "spec.cohortName: Invalid value: \"Team_A\": a lowercase RFC 1123 subdomain must consist "
       "of lower case alphanumeric characters, '-' or '.', and must start and end with an "
       "alphanumeric character (e.g. 'example.com', regex used for validation is "
       "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"},
      {"required fields", R"({"resourceGroups":[{"flavors":[{"name":"f","resources":[{"name":"cpu"}]}]}]})",
       "[spec.resourceGroups[0].coveredResources: Required value, "
       "spec.resourceGroups[0].flavors[0].resources[0].nominalQuota: Required value, "
       "spec.resourceGroups[0].flavors[0].resources: Invalid value: null: must have the same "
       "number of resources as the coveredResources]"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(Msg(ValidateClusterQueue(Cq(c.spec))), c.want);
  }
}

TEST(ClusterQueueTest, TooManyGroups) {
  Json groups = Json::array();
  for (int i = 0; i < 17; ++i) {
    std::string r = "r" + std::to_string(i), f = "f" + std::to_string(i);
    groups.push_back({{"coveredResources", {r}},
                      {"flavors", {{{"name", f}, {"resources", {{{"name", r}, {"nominalQuota", "1"}}}}}}}});
  }
  Json cq = Cq("{}");
  cq["spec"]["resourceGroups"] = groups;
  EXPECT_EQ(Msg(ValidateClusterQueue(cq)),
            "spec.resourceGroups: Too many: 17: must have at most 16 items");
}

TEST(LocalQueueTest, ClusterQueueImmutable) {
  Json lq = {{"apiVersion", "kueue.x-k8s.io/v1beta2"}, {"kind", "LocalQueue"},
             {"metadata", {{"name", "lq"}, {"namespace", "ns"}}},
             {"spec", {{"clusterQueue", "cq"}}}};
  SetDefaultsLocalQueue(lq);
  EXPECT_EQ(lq["spec"]["stopPolicy"], "None");
  EXPECT_EQ(Msg(ValidateLocalQueue(lq)), "");
  Json next = lq;
  next["spec"]["clusterQueue"] = "other";
  EXPECT_EQ(Msg(ValidateLocalQueueUpdate(next, lq)),
            "spec.clusterQueue: Invalid value: \"other\": field is immutable");
  next = lq;
  next["spec"]["stopPolicy"] = "Hold";
  EXPECT_EQ(Msg(ValidateLocalQueueUpdate(next, lq)), "");
}

TEST(CohortTest, Validate) {
  struct Case {
    std::string name;
    Json spec;
    std::string want;
  };
  Json rg = Json::parse(R"([{"coveredResources":["cpu"],"flavors":[{"name":"f",
      "resources":[{"name":"cpu","nominalQuota":"1","lendingLimit":"1"}]}]}])");
  std::vector<Case> cases = {
      {"root", Json::object(), ""},
      {"own parent", {{"parentName", "co"}},
       "spec.parentName: Invalid value: \"co\": cannot create self-cycle"},
      {"limits need a parent", {{"resourceGroups", rg}},
       "spec.resourceGroups[0].flavors[0].resources[0].lendingLimit: Forbidden: lendingLimit "
       "must be nil when cohort is empty"},
      {"limits with parent", {{"parentName", "root"}, {"resourceGroups", rg}}, ""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Json co = {{"apiVersion", "kueue.x-k8s.io/v1beta2"}, {"kind", "Cohort"},
               {"metadata", {{"name", "co"}}}, {"spec", c.spec}};
    SetDefaultsCohort(co);
    EXPECT_EQ(Msg(ValidateCohort(co)), c.want);
  }
}

TEST(WorkloadTest, Defaults) {
  Json wl = Wl(std::string(R"({"podSets":[{"template":)") + R"({"spec":{"containers":[
      {"name":"c","image":"i","resources":{"limits":{"cpu":"2"},"requests":{"memory":"1Gi"}}}]}}}]})");
  const Json& ps = wl["spec"]["podSets"][0];
  EXPECT_EQ(ps["name"], "main");
  EXPECT_EQ(ps["count"], 1);
  EXPECT_EQ(wl["spec"]["active"], true);
  EXPECT_EQ(ps["template"]["spec"]["containers"][0]["resources"]["requests"],
            Json::parse(R"({"cpu":"2","memory":"1Gi"})"));
  Json inactive = Wl(R"({"active":false,"podSets":[]})");
  EXPECT_EQ(inactive["spec"]["active"], false);
}

TEST(WorkloadTest, Validate) {
  struct Case {
    std::string name;
    std::string spec;
    std::string want;
  };
  std::string two = std::string(R"({"podSets":[{"name":"a","template":)") + kPod +
                    R"(},{"name":"a","template":)" + kPod + "}]}";
  std::string mins = std::string(R"({"podSets":[{"name":"a","count":3,"minCount":1,"template":)") +
                     kPod + R"(},{"name":"b","count":3,"minCount":2,"template":)" + kPod + "}]}";
  std::vector<Case> cases = {
      {"valid", PodSets(R"(,"queueName":"lq")"), ""},
      {"no podSets", R"({"podSets":[]})", "spec.podSets: Required value"},
      {"duplicate names", two, "spec.podSets[1].name: Duplicate value: \"a\""},
      {"bad name", std::string(R"({"podSets":[{"name":"Main","template":)") + kPod + "}]}",
       "spec.podSets[0].name: Invalid value: \"Main\": a lowercase RFC 1123 label must consist "
       "of lower case alphanumeric characters or '-', and must start and end with an "
       "alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
       "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')"},
      {"minCount above count",
       std::string(R"({"podSets":[{"name":"a","count":2,"minCount":3,"template":)") + kPod + "}]}",
       "spec.podSets[0].minCount: Invalid value: 3: minCount should be positive and less or "
       "equal to count"},
      {"two minCounts", mins, "spec.podSets: Invalid value: 2: at most one podSet can use minCount"},
      {"ref without priority",
       PodSets(R"(,"priorityClassRef":{"group":"kueue.x-k8s.io","kind":"WorkloadPriorityClass","name":"p"})"),
       "spec.priority: Required value: priority should not be nil when priorityClassRef is set"},
      {"ref kind mismatch",
       PodSets(R"(,"priority":1,"priorityClassRef":{"group":"scheduling.k8s.io","kind":"WorkloadPriorityClass","name":"p"})"),
       "spec.priorityClassRef.kind: Invalid value: \"WorkloadPriorityClass\": only the "
       "PriorityClass kind is allowed for the scheduling.k8s.io group"},
      {"missing template", R"({"podSets":[{"name":"a"}]})",
       "spec.podSets[0].template: Required value"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(Msg(ValidateWorkload(Wl(c.spec))), c.want);
  }
}

TEST(WorkloadTest, ImmutableWhileQuotaReserved) {
  Json old = Wl(PodSets(R"(,"queueName":"lq")"));
  old["status"] = Json::parse(R"({"conditions":[{"type":"QuotaReserved","status":"True",
      "reason":"r","message":"m","lastTransitionTime":"2026-01-01T00:00:00Z"}],
      "admission":{"clusterQueue":"cq","podSetAssignments":[{"name":"main","count":2}]}})");
  struct Case {
    std::string name;
    std::function<void(Json&)> change;
    std::string want;
  };
  std::vector<Case> cases = {
      {"podSets", [](Json& w) { w["spec"]["podSets"][0]["count"] = 3; },
       "spec.podSets: Invalid value: null: field is immutable"},
      {"queueName", [](Json& w) { w["spec"]["queueName"] = "other"; },
       "spec.queueName: Invalid value: \"other\": queueName is immutable while workload quota "
       "reserved"},
      {"active may change", [](Json& w) { w["spec"]["active"] = false; }, ""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Json now = old;
    c.change(now);
    EXPECT_EQ(Msg(ValidateWorkloadUpdate(now, old)), c.want);
  }
  Json pending = old;
  pending.erase("status");
  Json changed = pending;
  changed["spec"]["podSets"][0]["count"] = 3;
  changed["spec"]["queueName"] = "other";
  EXPECT_EQ(Msg(ValidateWorkloadUpdate(changed, pending)), "");
  Json readmit = old;
  readmit["status"]["admission"]["clusterQueue"] = "elsewhere";
  EXPECT_EQ(Msg(ValidateWorkloadStatusUpdate(readmit, old)),
            "status.admission: Invalid value: null: field is immutable");
}

TEST(OtherKindsTest, Validate) {
  struct Case {
    std::string name;
    std::function<ErrorList()> run;
    std::string want;
  };
  auto obj = [](const char* kind, Json spec) {
    return Json{{"apiVersion", "kueue.x-k8s.io/v1beta2"}, {"kind", kind},
                {"metadata", {{"name", "x"}}}, {"spec", spec}};
  };
  Json topo = obj("Topology", Json::parse(R"({"levels":[{"nodeLabel":"kubernetes.io/hostname"},
      {"nodeLabel":"rack"},{"nodeLabel":"rack"}]})"));
  Json ac = obj("AdmissionCheck", {{"controllerName", "a"}});
  Json ac2 = ac;
  ac2["spec"]["controllerName"] = "b";
  Json rf = obj("ResourceFlavor", Json::parse(R"({"topologyName":"t","tolerations":[
      {"operator":"Equal","value":"v"}]})"));
  Json wpc = {{"apiVersion", "kueue.x-k8s.io/v1beta2"}, {"kind", "WorkloadPriorityClass"},
              {"metadata", {{"name", "x"}}}};
  Json prc_empty = obj("ProvisioningRequestConfig", Json::object());
  Json prc_bad = obj("ProvisioningRequestConfig", Json::parse(R"({"provisioningClassName":"c",
      "managedResources":["cpu","cpu"],"retryStrategy":{"backoffLimitCount":-1}})"));
  Json prc_ok = obj("ProvisioningRequestConfig", Json::parse(R"({"provisioningClassName":"c",
      "parameters":{"batchd.io/node-selector":"pool=a"},"retryStrategy":{"backoffLimitCount":1},
      "podSetMergePolicy":"IdenticalPodTemplates"})"));
  std::vector<Case> cases = {
      {"topology", [&] { return ValidateTopology(topo); },
       "[spec.levels[0].nodeLabel: Invalid value: \"kubernetes.io/hostname\": the "
       "kubernetes.io/hostname label can only be used at the lowest level of topology, "
       "spec.levels[2].nodeLabel: Invalid value: \"rack\": must be unique]"},
      {"controllerName immutable", [&] { return ValidateAdmissionCheckUpdate(ac2, ac); },
       "spec.controllerName: Invalid value: \"b\": field is immutable"},
      {"flavor", [&] { return ValidateResourceFlavor(rf); },
       "[spec.tolerations[0].operator: Invalid value: \"Equal\": operator must be Exists when "
       "'key' is empty, which means 'match all values and all keys', spec: Invalid value: null: "
       "at least one nodeLabel is required when topology is set]"},
      {"wpc value", [&] { return ValidateWorkloadPriorityClass(wpc); }, "value: Required value"},
      {"prc class required", [&] { return ValidateProvisioningRequestConfig(prc_empty); },
       "spec.provisioningClassName: Required value"},
      {"prc limits", [&] { return ValidateProvisioningRequestConfig(prc_bad); },
       "[spec.managedResources[1]: Duplicate value: \"cpu\", spec.retryStrategy.backoffLimitCount: "
       "Invalid value: -1: must be greater than or equal to 0]"},
      {"prc valid", [&] { return ValidateProvisioningRequestConfig(prc_ok); }, ""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(Msg(c.run()), c.want);
  }
}

// Pod set `name` of `count` pods with `topology_request` (a JSON object).
std::string PodSetJson(const std::string& name, int count, const std::string& topology_request) {
  return R"({"name":")" + name + R"(","count":)" + std::to_string(count) +
         R"(,"template":)" + kPod + R"(,"topologyRequest":)" + topology_request + "}";
}

TEST(WorkloadTest, TopologyRequestFields) {
  struct Case {
    std::string name;
    std::string pod_sets;  // the podSets array's entries
    std::string want;      // "" = valid
  };
  const std::vector<Case> cases = {
      {"index label only", PodSetJson("main", 2, R"({"required":"rack","podIndexLabel":"idx"})"),
       ""},
      {"multi-layer slices",
       PodSetJson("main", 8, R"({"required":"block","podsetSliceRequiredTopologyConstraints":[
           {"topology":"rack","size":4},{"topology":"host","size":2}]})"),
       ""},
      {"slice layers that do not divide",
       PodSetJson("main", 8, R"({"podsetSliceRequiredTopologyConstraints":[
           {"topology":"rack","size":4},{"topology":"host","size":3},{"topology":"host","size":0}]})"),
       "[spec.podSets[0].topologyRequest.podsetSliceRequiredTopologyConstraints[1].size: Invalid "
       "value: 3: must evenly divide the parent layer size 4, spec.podSets[0].topologyRequest."
       "podsetSliceRequiredTopologyConstraints[2].topology: Duplicate value: \"host\", "
       "spec.podSets[0].topologyRequest.podsetSliceRequiredTopologyConstraints[2].size: Invalid "
       "value: 0: must be greater than 0]"},
      {"both slice forms",
       PodSetJson("main", 4, R"({"podSetSliceRequiredTopology":"rack","podSetSliceSize":2,
           "podsetSliceRequiredTopologyConstraints":[{"topology":"rack","size":2}]})"),
       "spec.podSets[0].topologyRequest.podsetSliceRequiredTopologyConstraints: Forbidden: may "
       "not be set when podSetSliceRequiredTopology is specified"},
      {"slice size without a level",
       PodSetJson("main", 4, R"({"podSetSliceSize":2})"),
       "spec.podSets[0].topologyRequest.podSetSliceSize: Forbidden: may not be set when "
       "podSetSliceRequiredTopology is not specified"},
      {"leader and workers",
       PodSetJson("leader", 1, R"({"required":"rack","podSetGroupName":"g"})") + "," +
           PodSetJson("workers", 4, R"({"required":"rack","podSetGroupName":"g"})"),
       ""},
      {"a group without a level",
       PodSetJson("main", 2, R"({"unconstrained":true,"podSetGroupName":"g"})"),
       "spec.podSets[0].topologyRequest.podSetGroupName: Forbidden: may not be set without "
       "required or preferred"},
      {"a group of two without a single-pod member",
       PodSetJson("a", 2, R"({"required":"rack","podSetGroupName":"g"})") + "," +
           PodSetJson("b", 3, R"({"preferred":"rack","podSetGroupName":"g"})"),
       "[spec.podSets[0].topologyRequest.podSetGroupName: Invalid value: \"g\": can only define "
       "groups where at least one pod set has only 1 replica, spec.podSets[1].topologyRequest."
       "podSetGroupName: Invalid value: \"g\": can only define groups where at least one pod set "
       "has only 1 replica, spec.podSets[0].topologyRequest.podSetGroupName: Invalid value: \"g\": "
       "pod sets of a group must request the same required or preferred topology level, "
       "spec.podSets[1].topologyRequest.podSetGroupName: Invalid value: \"g\": pod sets of a "
       "group must request the same required or preferred topology level]"},
      {"sub-groups",
       PodSetJson("main", 6, R"({"required":"rack","subGroupIndexLabel":"job","subGroupCount":3})"),
       ""},
      {"sub-group count that does not divide",
       PodSetJson("main", 6, R"({"subGroupIndexLabel":"job","subGroupCount":4})"),
       "spec.podSets[0].topologyRequest.subGroupCount: Invalid value: 4: must divide the pod set "
       "count 6"},
      {"sub-group label alone", PodSetJson("main", 6, R"({"subGroupIndexLabel":"job"})"),
       "spec.podSets[0].topologyRequest.subGroupCount: Required value: subGroupIndexLabel and "
       "subGroupCount are set together"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(Msg(ValidateWorkload(Wl(R"({"podSets":[)" + c.pod_sets + "]}"))), c.want);
  }
}

}  // namespace
// The schema's constraints (required properties, enums) name the field of
// each error at any depth: through objects, list items and map values.
TEST(SchemaConstraintsTest, ErrorsNameTheirFieldAtAnyDepth) {
  auto mode = std::make_shared<Schema>();
  mode->type = Schema::Type::kString;
  mode->enum_values = {"A", "B"};
  auto item = std::make_shared<Schema>();
  item->type = Schema::Type::kObject;
  item->required = {"name"};
  item->properties = {{"name", nullptr}, {"mode", mode}};
  auto list = std::make_shared<Schema>();
  list->type = Schema::Type::kArray;
  list->items = item;
  auto map = std::make_shared<Schema>();
  map->type = Schema::Type::kMap;
  map->items = mode;
  Schema top;
  top.type = Schema::Type::kObject;
  top.properties = {{"items", list}, {"modes", map}};
  Json v = Json::parse(R"({"items":[{"name":"x","mode":"A"},{"mode":"C"}],
                           "modes":{"k":"B","q":"Z"}})");
  ErrorList errs = internal::ValidateSchemaConstraints(top, v, Path("spec"));
  std::vector<std::string> fields;
  for (const FieldError& e : errs) fields.push_back(e.field + " " + e.Reason());
  EXPECT_EQ(fields, (std::vector<std::string>{"spec.items[1].name FieldValueRequired",
                                              "spec.items[1].mode FieldValueNotSupported",
                                              "spec.modes[q] FieldValueNotSupported"}));
  EXPECT_TRUE(internal::ValidateSchemaConstraints(top, Json::parse(R"({"items":[{"name":"y"}]})"),
                                                  Path("spec"))
                  .empty());
}

}  // namespace batchd::api::kueue
