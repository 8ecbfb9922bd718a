// The scheduling cycle (reference §2.3), batchd variant: rounds of one head
// per running ClusterQueue, ordered across CQs (§2.5 / §2.8), processed
// against the live quota tree; a CQ keeps running while its heads are
// admitted (BestEffortFIFO also skips past heads that don't fit).
#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "queueing/internal/core_state.h"
#include "queueing/internal/fair_sharing.h"

namespace batchd::queueing::internal {

class CycleRunner {
 public:
  CycleRunner(CoreState& s, absl::Time now) : s_(s), now_(now) {
    view_.tree = s.tree_.get();
    view_.frs = &s.frs_;
    view_.flavors = &s.flavors_;
    view_.cq_of_node = &s.cq_of_node_;
    view_.fair_sharing = s.opts_.fair_sharing;
    view_.fs_strategies = s.opts_.fair_sharing_strategies;
    view_.exact_masks = s.frs_.size() <= 64;
  }
  std::vector<Decision> Run();

 private:
  struct Entry {
    PendingEntry* e;
    CqInfo* cq;
    Assignment a;
    std::vector<Target> targets;
    uint64_t version = 0;
  };
  enum class Outcome { kAdmitted, kContinue, kStop };

  void MoveDueBackoff();
  PendingEntry* NextHead(CqInfo& cq);
  bool PreCheck(PendingEntry* e, CqInfo& cq);
  void Nominate(Entry& en);
  bool TryPartial(Entry& en);
  Outcome Process(Entry& en);
  Outcome Requeue(Entry& en, bool inadmissible);
  void Admit(Entry& en);
  void Pend(PendingEntry* e, PendingReason r, std::string msg);
  bool Reserve(Entry& en);
  void Order(std::vector<Entry>& heads);
  std::string Path(NodeId n) const;
  template <typename Fn>
  void ProcessByTournament(std::vector<Entry>& heads, Fn process);
  bool Strict(const CqInfo& cq) const {
    return cq.spec && cq.spec->strategy == QueueingStrategy::kStrictFIFO;
  }

  CoreState& s_;
  absl::Time now_;
  SnapshotView view_;
  std::vector<Decision> out_;
  class Lift;
  CqInfo* lifted_ = nullptr;
  absl::flat_hash_map<CqInfo*, std::vector<FrUsage>> reservations_;  // preempt, no targets
  std::vector<std::pair<NodeId, FrUsage>> preemptor_usage_;
  absl::flat_hash_set<AdmittedEntry*> preempted_;
  std::vector<PendingEntry*> deferred_;  // back to the heap at the end of the cycle
  absl::flat_hash_map<uint64_t, std::pair<PendingReason, std::string>> nofit_;
  absl::flat_hash_map<CqInfo*, int> admitted_in_cycle_;
};

// Lifts the reservations of `cq` while one of its own heads is evaluated;
// puts back what still fits afterwards.
class CycleRunner::Lift {
 public:
  Lift(CycleRunner& r, CqInfo* cq) : r_(r), cq_(cq) {
    if (r_.lifted_ != nullptr) return;  // nested (re-nomination inside Process)
    auto it = r_.reservations_.find(cq_);
    if (it == r_.reservations_.end()) return;
    r_.lifted_ = cq_;
    ++r_.s_.version_;
    count_ = it->second.size();
    for (const FrUsage& u : it->second) r_.s_.tree_->RemoveUsage(cq_->node, u);
  }
  ~Lift() {
    if (count_ == 0) return;
    r_.lifted_ = nullptr;
    ++r_.s_.version_;
    QuotaTree& t = *r_.s_.tree_;
    std::vector<FrUsage>& list = r_.reservations_[cq_];
    for (size_t i = 0; i < count_; ++i) {  // later entries were added while lifted
      for (auto& [fr, v] : list[i]) v = std::min(v, t.Available(cq_->node, fr));
      t.AddUsage(cq_->node, list[i]);
    }
  }

 private:
  CycleRunner& r_;
  CqInfo* cq_;
  size_t count_ = 0;
};

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

}  // namespace

// "/root/cohort/cq", as Kueue prints it in preemption messages.
std::string CycleRunner::Path(NodeId n) const {
  std::vector<const std::string*> names;
  for (; n != kNoNode; n = s_.tree_->node(n).parent) names.push_back(&s_.tree_->node(n).name);
  std::string out;
  for (auto it = names.rbegin(); it != names.rend(); ++it) absl::StrAppend(&out, "/", **it);
  return out;
}

void CycleRunner::MoveDueBackoff() {
  while (!s_.backoff_.empty() && s_.backoff_.begin()->first <= now_) {
    std::string key = s_.backoff_.begin()->second;
    s_.backoff_.erase(s_.backoff_.begin());
    auto it = s_.pending_.find(key);
    if (it == s_.pending_.end()) continue;
    PendingEntry* e = it->second.get();
    --s_.backoff_per_cq_[e->queued_in];
    e->wl.requeue_at.reset();
    s_.cqs_[e->queued_in]->queue.PushHeap(e);
  }
}

void CycleRunner::Pend(PendingEntry* e, PendingReason r, std::string msg) {
  if (e->has_last && e->last_reason == r && e->last_message == msg) return;
  e->has_last = true;
  e->last_reason = r;
  e->last_message = msg;
  Decision d;
  d.kind = Decision::Kind::kPending;
  d.key = e->wl.key;
  d.pending_reason = r;
  d.message = std::move(msg);
  out_.push_back(std::move(d));
}

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
bool CycleRunner::PreCheck(PendingEntry* e, CqInfo& cq) {
  const Workload& wl = e->wl;
  if (!cq.active) {
    Pend(e, PendingReason::kMisconfigured, cq.inactive_message);
  } else if (!cq.spec->namespace_selector ||
             !cq.spec->namespace_selector->Matches(wl.namespace_labels)) {
    Pend(e, PendingReason::kNamespaceMismatch,
         "Workload namespace doesn't match ClusterQueue selector");
  } else if (auto lq = s_.lqs_.find({wl.namespace_, wl.local_queue});
             lq != s_.lqs_.end() && lq->second.stop_policy != StopPolicy::kNone) {
    Pend(e, PendingReason::kLocalQueueStopped,
         absl::StrCat("LocalQueue ", wl.local_queue, " is stopped"));
  } else {
    return true;
  }
  cq.queue.PushInadmissible(e);
  return false;
}

void CycleRunner::Nominate(Entry& en) {
  Lift lift(*this, en.cq);
  const Workload& wl = en.e->wl;
  std::vector<int32_t> counts;
  for (const PodSet& ps : wl.pod_sets) counts.push_back(ps.count);
  Oracle oracle(view_, wl, *en.cq);
  en.a = AssignFlavors(view_, *en.cq, wl, counts, &oracle);
  en.targets.clear();
  if (en.a.mode == Mode::kPreempt) {
    en.targets = FindTargets(view_, {&wl, en.cq, en.a.usage, en.a.need_preemption});
  }
  if (en.a.mode != Mode::kFit && en.targets.empty()) TryPartial(en);
  en.version = s_.version_;
}

// §2.9: the largest counts (binary search) that fit or preempt with targets.
bool CycleRunner::TryPartial(Entry& en) {
  const Workload& wl = en.e->wl;
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
  Oracle oracle(view_, wl, *en.cq);
  auto try_at = [&](int64_t i, Assignment& a, std::vector<Target>& t) {
    a = AssignFlavors(view_, *en.cq, wl, counts_at(i), &oracle);
    t.clear();
    if (a.mode == Mode::kPreempt) t = FindTargets(view_, {&wl, en.cq, a.usage, a.need_preemption});
    return a.mode == Mode::kFit || !t.empty();
  };
  int64_t lo = 1, hi = total;  // find the smallest i in [1, total] that works
  Assignment best_a;
  std::vector<Target> best_t;
  if (!try_at(total, best_a, best_t)) return false;
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    Assignment a;
    std::vector<Target> t;
    if (try_at(mid, a, t)) {
      hi = mid;
      best_a = std::move(a);
      best_t = std::move(t);
    } else {
      lo = mid + 1;
    }
  }
  en.a = std::move(best_a);
  en.targets = std::move(best_t);
  return true;
}

void CycleRunner::Admit(Entry& en) {
  PendingEntry* e = en.e;
  auto a = std::make_unique<AdmittedEntry>();
  a->admission = en.a.ToAdmission(en.cq->name);
  a->usage = en.a.usage;
  a->cq = en.cq;
  a->admit_seq = ++s_.admit_seq_;
  s_.tree_->AddUsage(en.cq->node, a->usage);
  ++s_.version_;
  if (en.cq->sticky_preemptor == e->wl.key) en.cq->sticky_preemptor.clear();
  Decision d;
  d.kind = Decision::Kind::kAdmit;
  d.key = e->wl.key;
  d.admission = a->admission;
  out_.push_back(std::move(d));
  std::string key = e->wl.key;
  en.cq->queue.ReleaseNext(e->signature);  // the next identical workload may fit too
  --s_.LqOf(e->wl).pending;
  a->wl = std::move(e->wl);
  en.cq->admitted.Insert(a.get());
  s_.CountLqUsage(*a, +1);
  s_.pending_.erase(key);  // frees `e`
  s_.admitted_[key] = std::move(a);
  ++admitted_in_cycle_[en.cq];
}

// Keeps a not-admitted head pending: StrictFIFO blocks the CQ behind it;
// BestEffortFIFO parks it (inadmissible, or retried next cycle) and moves on.
CycleRunner::Outcome CycleRunner::Requeue(Entry& en, bool inadmissible) {
  if (Strict(*en.cq)) {
    deferred_.push_back(en.e);
    return Outcome::kStop;
  }
  if (inadmissible) {
    en.cq->queue.PushInadmissible(en.e);
  } else {
    deferred_.push_back(en.e);
  }
  return Outcome::kContinue;
}

// Preempt without targets: hold the capacity the head waits for so that
// other heads can't take it this cycle (§2.3).
bool CycleRunner::Reserve(Entry& en) {
  if (en.cq->spec->preemption.reclaim_within_cohort == PreemptionPolicy::kAny) return false;
  FrUsage r;
  const QuotaTree& t = *s_.tree_;
  NodeId n = en.cq->node;
  for (const auto& [fr, v] : en.a.usage) {
    Amount take;
    if (en.a.borrowing > 0) {
      Amount bl = t.node(n).borrowing_limit[fr];
      take = bl == kNoLimit ? v : std::min(v, SatSub(SatAdd(t.Nominal(n, fr), bl), t.Usage(n, fr)));
    } else {
      take = std::min(v, SatSub(t.Nominal(n, fr), t.Usage(n, fr)));
    }
    // Never beyond what the tree can hold, so the invariant holds mid-cycle.
    take = std::min(take, t.Available(n, fr));
    if (take > 0) r.emplace_back(fr, take);
  }
  if (r.empty()) return false;
  s_.tree_->AddUsage(en.cq->node, r);
  ++s_.version_;
  reservations_[en.cq].push_back(std::move(r));
  return true;
}


CycleRunner::Outcome CycleRunner::Process(Entry& en) {
  Lift lift(*this, en.cq);
  // Re-nominate when the quota tree changed since nomination, unless the
  // assignment still fits as it is (the common case, and cheap to check).
  bool still_fits = en.a.mode == Mode::kFit && s_.tree_->Fits(en.cq->node, en.a.usage);
  if (!still_fits && (en.version != s_.version_ || en.a.mode == Mode::kFit)) Nominate(en);
  PendingEntry* e = en.e;
  if (en.a.mode == Mode::kFit) {
    Admit(en);
    return Outcome::kAdmitted;
  }
  if (en.a.mode == Mode::kNoFit) {
    Pend(e, en.a.reason, en.a.message);
    if (!Strict(*en.cq)) nofit_[e->signature] = {en.a.reason, en.a.message};
    return Requeue(en, true);
  }
  if (en.targets.empty()) {
    Pend(e, PendingReason::kWaitingForQuota, en.a.message);
    if (!Strict(*en.cq)) nofit_[e->signature] = {PendingReason::kWaitingForQuota, en.a.message};
    // Kueue evaluates one head per CQ per cycle and this one becomes
    // inadmissible, so the capacity it reserves only holds off other CQs:
    // later heads of its own CQ see it lifted (Lift).
    Reserve(en);
    return Requeue(en, true);
  }
  for (const Target& t : en.targets) {
    if (preempted_.contains(t.wl)) {
      Pend(e, PendingReason::kWaitingForQuota,
           "Workload's preemption targets overlap with another workload's preemption targets");
      // Retried next cycle; the heads behind it would only find the same victims.
      Requeue(en, false);
      return Outcome::kStop;
    }
  }
  for (const Target& t : en.targets) {
    preempted_.insert(t.wl);
    if (t.wl->evicting) continue;
    t.wl->cq->admitted.SetEvicting(t.wl);
    Decision d;
    d.kind = Decision::Kind::kPreempt;
    d.key = t.wl->wl.key;
    d.preemptor = e->wl.key;
    d.preemption_reason = t.reason;
    d.message = absl::StrCat("Preempted to accommodate a workload (UID: ", e->wl.uid,
                             ") due to ", HumanReason(t.reason), "; preemptor path: ",
                             Path(en.cq->node), "; preemptee path: ", Path(t.wl->cq->node));
    out_.push_back(std::move(d));
  }
  Pend(e, PendingReason::kWaitingForPreemptedWorkloads,
       absl::StrCat("Pending the preemption of ", en.targets.size(), " workload(s)"));
  s_.tree_->AddUsage(en.cq->node, en.a.usage);
  ++s_.version_;
  preemptor_usage_.emplace_back(en.cq->node, en.a.usage);
  // BestEffortFIFO keeps the preemptor at the head (sticky), so in Kueue
  // nothing behind it is admitted before it: both strategies end the run.
  if (!Strict(*en.cq)) en.cq->sticky_preemptor = e->wl.key;
  Requeue(en, false);
  return Outcome::kStop;
}

void CycleRunner::Order(std::vector<Entry>& heads) {
  std::sort(heads.begin(), heads.end(), [&](const Entry& x, const Entry& y) {
    if (x.a.borrowing != y.a.borrowing) {
      return x.a.borrowing < y.a.borrowing;
    }
    if (x.e->wl.priority != y.e->wl.priority) return x.e->wl.priority > y.e->wl.priority;
    if (x.e->wl.queue_order_time != y.e->wl.queue_order_time) {
      return x.e->wl.queue_order_time < y.e->wl.queue_order_time;
    }
    return x.e->wl.key < y.e->wl.key;
  });
}

// §2.8: repeatedly process the tournament winner; shares change after each.
// Cohort trees don't share quota, so each root runs its own tournament.
template <typename Fn>
void CycleRunner::ProcessByTournament(std::vector<Entry>& heads, Fn process) {
  std::vector<NodeId> roots;
  absl::flat_hash_map<NodeId, std::vector<Entry*>> by_root;
  for (Entry& en : heads) {
    NodeId r = s_.tree_->Root(en.cq->node);
    auto [it, inserted] = by_root.try_emplace(r);
    if (inserted) roots.push_back(r);
    it->second.push_back(&en);
  }
  for (NodeId r : roots) {
    std::vector<Entry*>& left = by_root[r];
    while (!left.empty()) {
      size_t w = 0;
      if (left.size() > 1) {
        std::vector<FsHead> fs;
        for (Entry* en : left) {
          fs.push_back({en->cq->node, &en->a.usage, en->e->wl.priority,
                        en->e->wl.queue_order_time, &en->e->wl.key});
        }
        w = TournamentWinner(*s_.tree_, fs);
      }
      Entry* en = left[w];
      left.erase(left.begin() + w);
      process(*en);
    }
  }
}

std::vector<Decision> CycleRunner::Run() {
  MoveDueBackoff();
  std::vector<CqInfo*> running;
  for (auto& [_, cq] : s_.cqs_) {
    if (cq->queue.heap_size() > 0) running.push_back(cq.get());
  }
  std::sort(running.begin(), running.end(),
            [](const CqInfo* a, const CqInfo* b) { return a->name < b->name; });
  const int limit = s_.opts_.max_admissions_per_cluster_queue_per_cycle;
  while (!running.empty()) {
    std::vector<Entry> heads;
    std::vector<CqInfo*> next;
    for (CqInfo* cq : running) {
      PendingEntry* e = nullptr;
      while ((e = NextHead(*cq)) != nullptr) {
        if (!PreCheck(e, *cq)) continue;
        auto hit = Strict(*cq) ? nofit_.end() : nofit_.find(e->signature);
        if (hit == nofit_.end()) break;
        Pend(e, hit->second.first, hit->second.second);  // identical to a NoFit this cycle
        cq->queue.PushInadmissible(e);
      }
      if (e == nullptr) continue;
      heads.push_back({e, cq, {}, {}, 0});
      Nominate(heads.back());
    }
    auto process = [&](Entry& en) {
      Outcome o = Process(en);
      bool more = o != Outcome::kStop && (limit <= 0 || admitted_in_cycle_[en.cq] < limit);
      if (more && en.cq->queue.heap_size() > 0) next.push_back(en.cq);
    };
    if (!view_.fair_sharing) {
      Order(heads);
      for (Entry& en : heads) process(en);
    } else {
      ProcessByTournament(heads, process);
    }
    running = std::move(next);
  }
  for (PendingEntry* e : deferred_) s_.cqs_[e->queued_in]->queue.PushHeap(e);
  for (auto& [node, r] : preemptor_usage_) s_.tree_->RemoveUsage(node, r);
  for (auto& [cq, list] : reservations_) {
    for (const FrUsage& r : list) s_.tree_->RemoveUsage(cq->node, r);
  }
  return std::move(out_);
}

std::vector<Decision> CoreState::RunCycle(absl::Time now) {
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
