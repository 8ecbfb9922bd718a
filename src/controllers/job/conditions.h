// The reasons and messages of the Job controller's status conditions
// (batch-apis.md §1.4). The conditions themselves are written with
// api/meta/conditions.h (`ConditionShape::kJob`: Kubernetes'
// ensureJobConditionStatus, where a False condition is only written over an
// existing one).
#pragma once

#include "api/meta/conditions.h"

namespace batchd::controllers::job {

inline constexpr char kReasonBackoffLimitExceeded[] = "BackoffLimitExceeded";
inline constexpr char kReasonDeadlineExceeded[] = "DeadlineExceeded";
inline constexpr char kReasonPodFailurePolicy[] = "PodFailurePolicy";
inline constexpr char kReasonMaxFailedIndexesExceeded[] = "MaxFailedIndexesExceeded";
inline constexpr char kReasonFailedIndexes[] = "FailedIndexes";
inline constexpr char kReasonSuccessPolicy[] = "SuccessPolicy";
inline constexpr char kReasonCompletionsReached[] = "CompletionsReached";

inline constexpr char kMsgBackoffLimitExceeded[] = "Job has reached the specified backoff limit";
inline constexpr char kMsgDeadlineExceeded[] = "Job was active longer than specified deadline";
inline constexpr char kMsgMaxFailedIndexesExceeded[] =
    "Job has exceeded the specified maximal number of failed indexes";
inline constexpr char kMsgFailedIndexes[] = "Job has failed indexes";
inline constexpr char kMsgCompletionsReached[] = "Reached expected number of succeeded pods";

}  // namespace batchd::controllers::job
