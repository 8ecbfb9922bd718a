#include "scheduler/internal/preemption.h"

#include <algorithm>
#include <cstdint>
#include <limits>

#include "absl/container/flat_hash_map.h"

namespace batchd::scheduler::internal {

namespace {

void AddUsage(std::vector<int64_t>& freed, const Usage& usage, int sign) {
  for (const auto& [id, milli] : usage) {
    if (id >= (int)freed.size()) freed.resize(id + 1, 0);
    freed[id] += sign * milli;
  }
}

// A candidate for eviction: one pod, or a whole gang.
struct Unit {
  std::vector<Victim> members;
  int32_t priority = std::numeric_limits<int32_t>::min();  // The highest member's.
  absl::Time start = absl::InfiniteFuture();               // The earliest member's.
  Usage freed_here;  // What its members on the evaluated node free (ids may repeat).
  void Add(const std::string& key, const PlacedPod& p, const std::string& group_key,
           bool here) {
    members.push_back(Victim{key, p.priority, p.start, group_key});
    priority = std::max(priority, p.priority);
    start = std::min(start, p.start);
    if (here) freed_here.insert(freed_here.end(), p.usage.begin(), p.usage.end());
  }
};

// More important first: higher priority, then earlier start, then key.
bool MoreImportant(const Unit& a, const Unit& b) {
  if (a.priority != b.priority) return a.priority > b.priority;
  if (a.start != b.start) return a.start < b.start;
  return a.members.front().key < b.members.front().key;
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

// The unit of the gang `members` as a candidate against `pod` on `node`, or
// nullopt when some member outranks the preemptor (the gang stays whole).
// Members already leaving are left out: their room is coming anyway.
std::optional<Unit> GangUnit(const Cache& cache, const PodInfo& pod, const std::string& node,
                             const std::string& group_key,
                             const std::vector<std::string>& members) {
  Unit u;
  for (const std::string& m : members) {
    const PlacedPod* p = cache.placed(m);
    if (p == nullptr || p->deleting) continue;
    if (p->priority >= pod.priority) return std::nullopt;
    u.Add(m, *p, group_key, p->node == node);
  }
  if (u.members.empty()) return std::nullopt;
  return u;
}

}  // namespace

Eligibility PreemptionEligibility(const Cache& cache, const PodInfo& pod) {
  if (pod.preempt_never || pod.gated) return Eligibility::kNever;
  if (cache.LowestPriority() >= pod.priority) return Eligibility::kNoLowerPriority;
  std::string nominated = cache.NominatedNodeOf(pod.key);
  if (nominated.empty()) nominated = pod.nominated_node;
  if (nominated.empty()) return Eligibility::kEligible;
  for (const auto& [key, p] : cache.placed_pods()) {
    if (p.node == nominated && p.deleting && p.priority < pod.priority) {
      return Eligibility::kTerminatingOnNominated;
    }
  }
  return Eligibility::kEligible;
}

std::optional<std::vector<Victim>> SelectVictimsOnNode(const Cache& cache, const PodInfo& pod,
                                                       const NodeInfo& n,
                                                       const std::vector<std::string>& pods,
                                                       const Gangs& gangs) {
  // 1. The candidate units: single pods, and whole gangs with a member here.
  std::vector<Unit> units;
  std::vector<int64_t> freed;
  std::vector<std::string> gangs_seen;
  for (const std::string& key : pods) {
    const PlacedPod* p = cache.placed(key);
    if (p == nullptr || p->priority >= pod.priority || p->deleting) continue;
    auto gang = p->group_key.empty() ? gangs.end() : gangs.find(p->group_key);
    if (gang == gangs.end()) {
      Unit u;
      u.Add(key, *p, "", /*here=*/true);
      units.push_back(std::move(u));
    } else {
      if (std::find(gangs_seen.begin(), gangs_seen.end(), gang->first) != gangs_seen.end()) {
        continue;
      }
      gangs_seen.push_back(gang->first);
      std::optional<Unit> u = GangUnit(cache, pod, n.name, gang->first, gang->second);
      if (!u.has_value()) continue;
      units.push_back(std::move(*u));
    }
    AddUsage(freed, units.back().freed_here, +1);
  }
  if (units.empty()) return std::nullopt;
  std::vector<std::string> reasons;
  if (!cache.FitsResources(pod, n, &freed, &reasons)) return std::nullopt;
  // 2. Reprieve the most important units first: each stays when the pod still fits.
  std::sort(units.begin(), units.end(), MoreImportant);
  std::vector<Victim> victims;
  for (Unit& u : units) {
    AddUsage(freed, u.freed_here, -1);
    reasons.clear();
    if (cache.FitsResources(pod, n, &freed, &reasons)) continue;  // Reprieved.
    AddUsage(freed, u.freed_here, +1);
    for (Victim& v : u.members) victims.push_back(std::move(v));
  }
  return victims;
}

std::optional<Preemption> FindPreemption(const Cache& cache, const PodInfo& pod,
                                         const Gangs& gangs) {
  // The lower-priority pods by node: one pass over the placed pods.
  // A pod the preemptor's required affinity needs is no victim (evicting
  // it would unmake the placement it is evicted for).
  auto attracts = [&pod, &cache](const PlacedPod& p) {
    if (pod.inter_pod == nullptr || pod.inter_pod->affinity.empty() || p.labels == nullptr) {
      return false;
    }
    for (const AffinityTerm& t : pod.inter_pod->affinity) {
      if (t.Matches(p.ns, *p.labels, cache.namespace_labels())) return true;
    }
    return false;
  };
  absl::flat_hash_map<std::string, std::vector<std::string>> lower;
  for (const auto& [key, p] : cache.placed_pods()) {
    if (p.priority < pod.priority && !attracts(p)) lower[p.node].push_back(key);
  }
  std::optional<Preemption> best;
  NodeRank best_rank;
  std::vector<std::string> reasons;
  // Inter-pod affinity must hold with the victims still placed: batchd does
  // not evict pods to resolve anti-affinity (kube-scheduler may).
  const InterPodState inter_pod = cache.InterPodFor(pod);
  for (const auto& [name, n] : cache.nodes()) {
    auto on_node = lower.find(name);
    if (on_node == lower.end()) continue;
    reasons.clear();
    if (!cache.PassesStaticFilters(pod, n, &reasons)) continue;
    if (!inter_pod.Passes(n.labels, &reasons)) continue;
    // Deterministic unit order whatever the hash map's.
    std::sort(on_node->second.begin(), on_node->second.end());
    std::optional<std::vector<Victim>> victims =
        SelectVictimsOnNode(cache, pod, n, on_node->second, gangs);
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
