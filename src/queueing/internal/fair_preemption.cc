// Fair-sharing preemption (reference §2.8, Kueue's fairPreemptions).
#include <algorithm>
#include <deque>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "queueing/internal/preemption.h"

namespace batchd::queueing::internal {
namespace {

struct FairCtx {
  const SnapshotView& view;
  const PreemptionRequest& req;
  QuotaTree& tree;
  absl::flat_hash_map<NodeId, std::deque<AdmittedEntry*>> cands;  // CQ node -> ordered
  absl::flat_hash_set<NodeId> exhausted;
  absl::flat_hash_set<NodeId> on_path;  // preemptor CQ and its ancestors
  std::vector<Target> targets;

  bool Borrowing(NodeId n) const {
    for (FlavorResourceId id : req.need_preemption) {
      if (tree.Usage(n, id) > tree.SubtreeQuota(n, id)) return true;
    }
    return false;
  }
  // With the incoming workload's usage added (the state shares are read in).
  double Share(NodeId n) const { return tree.WeightedShare(n, {}); }
  bool Fits() {
    tree.RemoveUsage(req.cq->node, req.usage);
    bool ok = true;
    for (const auto& [id, v] : req.usage) {
      if (v > tree.Available(req.cq->node, id)) ok = false;
    }
    tree.AddUsage(req.cq->node, req.usage);
    return ok;
  }
  void Take(AdmittedEntry* w, PreemptionReason r) {
    tree.RemoveUsage(w->cq->node, w->usage);
    targets.push_back({w, r});
  }
  bool Eligible(NodeId n) const {
    if (exhausted.contains(n)) return false;
    if (tree.node(n).is_cq) {
      auto it = cands.find(n);
      if (it == cands.end() || it->second.empty()) return false;
      return n == req.cq->node || Borrowing(n);
    }
    return on_path.contains(n) || Borrowing(n);
  }
  // Descends from the root to the eligible CQ with the highest share.
  NodeId NextTarget() {
    NodeId root = tree.Root(req.cq->node);
    while (true) {
      NodeId n = root;
      if (tree.node(n).is_cq) return Eligible(n) ? n : kNoNode;
      while (!tree.node(n).is_cq) {
        NodeId best = kNoNode;
        double best_share = -1;
        for (NodeId c : tree.node(n).children) {
          if (!Eligible(c)) continue;
          double s = Share(c);
          if (best == kNoNode || s > best_share) {
            best = c;
            best_share = s;
          }
        }
        if (best == kNoNode) break;
        n = best;
      }
      if (tree.node(n).is_cq) return n;
      if (n == root) return kNoNode;
      exhausted.insert(n);  // a cohort with nothing left; retry from the root
    }
  }
  // The child of the lowest common ancestor of x and y that lies on the path
  // from that ancestor down to x (x itself when x's parent is that ancestor).
  // Kueue calls it almostLCA(x, y): the subtree whose share x competes with.
  NodeId ChildOfCommonAncestorToward(NodeId x, NodeId y) const {
    absl::flat_hash_set<NodeId> ys;
    for (NodeId n = y; n != kNoNode; n = tree.node(n).parent) ys.insert(n);
    NodeId prev = x;
    for (NodeId n = x; n != kNoNode; n = tree.node(n).parent) {
      if (ys.contains(n)) return prev;
      prev = n;
    }
    return prev;
  }
};

void Collect(FairCtx& c) {
  const CqInfo& own = *c.req.cq;
  const Preemption& p = own.spec->preemption;
  std::vector<AdmittedEntry*> all;
  for (const AdmittedSummary& admitted : own.admitted) {
    if (UsesAny(*admitted.entry, c.req.need_preemption) &&
        SatisfiesPolicy(p.within_cluster_queue, *c.req.wl, admitted.entry->wl)) {
      all.push_back(admitted.entry);
    }
  }
  if (p.reclaim_within_cohort != PreemptionPolicy::kNever) {
    std::vector<NodeId> stack = {c.tree.Root(own.node)};
    while (!stack.empty()) {
      NodeId n = stack.back();
      stack.pop_back();
      for (NodeId ch : c.tree.node(n).children) stack.push_back(ch);
      const CqInfo* cq = (*c.view.cq_of_node)[n];
      if (cq == nullptr || cq == &own || !c.Borrowing(n)) continue;
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
  for (AdmittedEntry* w : all) c.cands[w->cq->node].push_back(w);
}

// One pass of the main strategy; returns true once the preemptor fits.
bool MainPass(FairCtx& c, std::vector<std::pair<NodeId, AdmittedEntry*>>& retry) {
  const FairSharingStrategy first = c.view.fair_sharing_strategies.empty()
                                        ? FairSharingStrategy::kLessThanOrEqualToFinalShare
                                        : c.view.fair_sharing_strategies[0];
  NodeId own = c.req.cq->node;
  while (true) {
    NodeId tq = c.NextTarget();
    if (tq == kNoNode) return false;
    auto& q = c.cands[tq];
    if (tq == own) {
      c.Take(q.front(), PreemptionReason::kInClusterQueue);
      q.pop_front();
    } else if (IsWithinNominal(c.tree, own, c.req.need_preemption) ||
               c.tree.node(own).parent == kNoNode) {
      c.Take(q.front(), PreemptionReason::kInCohortReclamation);
      q.pop_front();
    } else {
      // Kueue's P, T0 and T1: shares of the two subtrees just below the
      // common ancestor of the preemptor's CQ and the target CQ.
      double p = c.Share(c.ChildOfCommonAncestorToward(own, tq));
      NodeId target_subtree = c.ChildOfCommonAncestorToward(tq, own);
      double t0 = c.Share(target_subtree);
      bool took = false;
      while (!q.empty() && !took) {
        AdmittedEntry* w = q.front();
        q.pop_front();
        c.tree.RemoveUsage(w->cq->node, w->usage);
        double t1 = c.Share(target_subtree);
        c.tree.AddUsage(w->cq->node, w->usage);
        bool pass = first == FairSharingStrategy::kLessThanOrEqualToFinalShare ? p <= t1 : p < t0;
        if (pass) {
          c.Take(w, PreemptionReason::kInCohortFairSharing);
          took = true;
        } else {
          retry.emplace_back(tq, w);
        }
      }
      if (!took) continue;
    }
    if (c.Fits()) return true;
  }
}

bool RetryPass(FairCtx& c, const std::vector<std::pair<NodeId, AdmittedEntry*>>& retry) {
  if (c.view.fair_sharing_strategies.size() < 2 || retry.empty()) return false;
  NodeId own = c.req.cq->node;
  std::vector<NodeId> order;
  for (const auto& [n, _] : retry) {
    if (std::find(order.begin(), order.end(), n) == order.end()) order.push_back(n);
  }
  std::stable_sort(order.begin(), order.end(), [&](NodeId a, NodeId b) {
    return c.Share(c.ChildOfCommonAncestorToward(a, own)) >
           c.Share(c.ChildOfCommonAncestorToward(b, own));
  });
  for (NodeId tq : order) {
    double p = c.Share(c.ChildOfCommonAncestorToward(own, tq));
    double t0 = c.Share(c.ChildOfCommonAncestorToward(tq, own));
    if (!(p < t0)) continue;
    for (const auto& [n, w] : retry) {
      if (n != tq) continue;
      c.Take(w, PreemptionReason::kInCohortFairSharing);
      break;
    }
    if (c.Fits()) return true;
  }
  return false;
}

}  // namespace

std::vector<Target> FairSharingTargets(const SnapshotView& view, const PreemptionRequest& req) {
  FairCtx c{view, req, *view.tree, {}, {}, {}, {}};
  Collect(c);
  if (c.cands.empty()) return {};
  for (NodeId n = req.cq->node; n != kNoNode; n = c.tree.node(n).parent) c.on_path.insert(n);
  c.tree.AddUsage(req.cq->node, req.usage);
  std::vector<std::pair<NodeId, AdmittedEntry*>> retry;
  bool fits = MainPass(c, retry) || RetryPass(c, retry);
  if (fits) FillBack(c.tree, c.targets, [&] { return c.Fits(); });
  c.tree.RemoveUsage(req.cq->node, req.usage);
  for (const Target& tg : c.targets) c.tree.AddUsage(tg.victim->cq->node, tg.victim->usage);
  if (!fits) c.targets.clear();
  return c.targets;
}

}  // namespace batchd::queueing::internal
