#include "queueing/internal/fair_sharing.h"

#include <algorithm>
#include <limits>
#include <map>
#include <string>
#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "api/resource/amount.h"

namespace batchd::queueing::internal {
namespace {

// How a head competes at one level of its path: whether it borrows there on
// the flavor-resources it requests, and the node's weighted share.
struct LevelKey {
  bool borrowing = false;
  Drs share;
};

// Per head: key of every node on its path below the root, with the head's
// usage added.
using PathKeys = absl::flat_hash_map<NodeId, LevelKey>;

PathKeys KeysOf(QuotaTree& t, const TournamentHead& h) {
  PathKeys keys;
  t.AddUsage(h.cq, *h.usage);
  for (NodeId n = h.cq; t.node(n).parent != kNoNode; n = t.node(n).parent) {
    LevelKey k;
    for (const auto& [id, v] : *h.usage) {
      if (v > 0 && t.Usage(n, id) > t.SubtreeQuota(n, id)) k.borrowing = true;
    }
    k.share = DominantShare(t, n);
    keys[n] = k;
  }
  t.RemoveUsage(h.cq, *h.usage);
  return keys;
}

// The fair-sharing admission tournament over one snapshot of the heads.
struct FairSharingTournament {
  QuotaTree& tree;
  const std::vector<TournamentHead>& heads;
  std::vector<PathKeys> keys;
  absl::flat_hash_map<NodeId, size_t> head_of;  // CQ node -> head index

  bool Better(size_t x, size_t y, NodeId cx, NodeId cy) const {
    const LevelKey& a = keys[x].at(cx);
    const LevelKey& b = keys[y].at(cy);
    if (a.borrowing != b.borrowing) return !a.borrowing;
    if (int c = CompareDrs(a.share, b.share); c != 0) return c < 0;
    return Tie(x, y);
  }
  bool Tie(size_t x, size_t y) const {
    const TournamentHead& a = heads[x];
    const TournamentHead& b = heads[y];
    if (a.priority != b.priority) return a.priority > b.priority;
    if (a.time != b.time) return a.time < b.time;
    return *a.key < *b.key;
  }
  // Winner of the subtree at `n`, or npos.
  size_t Winner(NodeId n) const {
    if (tree.node(n).is_cq) {
      auto it = head_of.find(n);
      return it == head_of.end() ? std::string::npos : it->second;
    }
    size_t best = std::string::npos;
    NodeId best_child = kNoNode;
    for (NodeId c : tree.node(n).children) {
      size_t w = Winner(c);
      if (w == std::string::npos) continue;
      if (best == std::string::npos || Better(w, best, c, best_child)) {
        best = w;
        best_child = c;
      }
    }
    return best;
  }
};

}  // namespace

double Drs::Weighted() const {
  if (unweighted == 0) return 0;
  if (weight == 0) return std::numeric_limits<double>::infinity();
  return unweighted / weight;
}

int CompareDrs(const Drs& a, const Drs& b) {
  auto cmp = [](double x, double y) { return x < y ? -1 : (x > y ? 1 : 0); };
  if (a.ZeroWeightBorrows() && b.ZeroWeightBorrows()) return cmp(a.unweighted, b.unweighted);
  if (a.ZeroWeightBorrows()) return 1;
  if (b.ZeroWeightBorrows()) return -1;
  return cmp(a.Weighted(), b.Weighted());
}

Drs DominantShare(const QuotaTree& t, NodeId node) {
  const QuotaNode& n = t.node(node);
  Drs d{0, n.weight, false};
  if (n.parent == kNoNode) return d;
  const FlavorResourceTable& table = t.flavor_resources();
  const int num = table.size();
  std::map<std::string, Amount> borrowed;  // resource name -> summed over its flavors
  for (FlavorResourceId id = 0; id < num; ++id) {
    Amount b = api::SaturatingSub(t.Usage(node, id), t.SubtreeQuota(node, id));
    if (b > 0) {
      Amount& sum = borrowed[table.Resource(id)];
      sum = api::SaturatingAdd(sum, b);
    }
  }
  if (borrowed.empty()) return d;
  d.borrowing = true;
  for (const auto& [resource, b] : borrowed) {
    Amount lendable = 0;
    for (FlavorResourceId id = 0; id < num; ++id) {
      if (table.Resource(id) == resource) {
        lendable = api::SaturatingAdd(lendable, t.PotentialAvailable(n.parent, id));
      }
    }
    if (lendable <= 0) continue;
    // std::map walks resources alphabetically: ties keep the first name.
    d.unweighted = std::max(d.unweighted, static_cast<double>(b) * 1000.0 /
                                              static_cast<double>(lendable));
  }
  return d;
}

size_t TournamentWinner(QuotaTree& t, const std::vector<TournamentHead>& heads) {
  FairSharingTournament tournament{t, heads, {}, {}};
  absl::flat_hash_map<NodeId, bool> roots;
  for (size_t i = 0; i < heads.size(); ++i) {
    tournament.keys.push_back(KeysOf(t, heads[i]));
    tournament.head_of[heads[i].cq] = i;
    roots[t.Root(heads[i].cq)] = true;
  }
  size_t best = std::string::npos;
  for (const auto& [root, _] : roots) {
    size_t w = tournament.Winner(root);
    if (w != std::string::npos && (best == std::string::npos || tournament.Tie(w, best))) best = w;
  }
  return best;
}

}  // namespace batchd::queueing::internal
