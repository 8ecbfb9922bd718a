// Conversion between kueue.x-k8s.io v1beta2 (stored) and v1beta1 (served).
#include <gtest/gtest.h>

#include "api/kueue/kueue.h"

namespace batchd::api::kueue {
namespace {

TEST(ConversionTest, RoundTrips) {
  struct Case {
    std::string kind;
    std::string v1beta1;
    std::string v1beta2;
  };
  std::vector<Case> cases = {
      {"ClusterQueue", R"({"spec":{"cohort":"team","flavorFungibility":{"whenCanBorrow":"MayStopSearch"}}})",
       R"({"spec":{"cohortName":"team","flavorFungibility":{"whenCanBorrow":"MayStopSearch"}}})"},
      {"LocalQueue", R"({"status":{"flavorUsage":[{"name":"f"}],"pendingWorkloads":1}})",
       R"({"status":{"flavorsUsage":[{"name":"f"}],"pendingWorkloads":1}})"},
      {"Workload", R"({"spec":{"priorityClassSource":"scheduling.k8s.io/priorityclass",
         "priorityClassName":"high","priority":5},"status":{"accumulatedPastExexcutionTimeSeconds":3}})",
       R"({"spec":{"priorityClassRef":{"group":"scheduling.k8s.io","kind":"PriorityClass",
         "name":"high"},"priority":5},"status":{"accumulatedPastExecutionTimeSeconds":3}})"},
      {"Workload", R"({"status":{"admission":{"clusterQueue":"cq","podSetAssignments":[
         {"name":"main","topologyAssignment":{"levels":["block","rack"],"domains":[
         {"values":["b1","r1"],"count":4},{"values":["b1","r2"],"count":2}]}}]}}})",
       R"({"status":{"admission":{"clusterQueue":"cq","podSetAssignments":[
         {"name":"main","topologyAssignment":{"levels":["block","rack"],"slices":[
         {"domainCount":2,"valuesPerLevel":[{"roots":["b1","b1"]},{"roots":["r1","r2"]}],
         "podCounts":[4,2]}]}}]}}})"},
      {"ResourceFlavor", R"({"spec":{"nodeLabels":{"a":"b"}}})", R"({"spec":{"nodeLabels":{"a":"b"}}})"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.kind + " " + c.v1beta1);
    Json v1 = Json::parse(c.v1beta1), v2 = Json::parse(c.v1beta2);
    v1["apiVersion"] = "kueue.x-k8s.io/v1beta1";
    v2["apiVersion"] = "kueue.x-k8s.io/v1beta2";
    Json up = v1;
    ConvertToV1beta2(c.kind, up);
    EXPECT_EQ(up, v2);
    Json down = v2;
    ConvertToV1beta1(c.kind, down);
    EXPECT_EQ(down, v1);
  }
}

TEST(ConversionTest, OneWay) {
  struct Case {
    std::string kind;
    std::string from;
    std::string want;
    bool to_v1beta2;
  };
  std::vector<Case> cases = {
      // Deprecated v1beta1 values and fields.
      {"ClusterQueue", R"({"spec":{"admissionChecks":["a","b"],
         "flavorFungibility":{"whenCanBorrow":"Borrow","whenCanPreempt":"Preempt"}},
         "status":{"pendingWorkloadsStatus":{"lastChangeTime":"x"},"pendingWorkloads":2}})",
       R"({"spec":{"admissionChecksStrategy":{"admissionChecks":[{"name":"a"},{"name":"b"}]},
         "flavorFungibility":{"whenCanBorrow":"MayStopSearch","whenCanPreempt":"MayStopSearch"}},
         "status":{"pendingWorkloads":2}})", true},
      {"AdmissionCheck", R"({"spec":{"controllerName":"c","retryDelayMinutes":15}})",
       R"({"spec":{"controllerName":"c"}})", true},
      {"Workload", R"({"spec":{"priorityClassSource":"","priorityClassName":""}})",
       R"({"spec":{}})", true},
      // Compressed slices expand to one domain each.
      {"Workload", R"({"status":{"admission":{"podSetAssignments":[{"name":"m",
         "topologyAssignment":{"levels":["kubernetes.io/hostname"],"slices":[{"domainCount":2,
         "valuesPerLevel":[{"prefix":"node-","roots":["1","2"]}],"universalPodCount":1}]}}]}}})",
       R"({"status":{"admission":{"podSetAssignments":[{"name":"m",
         "topologyAssignment":{"levels":["kubernetes.io/hostname"],"domains":[
         {"values":["node-1"],"count":1},{"values":["node-2"],"count":1}]}}]}}})", false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.kind + " " + c.from);
    Json obj = Json::parse(c.from), want = Json::parse(c.want);
    if (c.to_v1beta2) {
      ConvertToV1beta2(c.kind, obj);
      want["apiVersion"] = "kueue.x-k8s.io/v1beta2";
    } else {
      ConvertToV1beta1(c.kind, obj);
      want["apiVersion"] = "kueue.x-k8s.io/v1beta1";
    }
    EXPECT_EQ(obj, want);
  }
}

TEST(KindsTest, BothVersionsAreDeclared) {
  auto v2 = Kinds(kStorageVersion);
  auto v1 = Kinds(kV1beta1);
  ASSERT_EQ(v2.size(), 11u);  // ... ProvisioningRequestConfig, MultiKueueCluster, MultiKueueConfig.
  ASSERT_EQ(v1.size(), v2.size());
  for (size_t i = 0; i < v2.size(); ++i) {
    SCOPED_TRACE(v2[i].kind);
    EXPECT_EQ(v1[i].plural, v2[i].plural);
    EXPECT_EQ(v1[i].short_names, v2[i].short_names);
    EXPECT_EQ(v2[i].schema->ref, "io.x-k8s.kueue.v1beta2." + v2[i].kind);
    EXPECT_EQ(v1[i].schema->ref, "io.x-k8s.kueue.v1beta1." + v2[i].kind);
  }
  Scheme scheme;
  RegisterKinds(scheme);
  const KindDef* cq1 = scheme.ByResource(kGroup, kV1beta1, kClusterQueues);
  ASSERT_NE(cq1, nullptr);
  EXPECT_EQ(cq1->storage, scheme.ByResource(kGroup, kStorageVersion, kClusterQueues));
  const Schema* spec1 = cq1->schema->Property("spec");
  EXPECT_NE(spec1->Property("cohort"), nullptr);
  EXPECT_EQ(spec1->Property("cohortName"), nullptr);
  const Schema* spec2 = cq1->storage->schema->Property("spec");
  EXPECT_NE(spec2->Property("cohortName"), nullptr);
  EXPECT_EQ(spec2->Property("cohort"), nullptr);
}

}  // namespace
}  // namespace batchd::api::kueue
