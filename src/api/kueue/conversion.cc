// Conversion between the stored kueue.x-k8s.io/v1beta2 shape and the served
// v1beta1 shape, following Kueue's v1beta1 conversion functions:
//   ClusterQueue  spec.cohort <-> spec.cohortName; v1beta1 spec.admissionChecks
//                 become admissionChecksStrategy rules; deprecated
//                 flavorFungibility values Borrow / Preempt become MayStopSearch;
//                 status.pendingWorkloadsStatus is dropped.
//   LocalQueue    status.flavorUsage <-> status.flavorsUsage; v1beta1
//                 status.flavors is dropped.
//   Workload      spec.priorityClassSource + priorityClassName <->
//                 spec.priorityClassRef; status.accumulatedPastExexcutionTimeSeconds
//                 <-> accumulatedPastExecutionTimeSeconds; topology assignments
//                 (levels + domains) <-> (levels + slices).
//   AdmissionCheck  v1beta1 spec.retryDelayMinutes is dropped.
// Other kinds have the same shape in both versions.
#include <utility>

#include "absl/strings/str_cat.h"
#include "api/json_access.h"
#include "api/kueue/internal/util.h"
#include "api/kueue/kueue.h"
#include "api/kueue/topology_assignment.h"

namespace batchd::api::kueue {
namespace {


constexpr char kWpcSource[] = "kueue.x-k8s.io/workloadpriorityclass";
constexpr char kPodPcSource[] = "scheduling.k8s.io/priorityclass";

void Rename(Json& obj, const char* from, const char* to) {
  if (!obj.is_object() || !obj.contains(from)) return;
  obj[to] = std::move(obj[from]);
  obj.erase(from);
}

Json* Child(Json& obj, const char* key) {
  if (!obj.is_object() || !obj.contains(key) || !obj[key].is_object()) return nullptr;
  return &obj[key];
}

void ClusterQueueToV1beta2(Json& cq) {
  Json* spec = Child(cq, "spec");
  if (spec) {
    Rename(*spec, "cohort", "cohortName");
    if (spec->contains("admissionChecks")) {
      const Json checks = (*spec)["admissionChecks"];
      spec->erase("admissionChecks");
      if (checks.is_array() && !checks.empty()) {
        Json& rules = (*spec)["admissionChecksStrategy"]["admissionChecks"];
        if (!rules.is_array()) rules = Json::array();
        for (const Json& name : checks) rules.push_back({{"name", name}});
      }
    }
    if (Json* ff = Child(*spec, "flavorFungibility")) {
      if (StringMember(*ff, "whenCanBorrow") == "Borrow") (*ff)["whenCanBorrow"] = "MayStopSearch";
      if (StringMember(*ff, "whenCanPreempt") == "Preempt") (*ff)["whenCanPreempt"] = "MayStopSearch";
    }
  }
  if (Json* status = Child(cq, "status")) status->erase("pendingWorkloadsStatus");
}

void ClusterQueueToV1beta1(Json& cq) {
  if (Json* spec = Child(cq, "spec")) Rename(*spec, "cohortName", "cohort");
}

// v1beta1 {levels, domains[{values, count}]} -> v1beta2 {levels, slices}: one
// slice holding every domain.
void TopologyToSlices(Json& ta) {
  if (!ta.is_object() || !ta.contains("domains")) return;
  const Json domains = ta["domains"];
  ta.erase("domains");
  size_t levels = MemberArray(ta, "levels").size();
  Json values = Json::array();
  for (size_t l = 0; l < levels; ++l) {
    Json roots = Json::array();
    for (const Json& d : domains) {
      const Json& vs = MemberArray(d, "values");
      roots.push_back(l < vs.size() ? vs[l] : Json(""));
    }
    values.push_back({{"roots", roots}});
  }
  Json counts = Json::array();
  for (const Json& d : domains) counts.push_back(d.value("count", 0));
  ta["slices"] = Json::array();
  if (!domains.empty()) {
    ta["slices"].push_back({{"domainCount", domains.size()}, {"valuesPerLevel", values},
                            {"podCounts", counts}});
  }
}

// v1beta2 {levels, slices} -> v1beta1 {levels, domains[{values, count}]}.
void TopologyToDomains(Json& ta) {
  if (!ta.is_object() || !ta.contains("slices")) return;
  std::optional<TopologyAssignmentValue> v = DecodeTopologyAssignment(ta);
  ta.erase("slices");
  Json domains = Json::array();
  for (TopologyDomainValue& d : v->domains) {
    domains.push_back({{"values", std::move(d.values)}, {"count", d.count}});
  }
  ta["domains"] = std::move(domains);
}

void ForEachTopologyAssignment(Json& wl, void (*fn)(Json&)) {
  Json* status = Child(wl, "status");
  Json* admission = status ? Child(*status, "admission") : nullptr;
  if (!admission || !(*admission)["podSetAssignments"].is_array()) return;
  for (Json& psa : (*admission)["podSetAssignments"]) {
    if (psa.is_object() && psa.contains("topologyAssignment")) fn(psa["topologyAssignment"]);
  }
}

void WorkloadToV1beta2(Json& wl) {
  if (Json* spec = Child(wl, "spec")) {
    std::string source(StringMember(*spec, "priorityClassSource"));
    std::string name(StringMember(*spec, "priorityClassName"));
    spec->erase("priorityClassSource");
    spec->erase("priorityClassName");
    if (source == kWpcSource) {
      (*spec)["priorityClassRef"] = {{"group", "kueue.x-k8s.io"},
                                     {"kind", "WorkloadPriorityClass"}, {"name", name}};
    } else if (source == kPodPcSource) {
      (*spec)["priorityClassRef"] = {{"group", "scheduling.k8s.io"}, {"kind", "PriorityClass"},
                                     {"name", name}};
    }
  }
  if (Json* status = Child(wl, "status")) {
    Rename(*status, "accumulatedPastExexcutionTimeSeconds", "accumulatedPastExecutionTimeSeconds");
  }
  ForEachTopologyAssignment(wl, TopologyToSlices);
}

void WorkloadToV1beta1(Json& wl) {
  if (Json* spec = Child(wl, "spec")) {
    if (spec->contains("priorityClassRef")) {
      const Json ref = (*spec)["priorityClassRef"];
      spec->erase("priorityClassRef");
      std::string group = std::string(StringMember(ref, "group")), kind = std::string(StringMember(ref, "kind"));
      if (group == "kueue.x-k8s.io" && kind == "WorkloadPriorityClass") {
        (*spec)["priorityClassSource"] = kWpcSource;
        (*spec)["priorityClassName"] = std::string(StringMember(ref, "name"));
      } else if (group == "scheduling.k8s.io" && kind == "PriorityClass") {
        (*spec)["priorityClassSource"] = kPodPcSource;
        (*spec)["priorityClassName"] = std::string(StringMember(ref, "name"));
      }
    }
  }
  if (Json* status = Child(wl, "status")) {
    Rename(*status, "accumulatedPastExecutionTimeSeconds", "accumulatedPastExexcutionTimeSeconds");
  }
  ForEachTopologyAssignment(wl, TopologyToDomains);
}

void SetApiVersion(Json& obj, const char* version) {
  if (obj.is_object()) obj["apiVersion"] = absl::StrCat(kGroup, "/", version);
}

}  // namespace

void ConvertToV1beta2(std::string_view kind, Json& obj) {
  if (kind == "ClusterQueue") {
    ClusterQueueToV1beta2(obj);
  } else if (kind == "LocalQueue") {
    if (Json* status = Child(obj, "status")) {
      Rename(*status, "flavorUsage", "flavorsUsage");
      status->erase("flavors");
    }
  } else if (kind == "Workload") {
    WorkloadToV1beta2(obj);
  } else if (kind == "AdmissionCheck") {
    if (Json* spec = Child(obj, "spec")) spec->erase("retryDelayMinutes");
  } else if (kind == "MultiKueueCluster") {
    // v1beta1 spec.kubeConfig / spec.clusterProfile live under
    // spec.clusterSource in v1beta2.
    if (Json* spec = Child(obj, "spec")) {
      for (auto [from, to] : {std::pair{"kubeConfig", "kubeConfig"},
                              std::pair{"clusterProfile", "clusterProfileRef"}}) {
        if (spec->contains(from)) {
          (*spec)["clusterSource"][to] = std::move((*spec)[from]);
          spec->erase(from);
        }
      }
    }
  }
  SetApiVersion(obj, kStorageVersion);
}

void ConvertToV1beta1(std::string_view kind, Json& obj) {
  if (kind == "ClusterQueue") {
    ClusterQueueToV1beta1(obj);
  } else if (kind == "LocalQueue") {
    if (Json* status = Child(obj, "status")) Rename(*status, "flavorsUsage", "flavorUsage");
  } else if (kind == "Workload") {
    WorkloadToV1beta1(obj);
  } else if (kind == "MultiKueueCluster") {
    if (Json* spec = Child(obj, "spec")) {
      if (Json* src = Child(*spec, "clusterSource")) {
        Json moved = std::move(*src);
        spec->erase("clusterSource");
        if (moved.contains("kubeConfig")) (*spec)["kubeConfig"] = std::move(moved["kubeConfig"]);
        if (moved.contains("clusterProfileRef")) {
          (*spec)["clusterProfile"] = std::move(moved["clusterProfileRef"]);
        }
      }
    }
  }
  SetApiVersion(obj, kV1beta1);
}

}  // namespace batchd::api::kueue
