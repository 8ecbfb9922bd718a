// The domain tree behind a topology Snapshot, and phase 1 of placement.
//
// Domains are numbered densely, level by level from the top, and inside a
// level in ascending order of their label values (the whole tuple from the
// top level down), so a domain's index inside its level is its rank in the
// "level values ascending" tie-break and the children of a domain are one
// contiguous index range of the next level. Leaves are the domains of the
// lowest level; each lists the nodes it aggregates (one when the lowest
// level is the hostname). Free capacity is kept per node and per leaf, TAS
// usage per leaf, as dense vectors over the resource names the nodes report.
//
// `FillCounts` is phase 1 (Kueue's fillInCounts): how many pods, and how many
// outermost slices, every domain can take for one request.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "queueing/topology/topology.h"

namespace batchd::queueing::topology::internal {

// One pod slot as an Amount (milli): the "pods" resource counts slots.
inline constexpr Amount kOnePodSlot = 1000;

// A request's slice layout resolved against the levels. Below the
// outermost slice level a domain is handed pods in multiples of `grain`
// (the size of the innermost layer at or below it, else 1); at or above it,
// in whole slices of `slice_size` pods.
struct Demand {
  int64_t count = 0;       // pods
  int64_t slice_size = 1;  // pods per outermost slice
  int slice_level = 0;     // the outermost layer's level (the lowest without slices)
  int level = 0;           // the level placement starts at (see Snapshot::Place)
  Mode mode = Mode::kUnconstrained;
  std::vector<int64_t> grain;  // per level; slice_size at and above slice_level

  int64_t slice_count() const { return count / slice_size; }
};

// Phase 1's result: per domain (global index) the pods and the outermost
// slices it can take. `slices` is 0 below the slice level.
struct Counts {
  std::vector<int64_t> pods;
  std::vector<int64_t> slices;
};

// Phase 1 for a pod set group's leader (Request::leader), per domain (global
// index): whether the leader fits on some leaf below it, and `loss`, the
// fewest of the request's pods the leader displaces on such a leaf. A domain
// that holds the leader takes `Counts::pods - loss` of the other pods.
struct LeaderCounts {
  std::vector<char> ok;
  std::vector<int64_t> loss;
  int64_t with_leader(const Counts& counts, int domain) const {
    return ok[domain] ? counts.pods[domain] - loss[domain] : 0;
  }
};

// A request with its resource names resolved to the tree's indexes.
struct ResolvedRequest {
  struct PerPod {
    int resource = -1;  // -1: no node reports it, so nothing fits
    Amount amount = 0;  // > 0
  };
  std::vector<PerPod> per_pod;  // includes the pod slot
};

class Tree {
 public:
  Tree(std::string topology_name, std::vector<std::string> levels, std::vector<Node> nodes);

  const std::string& topology_name() const { return topology_name_; }
  const std::vector<std::string>& levels() const { return levels_; }
  int level_count() const { return static_cast<int>(levels_.size()); }
  int lowest_level() const { return level_count() - 1; }

  int domain_count() const { return level_begin_.back(); }
  // Domains of `level` are [level_begin(level), level_end(level)).
  int level_begin(int level) const { return level_begin_[level]; }
  int level_end(int level) const { return level_begin_[level + 1]; }
  int level_of(int domain) const { return domain_level_[domain]; }
  int parent(int domain) const { return parent_[domain]; }
  // Children of a non-leaf domain are [child_begin, child_end).
  int child_begin(int domain) const { return child_begin_[domain]; }
  int child_end(int domain) const { return child_end_[domain]; }
  bool is_leaf(int domain) const { return domain >= level_begin(lowest_level()); }
  size_t leaf_count() const {
    return static_cast<size_t>(level_end(lowest_level()) - level_begin(lowest_level()));
  }
  // The label values of a domain from the top level down to its own.
  std::vector<std::string> ValuesOf(int domain) const;
  // The leaf (global index) with these values, or -1.
  int FindLeaf(const std::vector<std::string>& values) const;

  // Resource index of `name`, or -1.
  int ResourceIndex(const std::string& name) const;
  ResolvedRequest Resolve(const std::map<std::string, Amount>& per_pod) const;

  void AddUsage(int leaf, const ResolvedRequest& per_pod, int64_t pods, int sign);
  std::map<std::string, Amount> FreeOf(int leaf) const;

  // Phase 1 for `request` (filters) with `per_pod` and `demand`.
  void FillCounts(const Request& request, const ResolvedRequest& per_pod, const Demand& demand,
                  bool ignore_usage, Counts& counts) const;
  // Phase 1 for `request.leader` (REQUIRES: set), after FillCounts filled
  // `counts` for the same request (no slices).
  void FillLeaderCounts(const Request& request, const ResolvedRequest& per_pod,
                        const ResolvedRequest& leader_pod, bool ignore_usage,
                        const Counts& counts, LeaderCounts& out) const;

 private:
  struct NodeInfo {
    std::map<std::string, std::string> labels;
    std::vector<api::core_v1::Taint> hard_taints;  // NoSchedule / NoExecute only
  };

  bool Eligible(const NodeInfo& node, const Request& request) const;
  // The same filters, given one by one (a leader's are not a Request's).
  bool Eligible(const NodeInfo& node, const std::map<std::string, std::string>& node_selector,
                const std::vector<NodeSelectorTerm>& required_affinity,
                const std::vector<api::core_v1::Toleration>& tolerations) const;
  int leaf_offset(int leaf) const { return leaf - level_begin(lowest_level()); }

  std::string topology_name_;
  std::vector<std::string> levels_;
  std::vector<int> level_begin_;   // size levels + 1
  std::vector<int> domain_level_;  // per domain
  std::vector<int> parent_;        // per domain; -1 at the top level
  std::vector<int> child_begin_;   // per domain; leaves: empty range
  std::vector<int> child_end_;
  std::vector<std::string> value_;  // per domain: its own level's label value
  std::map<std::vector<std::string>, int> leaf_by_values_;

  std::vector<std::string> resources_;  // names, index order
  std::map<std::string, int> resource_index_;
  std::vector<NodeInfo> nodes_;       // grouped by leaf
  std::vector<int> leaf_node_begin_;  // per leaf offset (+1): its nodes' range in nodes_
  std::vector<Amount> node_free_;     // node × resource
  std::vector<Amount> leaf_free_;     // leaf × resource: sum over the leaf's nodes
  std::vector<Amount> leaf_usage_;    // leaf × resource: admitted TAS workloads
  bool any_hard_taint_ = false;
};

}  // namespace batchd::queueing::topology::internal
