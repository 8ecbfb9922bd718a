// QuotaTree: Kueue's hierarchical quota accounting (reference §2.1) over
// dense per-(flavor,resource) arrays. Nodes are ClusterQueues (leaves) and
// Cohorts; each has nominal / borrowingLimit / lendingLimit per fr, a
// SubtreeQuota and a Usage. Usage propagates to the parent only beyond the
// node's local (non-lendable) quota. All arithmetic saturates.
//
// Thread-safety: none. Ownership: plain values.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "queueing/types.h"

namespace batchd::queueing::internal {

using FrId = int32_t;
using NodeId = int32_t;
inline constexpr NodeId kNoNode = -1;
inline constexpr Amount kNoLimit = -1;  // borrowing/lending limit not set

Amount SatAdd(Amount a, Amount b);
Amount SatSub(Amount a, Amount b);

// Sparse usage vector of one workload: (fr, amount) pairs, fr unique.
using FrUsage = std::vector<std::pair<FrId, Amount>>;

// Interns (flavor, resource) pairs to dense ids.
class FrTable {
 public:
  FrId Intern(const std::string& flavor, const std::string& resource);
  // -1 when unknown.
  FrId Find(const std::string& flavor, const std::string& resource) const;
  const std::string& Flavor(FrId id) const { return names_[id].first; }
  const std::string& Resource(FrId id) const { return names_[id].second; }
  int size() const { return static_cast<int>(names_.size()); }

 private:
  absl::flat_hash_map<std::pair<std::string, std::string>, FrId> ids_;
  std::vector<std::pair<std::string, std::string>> names_;
};

struct QuotaNode {
  std::string name;
  bool is_cq = false;
  NodeId parent = kNoNode;
  std::vector<NodeId> children;
  int height = 0;     // distance to the furthest leaf (Kueue's getNodeHeight)
  double weight = 1;  // fair sharing
  std::vector<Amount> nominal, borrowing_limit, lending_limit;  // kNoLimit = unset
  std::vector<Amount> subtree, local, usage;
};

class QuotaTree {
 public:
  explicit QuotaTree(FrTable* frs) : frs_(frs) {}

  // Building: add nodes, set parents and quotas, then Finalize().
  NodeId AddNode(const std::string& name, bool is_cq, double weight = 1);
  void SetParent(NodeId child, NodeId parent);
  void SetQuota(NodeId n, FrId fr, const ResourceQuota& q);
  // Computes SubtreeQuota, local quota and heights. Call after building and
  // before any usage is added.
  void Finalize();

  int size() const { return static_cast<int>(nodes_.size()); }
  const QuotaNode& node(NodeId n) const { return nodes_[n]; }
  NodeId Root(NodeId n) const;

  // §2.1 queries.
  Amount LocalQuota(NodeId n, FrId fr) const { return At(nodes_[n].local, fr); }
  Amount LocalAvailable(NodeId n, FrId fr) const;
  Amount Available(NodeId n, FrId fr) const;           // max(0, available(n))
  Amount PotentialAvailable(NodeId n, FrId fr) const;
  Amount Usage(NodeId n, FrId fr) const { return At(nodes_[n].usage, fr); }
  Amount Nominal(NodeId n, FrId fr) const { return At(nodes_[n].nominal, fr); }
  Amount SubtreeQuota(NodeId n, FrId fr) const { return At(nodes_[n].subtree, fr); }
  // Usage + val > SubtreeQuota.
  bool BorrowingWith(NodeId n, FrId fr, Amount val) const;
  // Height of the lowest subtree that fits `val` more of fr for CQ `cq`, and
  // whether that subtree is smaller than the whole tree (mayReclaimInHierarchy).
  std::pair<int, bool> BorrowingLevel(NodeId cq, FrId fr, Amount val) const;

  void AddUsage(NodeId n, FrId fr, Amount v);
  void RemoveUsage(NodeId n, FrId fr, Amount v);
  void AddUsage(NodeId n, const FrUsage& u) { for (auto& [f, v] : u) AddUsage(n, f, v); }
  void RemoveUsage(NodeId n, const FrUsage& u) { for (auto& [f, v] : u) RemoveUsage(n, f, v); }
  // Whether every fr of `u` fits Available() for CQ `n`.
  bool Fits(NodeId n, const FrUsage& u) const;

  // Checks cached cohort usage against its definition and every CQ's usage
  // against nominal + borrowing allowance. Empty string = OK.
  std::string CheckInvariants() const;

  // Fair sharing (§2.8): the dominant resource share of `n` in per mille
  // with `extra` usage added on n's frs, divided by n's weight (+inf for
  // weight 0 while borrowing). A root node has share 0.
  double WeightedShare(NodeId n, const FrUsage& extra) const;

 private:
  static Amount At(const std::vector<Amount>& v, FrId fr) {
    return fr < static_cast<FrId>(v.size()) ? v[fr] : 0;
  }
  void Grow(QuotaNode& n) const;
  Amount AvailableRaw(NodeId n, FrId fr) const;
  void PropagateDelta(NodeId n, FrId fr, Amount before, Amount after);
  int ComputeHeight(NodeId n);

  FrTable* frs_;
  std::vector<QuotaNode> nodes_;
};

}  // namespace batchd::queueing::internal
