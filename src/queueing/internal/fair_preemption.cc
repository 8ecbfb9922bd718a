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
  QuotaTree& t;
  absl::flat_hash_map<NodeId, std::deque<AdmittedEntry*>> cands;  // CQ node -> ordered
  absl::flat_hash_set<NodeId> exhausted;
  absl::flat_hash_set<NodeId> on_path;  // preemptor CQ and its ancestors
  std::vector<Target> targets;

  bool Borrowing(NodeId n) const {
    for (FrId fr : req.need_preemption) {
      if (t.Usage(n, fr) > t.SubtreeQuota(n, fr)) return true;
    }
    return false;
  }
  // With the incoming workload's usage added (the state shares are read in).
  double Share(NodeId n) const { return t.WeightedShare(n, {}); }
  bool Fits() {
    t.RemoveUsage(req.cq->node, req.usage);
    bool ok = true;
    for (const auto& [fr, v] : req.usage) {
      if (v > t.Available(req.cq->node, fr)) ok = false;
    }
    t.AddUsage(req.cq->node, req.usage);
    return ok;
  }
  void Take(AdmittedEntry* w, PreemptionReason r) {
    t.RemoveUsage(w->cq->node, w->usage);
    targets.push_back({w, r});
  }
  bool Eligible(NodeId n) const {
    if (exhausted.contains(n)) return false;
    if (t.node(n).is_cq) {
      auto it = cands.find(n);
      if (it == cands.end() || it->second.empty()) return false;
      return n == req.cq->node || Borrowing(n);
    }
    return on_path.contains(n) || Borrowing(n);
  }
  // Descends from the root to the eligible CQ with the highest share.
  NodeId NextTarget() {
    NodeId root = t.Root(req.cq->node);
    while (true) {
      NodeId n = root;
      if (t.node(n).is_cq) return Eligible(n) ? n : kNoNode;
      while (!t.node(n).is_cq) {
        NodeId best = kNoNode;
        double best_share = -1;
        for (NodeId c : t.node(n).children) {
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
      if (t.node(n).is_cq) return n;
      if (n == root) return kNoNode;
      exhausted.insert(n);  // a cohort with nothing left; retry from the root
    }
  }
  // Child of LCA(x, y) on the path to x.
  NodeId AlmostLca(NodeId x, NodeId y) const {
    absl::flat_hash_set<NodeId> ys;
    for (NodeId n = y; n != kNoNode; n = t.node(n).parent) ys.insert(n);
    NodeId prev = x;
    for (NodeId n = x; n != kNoNode; n = t.node(n).parent) {
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
  for (const AdmittedSlim& s : own.admitted) {
    if (UsesAny(*s.e, c.req.need_preemption) &&
        SatisfiesPolicy(p.within_cluster_queue, *c.req.wl, s.e->wl)) {
      all.push_back(s.e);
    }
  }
  if (p.reclaim_within_cohort != PreemptionPolicy::kNever) {
    std::vector<NodeId> stack = {c.t.Root(own.node)};
    while (!stack.empty()) {
      NodeId n = stack.back();
      stack.pop_back();
      for (NodeId ch : c.t.node(n).children) stack.push_back(ch);
      const CqInfo* cq = (*c.view.cq_of_node)[n];
      if (cq == nullptr || cq == &own || !c.Borrowing(n)) continue;
      for (const AdmittedSlim& s : cq->admitted) {
        if (UsesAny(*s.e, c.req.need_preemption) &&
            SatisfiesPolicy(p.reclaim_within_cohort, *c.req.wl, s.e->wl)) {
          all.push_back(s.e);
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
  const FairSharingStrategy first = c.view.fs_strategies.empty()
                                        ? FairSharingStrategy::kLessThanOrEqualToFinalShare
                                        : c.view.fs_strategies[0];
  NodeId own = c.req.cq->node;
  while (true) {
    NodeId tq = c.NextTarget();
    if (tq == kNoNode) return false;
    auto& q = c.cands[tq];
    if (tq == own) {
      c.Take(q.front(), PreemptionReason::kInClusterQueue);
      q.pop_front();
    } else if (IsWithinNominal(c.t, own, c.req.need_preemption) ||
               c.t.node(own).parent == kNoNode) {
      c.Take(q.front(), PreemptionReason::kInCohortReclamation);
      q.pop_front();
    } else {
      double p = c.Share(c.AlmostLca(own, tq));
      NodeId tl = c.AlmostLca(tq, own);
      double t0 = c.Share(tl);
      bool took = false;
      while (!q.empty() && !took) {
        AdmittedEntry* w = q.front();
        q.pop_front();
        c.t.RemoveUsage(w->cq->node, w->usage);
        double t1 = c.Share(tl);
        c.t.AddUsage(w->cq->node, w->usage);
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
  if (c.view.fs_strategies.size() < 2 || retry.empty()) return false;
  NodeId own = c.req.cq->node;
  std::vector<NodeId> order;
  for (const auto& [n, _] : retry) {
    if (std::find(order.begin(), order.end(), n) == order.end()) order.push_back(n);
  }
  std::stable_sort(order.begin(), order.end(), [&](NodeId a, NodeId b) {
    return c.Share(c.AlmostLca(a, own)) > c.Share(c.AlmostLca(b, own));
  });
  for (NodeId tq : order) {
    double p = c.Share(c.AlmostLca(own, tq));
    double t0 = c.Share(c.AlmostLca(tq, own));
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
  for (NodeId n = req.cq->node; n != kNoNode; n = c.t.node(n).parent) c.on_path.insert(n);
  c.t.AddUsage(req.cq->node, req.usage);
  std::vector<std::pair<NodeId, AdmittedEntry*>> retry;
  bool fits = MainPass(c, retry) || RetryPass(c, retry);
  if (fits) FillBack(c.t, c.targets, [&] { return c.Fits(); });
  c.t.RemoveUsage(req.cq->node, req.usage);
  for (const Target& tg : c.targets) c.t.AddUsage(tg.wl->cq->node, tg.wl->usage);
  if (!fits) c.targets.clear();
  return c.targets;
}

}  // namespace batchd::queueing::internal
