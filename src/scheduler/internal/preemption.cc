#include "scheduler/internal/preemption.h"

#include <algorithm>
#include <cstdint>
#include <limits>

#include "absl/container/flat_hash_map.h"

namespace batchd::scheduler::internal {

namespace {

// More important first: higher priority, then earlier start, then key.
bool MoreImportant(const Victim& a, const Victim& b) {
  if (a.priority != b.priority) return a.priority > b.priority;
  if (a.start != b.start) return a.start < b.start;
  return a.key < b.key;
}

void AddUsage(std::vector<int64_t>& freed, const Usage& usage, int sign) {
  for (const auto& [id, milli] : usage) {
    if (id >= (int)freed.size()) freed.resize(id + 1, 0);
    freed[id] += sign * milli;
  }
}

// The ordering key of a candidate node: smaller is better.
struct NodeRank {
  int32_t highest = 0;
  int64_t sum = 0;
  size_t count = 0;
  absl::Time earliest_start;  // Later is better.
  std::string node;
  bool operator<(const NodeRank& o) const {
    if (highest != o.highest) return highest < o.highest;
    if (sum != o.sum) return sum < o.sum;
    if (count != o.count) return count < o.count;
    if (earliest_start != o.earliest_start) return earliest_start > o.earliest_start;
    return node < o.node;
  }
};

NodeRank RankOf(const std::string& node, const std::vector<Victim>& victims) {
  NodeRank r;
  r.node = node;
  r.count = victims.size();
  r.highest = std::numeric_limits<int32_t>::min();
  r.earliest_start = absl::InfiniteFuture();
  for (const Victim& v : victims) {
    r.highest = std::max(r.highest, v.priority);
    // Offset so negative priorities still add up monotonically.
    r.sum += int64_t{v.priority} - std::numeric_limits<int32_t>::min();
    r.earliest_start = std::min(r.earliest_start, v.start);
  }
  return r;
}

}  // namespace

bool EligibleToPreempt(const Cache& cache, const PodInfo& pod) {
  if (pod.preempt_never || pod.gated) return false;
  if (cache.LowestPriority() >= pod.priority) return false;
  std::string nominated = cache.NominatedNodeOf(pod.key);
  if (nominated.empty()) nominated = pod.nominated_node;
  if (nominated.empty()) return true;
  for (const auto& [key, p] : cache.placed_pods()) {
    if (p.node == nominated && p.deleting && p.priority < pod.priority) return false;
  }
  return true;
}

std::optional<std::vector<Victim>> SelectVictimsOnNode(const Cache& cache, const PodInfo& pod,
                                                       const NodeInfo& n,
                                                       const std::vector<std::string>& pods) {
  std::vector<Victim> candidates;
  std::vector<int64_t> freed;
  for (const std::string& key : pods) {
    const PlacedPod* p = cache.placed(key);
    if (p == nullptr || p->priority >= pod.priority || p->deleting || !p->group_key.empty()) {
      continue;
    }
    candidates.push_back(Victim{key, p->priority, p->start});
    AddUsage(freed, p->usage, +1);
  }
  if (candidates.empty()) return std::nullopt;
  std::vector<std::string> reasons;
  if (!cache.FitsResources(pod, n, &freed, &reasons)) return std::nullopt;
  // Reprieve the most important first: each stays when the pod still fits.
  std::sort(candidates.begin(), candidates.end(), MoreImportant);
  std::vector<Victim> victims;
  for (Victim& v : candidates) {
    const Usage& usage = cache.placed(v.key)->usage;
    AddUsage(freed, usage, -1);
    reasons.clear();
    if (cache.FitsResources(pod, n, &freed, &reasons)) continue;  // Reprieved.
    AddUsage(freed, usage, +1);
    victims.push_back(std::move(v));
  }
  return victims;
}

std::optional<Preemption> FindPreemption(const Cache& cache, const PodInfo& pod) {
  // The lower-priority pods by node: one pass over the placed pods.
  absl::flat_hash_map<std::string, std::vector<std::string>> lower;
  for (const auto& [key, p] : cache.placed_pods()) {
    if (p.priority < pod.priority) lower[p.node].push_back(key);
  }
  std::optional<Preemption> best;
  NodeRank best_rank;
  std::vector<std::string> reasons;
  for (const auto& [name, n] : cache.nodes()) {
    auto on_node = lower.find(name);
    if (on_node == lower.end()) continue;
    reasons.clear();
    if (!cache.PassesStaticFilters(pod, n, &reasons)) continue;
    std::optional<std::vector<Victim>> victims =
        SelectVictimsOnNode(cache, pod, n, on_node->second);
    // An empty set means the pod fits already (a nomination elsewhere
    // changed): nothing to preempt here, the normal retry will place it.
    if (!victims.has_value() || victims->empty()) continue;
    NodeRank rank = RankOf(name, *victims);
    if (!best.has_value() || rank < best_rank) {
      best = Preemption{name, std::move(*victims)};
      best_rank = std::move(rank);
    }
  }
  return best;
}

}  // namespace batchd::scheduler::internal
