// QuotaTree: Kueue's hierarchical quota accounting (reference §2.1) over
// dense per-flavor-resource arrays. Nodes are ClusterQueues (leaves) and
// Cohorts; each has a nominal quota, an optional borrowing limit and an
// optional lending limit per flavor-resource, a subtree quota and a usage.
// Usage propagates to the parent only beyond the node's local (non-lendable)
// quota. All arithmetic is api::Amount's saturating milli arithmetic
// (api::SaturatingAdd / SaturatingSub; see queueing/types.h).
//
// Thread-safety: none. Ownership: plain values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "queueing/types.h"

namespace batchd::queueing::internal {

// Dense id of a (flavor, resource) pair, interned by FlavorResourceTable.
using FlavorResourceId = int32_t;
inline constexpr FlavorResourceId kNoFlavorResource = -1;
using NodeId = int32_t;
inline constexpr NodeId kNoNode = -1;

// Sparse amounts of one workload (or reservation) per flavor-resource:
// (id, amount) pairs, each id at most once, sorted by id where built by the
// core. (Not to be confused with queueing::FlavorResourceUsage, the
// read-side status row.)
using FlavorResourceAmounts = std::vector<std::pair<FlavorResourceId, Amount>>;

// Interns (flavor, resource) pairs to dense ids 0, 1, 2, ...
class FlavorResourceTable {
 public:
  FlavorResourceId Intern(const std::string& flavor, const std::string& resource);
  // kNoFlavorResource when unknown.
  FlavorResourceId Find(const std::string& flavor, const std::string& resource) const;
  const std::string& Flavor(FlavorResourceId id) const { return names_[id].first; }
  const std::string& Resource(FlavorResourceId id) const { return names_[id].second; }
  int size() const { return static_cast<int>(names_.size()); }

 private:
  absl::flat_hash_map<std::pair<std::string, std::string>, FlavorResourceId> ids_;
  std::vector<std::pair<std::string, std::string>> names_;
};

struct QuotaNode {
  std::string name;
  bool is_cq = false;
  NodeId parent = kNoNode;
  std::vector<NodeId> children;
  int height = 0;     // distance to the furthest leaf (Kueue's getNodeHeight)
  double weight = 1;  // fair sharing
  // Indexed by FlavorResourceId. An unset borrowing/lending limit is stored
  // as QuotaTree::kNoLimit; read limits through QuotaTree::BorrowingLimit/LendingLimit,
  // which return std::nullopt for it.
  std::vector<Amount> nominal, borrowing_limit, lending_limit;
  std::vector<Amount> subtree, local, usage;
};

class QuotaTree {
 public:
  // Storage sentinel for an unset borrowing/lending limit in QuotaNode's
  // arrays (ResourceQuota's std::nullopt). Real limits are >= 0.
  static constexpr Amount kNoLimit = -1;

  explicit QuotaTree(FlavorResourceTable* flavor_resources)
      : flavor_resources_(flavor_resources) {}

  // Building: add nodes, set parents and quotas, then Finalize().
  NodeId AddNode(const std::string& name, bool is_cq, double weight = 1);
  void SetParent(NodeId child, NodeId parent);
  void SetQuota(NodeId n, FlavorResourceId id, const ResourceQuota& q);
  // Computes SubtreeQuota, local quota and heights. Call after building and
  // before any usage is added.
  void Finalize();

  int size() const { return static_cast<int>(nodes_.size()); }
  const QuotaNode& node(NodeId n) const { return nodes_[n]; }
  NodeId Root(NodeId n) const;
  const FlavorResourceTable& flavor_resources() const { return *flavor_resources_; }

  // §2.1 queries.
  Amount LocalQuota(NodeId n, FlavorResourceId id) const { return At(nodes_[n].local, id); }
  Amount LocalAvailable(NodeId n, FlavorResourceId id) const;
  Amount Available(NodeId n, FlavorResourceId id) const;  // max(0, available(n))
  Amount PotentialAvailable(NodeId n, FlavorResourceId id) const;
  Amount Usage(NodeId n, FlavorResourceId id) const { return At(nodes_[n].usage, id); }
  Amount Nominal(NodeId n, FlavorResourceId id) const { return At(nodes_[n].nominal, id); }
  Amount SubtreeQuota(NodeId n, FlavorResourceId id) const { return At(nodes_[n].subtree, id); }
  // nullopt = not set (no limit).
  std::optional<Amount> BorrowingLimit(NodeId n, FlavorResourceId id) const {
    return Limit(nodes_[n].borrowing_limit, id);
  }
  std::optional<Amount> LendingLimit(NodeId n, FlavorResourceId id) const {
    return Limit(nodes_[n].lending_limit, id);
  }
  // Usage + val > SubtreeQuota.
  bool BorrowingWith(NodeId n, FlavorResourceId id, Amount val) const;
  // Height of the lowest subtree that fits `val` more of flavor-resource `id`
  // for CQ `cq`, and whether that subtree is smaller than the whole tree
  // (mayReclaimInHierarchy).
  std::pair<int, bool> BorrowingLevel(NodeId cq, FlavorResourceId id, Amount val) const;

  void AddUsage(NodeId n, FlavorResourceId id, Amount v);
  void RemoveUsage(NodeId n, FlavorResourceId id, Amount v);
  void AddUsage(NodeId n, const FlavorResourceAmounts& u) {
    for (auto& [id, v] : u) AddUsage(n, id, v);
  }
  void RemoveUsage(NodeId n, const FlavorResourceAmounts& u) {
    for (auto& [id, v] : u) RemoveUsage(n, id, v);
  }
  // Whether every flavor-resource of `u` fits Available() for CQ `n`.
  bool Fits(NodeId n, const FlavorResourceAmounts& u) const;

  // Checks cached cohort usage against its definition and every CQ's usage
  // against nominal + borrowing allowance. Empty string = OK.
  std::string CheckInvariants() const;

  // Fair sharing (§2.8): the dominant resource share (DRS) of `n` in per
  // mille with `extra` usage added on n's flavor-resources, divided by n's
  // weight (+inf for weight 0 while holding a share; a resource nothing can
  // lend adds none). A root node has share 0. See also DominantShare.
  double WeightedShare(NodeId n, const FlavorResourceAmounts& extra) const;

 private:
  static Amount At(const std::vector<Amount>& v, FlavorResourceId id) {
    return id < static_cast<FlavorResourceId>(v.size()) ? v[id] : 0;
  }
  static std::optional<Amount> Limit(const std::vector<Amount>& v, FlavorResourceId id) {
    if (id >= static_cast<FlavorResourceId>(v.size()) || v[id] == kNoLimit) return std::nullopt;
    return v[id];
  }
  void Grow(QuotaNode& n) const;
  Amount AvailableRaw(NodeId n, FlavorResourceId id) const;
  void PropagateDelta(NodeId n, FlavorResourceId id, Amount before, Amount after);
  int ComputeHeight(NodeId n);

  FlavorResourceTable* flavor_resources_;
  std::vector<QuotaNode> nodes_;
};

}  // namespace batchd::queueing::internal
