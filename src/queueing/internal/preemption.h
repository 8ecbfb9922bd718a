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
  AdmittedEntry* wl = nullptr;
  PreemptionReason reason = PreemptionReason::kInClusterQueue;
};

struct PreemptionRequest {
  const Workload* wl = nullptr;  // the preemptor
  const CqInfo* cq = nullptr;
  FrUsage usage;                   // what it would use, per fr
  std::vector<FrId> need_preemption;
};

bool SatisfiesPolicy(PreemptionPolicy policy, const Workload& preemptor, const Workload& victim);

// Classic or fair-sharing targets (by `view.fair_sharing`); empty = none.
std::vector<Target> FindTargets(const SnapshotView& view, const PreemptionRequest& req);
std::vector<Target> ClassicalTargets(const SnapshotView& view, const PreemptionRequest& req);
std::vector<Target> FairSharingTargets(const SnapshotView& view, const PreemptionRequest& req);

// The oracle flavor assignment asks about a single fr.
class Oracle : public PreemptionOracle {
 public:
  Oracle(const SnapshotView& view, const Workload& wl, const CqInfo& cq)
      : view_(view), wl_(wl), cq_(cq) {}
  std::pair<GranularMode, int> SimulatePreemption(FrId fr, Amount val) override;

 private:
  const SnapshotView& view_;
  const Workload& wl_;
  const CqInfo& cq_;
};

// Helpers shared by both strategies.
bool UsesAny(const AdmittedEntry& e, const std::vector<FrId>& frs);
bool IsWithinNominal(const QuotaTree& t, NodeId n, const std::vector<FrId>& frs);
// Candidate order (§2.7): evicting first, other CQs first, lower priority,
// most recently admitted, uid.
bool CandidateLess(const AdmittedEntry* a, const AdmittedEntry* b, const CqInfo* own);
// Removes targets from the end back to the front while the rest still make
// the preemptor fit (`fits`); the tree holds all targets removed on entry and
// on return.
template <typename FitsFn>
void FillBack(QuotaTree& t, std::vector<Target>& targets, FitsFn fits) {
  for (int i = static_cast<int>(targets.size()) - 2; i >= 0; --i) {
    AdmittedEntry* w = targets[i].wl;
    t.AddUsage(w->cq->node, w->usage);
    if (fits()) {
      targets.erase(targets.begin() + i);
    } else {
      t.RemoveUsage(w->cq->node, w->usage);
    }
  }
}

}  // namespace batchd::queueing::internal
