// Job status conditions (batch-apis.md §1.4): `{type, status,
// lastProbeTime, lastTransitionTime, reason, message}` entries of
// `status.conditions`, with Kubernetes' ensure-semantics (a False condition
// is only written over an existing one) and the reasons/messages the Job
// controller uses.
//
// Thread-safety: pure functions over JSON the caller owns.
#pragma once

#include <optional>
#include <string>

#include "absl/time/time.h"
#include "api/field_error.h"

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

struct Condition {
  std::string type;
  std::string status = "True";
  std::string reason;
  std::string message;
};

// The condition of `type` in `job.status.conditions`, if any.
std::optional<Condition> FindCondition(const api::Json& job, const std::string& type);
bool HasTrueCondition(const api::Json& job, const std::string& type);

// Sets condition `c` on `job` as Kubernetes' ensureJobConditionStatus does:
// an existing condition is replaced when status/reason/message differ; a
// missing one is appended unless its status is False. Returns whether the
// status changed.
bool EnsureCondition(api::Json& job, const Condition& c, absl::Time now);

}  // namespace batchd::controllers::job
