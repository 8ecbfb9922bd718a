// The admission cycle (reference §2.3, Kueue's scheduler.go `schedule`),
// batchd variant. One call of RunCycle runs these phases:
//
//   1. Snapshot       Bring the quota tree up to date (rebuild after config
//                     changes, batched inadmissible requeues) and move
//                     workloads whose backoff expired back to their heaps.
//                     The live quota tree is the snapshot: every simulation
//                     on it is undone, and usage held only for this cycle
//                     (preemptors, reservations) is removed in phase 6.
//   2. Nominate heads Pop the next head of every running ClusterQueue
//                     (skipping ones that can't be considered at all:
//                     inactive CQ, namespace mismatch, stopped LocalQueue,
//                     or identical to a NoFit head earlier in this cycle).
//   3. Assign flavors For each head, independently against the same tree:
//                     flavor assignment (§2.4), preemption targets (§2.7 /
//                     §2.8) and partial admission (§2.9).
//   4. Order entries  Classical order across CQs (§2.5), or the fair-sharing
//                     tournament (§2.8), which picks its winner again after
//                     each entry of phase 5.
//   5. Admit/preempt  Process each entry in that order against the tree as
//                     earlier entries left it: admit (usage counted at
//                     once), issue preemptions, reserve capacity, or leave it
//                     pending (inadmissible, or back to the heap in phase 6).
//   6. Requeue        Put the deferred heads back into their heaps and remove
//                     the cycle-only usage (preemptors, reservations).
//
// Unlike Kueue (one head per ClusterQueue per cycle), phases 2-5 repeat in
// rounds: a CQ whose head was admitted (or, for BestEffortFIFO, set aside)
// runs again with its next head, until every CQ stopped or emptied.
#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "api/resource/amount.h"
#include "queueing/internal/cycle_runner.h"

namespace batchd::queueing::internal {

namespace {

const char* HumanReason(PreemptionReason r) {
  switch (r) {
    case PreemptionReason::kInClusterQueue: return "prioritization in the ClusterQueue";
    case PreemptionReason::kInCohortReclamation: return "reclamation within the cohort";
    case PreemptionReason::kInCohortFairSharing: return "fair sharing within the cohort";
    case PreemptionReason::kInCohortReclaimWhileBorrowing:
      return "reclamation within the cohort while borrowing";
  }
  return "preemption";
}

// What `next` uses beyond `prev`, per flavor-resource (never negative).
FlavorResourceAmounts Growth(const FlavorResourceAmounts& next, const FlavorResourceAmounts& prev) {
  FlavorResourceAmounts out;
  for (const auto& [id, v] : next) {
    Amount before = 0;
    for (const auto& [pid, pv] : prev) {
      if (pid == id) before = api::SaturatingAdd(before, pv);
    }
    if (v > before) out.emplace_back(id, api::SaturatingSub(v, before));
  }
  return out;
}

}  // namespace

// "/root/cohort/cq", as Kueue prints it in preemption messages.
std::string CycleRunner::Path(NodeId n) const {
  std::vector<const std::string*> names;
  for (; n != kNoNode; n = s_.tree_->node(n).parent) names.push_back(&s_.tree_->node(n).name);
  std::string out;
  for (auto it = names.rbegin(); it != names.rend(); ++it) absl::StrAppend(&out, "/", **it);
  return out;
}

void CycleRunner::ReportPending(PendingEntry* pending, PendingReason reason,
                                std::string message) {
  if (pending->has_last && pending->last_reason == reason && pending->last_message == message) {
    return;
  }
  pending->has_last = true;
  pending->last_reason = reason;
  pending->last_message = message;
  Decision d;
  d.kind = Decision::Kind::kPending;
  d.key = pending->wl.key;
  d.pending_reason = reason;
  d.message = std::move(message);
  out_.push_back(std::move(d));
}

// ---- Phase 1: snapshot ------------------------------------------------------

void CycleRunner::MoveDueBackoff() {
  while (!s_.backoff_.empty() && s_.backoff_.begin()->first <= now_) {
    std::string key = s_.backoff_.begin()->second;
    s_.backoff_.erase(s_.backoff_.begin());
    auto it = s_.pending_.find(key);
    if (it == s_.pending_.end()) continue;
    PendingEntry* pending = it->second.get();
    --s_.backoff_per_cq_[pending->queued_in];
    pending->wl.requeue_at.reset();
    pending->afs_key = s_.AfsKey(pending->wl);
    s_.cqs_[pending->queued_in]->queue.PushHeap(pending);
  }
}

// Returns the running ClusterQueues (those with heads), by name.
std::vector<CqInfo*> CycleRunner::Snapshot() {
  MoveDueBackoff();
  std::vector<CqInfo*> running;
  for (auto& [_, cq] : s_.cqs_) {
    if (cq->queue.heap_size() > 0) running.push_back(cq.get());
  }
  std::sort(running.begin(), running.end(),
            [](const CqInfo* a, const CqInfo* b) { return a->name < b->name; });
  return running;
}

// ---- Phase 2: nominate heads ------------------------------------------------

PendingEntry* CycleRunner::NextHead(CqInfo& cq) {
  if (!cq.sticky_preemptor.empty()) {
    auto it = s_.pending_.find(cq.sticky_preemptor);
    if (it != s_.pending_.end() && it->second->where == PendingEntry::Where::kHeap &&
        it->second->queued_in == cq.name) {
      cq.queue.Erase(it->second.get());
      return it->second.get();
    }
    cq.sticky_preemptor.clear();
  }
  return cq.queue.PopHead();
}

// Reasons a head can't be considered at all; such heads go inadmissible.
bool CycleRunner::PreCheck(PendingEntry* pending, CqInfo& cq) {
  const Workload& wl = pending->wl;
  if (!cq.active) {
    ReportPending(pending, PendingReason::kMisconfigured, cq.inactive_message);
  } else if (!cq.spec->namespace_selector ||
             !cq.spec->namespace_selector->Matches(wl.namespace_labels)) {
    ReportPending(pending, PendingReason::kNamespaceMismatch,
                  "Workload namespace doesn't match ClusterQueue selector");
  } else if (!wl.replaces.empty() &&
             (s_.pending_.contains(wl.replaces) ||
              (s_.admitted_.contains(wl.replaces) && ReplacedSlice(wl, cq) == nullptr))) {
    // The replaced slice is pending, being evicted or in another ClusterQueue:
    // admitting this one now could admit both.
    ReportPending(pending, PendingReason::kWaitingForQuota,
                  absl::StrCat("Waiting for the replaced workload slice ", wl.replaces));
  } else if (auto lq = s_.lqs_.find({wl.namespace_, wl.local_queue});
             lq != s_.lqs_.end() && lq->second.stop_policy != StopPolicy::kNone) {
    ReportPending(pending, PendingReason::kLocalQueueStopped,
                  absl::StrCat("LocalQueue ", wl.local_queue, " is stopped"));
  } else {
    return true;
  }
  // None of these reasons reads the priority, and skipping such heads costs
  // no round (they are passed over within one).
  cq.queue.PushInadmissible(pending, GroupOf(pending, cq, /*priority_free=*/true));
  return false;
}

// One head per running CQ, in CQ name order.
std::vector<CycleRunner::Entry> CycleRunner::NominateHeads(const std::vector<CqInfo*>& running) {
  std::vector<Entry> entries;
  for (CqInfo* cq : running) {
    PendingEntry* pending = nullptr;
    while ((pending = NextHead(*cq)) != nullptr) {
      if (!PreCheck(pending, *cq)) continue;
      auto hit = Strict(*cq) ? no_fit_by_signature_.end()
                             : no_fit_by_signature_.find(pending->signature);
      if (hit == no_fit_by_signature_.end()) break;
      // Identical to a head found NoFit this cycle: same answer, no re-evaluation.
      ReportPending(pending, hit->second.reason, hit->second.message);
      cq->queue.PushInadmissible(pending, hit->second.group);
    }
    if (pending == nullptr) continue;
    entries.push_back({pending, cq, {}, {}, 0, 0});
  }
  return entries;
}

// ---- Phase 4: order entries ---------------------------------------------------

// §2.5, Kueue's classical iterator: lower borrowing level first, then higher
// priority, older queue-order time, key.
void CycleRunner::OrderEntries(std::vector<Entry>& entries) {
  std::sort(entries.begin(), entries.end(), [&](const Entry& x, const Entry& y) {
    if (x.assignment.borrowing != y.assignment.borrowing) {
      return x.assignment.borrowing < y.assignment.borrowing;
    }
    const Workload& a = x.pending->wl;
    const Workload& b = y.pending->wl;
    if (a.priority != b.priority) return a.priority > b.priority;
    if (a.queue_order_time != b.queue_order_time) return a.queue_order_time < b.queue_order_time;
    return a.key < b.key;
  });
}

// §2.8: repeatedly process (phase 5) the tournament winner; shares change
// after each. Cohort trees don't share quota, so each root runs its own
// tournament.
template <typename Fn>
void CycleRunner::ProcessByTournament(std::vector<Entry>& entries, Fn process) {
  std::vector<NodeId> roots;
  absl::flat_hash_map<NodeId, std::vector<Entry*>> by_root;
  for (Entry& entry : entries) {
    NodeId r = s_.tree_->Root(entry.cq->node);
    auto [it, inserted] = by_root.try_emplace(r);
    if (inserted) roots.push_back(r);
    it->second.push_back(&entry);
  }
  for (NodeId r : roots) {
    std::vector<Entry*>& left = by_root[r];
    while (!left.empty()) {
      size_t winner = 0;
      if (left.size() > 1) {
        std::vector<TournamentHead> heads;
        for (Entry* entry : left) {
          const Workload& wl = entry->pending->wl;
          heads.push_back({entry->cq->node, &entry->assignment.usage, wl.priority,
                           wl.queue_order_time, &wl.key});
        }
        winner = TournamentWinner(*s_.tree_, heads);
      }
      Entry* entry = left[winner];
      left.erase(left.begin() + winner);
      process(*entry);
    }
  }
}

// ---- Phase 5: admit / preempt -------------------------------------------------

void CycleRunner::Admit(Entry& entry) {
  PendingEntry* pending = entry.pending;
  std::string replaced;
  if (released_slice_ != nullptr && released_slice_->wl.key == pending->wl.replaces) {
    // The replaced slice's usage goes back and is released for good (with
    // its LocalQueue counts and topology usage); the new usage follows.
    AdmittedEntry* old = released_slice_;
    released_slice_ = nullptr;
    s_.tree_->AddUsage(old->cq->node, old->usage);
    replaced = old->wl.key;
    s_.ReleaseAdmitted(replaced);
  }
  auto a = std::make_unique<AdmittedEntry>();
  a->admission = entry.assignment.ToAdmission(entry.cq->name);
  a->usage = entry.assignment.usage;
  a->cq = entry.cq;
  a->admit_seq = ++s_.admit_seq_;
  s_.tree_->AddUsage(entry.cq->node, a->usage);
  view_.tas->CountUsage(pending->wl, a->admission, +1);
  ++s_.version_;
  if (entry.cq->sticky_preemptor == pending->wl.key) entry.cq->sticky_preemptor.clear();
  Decision d;
  d.kind = Decision::Kind::kAdmit;
  d.key = pending->wl.key;
  d.admission = a->admission;
  d.replaced = std::move(replaced);
  out_.push_back(std::move(d));
  std::string key = pending->wl.key;
  entry.cq->queue.ReleaseAfter(pending);  // the next identical workload may fit too
  --s_.LqOf(pending->wl).pending;
  a->wl = std::move(pending->wl);
  entry.cq->admitted.Insert(a.get());
  s_.CountLqUsage(*a, +1);
  s_.pending_.erase(key);  // frees `pending`
  const AdmittedEntry& admitted = *a;
  s_.admitted_[key] = std::move(a);
  ++admitted_in_cycle_[entry.cq];
  s_.AfsAdmitted(*entry.cq, admitted.wl, admitted.usage);
}

// Keeps a not-admitted head pending: StrictFIFO blocks the CQ behind it;
// BestEffortFIFO parks it (inadmissible now, or back to the heap in phase 6)
// and moves on.
CycleRunner::Outcome CycleRunner::KeepPending(Entry& entry, bool inadmissible) {
  if (Strict(*entry.cq)) {
    deferred_.push_back(entry.pending);
    return Outcome::kStop;
  }
  if (inadmissible) {
    entry.cq->queue.PushInadmissible(entry.pending, GroupAfterEvaluation(entry));
  } else {
    deferred_.push_back(entry.pending);
  }
  return Outcome::kContinue;
}

// Preempt without targets: hold the capacity the head waits for so that
// other heads can't take it this cycle (§2.3): quota up to nominal (or the
// borrowing limit), and for topology-aware pod sets the leaves of their
// placement on the empty topology (reference §3: lower-priority workloads
// must not take the domain the head will preempt into once victims appear).
// The topology usage may overbook leaves that admitted workloads hold; it
// only makes placements of later heads fail, and phase 6 removes it.
bool CycleRunner::ReserveCapacity(Entry& entry) {
  if (entry.cq->spec->preemption.reclaim_within_cohort == PreemptionPolicy::kAny) return false;
  FlavorResourceAmounts reserved;
  const QuotaTree& t = *s_.tree_;
  NodeId n = entry.cq->node;
  for (const auto& [id, v] : entry.assignment.usage) {
    Amount take;
    std::optional<Amount> borrowing_limit = t.BorrowingLimit(n, id);
    if (entry.assignment.borrowing > 0) {
      take = !borrowing_limit
                 ? v
                 : std::min(v, api::SaturatingSub(
                                   api::SaturatingAdd(t.Nominal(n, id), *borrowing_limit),
                                   t.Usage(n, id)));
    } else {
      take = std::min(v, api::SaturatingSub(t.Nominal(n, id), t.Usage(n, id)));
    }
    // Never beyond what the tree can hold, so the invariant holds mid-cycle.
    take = std::min(take, t.Available(n, id));
    if (take > 0) reserved.emplace_back(id, take);
  }
  const bool topology = ReserveTopology(entry);
  if (reserved.empty()) return topology;
  s_.tree_->AddUsage(entry.cq->node, reserved);
  ++s_.version_;
  reservations_[entry.cq].push_back(std::move(reserved));
  return true;
}

bool CycleRunner::ReserveTopology(Entry& entry) {
  const Workload& wl = entry.pending->wl;
  Assignment empty = entry.assignment;
  if (PlaceTopology(*view_.tas, *entry.cq, wl, empty, {}, /*ignore_usage=*/true).kind !=
      PlacementOutcome::Kind::kPlaced) {
    return false;  // no topology-aware pod set, or none fits even the empty topology
  }
  Admission held = empty.ToAdmission(entry.cq->name);
  view_.tas->CountUsage(wl, held, +1);
  topology_reservations_[entry.cq].push_back({&wl, std::move(held)});
  return true;
}

CycleRunner::Outcome CycleRunner::ProcessEntry(Entry& entry) {
  ScopedReservationRelease release(*this, entry.cq);
  ScopedSliceRelease slice(*this, entry.pending->wl, *entry.cq);
  Assignment& assignment = entry.assignment;
  // Re-assign when the quota tree changed since phase 3, unless the
  // assignment still fits as it is (the common case, and cheap to check).
  bool still_fits =
      assignment.mode == Mode::kFit && s_.tree_->Fits(entry.cq->node, assignment.usage);
  // A placement made in phase 3 is stale once any admission changed topology
  // usage since: place again (two ClusterQueues never book the same leaves).
  if (still_fits && entry.tas_version != view_.tas->version()) {
    bool placed = false;
    for (const PodSetResult& r : assignment.pod_sets) placed = placed || r.topology.has_value();
    if (placed) still_fits = false;
  }
  if (!still_fits && (entry.version != s_.version_ || assignment.mode == Mode::kFit ||
                      entry.tas_version != view_.tas->version())) {
    AssignFlavorsAndTargets(entry);
  }
  PendingEntry* pending = entry.pending;
  if (assignment.mode == Mode::kFit) {
    Admit(entry);
    return Outcome::kAdmitted;
  }
  if (assignment.mode == Mode::kNoFit) {
    ReportPending(pending, assignment.reason, assignment.message);
    if (!Strict(*entry.cq)) {
      no_fit_by_signature_[pending->signature] = {assignment.reason, assignment.message,
                                                  GroupAfterEvaluation(entry)};
    }
    return KeepPending(entry, true);
  }
  if (entry.targets.empty()) {
    const PendingReason reason = assignment.reason == PendingReason::kTopologyPlacementFailed
                                     ? assignment.reason
                                     : PendingReason::kWaitingForQuota;
    ReportPending(pending, reason, assignment.message);
    if (!Strict(*entry.cq)) {
      no_fit_by_signature_[pending->signature] = {reason, assignment.message,
                                                  GroupAfterEvaluation(entry)};
    }
    // Kueue evaluates one head per CQ per cycle and this one becomes
    // inadmissible, so the capacity it reserves only holds off other CQs:
    // later heads of its own CQ see it released (ScopedReservationRelease).
    if (pending->wl.replaces.empty()) ReserveCapacity(entry);
    return KeepPending(entry, true);
  }
  for (const Target& t : entry.targets) {
    if (preempted_.contains(t.victim)) {
      ReportPending(
          pending, PendingReason::kWaitingForQuota,
          "Workload's preemption targets overlap with another workload's preemption targets");
      // Retried next cycle; the heads behind it would only find the same victims.
      KeepPending(entry, false);
      return Outcome::kStop;
    }
  }
  for (const Target& t : entry.targets) {
    preempted_.insert(t.victim);
    if (t.victim->evicting) continue;
    t.victim->cq->admitted.SetEvicting(t.victim);
    Decision d;
    d.kind = Decision::Kind::kPreempt;
    d.key = t.victim->wl.key;
    d.preemptor = pending->wl.key;
    d.preemption_reason = t.reason;
    d.message = absl::StrCat("Preempted to accommodate a workload (UID: ", pending->wl.uid,
                             ") due to ", HumanReason(t.reason), "; preemptor path: ",
                             Path(entry.cq->node), "; preemptee path: ", Path(t.victim->cq->node));
    out_.push_back(std::move(d));
  }
  ReportPending(pending, PendingReason::kWaitingForPreemptedWorkloads,
                absl::StrCat("Pending the preemption of ", entry.targets.size(), " workload(s)"));
  // The preemptor holds what it will use for the rest of the cycle; a
  // workload slice only its growth (its replaced slice's usage returns to
  // the tree when ScopedSliceRelease ends).
  FlavorResourceAmounts held = assignment.usage;
  if (released_slice_ != nullptr && released_slice_->wl.key == pending->wl.replaces) {
    held = Growth(assignment.usage, released_slice_->usage);
    // As Kueue counts it among the slice's targets: no later head of this
    // cycle preempts the slice that is about to be replaced.
    preempted_.insert(released_slice_);
  }
  s_.tree_->AddUsage(entry.cq->node, held);
  ++s_.version_;
  preemptor_usage_.emplace_back(entry.cq->node, std::move(held));
  // BestEffortFIFO keeps the preemptor at the head (sticky), so in Kueue
  // nothing behind it is admitted before it: both strategies end the run.
  if (!Strict(*entry.cq)) entry.cq->sticky_preemptor = pending->wl.key;
  KeepPending(entry, false);
  return Outcome::kStop;
}

// ---- Phase 6: requeue ---------------------------------------------------------

void CycleRunner::Requeue() {
  for (PendingEntry* pending : deferred_) s_.cqs_[pending->queued_in]->queue.PushHeap(pending);
  for (auto& [node, usage] : preemptor_usage_) s_.tree_->RemoveUsage(node, usage);
  for (auto& [cq, list] : reservations_) {
    for (const FlavorResourceAmounts& reserved : list) s_.tree_->RemoveUsage(cq->node, reserved);
  }
  for (auto& [cq, list] : topology_reservations_) {
    for (const TopologyReservation& held : list) view_.tas->CountUsage(*held.wl, held.admission, -1);
  }
}

// ---- The cycle ----------------------------------------------------------------

std::vector<Decision> CycleRunner::Run() {
  // Phase 1: snapshot.
  std::vector<CqInfo*> running = Snapshot();
  const int limit = s_.opts_.max_admissions_per_cluster_queue_per_cycle;
  while (!running.empty()) {  // one round of phases 2-5
    // Phase 2: nominate heads.
    std::vector<Entry> entries = NominateHeads(running);
    // Phase 3: assign flavors (and preemption targets, partial admission).
    for (Entry& entry : entries) AssignFlavorsAndTargets(entry);
    // Phases 4 and 5: order the entries, then admit / preempt each.
    std::vector<CqInfo*> next;  // CQs that run again in the next round
    auto process = [&](Entry& entry) {
      Outcome o = ProcessEntry(entry);
      bool more = o != Outcome::kStop && (limit <= 0 || admitted_in_cycle_[entry.cq] < limit);
      if (more && entry.cq->queue.heap_size() > 0) next.push_back(entry.cq);
    };
    if (!view_.fair_sharing) {
      OrderEntries(entries);
      for (Entry& entry : entries) process(entry);
    } else {
      ProcessByTournament(entries, process);  // phase 4 interleaved with phase 5
    }
    running = std::move(next);
  }
  // Phase 6: requeue.
  Requeue();
  return std::move(out_);
}

std::vector<Decision> CoreState::RunCycle(absl::Time now) {
  // Phase 1 (snapshot) starts here: the tree reflects the latest configuration
  // and the batched inadmissible requeues are applied.
  EnsureBuilt();
  FlushRequeues();
  bool ok_before = !opts_.check_invariants || tree_->CheckInvariants().empty();
  std::vector<Decision> out = CycleRunner(*this, now).Run();
  if (opts_.check_invariants && ok_before) {
    std::string err = tree_->CheckInvariants();
    if (!err.empty()) {
      std::fprintf(stderr, "queueing: quota invariant broken after a cycle: %s\n", err.c_str());
      std::abort();
    }
  }
  return out;
}

}  // namespace batchd::queueing::internal
