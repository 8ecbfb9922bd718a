// Fair sharing (reference §2.8): the admission tournament that orders heads
// by dominant resource share within each cohort tree, and fair-sharing
// preemption (declared in preemption.h). Shares are doubles used for ordering
// only; quota checks stay exact.
//
// Thread-safety: none; simulations on the quota tree are always undone.
#pragma once

#include <cstdint>
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

// Index of the head that wins the tournament: at every cohort, children
// compete by (not borrowing first, lowest weighted share after adding the
// head, higher priority, older); roots by (priority, time, key).
size_t TournamentWinner(QuotaTree& t, const std::vector<TournamentHead>& heads);

}  // namespace batchd::queueing::internal
