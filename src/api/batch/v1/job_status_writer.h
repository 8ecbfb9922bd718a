// Writers of the batch/v1 Job status fields the Job controller sets, over its
// working copy of the Job; JobStatusView (job_view.h) reads them back. Each
// creates `status` when it is missing. Times are metav1.Time: RFC 3339 in
// whole seconds.
//
// Conditions are set with api/meta/conditions.h (`ConditionShape::kJob`).
//
// Thread-safety: free functions over JSON the caller owns.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/time/time.h"
#include "api/field_error.h"

namespace batchd::api::batch_v1 {

// The Job's `status` as it is (null when unset): a sync keeps a copy to tell
// at its end whether it changed the status.
const Json& JobStatusJson(const Json& job);

// status.startTime. Returns the time as written (`t` in whole seconds), the
// value a later JobStatusView::StartTime() reads.
absl::Time SetJobStartTime(Json& job, absl::Time t);
// Removes status.startTime (never creating `status`); returns whether it was there.
bool ClearJobStartTime(Json& job);
// status.completionTime.
void SetJobCompletionTime(Json& job, absl::Time t);

// status.active, succeeded and failed: written when positive, removed
// otherwise (they are omitted when zero).
void SetJobActive(Json& job, int64_t n);
void SetJobSucceeded(Json& job, int64_t n);
void SetJobFailed(Json& job, int64_t n);
// status.ready and terminating: always written, zero included.
void SetJobReady(Json& job, int64_t n);
void SetJobTerminating(Json& job, int64_t n);

// status.uncountedTerminatedPods, replaced by {succeeded, failed} (an empty
// list is left out; the object itself is always written).
void SetJobUncountedTerminatedPods(Json& job, const std::vector<std::string>& succeeded,
                                   const std::vector<std::string>& failed);

// status.completedIndexes, removed when `indexes` is empty. Returns whether
// it changed (unset and "" are the same).
bool SetJobCompletedIndexes(Json& job, std::string_view indexes);
// status.failedIndexes, written even when empty ("" says per-index backoff
// tracks no failed index yet). Returns whether it changed (from unset too).
bool SetJobFailedIndexes(Json& job, std::string_view indexes);

}  // namespace batchd::api::batch_v1
