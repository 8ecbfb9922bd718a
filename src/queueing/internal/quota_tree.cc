#include "queueing/internal/quota_tree.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "absl/strings/str_cat.h"
#include "api/resource/amount.h"

namespace batchd::queueing::internal {

namespace {

// The one saturating arithmetic (api::Amount's, on milli values).
using api::SaturatingAdd;
using api::SaturatingSub;

}  // namespace

FlavorResourceId FlavorResourceTable::Intern(const std::string& flavor,
                                             const std::string& resource) {
  auto [it, inserted] =
      ids_.try_emplace({flavor, resource}, static_cast<FlavorResourceId>(names_.size()));
  if (inserted) names_.emplace_back(flavor, resource);
  return it->second;
}

FlavorResourceId FlavorResourceTable::Find(const std::string& flavor,
                                           const std::string& resource) const {
  auto it = ids_.find(std::make_pair(flavor, resource));
  return it == ids_.end() ? kNoFlavorResource : it->second;
}

void QuotaTree::Grow(QuotaNode& n) const {
  size_t want = static_cast<size_t>(flavor_resources_->size());
  if (n.usage.size() >= want) return;
  n.nominal.resize(want, 0);
  n.borrowing_limit.resize(want, kNoLimit);
  n.lending_limit.resize(want, kNoLimit);
  n.subtree.resize(want, 0);
  n.local.resize(want, 0);
  n.usage.resize(want, 0);
}

NodeId QuotaTree::AddNode(const std::string& name, bool is_cq, double weight) {
  QuotaNode n;
  n.name = name;
  n.is_cq = is_cq;
  n.weight = weight;
  Grow(n);
  nodes_.push_back(std::move(n));
  return static_cast<NodeId>(nodes_.size() - 1);
}

void QuotaTree::SetParent(NodeId child, NodeId parent) {
  nodes_[child].parent = parent;
  nodes_[parent].children.push_back(child);
}

void QuotaTree::SetQuota(NodeId node, FlavorResourceId id, const ResourceQuota& q) {
  QuotaNode& n = nodes_[node];
  Grow(n);
  n.nominal[id] = q.nominal;
  n.borrowing_limit[id] = q.borrowing_limit.value_or(kNoLimit);
  n.lending_limit[id] = q.lending_limit.value_or(kNoLimit);
}

int QuotaTree::ComputeHeight(NodeId id) {
  QuotaNode& n = nodes_[id];
  if (n.is_cq) return n.height = 0;
  int h = n.children.empty() ? 0 : 1;
  for (NodeId c : n.children) {
    if (!nodes_[c].is_cq) h = std::max(h, ComputeHeight(c) + 1);
  }
  return n.height = h;
}

void QuotaTree::Finalize() {
  for (QuotaNode& n : nodes_) Grow(n);
  // Post-order over roots: SubtreeQuota and local quota bottom-up.
  std::vector<NodeId> order;
  std::vector<NodeId> stack;
  for (NodeId i = 0; i < size(); ++i) {
    if (nodes_[i].parent == kNoNode) stack.push_back(i);
  }
  while (!stack.empty()) {
    NodeId n = stack.back();
    stack.pop_back();
    order.push_back(n);
    for (NodeId c : nodes_[n].children) stack.push_back(c);
  }
  const int num_flavor_resources = flavor_resources_->size();
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    QuotaNode& n = nodes_[*it];
    for (FlavorResourceId id = 0; id < num_flavor_resources; ++id) {
      Amount s = n.nominal[id];
      for (NodeId c : n.children) {
        s = SaturatingAdd(s, SaturatingSub(nodes_[c].subtree[id], nodes_[c].local[id]));
      }
      n.subtree[id] = s;
      n.local[id] = n.lending_limit[id] == kNoLimit
                        ? 0
                        : std::max<Amount>(0, SaturatingSub(s, n.lending_limit[id]));
    }
  }
  for (NodeId i = 0; i < size(); ++i) {
    if (nodes_[i].parent == kNoNode) ComputeHeight(i);
  }
}

NodeId QuotaTree::Root(NodeId n) const {
  while (nodes_[n].parent != kNoNode) n = nodes_[n].parent;
  return n;
}

Amount QuotaTree::LocalAvailable(NodeId n, FlavorResourceId id) const {
  return std::max<Amount>(0, SaturatingSub(LocalQuota(n, id), Usage(n, id)));
}

Amount QuotaTree::AvailableRaw(NodeId node, FlavorResourceId id) const {
  const QuotaNode& n = nodes_[node];
  if (n.parent == kNoNode) return SaturatingSub(At(n.subtree, id), At(n.usage, id));
  Amount from_parent = AvailableRaw(n.parent, id);
  if (std::optional<Amount> borrowing_limit = BorrowingLimit(node, id)) {
    Amount local = At(n.local, id);
    Amount stored = SaturatingSub(At(n.subtree, id), local);
    Amount used = std::max<Amount>(0, SaturatingSub(At(n.usage, id), local));
    from_parent =
        std::min(from_parent, SaturatingAdd(SaturatingSub(stored, used), *borrowing_limit));
  }
  return SaturatingAdd(LocalAvailable(node, id), from_parent);
}

Amount QuotaTree::Available(NodeId n, FlavorResourceId id) const {
  return std::max<Amount>(0, AvailableRaw(n, id));
}

Amount QuotaTree::PotentialAvailable(NodeId node, FlavorResourceId id) const {
  const QuotaNode& n = nodes_[node];
  if (n.parent == kNoNode) return At(n.subtree, id);
  Amount v = SaturatingAdd(At(n.local, id), PotentialAvailable(n.parent, id));
  if (std::optional<Amount> borrowing_limit = BorrowingLimit(node, id)) {
    v = std::min(v, SaturatingAdd(At(n.subtree, id), *borrowing_limit));
  }
  return v;
}

bool QuotaTree::BorrowingWith(NodeId n, FlavorResourceId id, Amount val) const {
  return SaturatingAdd(Usage(n, id), val) > SubtreeQuota(n, id);
}

std::pair<int, bool> QuotaTree::BorrowingLevel(NodeId cq, FlavorResourceId id, Amount val) const {
  bool has_parent = nodes_[cq].parent != kNoNode;
  if (!has_parent || !BorrowingWith(cq, id, val)) return {0, has_parent};
  Amount remaining = SaturatingSub(val, LocalAvailable(cq, id));
  for (NodeId t = nodes_[cq].parent; t != kNoNode; t = nodes_[t].parent) {
    if (!BorrowingWith(t, id, remaining)) {
      return {nodes_[t].height, nodes_[t].parent != kNoNode};
    }
    remaining = SaturatingSub(remaining, LocalAvailable(t, id));
  }
  return {nodes_[Root(cq)].height, false};
}

void QuotaTree::PropagateDelta(NodeId node, FlavorResourceId id, Amount before, Amount after) {
  NodeId p = nodes_[node].parent;
  if (p == kNoNode) return;
  Amount local = LocalQuota(node, id);
  Amount parent_share_before = std::max<Amount>(0, SaturatingSub(before, local));
  Amount parent_share_after = std::max<Amount>(0, SaturatingSub(after, local));
  if (parent_share_after == parent_share_before) return;
  QuotaNode& parent = nodes_[p];
  Grow(parent);
  Amount parent_before = parent.usage[id];
  parent.usage[id] = SaturatingAdd(parent.usage[id],
                                   SaturatingSub(parent_share_after, parent_share_before));
  PropagateDelta(p, id, parent_before, parent.usage[id]);
}

void QuotaTree::AddUsage(NodeId node, FlavorResourceId id, Amount v) {
  QuotaNode& n = nodes_[node];
  Grow(n);
  Amount before = n.usage[id];
  n.usage[id] = SaturatingAdd(before, v);
  PropagateDelta(node, id, before, n.usage[id]);
}

void QuotaTree::RemoveUsage(NodeId node, FlavorResourceId id, Amount v) {
  QuotaNode& n = nodes_[node];
  Grow(n);
  Amount before = n.usage[id];
  n.usage[id] = SaturatingSub(before, v);
  PropagateDelta(node, id, before, n.usage[id]);
}

bool QuotaTree::Fits(NodeId n, const FlavorResourceAmounts& u) const {
  for (const auto& [id, v] : u) {
    if (v > Available(n, id)) return false;
  }
  return true;
}

std::string QuotaTree::CheckInvariants() const {
  const int num_flavor_resources = flavor_resources_->size();
  for (NodeId node = 0; node < size(); ++node) {
    const QuotaNode& n = nodes_[node];
    for (FlavorResourceId id = 0; id < num_flavor_resources; ++id) {
      const std::string& flavor = flavor_resources_->Flavor(id);
      const std::string& resource = flavor_resources_->Resource(id);
      Amount u = Usage(node, id);
      if (u < 0) return absl::StrCat(n.name, ": negative usage on ", flavor, "/", resource);
      if (!n.is_cq) {
        Amount sum = 0;
        for (NodeId c : n.children) {
          sum = SaturatingAdd(sum,
                              std::max<Amount>(0, SaturatingSub(Usage(c, id), LocalQuota(c, id))));
        }
        if (sum != u) {
          return absl::StrCat("cohort ", n.name, ": usage ", u, " of ", flavor, "/", resource,
                              " != sum of children ", sum);
        }
      }
      // Nothing may exceed what it can hold: its subtree quota plus what its
      // parent can give it (bounded by the borrowing limit).
      std::optional<Amount> borrowing_limit = BorrowingLimit(node, id);
      if (n.parent == kNoNode || borrowing_limit) {
        Amount cap = n.parent == kNoNode ? SubtreeQuota(node, id)
                                         : SaturatingAdd(SubtreeQuota(node, id), *borrowing_limit);
        if (u > cap) {
          return absl::StrCat(n.is_cq ? "ClusterQueue " : "cohort ", n.name, ": usage ", u,
                              " of ", flavor, "/", resource,
                              " exceeds its quota + borrowing limit ", cap);
        }
      }
    }
  }
  return "";
}

double QuotaTree::WeightedShare(NodeId node, const FlavorResourceAmounts& extra) const {
  const QuotaNode& n = nodes_[node];
  if (n.parent == kNoNode) return 0;
  std::map<std::string, Amount> borrowed;  // resource name -> summed over flavors
  const int num_flavor_resources = flavor_resources_->size();
  for (FlavorResourceId id = 0; id < num_flavor_resources; ++id) {
    Amount request = 0;
    for (const auto& [extra_id, v] : extra) if (extra_id == id) request = v;
    Amount b = SaturatingSub(SaturatingAdd(request, Usage(node, id)), SubtreeQuota(node, id));
    if (b > 0) {
      Amount& sum = borrowed[flavor_resources_->Resource(id)];
      sum = SaturatingAdd(sum, b);
    }
  }
  if (borrowed.empty()) return 0;
  NodeId root = Root(node);
  double drs = 0;
  for (const auto& [resource, b] : borrowed) {
    Amount lendable = 0;
    for (FlavorResourceId id = 0; id < num_flavor_resources; ++id) {
      if (flavor_resources_->Resource(id) != resource || SubtreeQuota(root, id) == 0) continue;
      lendable = SaturatingAdd(lendable, PotentialAvailable(n.parent, id));
    }
    // As Kueue: a resource nothing can lend adds no share.
    if (lendable <= 0) continue;
    drs = std::max(drs, static_cast<double>(b) * 1000.0 / static_cast<double>(lendable));
  }
  if (drs == 0) return 0;
  if (n.weight == 0) return std::numeric_limits<double>::infinity();
  return drs / n.weight;
}

}  // namespace batchd::queueing::internal
