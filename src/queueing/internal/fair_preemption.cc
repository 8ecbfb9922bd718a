// Fair-sharing preemption (reference §2.8), step by step as Kueue's
// fairPreemptions and its fairsharing package: candidates, the target
// ClusterQueue ordering (TargetClusterQueueOrdering), the first strategy over
// it, the second strategy (rule S2-b) over the candidates the first one
// passed over, then fill-back.
#include <deque>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "queueing/internal/fair_sharing.h"
#include "queueing/internal/preemption.h"

namespace batchd::queueing::internal {
namespace {

// The ClusterQueues to take victims from, one at a time: from the root of the
// preemptor's cohort tree, descend to the child with the highest share until
// a ClusterQueue is reached. A ClusterQueue is pruned for good once it has no
// candidates left or is not borrowing (the preemptor's own CQ only when it
// has no candidates left); a cohort once it is not borrowing and not an
// ancestor of the preemptor, or once all its children are pruned. The same
// ClusterQueue comes back while it still has the highest share, so every
// caller pops a candidate or drops the queue before asking again. Shares are
// read live from the tree, which the caller changes as it takes victims.
class TargetOrdering {
 public:
  TargetOrdering(const QuotaTree& tree, NodeId preemptor, const CqInfo* own_cq,
                 const std::vector<AdmittedEntry*>& candidates)
      : tree_(tree), preemptor_(preemptor), own_cq_(own_cq) {
    for (NodeId n = tree.node(preemptor).parent; n != kNoNode; n = tree.node(n).parent) {
      ancestors_.insert(n);
    }
    for (AdmittedEntry* w : candidates) queues_[w->cq->node].push_back(w);
  }

  // The next target ClusterQueue, or kNoNode when there is none left.
  NodeId Next() {
    if (tree_.node(preemptor_).parent == kNoNode) {
      return !pruned_.contains(preemptor_) && HasCandidates(preemptor_) ? preemptor_ : kNoNode;
    }
    NodeId root = tree_.Root(preemptor_);
    while (!pruned_.contains(root)) {
      NodeId t = NextFrom(root);
      if (t != kNoNode) return t;
    }
    return kNoNode;
  }
  bool HasCandidates(NodeId cq) const {
    auto it = queues_.find(cq);
    return it != queues_.end() && !it->second.empty();
  }
  AdmittedEntry* Pop(NodeId cq) {
    std::deque<AdmittedEntry*>& q = queues_[cq];
    AdmittedEntry* w = q.front();
    q.pop_front();
    return w;
  }
  void Drop(NodeId cq) { pruned_.insert(cq); }

 private:
  // Kueue's nextTarget: kNoNode when this call only pruned nodes.
  NodeId NextFrom(NodeId cohort) {
    NodeId best_cq = kNoNode;
    Drs best_cq_share = Drs::Negative();
    NodeId best_cohort = kNoNode;
    Drs best_cohort_share = Drs::Negative();
    for (NodeId child : tree_.node(cohort).children) {
      if (pruned_.contains(child)) continue;
      Drs share = DominantShare(tree_, child);
      if (tree_.node(child).is_cq) {
        if ((!share.borrowing && child != preemptor_) || !HasCandidates(child)) {
          pruned_.insert(child);
          continue;
        }
        int c = CompareDrs(share, best_cq_share);
        // Equal shares: the queue whose first candidate goes first.
        if (c > 0 || (c == 0 && CandidateLess(queues_[child].front(),
                                               queues_[best_cq].front(), own_cq_))) {
          best_cq = child;
          best_cq_share = share;
        }
      } else {
        // An ancestor of the preemptor stays while anything below it is left:
        // its subtree may be unbalanced, or the preemptor may preempt its own.
        if (!share.borrowing && !ancestors_.contains(child)) {
          pruned_.insert(child);
        } else if (CompareDrs(share, best_cohort_share) >= 0) {
          best_cohort = child;
          best_cohort_share = share;
        }
      }
    }
    if (best_cq == kNoNode && best_cohort == kNoNode) {
      pruned_.insert(cohort);
      return kNoNode;
    }
    // Ties go to the cohort, where the most unfair node can still be chosen.
    if (CompareDrs(best_cohort_share, best_cq_share) >= 0) return NextFrom(best_cohort);
    return best_cq;
  }

  const QuotaTree& tree_;
  NodeId preemptor_;
  const CqInfo* own_cq_;
  absl::flat_hash_set<NodeId> ancestors_;  // cohorts above the preemptor's CQ
  absl::flat_hash_map<NodeId, std::deque<AdmittedEntry*>> queues_;  // CQ -> candidates, in order
  absl::flat_hash_set<NodeId> pruned_;
};

struct FairCtx {
  const SnapshotView& view;
  const PreemptionRequest& req;
  QuotaTree& tree;
  std::vector<Target> targets;

  NodeId own() const { return req.cq->node; }
  // Whether the preemptor fits, with the incoming usage (added to the tree
  // for the shares) taken out for the check; borrowing is allowed.
  bool Fits() {
    tree.RemoveUsage(own(), req.usage);
    bool ok = true;
    for (const auto& [id, v] : req.usage) {
      if (v > tree.Available(own(), id)) ok = false;
    }
    tree.AddUsage(own(), req.usage);
    return ok;
  }
  void Take(AdmittedEntry* w, PreemptionReason r) {
    tree.RemoveUsage(w->cq->node, w->usage);
    targets.push_back({w, r});
  }
  // Kueue's almostLCA(x, y): the child of the lowest common ancestor of x and
  // y on the path down to x — the subtree whose share x competes with.
  NodeId AlmostLca(NodeId x, NodeId y) const {
    absl::flat_hash_set<NodeId> ys;
    for (NodeId n = y; n != kNoNode; n = tree.node(n).parent) ys.insert(n);
    NodeId prev = x;
    for (NodeId n = x; n != kNoNode; n = tree.node(n).parent) {
      if (ys.contains(n)) return prev;
      prev = n;
    }
    return prev;
  }
  // The preemptor's share (with the incoming workload) and the target's, each
  // at its almostLCA: Kueue's PreemptorNewShare and TargetOldShare.
  std::pair<Drs, Drs> Shares(NodeId target) const {
    return {DominantShare(tree, AlmostLca(own(), target)),
            DominantShare(tree, AlmostLca(target, own()))};
  }
};

std::vector<AdmittedEntry*> Collect(const FairCtx& c) {
  const CqInfo& own = *c.req.cq;
  const Preemption& p = own.spec->preemption;
  std::vector<AdmittedEntry*> all;
  if (p.within_cluster_queue != PreemptionPolicy::kNever) {
    for (const AdmittedSummary& admitted : own.admitted) {
      if (admitted.entry == c.req.replaced) continue;  // never a victim of its own replacement
      if (UsesAny(*admitted.entry, c.req.need_preemption) &&
          SatisfiesPolicy(p.within_cluster_queue, *c.req.wl, admitted.entry->wl)) {
        all.push_back(admitted.entry);
      }
    }
  }
  // Other CQs of the whole tree that borrow on a flavor-resource the
  // preemptor needs (borrowWithinCohort plays no part under fair sharing).
  if (p.reclaim_within_cohort != PreemptionPolicy::kNever &&
      c.tree.node(own.node).parent != kNoNode) {
    std::vector<NodeId> stack = {c.tree.Root(own.node)};
    while (!stack.empty()) {
      NodeId n = stack.back();
      stack.pop_back();
      for (NodeId ch : c.tree.node(n).children) stack.push_back(ch);
      const CqInfo* cq = (*c.view.cq_of_node)[n];
      if (cq == nullptr || cq == &own) continue;
      bool borrowing = false;
      for (FlavorResourceId id : c.req.need_preemption) {
        if (c.tree.Usage(n, id) > c.tree.SubtreeQuota(n, id)) borrowing = true;
      }
      if (!borrowing) continue;
      for (const AdmittedSummary& admitted : cq->admitted) {
        if (UsesAny(*admitted.entry, c.req.need_preemption) &&
            SatisfiesPolicy(p.reclaim_within_cohort, *c.req.wl, admitted.entry->wl)) {
          all.push_back(admitted.entry);
        }
      }
    }
  }
  std::sort(all.begin(), all.end(), [&](const AdmittedEntry* a, const AdmittedEntry* b) {
    return CandidateLess(a, b, &own);
  });
  return all;
}

bool Passes(FairSharingStrategy s, const Drs& preemptor_new, const Drs& target_old,
            const Drs& target_new) {
  if (s == FairSharingStrategy::kLessThanOrEqualToFinalShare) {
    return CompareDrs(preemptor_new, target_new) <= 0;
  }
  return CompareDrs(preemptor_new, target_old) < 0;
}

// The first strategy. Returns whether the preemptor fits; the candidates it
// passed over go to `retry`, in the order they were looked at.
bool FirstStrategy(FairCtx& c, const std::vector<AdmittedEntry*>& candidates,
                   FairSharingStrategy strategy, std::vector<AdmittedEntry*>& retry) {
  TargetOrdering ordering(c.tree, c.own(), c.req.cq, candidates);
  // Within nominal on what it needs (FairSharingPreemptWithinNominal): the
  // preemptor takes back its nominal quota whatever the shares.
  const bool within_nominal = IsWithinNominal(c.tree, c.own(), c.req.need_preemption);
  for (NodeId t = ordering.Next(); t != kNoNode; t = ordering.Next()) {
    if (t == c.own()) {
      c.Take(ordering.Pop(t), PreemptionReason::kInClusterQueue);
      if (c.Fits()) return true;
      continue;
    }
    if (within_nominal) {
      c.Take(ordering.Pop(t), PreemptionReason::kInCohortReclamation);
      if (c.Fits()) return true;
      continue;
    }
    auto [preemptor_new, target_old] = c.Shares(t);
    // A borrowing preemptor on a zero weight (+inf) can pass neither strategy
    // against a finite target: all of t's candidates wait for rule S2-b.
    if (preemptor_new.ZeroWeightBorrows() && !target_old.ZeroWeightBorrows()) {
      while (ordering.HasCandidates(t)) retry.push_back(ordering.Pop(t));
      continue;
    }
    NodeId target_subtree = c.AlmostLca(t, c.own());
    while (ordering.HasCandidates(t)) {
      AdmittedEntry* w = ordering.Pop(t);
      c.tree.RemoveUsage(w->cq->node, w->usage);
      Drs target_new = DominantShare(c.tree, target_subtree);
      c.tree.AddUsage(w->cq->node, w->usage);
      if (!Passes(strategy, preemptor_new, target_old, target_new)) {
        retry.push_back(w);
        continue;
      }
      c.Take(w, PreemptionReason::kInCohortFairSharing);
      if (c.Fits()) return true;
      break;  // the shares changed: pick the target queue again
    }
  }
  return false;
}

// Rule S2-b over the candidates the first strategy passed over: the target
// queues in the same order, at most one victim each (the first candidate),
// while the preemptor's share stays below the target's.
bool SecondStrategy(FairCtx& c, const std::vector<AdmittedEntry*>& retry) {
  TargetOrdering ordering(c.tree, c.own(), c.req.cq, retry);
  for (NodeId t = ordering.Next(); t != kNoNode; t = ordering.Next()) {
    auto [preemptor_new, target_old] = c.Shares(t);
    AdmittedEntry* w = ordering.Pop(t);
    if (CompareDrs(preemptor_new, target_old) < 0) {
      c.Take(w, PreemptionReason::kInCohortFairSharing);
      if (c.Fits()) return true;
    }
    ordering.Drop(t);
  }
  return false;
}

}  // namespace

std::vector<Target> FairSharingTargets(const SnapshotView& view, const PreemptionRequest& req) {
  FairCtx c{view, req, *view.tree, {}};
  std::vector<AdmittedEntry*> candidates = Collect(c);
  view.preemption_candidates += candidates.size();
  if (candidates.empty()) return {};
  const std::vector<FairSharingStrategy>& strategies =
      view.fair_sharing_strategies.empty()
          ? std::vector<FairSharingStrategy>{FairSharingStrategy::kLessThanOrEqualToFinalShare,
                                             FairSharingStrategy::kLessThanInitialShare}
          : view.fair_sharing_strategies;
  // Shares are read with the incoming workload's usage added.
  c.tree.AddUsage(req.cq->node, req.usage);
  std::vector<AdmittedEntry*> retry;
  bool fits = FirstStrategy(c, candidates, strategies[0], retry);
  if (!fits && strategies.size() > 1) fits = SecondStrategy(c, retry);
  c.tree.RemoveUsage(req.cq->node, req.usage);
  if (fits) {
    FillBack(c.tree, c.targets, [&] {
      for (const auto& [id, v] : req.usage) {
        if (v > c.tree.Available(req.cq->node, id)) return false;
      }
      return true;
    });
  }
  for (const Target& tg : c.targets) c.tree.AddUsage(tg.victim->cq->node, tg.victim->usage);
  if (!fits) c.targets.clear();
  return c.targets;
}

}  // namespace batchd::queueing::internal
