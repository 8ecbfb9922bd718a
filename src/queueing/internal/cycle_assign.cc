// Phase 3 of the admission cycle (cycle.cc): each head's flavor assignment
// and preemption targets, its topology placement, and partial admission.
#include <algorithm>
#include <vector>

#include "queueing/internal/cycle_runner.h"

namespace batchd::queueing::internal {

// ---- Phase 3: assign flavors --------------------------------------------------

void CycleRunner::AssignFlavorsAndTargets(Entry& entry) {
  ScopedReservationRelease release(*this, entry.cq);
  const Workload& wl = entry.pending->wl;
  ScopedSliceRelease slice(*this, wl, *entry.cq);
  std::vector<int32_t> counts;
  for (const PodSet& ps : wl.pod_sets) counts.push_back(ps.count);
  const uint64_t candidates_before = view_.preemption_candidates;
  ++s_.heads_evaluated_;
  Evaluate(wl, *entry.cq, counts, entry.assignment, entry.targets);
  if (entry.assignment.mode != Mode::kFit && entry.targets.empty()) TryPartialAdmission(entry);
  entry.priority_free = view_.preemption_candidates == candidates_before;
  entry.version = s_.version_;
  entry.tas_version = view_.tas->version();
}

void CycleRunner::Evaluate(const Workload& wl, CqInfo& cq, const std::vector<int32_t>& counts,
                           Assignment& a, std::vector<Target>& targets) {
  const bool slice = !wl.replaces.empty() && released_slice_ != nullptr &&
                     released_slice_->wl.key == wl.replaces;
  // A workload slice preempts like any workload (Kueue's
  // ElasticJobsViaWorkloadSlices): its replaced slice's usage is out of the
  // tree (ScopedSliceRelease), so only the growth needs room, and the
  // replaced slice is never one of its victims.
  const AdmittedEntry* replaced = slice ? released_slice_ : nullptr;
  Oracle oracle(view_, wl, cq, replaced);
  a = AssignFlavors(view_, cq, wl, counts, &oracle, slice ? &released_slice_->admission : nullptr);
  targets.clear();
  // A slice whose replaced slice is not released (pending, being evicted)
  // waits instead: PreCheck holds it.
  if (a.mode == Mode::kPreempt && (wl.replaces.empty() || slice)) {
    targets = FindTargets(view_, {&wl, &cq, a.usage, a.need_preemption, replaced});
  }
  if (a.mode != Mode::kNoFit) PlaceWithTopology(wl, cq, a, targets);
}

namespace {

std::vector<const AdmittedEntry*> Victims(const std::vector<Target>& targets) {
  std::vector<const AdmittedEntry*> out;
  out.reserve(targets.size());
  for (const Target& t : targets) out.push_back(t.victim);
  return out;
}

}  // namespace

// Reference §3, interaction with quota: placement only after quota fits;
// no placement now but one on the empty topology -> preemption (victims must
// make both fit); none even then -> NoFit.
void CycleRunner::PlaceWithTopology(const Workload& wl, CqInfo& cq, Assignment& a,
                                    std::vector<Target>& targets) {
  TasState& tas = *view_.tas;
  PlacementOutcome now = PlaceTopology(tas, cq, wl, a, Victims(targets), false);
  if (now.kind == PlacementOutcome::Kind::kNone || now.kind == PlacementOutcome::Kind::kPlaced) {
    return;
  }
  PlacementOutcome empty = PlaceTopology(tas, cq, wl, a, {}, true);
  a.reason = PendingReason::kTopologyPlacementFailed;
  a.message = now.message;
  if (empty.kind != PlacementOutcome::Kind::kPlaced) {
    a.mode = Mode::kNoFit;
    targets.clear();
    return;
  }
  std::vector<Target> more = TopologyTargets(wl, cq, a, targets);
  a.mode = Mode::kPreempt;
  if (more.empty()) {
    // No victims: keep the empty-topology placement for the message only.
    for (PodSetResult& r : a.pod_sets) r.topology.reset();
    targets.clear();
    return;
  }
  targets = std::move(more);
  PlaceTopology(tas, cq, wl, a, Victims(targets), false);
}

// Admitted workloads whose topology usage the preemptor may take (own CQ by
// withinClusterQueue, the cohort by reclaimWithinCohort), in candidate
// order; the shortest prefix that makes placement fit (binary search: more
// victims never hurt), then fill-back from the end. Empty when none does.
std::vector<Target> CycleRunner::TopologyTargets(const Workload& wl, CqInfo& cq, Assignment& a,
                                                 const std::vector<Target>& base) {
  TasState& tas = *view_.tas;
  const Preemption& p = cq.spec->preemption;
  absl::flat_hash_set<const AdmittedEntry*> in_base;
  for (const Target& t : base) in_base.insert(t.victim);
  std::vector<AdmittedEntry*> candidates;
  NodeId root = s_.tree_->Root(cq.node);
  for (auto& [key, e] : s_.admitted_) {
    AdmittedEntry* w = e.get();
    if (w->cq == nullptr || in_base.contains(w) || w == released_slice_) continue;
    bool has_topology = false;
    for (const PodSetAssignment& psa : w->admission.pod_sets) {
      has_topology = has_topology || psa.topology.has_value();
    }
    if (!has_topology) continue;
    if (w->cq == &cq) {
      if (!SatisfiesPolicy(p.within_cluster_queue, wl, w->wl)) continue;
    } else {
      if (w->cq->node == kNoNode || s_.tree_->Root(w->cq->node) != root || cq.spec->cohort.empty()) {
        continue;
      }
      if (!SatisfiesPolicy(p.reclaim_within_cohort, wl, w->wl)) continue;
    }
    candidates.push_back(w);
  }
  view_.preemption_candidates += candidates.size();
  if (candidates.empty()) return {};
  std::sort(candidates.begin(), candidates.end(),
            [&](const AdmittedEntry* x, const AdmittedEntry* y) { return CandidateLess(x, y, &cq); });
  auto fits_with = [&](const std::vector<const AdmittedEntry*>& removed) {
    Assignment probe = a;
    return PlaceTopology(tas, cq, wl, probe, removed, false).kind ==
           PlacementOutcome::Kind::kPlaced;
  };
  std::vector<const AdmittedEntry*> removed = Victims(base);
  auto with_prefix = [&](size_t n) {
    std::vector<const AdmittedEntry*> r = removed;
    r.insert(r.end(), candidates.begin(), candidates.begin() + n);
    return r;
  };
  if (!fits_with(with_prefix(candidates.size()))) return {};
  size_t lo = 1, hi = candidates.size();
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (fits_with(with_prefix(mid))) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  std::vector<AdmittedEntry*> chosen(candidates.begin(), candidates.begin() + lo);
  for (int i = static_cast<int>(chosen.size()) - 2; i >= 0; --i) {
    std::vector<const AdmittedEntry*> r = removed;
    for (int j = 0; j < static_cast<int>(chosen.size()); ++j) {
      if (j != i) r.push_back(chosen[j]);
    }
    if (fits_with(r)) chosen.erase(chosen.begin() + i);
  }
  std::vector<Target> out = base;
  for (AdmittedEntry* w : chosen) {
    out.push_back({w, w->cq == &cq ? PreemptionReason::kInClusterQueue
                                   : PreemptionReason::kInCohortReclamation});
  }
  return out;
}

// §2.9: the largest counts (binary search) that fit or preempt with targets.
bool CycleRunner::TryPartialAdmission(Entry& entry) {
  const Workload& wl = entry.pending->wl;
  int64_t total = 0;
  for (const PodSet& ps : wl.pod_sets) {
    if (ps.min_count && *ps.min_count < ps.count) total += ps.count - *ps.min_count;
  }
  if (total == 0) return false;
  auto counts_at = [&](int64_t i) {
    std::vector<int32_t> c;
    for (const PodSet& ps : wl.pod_sets) {
      int64_t delta = ps.min_count && *ps.min_count < ps.count ? ps.count - *ps.min_count : 0;
      c.push_back(static_cast<int32_t>(ps.count - delta * i / total));
    }
    return c;
  };
  auto try_at = [&](int64_t i, Assignment& a, std::vector<Target>& t) {
    Evaluate(wl, *entry.cq, counts_at(i), a, t);
    return a.mode == Mode::kFit || !t.empty();
  };
  int64_t lo = 1, hi = total;  // find the smallest i in [1, total] that works
  Assignment best_assignment;
  std::vector<Target> best_targets;
  if (!try_at(total, best_assignment, best_targets)) return false;
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    Assignment a;
    std::vector<Target> t;
    if (try_at(mid, a, t)) {
      hi = mid;
      best_assignment = std::move(a);
      best_targets = std::move(t);
    } else {
      lo = mid + 1;
    }
  }
  entry.assignment = std::move(best_assignment);
  entry.targets = std::move(best_targets);
  return true;
}

}  // namespace batchd::queueing::internal
