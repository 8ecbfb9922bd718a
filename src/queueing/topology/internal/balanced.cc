// Balanced placement (Kueue's alpha TASBalancedPlacement, preferred requests
// only): instead of packing the most free domains first, spread the slices
// evenly over as few domains of the requested level L, and of the level just
// below it, as hold them, all inside one domain of the level above (L-1).
//
// For every domain P one level above L (or the whole top level when L is the
// top) the request is tried on P's subtree:
//   * k = the fewest domains one level below L (L+1) that hold every slice,
//     taken largest first; the threshold T = min(slices / k, the k-th
//     largest) is the most slices each of them could get in an even split;
//   * children of L with fewer than T slices are pruned (they could not take
//     their share), then the fewest domains of L that still hold the request
//     are counted.
// The P with the highest T wins, then the one needing fewest domains of L
// (ties: level values ascending). Then, inside P: the set of that many L
// domains with the least total capacity that holds the request (ties: more
// slices, higher entropy of the children's capacity, level values), then
// likewise the set of L+1 domains inside them; each of those gets T slices
// and the rest go, largest first, up to each one's capacity. Below that the
// pods go down as BestFit sends them. When no P holds the request, or a step
// cannot complete, the request is placed by BestFit.
//
// When the slice level is L itself (slices cannot be split below it) the
// same steps run with L's own domains in the role of L+1.
//
// The "least total capacity" set is an exact dynamic programme over (domains
// taken, slices still needed), which stops at the first exact fit and drops
// states the remaining picks cannot complete; when it would still cost more
// than a fixed budget of cells or steps (large, heterogeneous requests) the
// set is the k-1 largest domains plus the tightest fit for the rest, which
// is what the programme finds when capacities are uniform. Both are
// deterministic.
#include <algorithm>
#include <cmath>
#include <functional>
#include <utility>
#include <vector>

#include "queueing/topology/internal/placement_strategy.h"

namespace batchd::queueing::topology::internal {

namespace {

// Bounds of one exact least-capacity search: table cells (memory) and inner
// steps (time, about 0.1 ms); beyond either the approximation is used.
constexpr int64_t kProgrammeCells = 2'000'000;
constexpr int64_t kProgrammeSteps = 500'000;

struct Candidate {
  int domain = 0;
  int64_t units = 0;
  int64_t pods = 0;
};

// The fewest of `values` (largest first) whose sum reaches `need`, and the
// smallest value among them; {0, 0} if all of them together fall short.
// Leaves the largest values sorted (descending) at the front, at least the
// returned count of them; only as much is sorted as is read.
std::pair<int, int64_t> GreedyCount(std::vector<int64_t>& values, int64_t need) {
  const size_t size = values.size();
  size_t sorted = 0;
  size_t step = 32;
  int64_t sum = 0;
  while (sorted < size) {
    const size_t next = std::min(size, sorted + step);
    if (next < size) {
      std::nth_element(values.begin() + sorted, values.begin() + next, values.end(),
                       std::greater<>());
    }
    std::sort(values.begin() + sorted, values.begin() + next, std::greater<>());
    for (size_t i = sorted; i < next && values[i] > 0; ++i) {
      sum += values[i];
      if (sum >= need) return {static_cast<int>(i + 1), values[i]};
    }
    if (values[next - 1] <= 0) break;
    sorted = next;
    step *= 2;
  }
  return {0, 0};
}

bool MostFirst(const Candidate& a, const Candidate& b) {
  if (a.units != b.units) return a.units > b.units;
  if (a.pods != b.pods) return a.pods < b.pods;
  return a.domain < b.domain;
}

// The k-1 largest candidates plus the tightest fit for what they leave.
std::vector<Candidate> ApproximateSet(std::vector<Candidate> candidates, int64_t need, int k) {
  std::sort(candidates.begin(), candidates.end(), MostFirst);
  std::vector<Candidate> chosen(candidates.begin(), candidates.begin() + (k - 1));
  int64_t left = need;
  for (const Candidate& c : chosen) left -= c.units;
  const Candidate* tightest = nullptr;
  for (size_t i = k - 1; i < candidates.size(); ++i) {
    if (candidates[i].units >= left &&
        (tightest == nullptr || candidates[i].units < tightest->units)) {
      tightest = &candidates[i];  // sorted: the first of equal units has fewer pods
    }
  }
  if (tightest != nullptr) chosen.push_back(*tightest);
  return chosen;
}

// Among the sets of the fewest candidates that hold `need` units, the one with
// the least total units; the first found in `candidates`' order on ties.
std::vector<Candidate> SelectLeastCapacitySet(const std::vector<Candidate>& candidates,
                                              int64_t need) {
  std::vector<int64_t> values;
  values.reserve(candidates.size());
  int64_t largest = 0;
  for (const Candidate& c : candidates) {
    values.push_back(c.units);
    largest = std::max(largest, c.units);
  }
  const int k = GreedyCount(values, need).first;
  if (k == 0) return {};
  if (k == 1 || static_cast<int64_t>(k) * (need + 1) > kProgrammeCells) {
    if (k == 1) {  // the tightest single candidate, first in order on ties
      const Candidate* best = nullptr;
      for (const Candidate& c : candidates) {
        if (c.units >= need && (best == nullptr || c.units < best->units)) best = &c;
      }
      return {*best};
    }
    return ApproximateSet(candidates, need, k);
  }
  // best[j]: the most units any j candidates hold. A set of i candidates
  // still needing r > best[k - i] can never be completed: it is not kept.
  std::vector<int64_t> best(k + 1, 0);
  for (int j = 1; j <= k; ++j) best[j] = best[j - 1] + values[j - 1];
  // reached[i][r]: the candidate that first completed a set of i candidates
  // leaving r > 0 units needed (-1: none yet); i = 0 is the empty set.
  const size_t width = static_cast<size_t>(need) + 1;
  std::vector<int> reached(static_cast<size_t>(k) * width, -1);
  std::vector<std::vector<int64_t>> open(k);  // the r values reached, per i
  const int start = static_cast<int>(candidates.size());
  reached[static_cast<size_t>(need)] = start;
  open[0].push_back(need);
  // complete[o]: the candidate completing k candidates with o units to spare.
  std::vector<int> complete(static_cast<size_t>(largest) + 1, -1);
  std::vector<int64_t> complete_from(static_cast<size_t>(largest) + 1, 0);
  int64_t steps = 0;
  bool exact = false;
  for (int p = 0; p < static_cast<int>(candidates.size()) && !exact; ++p) {
    const int64_t units = candidates[p].units;
    if (units <= 0) continue;
    for (int i = std::min(k, p + 1); i >= 1 && !exact; --i) {
      const size_t before = open[i - 1].size();
      for (size_t j = 0; j < before; ++j) {
        if (++steps > kProgrammeSteps) return ApproximateSet(candidates, need, k);
        const int64_t r = open[i - 1][j];
        const int64_t after = r - units;
        if (after <= 0) {
          if (i == k && complete[-after] < 0) {
            complete[-after] = p;
            complete_from[-after] = r;
            exact = after == 0;  // nothing beats an exact fit found first
            if (exact) break;
          }
        } else if (i < k && after <= best[k - i] && reached[i * width + after] < 0) {
          reached[i * width + after] = p;
          open[i].push_back(after);
        }
      }
    }
  }
  for (size_t spare = 0; spare < complete.size(); ++spare) {
    if (complete[spare] < 0) continue;
    std::vector<Candidate> chosen = {candidates[complete[spare]]};
    int64_t r = complete_from[spare];
    for (int i = k - 1; i >= 1; --i) {
      const int p = reached[i * width + r];
      chosen.push_back(candidates[p]);
      r += candidates[p].units;
    }
    return chosen;
  }
  return ApproximateSet(candidates, need, k);  // not reached: k candidates hold need
}

double Entropy(const Tree& tree, int domain, const std::vector<int64_t>& units,
               const std::vector<int64_t>& pods, int64_t threshold) {
  int64_t total = 0;
  for (int c = tree.child_begin(domain); c < tree.child_end(domain); ++c) {
    if (units[c] >= threshold) total += pods[c];
  }
  if (total == 0) return 0.0;
  double entropy = 0.0;
  for (int c = tree.child_begin(domain); c < tree.child_end(domain); ++c) {
    if (units[c] < threshold || pods[c] == 0) continue;
    const double share = static_cast<double>(pods[c]) / static_cast<double>(total);
    entropy -= share * std::log2(share);
  }
  return entropy;
}

class Balanced final : public PlacementStrategy {
 public:
  Algorithm algorithm() const override { return Algorithm::kBalanced; }

  Phase2Result Place(Workspace& workspace) const override {
    if (workspace.demand.mode == Mode::kPreferred && TryBalanced(workspace)) {
      Phase2Result result;
      result.ok = true;
      return result;
    }
    std::fill(workspace.assigned.begin(), workspace.assigned.end(), 0);
    return BestFitStrategy().Place(workspace);
  }

 private:
  bool TryBalanced(Workspace& workspace) const {
    const Tree& tree = workspace.tree;
    const Demand& demand = workspace.demand;
    const auto& units = workspace.units;
    const auto& pods = workspace.counts.pods;
    const int64_t need = demand.slice_count();
    const int level = demand.level;
    const bool split_below = level < demand.slice_level;
    if (need <= 0) return false;

    // Units of a level-L domain once its children below the threshold are pruned.
    auto pruned_units = [&](int domain, int64_t threshold) {
      int64_t sum = 0;
      if (split_below) {
        for (int c = tree.child_begin(domain); c < tree.child_end(domain); ++c) {
          if (units[c] >= threshold) sum += units[c];
        }
      } else {
        sum = units[domain];
      }
      return sum >= threshold ? sum : 0;
    };
    auto pruned_pods = [&](int domain, int64_t threshold) {
      if (!split_below) return pods[domain];
      int64_t sum = 0;
      for (int c = tree.child_begin(domain); c < tree.child_end(domain); ++c) {
        if (units[c] >= threshold) sum += pods[c];
      }
      return sum;
    };

    std::vector<std::pair<int, int>> groups;  // ranges of level-L domains, one per parent
    if (level == 0) {
      groups.emplace_back(tree.level_begin(0), tree.level_end(0));
    } else {
      for (int parent = tree.level_begin(level - 1); parent < tree.level_end(level - 1); ++parent) {
        groups.emplace_back(tree.child_begin(parent), tree.child_end(parent));
      }
    }
    int64_t best_threshold = 0;
    int best_count = 0;
    std::pair<int, int> best_group{-1, -1};
    std::vector<int64_t> values;
    for (const auto& [first, last] : groups) {
      if (first >= last) continue;
      const int lower_first = split_below ? tree.child_begin(first) : first;
      const int lower_last = split_below ? tree.child_end(last - 1) : last;
      values.assign(units.begin() + lower_first, units.begin() + lower_last);
      const auto [k, smallest] = GreedyCount(values, need);
      if (k == 0) continue;
      const int64_t threshold = std::min(need / k, smallest);
      if (threshold <= 0 || threshold < best_threshold) continue;
      values.clear();
      for (int d = first; d < last; ++d) values.push_back(pruned_units(d, threshold));
      const int count = GreedyCount(values, need).first;
      if (count == 0) continue;
      if (threshold > best_threshold || count < best_count) {
        best_threshold = threshold;
        best_count = count;
        best_group = {first, last};
      }
    }
    if (best_threshold == 0) return false;
    const int64_t threshold = best_threshold;

    std::vector<Candidate> lower;
    if (split_below) {
      struct Ranked {
        Candidate candidate;
        double entropy;
      };
      std::vector<Ranked> ranked;
      for (int d = best_group.first; d < best_group.second; ++d) {
        const int64_t u = pruned_units(d, threshold);
        if (u > 0) {
          ranked.push_back(
              {{d, u, pruned_pods(d, threshold)}, Entropy(tree, d, units, pods, threshold)});
        }
      }
      std::sort(ranked.begin(), ranked.end(), [](const Ranked& a, const Ranked& b) {
        if (a.candidate.units != b.candidate.units) return a.candidate.units > b.candidate.units;
        if (a.entropy != b.entropy) return a.entropy > b.entropy;
        return a.candidate.domain < b.candidate.domain;
      });
      std::vector<Candidate> candidates;
      for (const Ranked& r : ranked) candidates.push_back(r.candidate);
      for (const Candidate& chosen : SelectLeastCapacitySet(candidates, need)) {
        for (int c = tree.child_begin(chosen.domain); c < tree.child_end(chosen.domain); ++c) {
          if (units[c] >= threshold) lower.push_back({c, units[c], pods[c]});
        }
      }
    } else {
      for (int d = best_group.first; d < best_group.second; ++d) {
        if (units[d] >= threshold) lower.push_back({d, units[d], pods[d]});
      }
    }
    std::sort(lower.begin(), lower.end(),
              [](const Candidate& a, const Candidate& b) { return a.domain < b.domain; });
    std::vector<Candidate> placed = SelectLeastCapacitySet(lower, need);
    if (placed.empty() || need < static_cast<int64_t>(placed.size()) * threshold) return false;
    std::sort(placed.begin(), placed.end(), MostFirst);
    int64_t extra = need - static_cast<int64_t>(placed.size()) * threshold;
    std::vector<std::pair<int, int64_t>> handed;
    for (const Candidate& c : placed) {
      const int64_t more = std::min(c.units - threshold, extra);
      extra -= more;
      handed.emplace_back(c.domain, threshold + more);
    }
    if (extra > 0) return false;
    return Descend(workspace, DomainOrder::kMostFirst, handed, tree.level_of(placed.front().domain),
                   /*pooled=*/false);
  }
};

}  // namespace

const PlacementStrategy& BalancedStrategy() {
  static const Balanced* const strategy = new Balanced();
  return *strategy;
}

}  // namespace batchd::queueing::topology::internal
