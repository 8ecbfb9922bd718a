#include "queueing/internal/preemption.h"

#include <algorithm>

namespace batchd::queueing::internal {
namespace {

enum class Variant { kWithinCq, kHierarchical, kReclaimWithoutBorrowing, kReclaimWhileBorrowing };

struct Candidate {
  AdmittedEntry* victim;
  Variant variant;
  NodeId lca;    // kNoNode for the own CQ
  int rank = 0;  // evicted first, then hierarchy, priority, same-CQ
  int32_t priority = 0;
  uint64_t admit_seq = 0;
};

// Policy check on the compact copy (no pointer chase).
bool Satisfies(PreemptionPolicy policy, const Workload& preemptor,
               const AdmittedSummary& victim) {
  switch (policy) {
    case PreemptionPolicy::kNever: return false;
    case PreemptionPolicy::kLowerPriority: return victim.priority < preemptor.priority;
    case PreemptionPolicy::kLowerOrNewerEqualPriority:
      return victim.priority < preemptor.priority ||
             (victim.priority == preemptor.priority &&
              preemptor.queue_order_time < victim.queue_order_time);
    case PreemptionPolicy::kAny: return true;
  }
  return false;
}

PreemptionReason ReasonOf(Variant v) {
  switch (v) {
    case Variant::kWithinCq: return PreemptionReason::kInClusterQueue;
    case Variant::kReclaimWhileBorrowing: return PreemptionReason::kInCohortReclaimWhileBorrowing;
    default: return PreemptionReason::kInCohortReclamation;
  }
}

struct ClassicCtx {
  const SnapshotView& view;
  const PreemptionRequest& req;
  std::vector<Candidate> hierarchy, priority, same;
  uint64_t need_mask = 0;

  bool Uses(const AdmittedSummary& w) const {
    if ((w.flavor_resource_mask & need_mask) == 0) return false;
    return view.exact_masks || UsesAny(*w.entry, req.need_preemption);
  }
};

void ClassifyCq(ClassicCtx& c, const CqInfo& other, NodeId lca, bool advantage) {
  const Preemption& p = c.req.cq->spec->preemption;
  bool forbidden = p.borrow_within_cohort == PreemptionPolicy::kNever;
  for (const AdmittedSummary& w : other.admitted) {
    if (w.entry == c.req.replaced) continue;
    if (!Satisfies(p.reclaim_within_cohort, *c.req.wl, w) || !c.Uses(w)) continue;
    if (advantage) {
      c.hierarchy.push_back({w.entry, Variant::kHierarchical, lca, 0, w.priority, w.admit_seq});
      continue;
    }
    bool above = w.priority >= c.req.wl->priority ||
                 (p.max_priority_threshold && w.priority > *p.max_priority_threshold);
    Variant v = forbidden || above ? Variant::kReclaimWithoutBorrowing
                                   : Variant::kReclaimWhileBorrowing;
    c.priority.push_back({w.entry, v, lca, 0, w.priority, w.admit_seq});
  }
}

void CollectSubtree(ClassicCtx& c, NodeId cur, NodeId root, NodeId skip, bool advantage) {
  const QuotaTree& t = *c.view.tree;
  for (NodeId child : t.node(cur).children) {
    if (child == skip) continue;
    if (!t.node(child).is_cq) {
      if (IsWithinNominal(t, child, c.req.need_preemption)) continue;
      CollectSubtree(c, child, root, skip, advantage);
      continue;
    }
    const CqInfo* other = (*c.view.cq_of_node)[child];
    if (other == nullptr || other == c.req.cq) continue;
    if (!IsWithinNominal(t, child, c.req.need_preemption)) ClassifyCq(c, *other, root, advantage);
  }
}

// Kueue's QuantitiesFitInQuota: whether `reqs` fit n's subtree quota, and
// what remains beyond n's local available quota.
bool FitInQuota(const QuotaTree& t, NodeId n, FlavorResourceAmounts& reqs) {
  bool fits = true;
  for (auto& [id, v] : reqs) {
    if (api::SaturatingAdd(t.Usage(n, id), v) > t.SubtreeQuota(n, id)) fits = false;
    v = std::max<Amount>(0, api::SaturatingSub(v, t.LocalAvailable(n, id)));
  }
  return fits;
}

void CollectCandidates(ClassicCtx& c) {
  const CqInfo& cq = *c.req.cq;
  const Preemption& p = cq.spec->preemption;
  if (p.within_cluster_queue != PreemptionPolicy::kNever) {
    for (const AdmittedSummary& w : cq.admitted) {
      if (w.entry == c.req.replaced) continue;  // never a victim of its own replacement
      if (Satisfies(p.within_cluster_queue, *c.req.wl, w) && c.Uses(w)) {
        c.same.push_back({w.entry, Variant::kWithinCq, kNoNode, 0, w.priority, w.admit_seq});
      }
    }
  }
  const QuotaTree& t = *c.view.tree;
  if (t.node(cq.node).parent == kNoNode || p.reclaim_within_cohort == PreemptionPolicy::kNever) {
    return;
  }
  FlavorResourceAmounts remaining = c.req.usage;
  bool advantage = FitInQuota(t, cq.node, remaining);
  NodeId prev = kNoNode;
  for (NodeId cur = t.node(cq.node).parent; cur != kNoNode; cur = t.node(cur).parent) {
    CollectSubtree(c, cur, cur, prev, advantage);
    advantage = FitInQuota(t, cur, remaining) || advantage;
    prev = cur;
  }
}

bool StillValid(const QuotaTree& t, const Candidate& c, const std::vector<FlavorResourceId>& need) {
  if (c.variant == Variant::kWithinCq) return true;
  for (NodeId n = c.victim->cq->node; n != kNoNode && n != c.lca; n = t.node(n).parent) {
    if (IsWithinNominal(t, n, need)) return false;
  }
  return true;
}

bool FitsAfter(const QuotaTree& t, const PreemptionRequest& req, bool allow_borrowing) {
  for (const auto& [id, v] : req.usage) {
    if (!allow_borrowing && t.BorrowingWith(req.cq->node, id, v)) return false;
    if (v > t.Available(req.cq->node, id)) return false;
  }
  return true;
}

// Candidates form a binary heap (best on top) and are popped lazily: the
// search usually stops after a few, so ordering all of them is wasted work.
// Within a rank the CQ (own or other) is fixed by the group, so the order is
// CandidateLess's: lower priority, then most recently admitted, then uid.
struct CandidateHeap {
  bool operator()(const Candidate& a, const Candidate& b) const {  // "a after b"
    if (a.rank != b.rank) return a.rank > b.rank;
    if (a.priority != b.priority) return a.priority > b.priority;
    if (a.admit_seq != b.admit_seq) return a.admit_seq < b.admit_seq;
    return a.victim->wl.uid > b.victim->wl.uid;
  }
};

std::vector<Target> Search(const SnapshotView& view, const PreemptionRequest& req,
                           std::vector<Candidate> heap, bool allow_borrowing) {
  QuotaTree& t = *view.tree;
  CandidateHeap cmp;
  std::vector<Target> targets;
  bool fits = false;
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), cmp);
    Candidate c = heap.back();
    heap.pop_back();
    if (allow_borrowing && c.variant == Variant::kReclaimWithoutBorrowing) continue;
    if (!StillValid(t, c, req.need_preemption)) continue;
    t.RemoveUsage(c.victim->cq->node, c.victim->usage);
    targets.push_back({c.victim, ReasonOf(c.variant)});
    if (FitsAfter(t, req, allow_borrowing)) {
      fits = true;
      break;
    }
  }
  if (fits) FillBack(t, targets, [&] { return FitsAfter(t, req, allow_borrowing); });
  for (const Target& tg : targets) t.AddUsage(tg.victim->cq->node, tg.victim->usage);
  if (!fits) targets.clear();
  return targets;
}

}  // namespace

bool SatisfiesPolicy(PreemptionPolicy policy, const Workload& preemptor, const Workload& victim) {
  switch (policy) {
    case PreemptionPolicy::kNever: return false;
    case PreemptionPolicy::kLowerPriority: return victim.priority < preemptor.priority;
    case PreemptionPolicy::kLowerOrNewerEqualPriority:
      return victim.priority < preemptor.priority ||
             (victim.priority == preemptor.priority &&
              preemptor.queue_order_time < victim.queue_order_time);
    case PreemptionPolicy::kAny: return true;
  }
  return false;
}

bool UsesAny(const AdmittedEntry& e, const std::vector<FlavorResourceId>& ids) {
  for (const auto& [id, v] : e.usage) {
    if (v > 0 && std::binary_search(ids.begin(), ids.end(), id)) return true;
  }
  return false;
}

bool IsWithinNominal(const QuotaTree& t, NodeId n, const std::vector<FlavorResourceId>& ids) {
  for (FlavorResourceId id : ids) {
    if (t.Usage(n, id) > t.SubtreeQuota(n, id)) return false;
  }
  return true;
}

bool CandidateLess(const AdmittedEntry* a, const AdmittedEntry* b, const CqInfo* own) {
  if (a->evicting != b->evicting) return a->evicting;
  bool a_own = a->cq == own, b_own = b->cq == own;
  if (a_own != b_own) return b_own;
  if (a->wl.priority != b->wl.priority) return a->wl.priority < b->wl.priority;
  if (a->admit_seq != b->admit_seq) return a->admit_seq > b->admit_seq;
  return a->wl.uid < b->wl.uid;
}

std::vector<Target> ClassicalTargets(const SnapshotView& view, const PreemptionRequest& req) {
  ClassicCtx c{view, req, {}, {}, {}, FlavorResourceMask(req.need_preemption)};
  CollectCandidates(c);
  std::vector<Candidate> all;
  all.reserve(c.hierarchy.size() + c.priority.size() + c.same.size());
  int group = 0;
  for (auto* list : {&c.hierarchy, &c.priority, &c.same}) {
    for (Candidate& x : *list) {
      x.rank = (x.victim->evicting ? 0 : 3) + group;
      all.push_back(x);
    }
    ++group;
  }
  view.preemption_candidates += all.size();
  std::make_heap(all.begin(), all.end(), CandidateHeap{});
  if (all.empty()) return {};

  const Preemption& p = req.cq->spec->preemption;
  bool forbidden = p.borrow_within_cohort == PreemptionPolicy::kNever;
  bool other = !c.hierarchy.empty() || !c.priority.empty();
  bool under_nominal = true;
  for (FlavorResourceId id : req.need_preemption) {
    // A workload slice's replaced slice is out of the tree meanwhile, but
    // Kueue reads the queue's usage with it (only the growth is requested).
    Amount used = view.tree->Usage(req.cq->node, id);
    if (req.replaced != nullptr) {
      for (const auto& [rid, v] : req.replaced->usage) {
        if (rid == id) used = api::SaturatingAdd(used, v);
      }
    }
    if (used >= view.tree->Nominal(req.cq->node, id)) under_nominal = false;
  }
  std::vector<bool> attempts;
  if (!other || (forbidden && !under_nominal)) attempts = {true};
  else if (forbidden && c.hierarchy.empty()) attempts = {false, true};
  else attempts = {true, false};
  for (bool allow : attempts) {
    std::vector<Target> t = Search(view, req, all, allow);
    if (!t.empty()) return t;
  }
  return {};
}

std::vector<Target> FindTargets(const SnapshotView& view, const PreemptionRequest& req) {
  return view.fair_sharing ? FairSharingTargets(view, req) : ClassicalTargets(view, req);
}

std::pair<GranularMode, int> Oracle::SimulatePreemption(FlavorResourceId id, Amount val) {
  const Preemption& p = cq_.spec->preemption;
  if (p.within_cluster_queue == PreemptionPolicy::kNever &&
      p.reclaim_within_cohort == PreemptionPolicy::kNever) {
    return {GranularMode::kNoCandidates, 0};
  }
  PreemptionRequest req{&wl_, &cq_, {{id, val}}, {id}, replaced_};
  std::vector<Target> targets = FindTargets(view_, req);
  if (targets.empty()) return {GranularMode::kNoCandidates, 0};
  QuotaTree& t = *view_.tree;
  bool own = false;
  for (const Target& tg : targets) {
    own = own || tg.victim->cq == &cq_;
    t.RemoveUsage(tg.victim->cq->node, tg.victim->usage);
  }
  int borrow = t.BorrowingLevel(cq_.node, id, val).first;
  for (const Target& tg : targets) t.AddUsage(tg.victim->cq->node, tg.victim->usage);
  return {own ? GranularMode::kPreempt : GranularMode::kReclaim, borrow};
}

}  // namespace batchd::queueing::internal
