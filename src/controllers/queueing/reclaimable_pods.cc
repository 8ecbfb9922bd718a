// status.reclaimablePods and elastic scale-down (Kueue's
// podSetsCountsAfterReclaim and totalRequestsFromAdmission): an admitted
// workload holds only the quota of the pods left — each podSet's admitted
// usage is divided by its admitted count and multiplied by the podSet's
// current spec count (lower after an elastic scale-down) less its reclaimable
// pods (never below zero). The
// admitted count itself is kept (partial admission and topology assignments
// still describe the pods that ran).
#include <algorithm>
#include <map>
#include <string>

#include "api/json_access.h"
#include "controllers/queueing/internal/queue_manager_impl.h"

namespace batchd::controllers::queueing {

void QueueManagerImpl::ApplyReclaimablePods(const Json& wl,
                                            const api::kueue::WorkloadPodSetsView& pod_sets,
                                            batchd::queueing::Admission& admission) {
  std::map<std::string, int64_t, std::less<>> reclaimable;
  const Json* list = api::FindMemberAt(wl, {"status", "reclaimablePods"});
  if (list != nullptr && list->is_array()) {
    for (const Json& e : *list) {
      reclaimable[api::CopyStringMember(e, "name")] = api::IntMember(e, "count");
    }
  }
  std::map<std::string_view, int64_t> spec_counts;
  for (const api::kueue::PodSetView& ps : pod_sets.pod_sets) spec_counts[ps.name] = ps.count;
  for (batchd::queueing::PodSetAssignment& a : admission.pod_sets) {
    auto s = spec_counts.find(a.name);
    if (s == spec_counts.end()) continue;
    auto r = reclaimable.find(a.name);
    const int64_t total = s->second;
    const int64_t gone = r == reclaimable.end() ? 0 : r->second;
    const int64_t after = total - std::clamp<int64_t>(gone, 0, total);
    const int64_t count = a.count > 0 ? a.count : total;
    // A count above what is left was a partial admission: nothing to give back.
    if (count <= 0 || after >= count) continue;
    for (auto& [resource, usage] : a.resource_usage) usage = usage / count * after;
  }
}

}  // namespace batchd::controllers::queueing
