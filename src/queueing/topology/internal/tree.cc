// The domain tree and phase 1 (see tree.h).
#include "queueing/topology/internal/tree.h"

#include <algorithm>
#include <limits>
#include <utility>

namespace batchd::queueing::topology::internal {

namespace {

using api::core_v1::TaintEffect;

// No count needs more: it keeps sums over 10^5 leaves far from overflow.
constexpr int64_t kMaxPodsPerLeaf = int64_t{1} << 31;

bool IsHardTaint(const api::core_v1::Taint& taint) {
  return taint.effect == TaintEffect::kNoSchedule || taint.effect == TaintEffect::kNoExecute;
}

}  // namespace

Tree::Tree(std::string topology_name, std::vector<std::string> levels, std::vector<Node> nodes)
    : topology_name_(std::move(topology_name)), levels_(std::move(levels)) {
  const size_t level_count = levels_.size();
  // Resource names: every name a node reports, plus the pod slots.
  resource_index_[kPodsResource] = 0;
  for (const Node& node : nodes) {
    for (const auto& [name, amount] : node.free) resource_index_.try_emplace(name, 0);
  }
  for (auto& [name, index] : resource_index_) {
    index = static_cast<int>(resources_.size());
    resources_.push_back(name);
  }
  const size_t resource_count = resources_.size();

  // Nodes in ascending order of their level values; equal values share a leaf.
  std::vector<int> order;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i].values.size() == level_count && level_count > 0) {
      order.push_back(static_cast<int>(i));
    }
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return nodes[a].values < nodes[b].values; });

  level_begin_.assign(level_count + 1, 0);
  std::vector<std::vector<int>> per_level_first_node(level_count);  // first node of each domain
  for (size_t level = 0; level < level_count; ++level) {
    for (size_t k = 0; k < order.size(); ++k) {
      const auto& values = nodes[order[k]].values;
      bool new_domain = k == 0;
      if (!new_domain) {
        const auto& previous = nodes[order[k - 1]].values;
        new_domain = !std::equal(values.begin(), values.begin() + level + 1, previous.begin());
      }
      if (new_domain) per_level_first_node[level].push_back(static_cast<int>(k));
    }
  }
  for (size_t level = 0; level < level_count; ++level) {
    level_begin_[level + 1] =
        level_begin_[level] + static_cast<int>(per_level_first_node[level].size());
  }
  const int domains = level_begin_.back();
  domain_level_.assign(domains, 0);
  parent_.assign(domains, -1);
  child_begin_.assign(domains, 0);
  child_end_.assign(domains, 0);
  value_.assign(domains, std::string());
  for (size_t level = 0; level < level_count; ++level) {
    const auto& firsts = per_level_first_node[level];
    for (size_t j = 0; j < firsts.size(); ++j) {
      const int domain = level_begin_[level] + static_cast<int>(j);
      domain_level_[domain] = static_cast<int>(level);
      value_[domain] = nodes[order[firsts[j]]].values[level];
    }
    if (level + 1 < level_count) {
      // Children: the next level's domains whose first node lies in this one's node range.
      const auto& child_firsts = per_level_first_node[level + 1];
      size_t c = 0;
      for (size_t j = 0; j < firsts.size(); ++j) {
        const int domain = level_begin_[level] + static_cast<int>(j);
        const size_t node_end = j + 1 < firsts.size() ? firsts[j + 1] : order.size();
        child_begin_[domain] = level_begin_[level + 1] + static_cast<int>(c);
        while (c < child_firsts.size() && static_cast<size_t>(child_firsts[c]) < node_end) {
          parent_[level_begin_[level + 1] + static_cast<int>(c)] = domain;
          ++c;
        }
        child_end_[domain] = level_begin_[level + 1] + static_cast<int>(c);
      }
    }
  }

  // Leaves: their nodes and capacity.
  const size_t leaves = level_count > 0 ? per_level_first_node[level_count - 1].size() : 0;
  leaf_node_begin_.assign(leaves + 1, static_cast<int>(order.size()));
  nodes_.reserve(order.size());
  node_free_.assign(order.size() * resource_count, 0);
  leaf_free_.assign(leaves * resource_count, 0);
  leaf_usage_.assign(leaves * resource_count, 0);
  for (size_t j = 0; j < leaves; ++j)
    leaf_node_begin_[j] = per_level_first_node[level_count - 1][j];
  for (size_t k = 0; k < order.size(); ++k) {
    Node& node = nodes[order[k]];
    NodeInfo info;
    info.labels = std::move(node.labels);
    for (auto& taint : node.taints) {
      if (IsHardTaint(taint)) info.hard_taints.push_back(std::move(taint));
    }
    any_hard_taint_ = any_hard_taint_ || !info.hard_taints.empty();
    for (const auto& [name, amount] : node.free) {
      node_free_[k * resource_count + resource_index_[name]] = std::max<Amount>(amount, 0);
    }
    nodes_.push_back(std::move(info));
  }
  for (size_t j = 0; j < leaves; ++j) {
    for (int k = leaf_node_begin_[j]; k < leaf_node_begin_[j + 1]; ++k) {
      for (size_t r = 0; r < resource_count; ++r) {
        leaf_free_[j * resource_count + r] += node_free_[k * resource_count + r];
      }
    }
    const int leaf = level_begin_[level_count - 1] + static_cast<int>(j);
    leaf_by_values_.emplace(ValuesOf(leaf), leaf);
  }
}

std::vector<std::string> Tree::ValuesOf(int domain) const {
  std::vector<std::string> values(domain_level_[domain] + 1);
  for (int d = domain; d >= 0; d = parent_[d]) values[domain_level_[d]] = value_[d];
  return values;
}

int Tree::FindLeaf(const std::vector<std::string>& values) const {
  auto it = leaf_by_values_.find(values);
  return it == leaf_by_values_.end() ? -1 : it->second;
}

int Tree::ResourceIndex(const std::string& name) const {
  auto it = resource_index_.find(name);
  return it == resource_index_.end() ? -1 : it->second;
}

ResolvedRequest Tree::Resolve(const std::map<std::string, Amount>& per_pod) const {
  ResolvedRequest resolved;
  Amount pod_slots = kOnePodSlot;
  for (const auto& [name, amount] : per_pod) {
    if (name == kPodsResource) {
      pod_slots += std::max<Amount>(amount, 0);
    } else if (amount > 0) {
      resolved.per_pod.push_back({ResourceIndex(name), amount});
    }
  }
  resolved.per_pod.push_back({ResourceIndex(kPodsResource), pod_slots});
  return resolved;
}

void Tree::AddUsage(int leaf, const ResolvedRequest& per_pod, int64_t pods, int sign) {
  const size_t resource_count = resources_.size();
  const size_t base = static_cast<size_t>(leaf_offset(leaf)) * resource_count;
  for (const auto& entry : per_pod.per_pod) {
    if (entry.resource < 0) continue;  // no node has it: nothing to account
    leaf_usage_[base + entry.resource] += sign * entry.amount * pods;
  }
}

std::map<std::string, Amount> Tree::FreeOf(int leaf) const {
  std::map<std::string, Amount> free;
  const size_t resource_count = resources_.size();
  const size_t base = static_cast<size_t>(leaf_offset(leaf)) * resource_count;
  for (size_t r = 0; r < resource_count; ++r) {
    free[resources_[r]] = leaf_free_[base + r] - leaf_usage_[base + r];
  }
  return free;
}

bool Tree::Eligible(const NodeInfo& node, const Request& request) const {
  return Eligible(node, request.node_selector, request.required_affinity, request.tolerations);
}

bool Tree::Eligible(const NodeInfo& node, const std::map<std::string, std::string>& node_selector,
                    const std::vector<NodeSelectorTerm>& required_affinity,
                    const std::vector<api::core_v1::Toleration>& tolerations) const {
  for (const auto& taint : node.hard_taints) {
    if (!api::core_v1::Tolerated(tolerations, taint)) return false;
  }
  for (const auto& [key, value] : node_selector) {
    auto it = node.labels.find(key);
    if (it == node.labels.end() || it->second != value) return false;
  }
  if (required_affinity.empty()) return true;
  for (const NodeSelectorTerm& term : required_affinity) {
    if (term.empty()) continue;  // Kubernetes: an empty term matches no node
    bool all = true;
    for (const auto& requirement : term) {
      if (!requirement.Matches(node.labels)) {
        all = false;
        break;
      }
    }
    if (all) return true;
  }
  return false;
}

void Tree::FillCounts(const Request& request, const ResolvedRequest& per_pod, const Demand& demand,
                      bool ignore_usage, Counts& counts) const {
  const int domains = domain_count();
  counts.pods.assign(domains, 0);
  counts.slices.assign(domains, 0);
  if (domains == 0) return;
  for (const auto& entry : per_pod.per_pod) {
    if (entry.resource < 0) return;  // requested but no node has it: nothing fits anywhere
  }
  const bool filtered =
      any_hard_taint_ || !request.node_selector.empty() || !request.required_affinity.empty();
  const size_t resource_count = resources_.size();
  const int lowest = lowest_level();
  const int first_leaf = level_begin(lowest);
  const size_t leaves = leaf_count();
  std::vector<Amount> summed;  // only for leaves whose nodes pass the filters partly
  for (size_t j = 0; j < leaves; ++j) {
    const Amount* free = &leaf_free_[j * resource_count];
    if (filtered) {
      int eligible = 0;
      const int begin = leaf_node_begin_[j], end = leaf_node_begin_[j + 1];
      for (int k = begin; k < end; ++k) eligible += Eligible(nodes_[k], request) ? 1 : 0;
      if (eligible == 0) continue;
      if (eligible < end - begin) {
        summed.assign(resource_count, 0);
        for (int k = begin; k < end; ++k) {
          if (!Eligible(nodes_[k], request)) continue;
          for (size_t r = 0; r < resource_count; ++r)
            summed[r] += node_free_[k * resource_count + r];
        }
        free = summed.data();
      }
    }
    const Amount* usage = &leaf_usage_[j * resource_count];
    int64_t fit = kMaxPodsPerLeaf;
    for (const auto& entry : per_pod.per_pod) {
      Amount left = free[entry.resource] - (ignore_usage ? 0 : usage[entry.resource]);
      fit = std::min<int64_t>(fit, left <= 0 ? 0 : left / entry.amount);
    }
    counts.pods[first_leaf + static_cast<int>(j)] = fit;
  }

  // Roll up. A child below the slice level contributes whole grains only.
  for (int level = lowest; level >= 0; --level) {
    for (int d = level_begin(level); d < level_end(level); ++d) {
      if (level < lowest) {
        int64_t pods = 0, slices = 0;
        const int64_t child_grain = level + 1 > demand.slice_level ? demand.grain[level + 1] : 1;
        for (int c = child_begin(d); c < child_end(d); ++c) {
          pods += counts.pods[c] / child_grain * child_grain;
          slices += counts.slices[c];
        }
        counts.pods[d] = pods;
        counts.slices[d] = slices;
      }
      if (level == demand.slice_level) counts.slices[d] = counts.pods[d] / demand.slice_size;
    }
  }
}

void Tree::FillLeaderCounts(const Request& request, const ResolvedRequest& per_pod,
                            const ResolvedRequest& leader_pod, bool ignore_usage,
                            const Counts& counts, LeaderCounts& out) const {
  const int domains = domain_count();
  out.ok.assign(domains, 0);
  out.loss.assign(domains, 0);
  if (domains == 0) return;
  for (const auto& entry : leader_pod.per_pod) {
    if (entry.resource < 0) return;  // no node has what the leader asks for
  }
  const Leader& leader = *request.leader;
  const size_t resource_count = resources_.size();
  std::vector<Amount> leader_amount(resource_count, 0);
  for (const auto& entry : leader_pod.per_pod) leader_amount[entry.resource] += entry.amount;
  const int lowest = lowest_level();
  const int first_leaf = level_begin(lowest);
  std::vector<Amount> worker_free(resource_count), leader_free(resource_count);
  for (size_t j = 0; j < leaf_count(); ++j) {
    std::fill(worker_free.begin(), worker_free.end(), 0);
    std::fill(leader_free.begin(), leader_free.end(), 0);
    bool shared = false;  // a node both the leader and the other pods may use
    bool any_for_leader = false;
    for (int k = leaf_node_begin_[j]; k < leaf_node_begin_[j + 1]; ++k) {
      const bool for_workers = Eligible(nodes_[k], request);
      const bool for_leader = Eligible(nodes_[k], leader.node_selector, leader.required_affinity,
                                       leader.tolerations);
      shared = shared || (for_workers && for_leader);
      any_for_leader = any_for_leader || for_leader;
      for (size_t r = 0; r < resource_count; ++r) {
        if (for_workers) worker_free[r] += node_free_[k * resource_count + r];
        if (for_leader) leader_free[r] += node_free_[k * resource_count + r];
      }
    }
    const Amount* usage = &leaf_usage_[j * resource_count];
    bool fits = any_for_leader;
    for (const auto& entry : leader_pod.per_pod) {
      const Amount left = leader_free[entry.resource] - (ignore_usage ? 0 : usage[entry.resource]);
      fits = fits && left >= entry.amount;
    }
    if (!fits) continue;
    const int leaf = first_leaf + static_cast<int>(j);
    out.ok[leaf] = 1;
    if (!shared) continue;  // the leader takes nothing the other pods could use here
    int64_t with_leader = counts.pods[leaf];
    for (const auto& entry : per_pod.per_pod) {
      const Amount left = worker_free[entry.resource] -
                          (ignore_usage ? 0 : usage[entry.resource]) -
                          leader_amount[entry.resource];
      with_leader = std::min<int64_t>(with_leader, left <= 0 ? 0 : left / entry.amount);
    }
    out.loss[leaf] = counts.pods[leaf] - with_leader;
  }
  // Roll up: a domain holds the leader on its cheapest leaf.
  for (int level = lowest - 1; level >= 0; --level) {
    for (int d = level_begin(level); d < level_end(level); ++d) {
      for (int c = child_begin(d); c < child_end(d); ++c) {
        if (!out.ok[c]) continue;
        if (!out.ok[d] || out.loss[c] < out.loss[d]) out.loss[d] = out.loss[c];
        out.ok[d] = 1;
      }
    }
  }
}

}  // namespace batchd::queueing::topology::internal
