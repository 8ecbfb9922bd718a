#include "api/kueue/workload_writers.h"

#include <algorithm>
#include <optional>
#include <string>

#include "api/json_access.h"
#include "api/meta/conditions.h"
#include "api/meta/object_meta.h"
#include "api/meta/time_util.h"

namespace batchd::api::kueue {

namespace {

using meta::ConditionShape;
using meta::kConditionFalse;
using meta::kConditionTrue;

constexpr char kSchedulingGroup[] = "scheduling.k8s.io";

void UseLimitsAsMissingRequestsIn(Json& containers) {
  if (!containers.is_array()) return;
  for (Json& c : containers) {
    Json* res = FindMutableMemberAt(c, {"resources"});
    if (res == nullptr || !res->is_object()) continue;
    const Json& limits = Member(*res, "limits");
    if (!limits.is_object() || limits.empty()) continue;
    Json& requests = MutableObject(*res, "requests");
    for (auto it = limits.begin(); it != limits.end(); ++it) {
      if (!requests.contains(it.key())) requests[it.key()] = it.value();
    }
  }
}

}  // namespace

Json NewPodSet(std::string_view name, int32_t count, std::optional<int32_t> min_count,
               Json pod_template) {
  Json ps = {{"name", name}, {"count", count}};
  if (min_count) ps["minCount"] = *min_count;
  ps["template"] = std::move(pod_template);
  return ps;
}

void UseLimitsAsMissingRequests(Json& pod_template) {
  for (const char* list : {"containers", "initContainers"}) {
    if (Json* containers = FindMutableMemberAt(pod_template, {"spec", list})) {
      UseLimitsAsMissingRequestsIn(*containers);
    }
  }
}

Json NewWorkload(std::string_view ns, std::string_view name, std::string_view queue_name,
                 std::vector<Json> pod_sets) {
  Json wl = {{"apiVersion", std::string(kGroup) + "/" + kStorageVersion},
             {"kind", "Workload"},
             {"metadata", {{"name", name}, {"namespace", ns}}},
             {"spec", {{"queueName", queue_name}}}};
  SetPodSets(wl, std::move(pod_sets));
  return wl;
}

void SetPodSets(Json& wl, std::vector<Json> pod_sets) {
  Json& list = MutableObject(wl, "spec")["podSets"];
  list = Json::array();
  for (Json& ps : pod_sets) list.push_back(std::move(ps));
}

void SetQueueName(Json& wl, std::string_view queue_name) {
  MutableObject(wl, "spec")["queueName"] = queue_name;
}

void SetPriorityClass(Json& wl, PriorityClassSource source, const Json& priority_class) {
  const bool workload_class = source == PriorityClassSource::kWorkloadPriorityClass;
  Json& spec = MutableObject(wl, "spec");
  spec["priorityClassRef"] = {
      {"group", workload_class ? kGroup : kSchedulingGroup},
      {"kind", workload_class ? "WorkloadPriorityClass" : "PriorityClass"},
      {"name", meta::GetName(priority_class)}};
  spec["priority"] = IntMember(priority_class, "value");
}

void SetPriority(Json& wl, int32_t priority) {
  MutableObject(wl, "spec")["priority"] = priority;
}

bool SetFinished(Json& wl, bool succeeded, std::string_view message, absl::Time now) {
  return meta::SetCondition(
      wl, ConditionShape::kMeta,
      {kFinished, kConditionTrue, succeeded ? "Succeeded" : "Failed", std::string(message)}, now);
}

bool SetPodsReady(Json& wl, PodsReadyState state, absl::Time now) {
  if (state == PodsReadyState::kReady) {
    return meta::SetCondition(wl, ConditionShape::kMeta,
                              {kPodsReady, kConditionTrue, "PodsReady",
                               "All pods reached readiness and the workload is running"},
                              now);
  }
  return meta::SetCondition(
      wl, ConditionShape::kMeta,
      {kPodsReady, kConditionFalse,
       state == PodsReadyState::kWaitForRecovery ? "WaitForRecovery" : "WaitForStart",
       "Not all pods are ready or succeeded"},
      now);
}

void ClearReservation(Json& wl, std::string_view eviction_reason,
                      std::string_view eviction_message, bool requeue, absl::Time now) {
  // Kueue: when Admitted turns False, the time it was True adds to
  // status.accumulatedPastExecutionTimeSeconds (maximumExecutionTimeSeconds
  // counts every admission).
  if (const Json* admitted = meta::FindCondition(wl, kAdmitted);
      admitted != nullptr && StringMember(*admitted, "status") == kConditionTrue) {
    if (std::optional<absl::Time> since =
            meta::ParseOptionalRfc3339(StringMember(*admitted, "lastTransitionTime"))) {
      Json& status = MutableObject(wl, "status");
      const int64_t past = IntMember(status, "accumulatedPastExecutionTimeSeconds", 0);
      status["accumulatedPastExecutionTimeSeconds"] =
          past + std::max<int64_t>(0, absl::ToInt64Seconds(now - *since));
    }
  }
  MutableObject(wl, "status").erase("admission");
  meta::SetCondition(wl, ConditionShape::kMeta,
                     {kQuotaReserved, kConditionFalse, "Pending", std::string(eviction_message)},
                     now);
  meta::SetCondition(
      wl, ConditionShape::kMeta,
      {kAdmitted, kConditionFalse, "NoReservation", "The workload has no reservation"}, now);
  meta::SetCondition(wl, ConditionShape::kMeta,
                     {kRequeued, requeue ? kConditionTrue : kConditionFalse,
                      std::string(eviction_reason), std::string(eviction_message)},
                     now);
}

void SetPodSetTopologyRequest(Json& pod_set, const PodSetTopologyRequestValue& r) {
  Json out = Json::object();
  if (!r.required.empty()) out["required"] = r.required;
  if (!r.preferred.empty()) out["preferred"] = r.preferred;
  if (r.unconstrained) out["unconstrained"] = true;
  if (!r.pod_index_label.empty()) out["podIndexLabel"] = r.pod_index_label;
  if (!r.slice_required_topology.empty()) {
    out["podSetSliceRequiredTopology"] = r.slice_required_topology;
  }
  if (r.slice_size) out["podSetSliceSize"] = *r.slice_size;
  if (!r.slice_layers.empty()) {
    Json layers = Json::array();
    for (const auto& l : r.slice_layers) layers.push_back({{"topology", l.topology}, {"size", l.size}});
    out["podsetSliceRequiredTopologyConstraints"] = std::move(layers);
  }
  if (!r.pod_set_group_name.empty()) out["podSetGroupName"] = r.pod_set_group_name;
  if (!r.sub_group_index_label.empty()) out["subGroupIndexLabel"] = r.sub_group_index_label;
  if (r.sub_group_count) out["subGroupCount"] = *r.sub_group_count;
  pod_set["topologyRequest"] = std::move(out);
}

}  // namespace batchd::api::kueue
