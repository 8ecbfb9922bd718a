// The steps BestFit, LeastFreeCapacity and Balanced share (see
// placement_strategy.h): domain order, tight fit, greedy hand-out, phase 2a
// and the walk down to the leaves.
#include "queueing/topology/internal/placement_strategy.h"

#include <algorithm>
#include <utility>

namespace batchd::queueing::topology::internal {

Workspace::Workspace(const Tree& t, const Demand& d, const Counts& c)
    : tree(t), demand(d), counts(c) {
  const int domains = tree.domain_count();
  units.assign(domains, 0);
  assigned.assign(domains, 0);
  for (int level = 0; level < tree.level_count(); ++level) {
    const bool in_slices = level <= demand.slice_level;
    for (int dom = tree.level_begin(level); dom < tree.level_end(level); ++dom) {
      units[dom] = in_slices ? counts.slices[dom] : counts.pods[dom] / demand.grain[level];
    }
  }
}

const PlacementStrategy& StrategyFor(Algorithm algorithm) {
  switch (algorithm) {
    case Algorithm::kLeastFreeCapacity:
      return LeastFreeCapacityStrategy();
    case Algorithm::kBalanced:
      return BalancedStrategy();
    case Algorithm::kBestFit:
      break;
  }
  return BestFitStrategy();
}

namespace {

// SortDomains' order as a strict weak ordering over domain indexes.
struct DomainLess {
  const std::vector<int64_t>& units;
  const std::vector<int64_t>& pods;
  bool most_first;
  bool operator()(int a, int b) const {
    if (units[a] != units[b]) return most_first ? units[a] > units[b] : units[a] < units[b];
    if (pods[a] != pods[b]) return pods[a] < pods[b];
    return a < b;
  }
};

}  // namespace

void SortDomains(std::vector<int>& domains, const std::vector<int64_t>& units,
                 const std::vector<int64_t>& pods, DomainOrder order) {
  std::sort(domains.begin(), domains.end(),
            DomainLess{units, pods, order == DomainOrder::kMostFirst});
}

void SortDomainsFor(std::vector<int>& domains, const std::vector<int64_t>& units,
                    const std::vector<int64_t>& pods, DomainOrder order, int64_t need) {
  const DomainLess less{units, pods, order == DomainOrder::kMostFirst};
  const size_t size = domains.size();
  if (size <= 64) {
    std::sort(domains.begin(), domains.end(), less);
    return;
  }
  // Grow a sorted prefix: bring the next-best domains to the front
  // (nth_element, linear), sort just them, stop once the prefix holds `need`.
  size_t sorted = 0;
  size_t step = 32;
  int64_t held = 0;
  while (sorted < size && held < need) {
    const size_t next = std::min(size, sorted + step);
    if (next < size) {
      std::nth_element(domains.begin() + sorted, domains.begin() + next, domains.end(), less);
    }
    std::sort(domains.begin() + sorted, domains.begin() + next, less);
    for (size_t i = sorted; i < next; ++i) held += units[domains[i]];
    sorted = next;
    step *= 2;
  }
}

int TightestFit(const int* first, const int* last, const std::vector<int64_t>& units,
                const std::vector<int64_t>& pods, int64_t need) {
  int best = -1;
  for (const int* it = first; it != last; ++it) {
    const int dom = *it;
    if (units[dom] < need) continue;
    if (best < 0 || units[dom] < units[best] ||
        (units[dom] == units[best] && pods[dom] < pods[best]) ||
        (units[dom] == units[best] && pods[dom] == pods[best] && dom < best)) {
      best = dom;
    }
  }
  return best;
}

int64_t Distribute(const std::vector<int>& sorted, const std::vector<int64_t>& units,
                   const std::vector<int64_t>& pods, int64_t need, bool tight_fit,
                   std::vector<std::pair<int, int64_t>>& out) {
  int64_t left = need;
  for (size_t i = 0; i < sorted.size() && left > 0; ++i) {
    int dom = sorted[i];
    if (units[dom] >= left) {
      if (tight_fit) {
        dom = TightestFit(sorted.data() + i, sorted.data() + sorted.size(), units, pods, left);
      }
      out.emplace_back(dom, left);
      return 0;
    }
    if (units[dom] > 0) {
      out.emplace_back(dom, units[dom]);
      left -= units[dom];
    }
  }
  return left;
}

Phase2Result FindFitDomains(const Workspace& workspace, DomainOrder order,
                            std::vector<std::pair<int, int64_t>>& chosen, int& level_out) {
  const Tree& tree = workspace.tree;
  const Demand& demand = workspace.demand;
  const auto& units = workspace.units;
  const auto& pods = workspace.counts.pods;
  const int64_t need = demand.slice_count();
  Phase2Result result;
  std::vector<int> domains;
  for (int level = demand.level; level >= 0; --level) {
    domains.clear();
    int64_t most = 0;
    for (int dom = tree.level_begin(level); dom < tree.level_end(level); ++dom) {
      domains.push_back(dom);
      most = std::max(most, units[dom]);
    }
    // One domain holds everything: BestFit's tight fit and LeastFreeCapacity's
    // first fit in ascending order are the same domain.
    const int single =
        TightestFit(domains.data(), domains.data() + domains.size(), units, pods, need);
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
    if (demand.mode == Mode::kPreferred && level > 0) continue;
    // Spread: several domains of this level, greedily in the strategy's order
    // (domains with no room take nothing; leaving them out keeps the sort short).
    domains.erase(
        std::remove_if(domains.begin(), domains.end(), [&](int dom) { return units[dom] <= 0; }),
        domains.end());
    SortDomainsFor(domains, units, pods, order, need);
    const int64_t left =
        Distribute(domains, units, pods, need, order == DomainOrder::kMostFirst, chosen);
    if (left > 0) {
      chosen.clear();
      result.fit_units = need - left;
      result.level = level;
      return result;
    }
    level_out = level;
    result.ok = true;
    return result;
  }
  return result;  // no levels (not reached: levels are validated)
}

bool Descend(Workspace& workspace, DomainOrder order,
             const std::vector<std::pair<int, int64_t>>& chosen, int level, bool pooled) {
  const Tree& tree = workspace.tree;
  const Demand& demand = workspace.demand;
  const auto& units = workspace.units;
  const auto& pods = workspace.counts.pods;
  const bool tight_fit = order == DomainOrder::kMostFirst;
  std::vector<int> current;
  for (const auto& [dom, u] : chosen) {
    workspace.assigned[dom] = u * demand.grain[level];
    current.push_back(dom);
  }
  std::vector<int> children;
  std::vector<std::pair<int, int64_t>> handed;
  for (; level < tree.lowest_level(); ++level) {
    const int child_level = level + 1;
    const int64_t child_grain = demand.grain[child_level];
    handed.clear();
    if (pooled && level < demand.slice_level) {
      // Above the slice level: the children of every chosen domain compete
      // for all the slices at once.
      children.clear();
      int64_t need = 0;
      for (int dom : current) {
        need += workspace.assigned[dom] / child_grain;
        for (int c = tree.child_begin(dom); c < tree.child_end(dom); ++c) {
          if (units[c] > 0) children.push_back(c);
        }
      }
      SortDomainsFor(children, units, pods, order, need);
      if (Distribute(children, units, pods, need, tight_fit, handed) > 0) return false;
    } else {
      for (int dom : current) {
        children.clear();
        for (int c = tree.child_begin(dom); c < tree.child_end(dom); ++c) {
          if (units[c] > 0) children.push_back(c);
        }
        const int64_t need = workspace.assigned[dom] / child_grain;
        SortDomainsFor(children, units, pods, order, need);
        if (Distribute(children, units, pods, need, tight_fit, handed) > 0) return false;
      }
    }
    current.clear();
    for (const auto& [dom, u] : handed) {
      workspace.assigned[dom] = u * child_grain;
      current.push_back(dom);
    }
  }
  return true;
}

}  // namespace batchd::queueing::topology::internal
