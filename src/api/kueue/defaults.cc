// Defaulting of v1beta2 objects: the defaults Kueue's CRDs declare
// (+kubebuilder:default) and what its mutating webhooks add.
#include "api/kueue/internal/util.h"
#include "api/json_access.h"
#include "api/kueue/kueue.h"
#include "api/kueue/workload_writers.h"

namespace batchd::api::kueue {
namespace {

using internal::SetIfAbsent;

void DefaultFairSharing(Json& spec) {
  if (spec.contains("fairSharing") && spec["fairSharing"].is_object()) {
    SetIfAbsent(spec["fairSharing"], "weight", "1");
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
    // Containers without requests take them from their limits (Kueue's
    // PodSet template contract), as the job integrations build them.
    if (Json* tmpl = FindMutableMemberAt(ps, {"template"})) UseLimitsAsMissingRequests(*tmpl);
  }
}


}  // namespace batchd::api::kueue
