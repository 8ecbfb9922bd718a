// Placement of a pod set group: a leader pod placed in the same domain as
// the request's pods (see placement_strategy.h, PlaceGroup).
#include <algorithm>
#include <utility>

#include "queueing/topology/internal/placement_strategy.h"

namespace batchd::queueing::topology::internal {
namespace {

// Phase 2a for a group: the chosen domains of `level_out` with their pods,
// the first of them holding the leader.
Phase2Result FindGroupDomains(const Tree& tree, const Demand& demand, const Counts& counts,
                              const LeaderCounts& leader, DomainOrder order,
                              std::vector<std::pair<int, int64_t>>& chosen, int& level_out) {
  const int64_t need = demand.count;
  const std::vector<int64_t>& pods = counts.pods;
  std::vector<int64_t> with_leader(pods.size(), 0);
  for (int d = 0; d < tree.domain_count(); ++d) with_leader[d] = leader.with_leader(counts, d);
  Phase2Result result;
  std::vector<int> domains;
  for (int level = demand.level; level >= 0; --level) {
    domains.clear();
    int64_t most = 0;  // pods (the leader included) one domain could take
    for (int d = tree.level_begin(level); d < tree.level_end(level); ++d) {
      most = std::max(most, leader.ok[d] ? with_leader[d] + 1 : std::min(pods[d], need));
      if (leader.ok[d]) domains.push_back(d);
    }
    const int single =
        TightestFit(domains.data(), domains.data() + domains.size(), with_leader, pods, need);
    if (single >= 0) {
      chosen.emplace_back(single, need);
      level_out = level;
      result.ok = true;
      return result;
    }
    if (demand.mode == Mode::kRequired) {
      result.fit_units = most;
      result.one_domain = true;
      result.level = level;
      return result;
    }
    if (level > 0) continue;  // preferred: one level up
    // The top: the leader's domain first, the rest spread over the others.
    result.level = level;
    if (domains.empty()) return result;  // the leader fits nowhere
    // The leader goes where it displaces the fewest pods (so the spread holds
    // the most), the strategy's order breaking ties.
    SortDomains(domains, with_leader, pods, order);
    int first = domains.front();
    for (int d : domains) {
      if (leader.loss[d] < leader.loss[first]) first = d;
    }
    const int64_t here = std::min(need, with_leader[first]);
    chosen.emplace_back(first, here);
    std::vector<int> others;
    for (int d = tree.level_begin(level); d < tree.level_end(level); ++d) {
      if (d != first && pods[d] > 0) others.push_back(d);
    }
    SortDomainsFor(others, pods, pods, order, need - here);
    const int64_t left = Distribute(others, pods, pods, need - here,
                                    order == DomainOrder::kMostFirst, chosen);
    if (left > 0) {
      chosen.clear();
      result.fit_units = need - left + 1;
      return result;
    }
    level_out = level;
    result.ok = true;
    return result;
  }
  return result;
}

// The leaf below `domain` where the leader displaces the fewest pods.
int LeaderLeaf(const Tree& tree, const Counts& counts, const LeaderCounts& leader, int domain,
               DomainOrder order) {
  while (!tree.is_leaf(domain)) {
    int best = -1;
    for (int c = tree.child_begin(domain); c < tree.child_end(domain); ++c) {
      if (!leader.ok[c] || leader.loss[c] != leader.loss[domain]) continue;
      if (best < 0) {
        best = c;
        continue;
      }
      const int64_t a = counts.pods[c], b = counts.pods[best];
      if (a != b && (order == DomainOrder::kMostFirst) == (a > b)) best = c;
    }
    domain = best;
  }
  return domain;
}

}  // namespace

GroupPlacement PlaceGroup(const Tree& tree, const Demand& demand, Counts& counts,
                          const LeaderCounts& leader, DomainOrder order) {
  GroupPlacement out;
  std::vector<std::pair<int, int64_t>> chosen;
  int level = 0;
  out.result = FindGroupDomains(tree, demand, counts, leader, order, chosen, level);
  if (!out.result.ok) return out;
  out.leader_leaf = LeaderLeaf(tree, counts, leader, chosen.front().first, order);
  // The leader's leaf, and every domain above it, holds that many fewer pods.
  const int64_t loss = leader.loss[out.leader_leaf];
  for (int d = out.leader_leaf; d >= 0; d = tree.parent(d)) {
    counts.pods[d] -= loss;
    counts.slices[d] -= loss;  // no slices: one per pod
  }
  Workspace workspace(tree, demand, counts);
  out.result.ok = Descend(workspace, order, chosen, level, /*pooled=*/true);
  out.assigned = std::move(workspace.assigned);
  return out;
}

}  // namespace batchd::queueing::topology::internal
