// CycleRunner: one admission cycle over CoreState (cycle.cc runs its phases,
// cycle_assign.cc phase 3, flavor assignment with preemption targets,
// topology placement and partial admission). Internal to the cycle.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "queueing/internal/core_state.h"
#include "queueing/internal/fair_sharing.h"

namespace batchd::queueing::internal {

class CycleRunner {
 public:
  CycleRunner(CoreState& s, absl::Time now) : s_(s), now_(now) {
    view_.tree = s.tree_.get();
    view_.flavor_resources = &s.flavor_resources_;
    view_.flavors = &s.flavors_;
    view_.cq_of_node = &s.cq_of_node_;
    view_.fair_sharing = s.opts_.fair_sharing;
    view_.fair_sharing_strategies = s.opts_.fair_sharing_strategies;
    view_.exact_masks = s.flavor_resources_.size() <= 64;
    view_.tas = &s.Tas();
  }
  // Phases 1-6 (phase 1's rebuild and requeue flush run in CoreState::RunCycle).
  std::vector<Decision> Run();

 private:
  // One nominated head of a ClusterQueue (Kueue's scheduler entry).
  struct Entry {
    PendingEntry* pending;  // the head; owned by CoreState::pending_
    CqInfo* cq;
    Assignment assignment;        // phase 3
    std::vector<Target> targets;  // preemption victims (phase 3)
    uint64_t version = 0;         // CoreState::version_ when the assignment was made
    uint64_t tas_version = 0;     // TasState::version() then
    // The last evaluation found no preemption candidate at all: its outcome
    // holds for lower priorities too (CqQueue's cross-priority groups).
    bool priority_free = false;
  };
  enum class Outcome { kAdmitted, kContinue, kStop };

  // Phase 1.
  std::vector<CqInfo*> Snapshot();
  void MoveDueBackoff();
  // Phase 2.
  std::vector<Entry> NominateHeads(const std::vector<CqInfo*>& running);
  PendingEntry* NextHead(CqInfo& cq);
  bool PreCheck(PendingEntry* pending, CqInfo& cq);
  // Phase 3 (also re-run in phase 5 when the tree changed meanwhile).
  void AssignFlavorsAndTargets(Entry& entry);
  bool TryPartialAdmission(Entry& entry);
  // Flavors, preemption targets and topology placement for `counts` pods.
  void Evaluate(const Workload& wl, CqInfo& cq, const std::vector<int32_t>& counts,
                Assignment& a, std::vector<Target>& targets);
  // Topology placement once quota fits (or preempts): may turn `a` into a
  // preemption (victims freeing topology capacity) or NoFit.
  void PlaceWithTopology(const Workload& wl, CqInfo& cq, Assignment& a,
                         std::vector<Target>& targets);
  std::vector<Target> TopologyTargets(const Workload& wl, CqInfo& cq, Assignment& a,
                                      const std::vector<Target>& base);
  // Phase 4.
  void OrderEntries(std::vector<Entry>& entries);
  template <typename Fn>
  void ProcessByTournament(std::vector<Entry>& entries, Fn process);
  // Phase 5.
  Outcome ProcessEntry(Entry& entry);
  Outcome KeepPending(Entry& entry, bool inadmissible);
  void Admit(Entry& entry);
  bool ReserveCapacity(Entry& entry);
  bool ReserveTopology(Entry& entry);
  // Phase 6.
  void Requeue();

  // Workload slices (Workload::replaces): the admitted slice `wl` replaces
  // in `cq`, or null (none, another CQ, or its key is not admitted).
  AdmittedEntry* ReplacedSlice(const Workload& wl, const CqInfo& cq) const;
  class ScopedSliceRelease;

  // Emits a kPending decision unless it repeats the last one for `pending`.
  void ReportPending(PendingEntry* pending, PendingReason reason, std::string message);
  std::string Path(NodeId n) const;
  bool Strict(const CqInfo& cq) const {
    return cq.spec && cq.spec->strategy == QueueingStrategy::kStrictFIFO;
  }
  // The inadmissible group of a head that is not admitted: across priorities
  // when its outcome can't depend on its priority and its queue orders by
  // priority first (no admission fair sharing key before it).
  uint64_t GroupOf(const PendingEntry* pending, const CqInfo& cq, bool priority_free) const {
    const bool across = s_.opts_.group_across_priorities && priority_free &&
                        !(s_.opts_.admission_fair_sharing && cq.spec &&
                          cq.spec->admission_fair_sharing);
    return across ? pending->coarse_signature : pending->signature;
  }
  // An evaluated head may skip the rest of its requirements only in a
  // ClusterQueue that shares nothing: each head evaluated costs its CQ one
  // round, so skipping heads of a cohort member (or of any CQ while
  // topology-aware flavors share nodes) would move its later admissions to
  // earlier rounds, ahead of other ClusterQueues' heads they compete with.
  bool Isolated(const CqInfo& cq) const {
    return cq.node != kNoNode && s_.tree_->node(cq.node).parent == kNoNode &&
           !view_.tas->any_tas_flavor();
  }
  uint64_t GroupAfterEvaluation(const Entry& entry) const {
    return GroupOf(entry.pending, *entry.cq, entry.priority_free && Isolated(*entry.cq));
  }

  CoreState& s_;
  absl::Time now_;
  SnapshotView view_;
  std::vector<Decision> out_;
  class ScopedReservationRelease;
  CqInfo* released_reservations_of_ = nullptr;  // set while its reservations are released
  // Capacity held for heads that need preemption but found no targets (phase 5).
  absl::flat_hash_map<CqInfo*, std::vector<FlavorResourceAmounts>> reservations_;
  // The topology capacity such a head holds: its placement on the empty
  // topology, counted on the flavors' snapshots until phase 6 (Kueue's
  // reserveCapacityForUnreclaimablePreempt with a simulate-empty placement).
  struct TopologyReservation {
    const Workload* wl;  // the head's; its PendingEntry outlives the cycle
    Admission admission;
  };
  absl::flat_hash_map<CqInfo*, std::vector<TopologyReservation>> topology_reservations_;
  std::vector<std::pair<NodeId, FlavorResourceAmounts>> preemptor_usage_;
  absl::flat_hash_set<AdmittedEntry*> preempted_;
  std::vector<PendingEntry*> deferred_;  // back to the heap in phase 6
  // NoFit reason of a BestEffortFIFO head this cycle, by scheduling signature.
  struct NoFit {
    PendingReason reason;
    std::string message;
    uint64_t group;  // the inadmissible group it went to
  };
  absl::flat_hash_map<uint64_t, NoFit> no_fit_by_signature_;
  absl::flat_hash_map<CqInfo*, int> admitted_in_cycle_;
  // The replaced slice whose usage is out of the tree while its replacement
  // is evaluated (ScopedSliceRelease), or null.
  AdmittedEntry* released_slice_ = nullptr;
};

// While a workload slice is evaluated or processed, the slice it replaces
// holds no quota: the replacement is admitted as a whole and takes over that
// usage, so only its growth needs room (Kueue's workload slices). Nested
// scopes (phase 5 re-running phase 3) do nothing.
class CycleRunner::ScopedSliceRelease {
 public:
  ScopedSliceRelease(CycleRunner& r, const Workload& wl, const CqInfo& cq) : r_(r) {
    if (r_.released_slice_ != nullptr || wl.replaces.empty()) return;
    AdmittedEntry* old = r_.ReplacedSlice(wl, cq);
    if (old == nullptr || old->cq->node == kNoNode) return;
    r_.s_.tree_->RemoveUsage(old->cq->node, old->usage);
    r_.released_slice_ = old;
    owner_ = true;
    ++r_.s_.version_;
  }
  ~ScopedSliceRelease() {
    if (!owner_ || r_.released_slice_ == nullptr) return;  // consumed by Admit
    r_.s_.tree_->AddUsage(r_.released_slice_->cq->node, r_.released_slice_->usage);
    r_.released_slice_ = nullptr;
    ++r_.s_.version_;
  }

 private:
  CycleRunner& r_;
  bool owner_ = false;
};

inline AdmittedEntry* CycleRunner::ReplacedSlice(const Workload& wl,
                                                 const CqInfo& cq) const {
  if (wl.replaces.empty()) return nullptr;
  auto it = s_.admitted_.find(wl.replaces);
  if (it == s_.admitted_.end() || it->second->cq != &cq || it->second->evicting) return nullptr;
  return it->second.get();
}

// Releases the reservations of `cq` while one of its own heads is evaluated
// (Kueue would evaluate that head in a later cycle, when the reserving head
// is already inadmissible); puts back what still fits afterwards.
class CycleRunner::ScopedReservationRelease {
 public:
  ScopedReservationRelease(CycleRunner& r, CqInfo* cq) : r_(r), cq_(cq) {
    if (r_.released_reservations_of_ != nullptr) return;  // nested (re-assignment in phase 5)
    auto it = r_.reservations_.find(cq_);
    if (it != r_.reservations_.end()) {
      count_ = it->second.size();
      for (const FlavorResourceAmounts& u : it->second) r_.s_.tree_->RemoveUsage(cq_->node, u);
    }
    auto tit = r_.topology_reservations_.find(cq_);
    if (tit != r_.topology_reservations_.end()) {
      topology_count_ = tit->second.size();
      for (const TopologyReservation& t : tit->second) {
        r_.view_.tas->CountUsage(*t.wl, t.admission, -1);
      }
    }
    if (count_ == 0 && topology_count_ == 0) return;
    r_.released_reservations_of_ = cq_;
    ++r_.s_.version_;
  }
  ~ScopedReservationRelease() {
    if (count_ == 0 && topology_count_ == 0) return;
    r_.released_reservations_of_ = nullptr;
    ++r_.s_.version_;
    QuotaTree& t = *r_.s_.tree_;
    std::vector<FlavorResourceAmounts>& list = r_.reservations_[cq_];
    for (size_t i = 0; i < count_; ++i) {  // later entries were added while released
      for (auto& [id, v] : list[i]) v = std::min(v, t.Available(cq_->node, id));
      t.AddUsage(cq_->node, list[i]);
    }
    if (topology_count_ == 0) return;
    const std::vector<TopologyReservation>& held = r_.topology_reservations_[cq_];
    for (size_t i = 0; i < topology_count_; ++i) {
      r_.view_.tas->CountUsage(*held[i].wl, held[i].admission, +1);
    }
  }

 private:
  CycleRunner& r_;
  CqInfo* cq_;
  size_t count_ = 0;
  size_t topology_count_ = 0;
};

}  // namespace batchd::queueing::internal
