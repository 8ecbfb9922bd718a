// Defaulting of v1beta2 objects: the defaults Kueue's CRDs declare
// (+kubebuilder:default) and what its mutating webhooks add.
#include "api/kueue/internal/util.h"
#include "api/json_access.h"
#include "api/kueue/kueue.h"

namespace batchd::api::kueue {
namespace {

using internal::SetIfAbsent;

void DefaultFairSharing(Json& spec) {
  if (spec.contains("fairSharing") && spec["fairSharing"].is_object()) {
    SetIfAbsent(spec["fairSharing"], "weight", "1");
  }
}

// Containers without requests take them from their limits (Kueue's PodSet
// template contract), resource by resource.
void DefaultRequestsFromLimits(Json& pod_spec) {
  for (const char* list : {"initContainers", "containers"}) {
    if (!pod_spec.contains(list) || !pod_spec[list].is_array()) continue;
    for (Json& c : pod_spec[list]) {
      if (!c.is_object() || !c.contains("resources") || !c["resources"].is_object()) continue;
      Json& res = c["resources"];
      if (!res.contains("limits") || !res["limits"].is_object()) continue;
      for (const auto& [name, q] : res["limits"].items()) {
        Json& requests = MutableObject(res, "requests");
        if (!requests.contains(name)) requests[name] = q;
      }
    }
  }
}

}  // namespace

void SetDefaultsClusterQueue(Json& cq) {
  Json& spec = MutableObject(cq, "spec");
  SetIfAbsent(spec, "queueingStrategy", "BestEffortFIFO");
  SetIfAbsent(spec, "stopPolicy", "None");
  Json& ff = MutableObject(spec, "flavorFungibility");
  SetIfAbsent(ff, "whenCanBorrow", "MayStopSearch");
  SetIfAbsent(ff, "whenCanPreempt", "TryNextFlavor");
  Json& preemption = MutableObject(spec, "preemption");
  SetIfAbsent(preemption, "reclaimWithinCohort", "Never");
  SetIfAbsent(preemption, "withinClusterQueue", "Never");
  Json& bwc = MutableObject(preemption, "borrowWithinCohort");
  SetIfAbsent(bwc, "policy", "Never");
  DefaultFairSharing(spec);
}

void SetDefaultsLocalQueue(Json& lq) {
  Json& spec = MutableObject(lq, "spec");
  SetIfAbsent(spec, "stopPolicy", "None");
  DefaultFairSharing(spec);
}

void SetDefaultsCohort(Json& cohort) {
  if (!cohort.contains("spec")) return;
  DefaultFairSharing(MutableObject(cohort, "spec"));
}

void SetDefaultsWorkload(Json& wl) {
  Json& spec = MutableObject(wl, "spec");
  SetIfAbsent(spec, "active", true);
  if (!spec.contains("podSets") || !spec["podSets"].is_array()) return;
  for (Json& ps : spec["podSets"]) {
    if (!ps.is_object()) continue;
    SetIfAbsent(ps, "name", "main");
    SetIfAbsent(ps, "count", 1);
    if (ps.contains("template") && ps["template"].is_object() &&
        ps["template"].contains("spec") && ps["template"]["spec"].is_object()) {
      DefaultRequestsFromLimits(ps["template"]["spec"]);
    }
  }
}


}  // namespace batchd::api::kueue
