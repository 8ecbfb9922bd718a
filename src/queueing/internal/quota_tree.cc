#include "queueing/internal/quota_tree.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "absl/strings/str_cat.h"

namespace batchd::queueing::internal {

Amount SatAdd(Amount a, Amount b) {
  Amount r;
  if (__builtin_add_overflow(a, b, &r)) {
    return b > 0 ? kUnlimited : std::numeric_limits<Amount>::min();
  }
  return r;
}

Amount SatSub(Amount a, Amount b) {
  if (a == kUnlimited && b != kUnlimited) return kUnlimited;
  Amount r;
  if (__builtin_sub_overflow(a, b, &r)) {
    return b < 0 ? kUnlimited : std::numeric_limits<Amount>::min();
  }
  return r;
}

FrId FrTable::Intern(const std::string& flavor, const std::string& resource) {
  auto [it, inserted] = ids_.try_emplace({flavor, resource}, static_cast<FrId>(names_.size()));
  if (inserted) names_.emplace_back(flavor, resource);
  return it->second;
}

FrId FrTable::Find(const std::string& flavor, const std::string& resource) const {
  auto it = ids_.find(std::make_pair(flavor, resource));
  return it == ids_.end() ? -1 : it->second;
}

void QuotaTree::Grow(QuotaNode& n) const {
  size_t want = static_cast<size_t>(frs_->size());
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

void QuotaTree::SetQuota(NodeId id, FrId fr, const ResourceQuota& q) {
  QuotaNode& n = nodes_[id];
  Grow(n);
  n.nominal[fr] = q.nominal;
  n.borrowing_limit[fr] = q.borrowing_limit.value_or(kNoLimit);
  n.lending_limit[fr] = q.lending_limit.value_or(kNoLimit);
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
  const int frs = frs_->size();
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    QuotaNode& n = nodes_[*it];
    for (FrId fr = 0; fr < frs; ++fr) {
      Amount s = n.nominal[fr];
      for (NodeId c : n.children) {
        s = SatAdd(s, SatSub(nodes_[c].subtree[fr], nodes_[c].local[fr]));
      }
      n.subtree[fr] = s;
      n.local[fr] = n.lending_limit[fr] == kNoLimit
                        ? 0
                        : std::max<Amount>(0, SatSub(s, n.lending_limit[fr]));
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

Amount QuotaTree::LocalAvailable(NodeId n, FrId fr) const {
  return std::max<Amount>(0, SatSub(LocalQuota(n, fr), Usage(n, fr)));
}

Amount QuotaTree::AvailableRaw(NodeId id, FrId fr) const {
  const QuotaNode& n = nodes_[id];
  if (n.parent == kNoNode) return SatSub(At(n.subtree, fr), At(n.usage, fr));
  Amount pa = AvailableRaw(n.parent, fr);
  Amount bl = fr < static_cast<FrId>(n.borrowing_limit.size()) ? n.borrowing_limit[fr] : kNoLimit;
  if (bl != kNoLimit) {
    Amount local = At(n.local, fr);
    Amount stored = SatSub(At(n.subtree, fr), local);
    Amount used = std::max<Amount>(0, SatSub(At(n.usage, fr), local));
    pa = std::min(pa, SatAdd(SatSub(stored, used), bl));
  }
  return SatAdd(LocalAvailable(id, fr), pa);
}

Amount QuotaTree::Available(NodeId n, FrId fr) const {
  return std::max<Amount>(0, AvailableRaw(n, fr));
}

Amount QuotaTree::PotentialAvailable(NodeId id, FrId fr) const {
  const QuotaNode& n = nodes_[id];
  if (n.parent == kNoNode) return At(n.subtree, fr);
  Amount v = SatAdd(At(n.local, fr), PotentialAvailable(n.parent, fr));
  Amount bl = fr < static_cast<FrId>(n.borrowing_limit.size()) ? n.borrowing_limit[fr] : kNoLimit;
  if (bl != kNoLimit) v = std::min(v, SatAdd(At(n.subtree, fr), bl));
  return v;
}

bool QuotaTree::BorrowingWith(NodeId n, FrId fr, Amount val) const {
  return SatAdd(Usage(n, fr), val) > SubtreeQuota(n, fr);
}

std::pair<int, bool> QuotaTree::BorrowingLevel(NodeId cq, FrId fr, Amount val) const {
  bool has_parent = nodes_[cq].parent != kNoNode;
  if (!has_parent || !BorrowingWith(cq, fr, val)) return {0, has_parent};
  Amount remaining = SatSub(val, LocalAvailable(cq, fr));
  for (NodeId t = nodes_[cq].parent; t != kNoNode; t = nodes_[t].parent) {
    if (!BorrowingWith(t, fr, remaining)) {
      return {nodes_[t].height, nodes_[t].parent != kNoNode};
    }
    remaining = SatSub(remaining, LocalAvailable(t, fr));
  }
  return {nodes_[Root(cq)].height, false};
}

void QuotaTree::PropagateDelta(NodeId id, FrId fr, Amount before, Amount after) {
  NodeId p = nodes_[id].parent;
  if (p == kNoNode) return;
  Amount local = LocalQuota(id, fr);
  Amount pb = std::max<Amount>(0, SatSub(before, local));
  Amount pa = std::max<Amount>(0, SatSub(after, local));
  if (pa == pb) return;
  QuotaNode& parent = nodes_[p];
  Grow(parent);
  Amount parent_before = parent.usage[fr];
  parent.usage[fr] = SatAdd(parent.usage[fr], SatSub(pa, pb));
  PropagateDelta(p, fr, parent_before, parent.usage[fr]);
}

void QuotaTree::AddUsage(NodeId id, FrId fr, Amount v) {
  QuotaNode& n = nodes_[id];
  Grow(n);
  Amount before = n.usage[fr];
  n.usage[fr] = SatAdd(before, v);
  PropagateDelta(id, fr, before, n.usage[fr]);
}

void QuotaTree::RemoveUsage(NodeId id, FrId fr, Amount v) {
  QuotaNode& n = nodes_[id];
  Grow(n);
  Amount before = n.usage[fr];
  n.usage[fr] = SatSub(before, v);
  PropagateDelta(id, fr, before, n.usage[fr]);
}

bool QuotaTree::Fits(NodeId n, const FrUsage& u) const {
  for (const auto& [fr, v] : u) {
    if (v > Available(n, fr)) return false;
  }
  return true;
}

std::string QuotaTree::CheckInvariants() const {
  const int frs = frs_->size();
  for (NodeId id = 0; id < size(); ++id) {
    const QuotaNode& n = nodes_[id];
    for (FrId fr = 0; fr < frs; ++fr) {
      Amount u = Usage(id, fr);
      if (u < 0) return absl::StrCat(n.name, ": negative usage on ", frs_->Flavor(fr), "/",
                                     frs_->Resource(fr));
      if (!n.is_cq) {
        Amount sum = 0;
        for (NodeId c : n.children) {
          sum = SatAdd(sum, std::max<Amount>(0, SatSub(Usage(c, fr), LocalQuota(c, fr))));
        }
        if (sum != u) {
          return absl::StrCat("cohort ", n.name, ": usage ", u, " of ", frs_->Flavor(fr), "/",
                              frs_->Resource(fr), " != sum of children ", sum);
        }
      }
      // Nothing may exceed what it can hold: its subtree quota plus what its
      // parent can give it (bounded by the borrowing limit).
      Amount bl = fr < static_cast<FrId>(n.borrowing_limit.size()) ? n.borrowing_limit[fr]
                                                                    : kNoLimit;
      if (n.parent == kNoNode || (bl != kNoLimit)) {
        Amount cap = n.parent == kNoNode ? SubtreeQuota(id, fr)
                                         : SatAdd(SubtreeQuota(id, fr), bl);
        if (u > cap) {
          return absl::StrCat(n.is_cq ? "ClusterQueue " : "cohort ", n.name, ": usage ", u,
                              " of ", frs_->Flavor(fr), "/", frs_->Resource(fr),
                              " exceeds its quota + borrowing limit ", cap);
        }
      }
    }
  }
  return "";
}

double QuotaTree::WeightedShare(NodeId id, const FrUsage& extra) const {
  const QuotaNode& n = nodes_[id];
  if (n.parent == kNoNode) return 0;
  std::map<std::string, Amount> borrowed;
  const int frs = frs_->size();
  for (FrId fr = 0; fr < frs; ++fr) {
    Amount req = 0;
    for (const auto& [f, v] : extra) if (f == fr) req = v;
    Amount b = SatSub(SatAdd(req, Usage(id, fr)), SubtreeQuota(id, fr));
    if (b > 0) borrowed[frs_->Resource(fr)] += b;
  }
  if (borrowed.empty()) return 0;
  NodeId root = Root(id);
  double drs = 0;
  for (const auto& [res, b] : borrowed) {
    Amount lendable = 0;
    for (FrId fr = 0; fr < frs; ++fr) {
      if (frs_->Resource(fr) != res || SubtreeQuota(root, fr) == 0) continue;
      lendable = SatAdd(lendable, PotentialAvailable(n.parent, fr));
    }
    double ratio = lendable > 0 ? static_cast<double>(b) * 1000.0 / static_cast<double>(lendable)
                                : std::numeric_limits<double>::infinity();
    drs = std::max(drs, ratio);
  }
  if (n.weight == 0) return std::numeric_limits<double>::infinity();
  return drs / n.weight;
}

}  // namespace batchd::queueing::internal
