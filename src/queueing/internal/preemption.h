// Preemption target search: classic (reference §2.6/§2.7: within the CQ,
// reclaim within the cohort with hierarchical advantage, borrowWithinCohort
// with maxPriorityThreshold; candidate order; minimal set via fill-back) and
// fair sharing (§2.8). Simulations remove usage from the quota tree and
// always restore it before returning.
//
// Thread-safety: none.
#pragma once

#include <vector>

#include "queueing/internal/flavor_assigner.h"
#include "queueing/internal/state.h"

namespace batchd::queueing::internal {

struct Target {
  AdmittedEntry* victim = nullptr;
  PreemptionReason reason = PreemptionReason::kInClusterQueue;
};

struct PreemptionRequest {
  const Workload* wl = nullptr;  // the preemptor
  const CqInfo* cq = nullptr;
  FlavorResourceAmounts usage;  // what it would use, per flavor-resource
  std::vector<FlavorResourceId> need_preemption;
  // A workload slice's replaced slice (Kueue's ElasticJobsViaWorkloadSlices):
  // its usage is out of the tree while the replacement is evaluated (counted
  // as the replacement's own), and it is never a candidate of its own
  // replacement's preemption. Null for other workloads.
  const AdmittedEntry* replaced = nullptr;
};

bool SatisfiesPolicy(PreemptionPolicy policy, const Workload& preemptor, const Workload& victim);

// Classic or fair-sharing targets (by `view.fair_sharing`); empty = none.
std::vector<Target> FindTargets(const SnapshotView& view, const PreemptionRequest& req);
std::vector<Target> ClassicalTargets(const SnapshotView& view, const PreemptionRequest& req);
std::vector<Target> FairSharingTargets(const SnapshotView& view, const PreemptionRequest& req);

// The oracle flavor assignment asks about a single flavor-resource.
class Oracle : public PreemptionOracle {
 public:
  // `replaced`: as PreemptionRequest::replaced.
  Oracle(const SnapshotView& view, const Workload& wl, const CqInfo& cq,
         const AdmittedEntry* replaced = nullptr)
      : view_(view), wl_(wl), cq_(cq), replaced_(replaced) {}
  std::pair<GranularMode, int> SimulatePreemption(FlavorResourceId id, Amount val) override;

 private:
  const SnapshotView& view_;
  const Workload& wl_;
  const CqInfo& cq_;
  const AdmittedEntry* replaced_;
};

// Helpers shared by both strategies.
bool UsesAny(const AdmittedEntry& e, const std::vector<FlavorResourceId>& ids);
bool IsWithinNominal(const QuotaTree& t, NodeId n, const std::vector<FlavorResourceId>& ids);
// Candidate order (§2.7): evicting first, other CQs first, lower priority,
// most recently admitted, uid.
bool CandidateLess(const AdmittedEntry* a, const AdmittedEntry* b, const CqInfo* own);
// Removes targets from the end back to the front while the rest still make
// the preemptor fit (`fits`); the tree holds all targets removed on entry and
// on return.
template <typename FitsFn>
void FillBack(QuotaTree& t, std::vector<Target>& targets, FitsFn fits) {
  for (int i = static_cast<int>(targets.size()) - 2; i >= 0; --i) {
    AdmittedEntry* w = targets[i].victim;
    t.AddUsage(w->cq->node, w->usage);
    if (fits()) {
      targets.erase(targets.begin() + i);
    } else {
      t.RemoveUsage(w->cq->node, w->usage);
    }
  }
}

}  // namespace batchd::queueing::internal
