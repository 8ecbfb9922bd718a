// Fair sharing (reference §2.8): the admission tournament that orders heads
// by dominant resource share within each cohort tree, and fair-sharing
// preemption (declared in preemption.h). Shares are doubles used for ordering
// only; quota checks stay exact.
//
// Thread-safety: none; simulations on the quota tree are always undone.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "queueing/internal/quota_tree.h"

namespace batchd::queueing::internal {

struct TournamentHead {
  NodeId cq = kNoNode;
  const FlavorResourceAmounts* usage = nullptr;  // what the head would add
  int32_t priority = 0;
  absl::Time time;
  const std::string* key = nullptr;
};

// A node's dominant resource share as Kueue compares it (its DRS type): the
// unweighted share in per mille of what the parent's tree could lend, the
// node's weight, and whether the node uses more than its subtree quota of any
// flavor-resource (a resource with nothing lendable adds no share but still
// counts as borrowing). A root node is never borrowing.
struct Drs {
  double unweighted = 0;
  double weight = 1;
  bool borrowing = false;

  // A zero weight while holding a share: +inf, ranked above every finite
  // share; two such nodes compare by their unweighted shares.
  bool ZeroWeightBorrows() const { return weight == 0 && unweighted != 0; }
  double Weighted() const;
  // The starting point of "highest share" searches: below every real share.
  static Drs Negative() { return Drs{-1, 1, false}; }
};
// <0, 0, >0 as a's share is lower, equal or higher than b's.
int CompareDrs(const Drs& a, const Drs& b);
Drs DominantShare(const QuotaTree& t, NodeId n);

// Index of the head that wins the tournament: at every cohort, children
// compete by (not borrowing first, lowest weighted share after adding the
// head, higher priority, older); roots by (priority, time, key).
size_t TournamentWinner(QuotaTree& t, const std::vector<TournamentHead>& heads);

}  // namespace batchd::queueing::internal
