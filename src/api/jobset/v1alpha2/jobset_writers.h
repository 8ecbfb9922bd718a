// Writers of a JobSet's status: the one place where the fields the JobSet
// controller writes are spelt (reads go through jobset_view.h). Each edits a
// working copy of the JobSet and returns whether anything changed, so the
// controller sends one status update per reconcile, and only when needed.
//
// Thread-safety: free functions over JSON the caller owns.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/time/time.h"
#include "api/field_error.h"
#include "api/meta/conditions.h"

namespace batchd::api::jobset_v1alpha2 {

// One entry of status.replicatedJobsStatus.
struct ReplicatedJobCounts {
  std::string name;
  int32_t ready = 0;
  int32_t succeeded = 0;
  int32_t failed = 0;
  int32_t active = 0;
  int32_t suspended = 0;

  friend bool operator==(const ReplicatedJobCounts&, const ReplicatedJobCounts&) = default;
};

// status.replicatedJobsStatus = `counts` (in that order), unless it holds
// the same entries already (in any order).
bool SetReplicatedJobsStatus(Json& js, const std::vector<ReplicatedJobCounts>& counts);

// Sets a condition as upstream's JobSet controller does: a condition of the
// same type is rewritten (its lastTransitionTime kept unless the status
// changes); an absent one is added only when True; a True
// StartupPolicyInProgress / StartupPolicyCompleted turns the other one of
// the pair False. No observedGeneration.
bool SetJobSetCondition(Json& js, const meta::Condition& c, absl::Time now);

// status.terminalState = "Completed" | "Failed".
bool SetTerminalState(Json& js, std::string_view state);

// status.restarts and status.restartsCountTowardsMax (the latter written
// only when non-zero, as upstream's omitempty).
bool SetRestarts(Json& js, int32_t restarts, int32_t restarts_count_towards_max);

// status.currentInPlaceRestartAttempt / previousInPlaceRestartAttempt
// (nullopt: left as they are).
bool SetInPlaceRestartAttempts(Json& js, std::optional<int32_t> current,
                               std::optional<int32_t> previous);

}  // namespace batchd::api::jobset_v1alpha2
