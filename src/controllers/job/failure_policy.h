// Failure semantics of the Job controller (batch-apis.md §1.3), read from
// the Job's and the pods' typed views: which pods
// count as failed, podFailurePolicy matching (FailJob / Ignore / Count /
// FailIndex on exit codes or pod conditions), the OnFailure restart-count
// backoff limit, and the pod re-creation backoff (10s·2^(n−1), capped at
// 10 minutes, measured from the last failure's finish time).
//
// Thread-safety: pure functions, except `BackoffStore` (internally locked).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "api/batch/v1/job_view.h"
#include "api/core/v1/pod_view.h"

namespace batchd::controllers::job {

inline constexpr absl::Duration kDefaultPodFailureBackoff = absl::Seconds(10);
inline constexpr absl::Duration kMaxPodFailureBackoff = absl::Minutes(10);

using api::batch_v1::JobSpecView;
using api::core_v1::PodView;

bool HasTrackingFinalizer(const api::meta::ObjectMetaView& pod);
// Pending/Running without a deletionTimestamp.
bool IsPodActive(const PodView& pod);
// Pending/Running with a deletionTimestamp.
bool IsPodTerminating(const PodView& pod);
bool IsPodReady(const PodView& pod);
// Phase Failed; or, unless the spec only replaces failed pods, deleted and
// not Succeeded (orphaned pods that never reach a terminal phase count as
// failed).
bool IsPodFailed(const PodView& pod, const JobSpecView& spec);

struct PolicyMatch {
  // The matched rule's action; nullopt when no rule matched.
  std::optional<api::batch_v1::PodFailurePolicyAction> action;
  bool count_failed = true;                     // false for Ignore.
  std::optional<std::string> fail_job_message;  // set for FailJob.
};
// Evaluates `spec.podFailurePolicy` against a failed pod. No policy or no
// matching rule: {nullopt, true, nullopt}. Rules with unknown actions or
// operators are skipped.
PolicyMatch MatchPodFailurePolicy(const JobSpecView& spec, const PodView& pod);

// For restartPolicy OnFailure: the summed restartCount of Pending/Running
// pods' containers reaches backoffLimit (or >0 when the limit is 0).
bool PastBackoffLimitOnFailure(const JobSpecView& spec, const std::vector<const PodView*>& pods);

// When a terminal pod finished: the latest container `finishedAt`, else the
// Ready=False transition, else its deletionTimestamp, else `fallback`.
absl::Time PodFinishTime(const PodView& pod, absl::Time fallback);

// Delay still to wait before re-creating after `failures` failures, the
// last at `last_failure`; 0 when `failures` is 0 or the delay has passed.
absl::Duration RemainingBackoff(int failures, std::optional<absl::Time> last_failure,
                                absl::Time now);

struct BackoffRecord {
  int failures_after_last_success = 0;
  std::optional<absl::Time> last_failure;
};

// Folds pods newly seen finished into `prev` (a success resets the count
// to the failures finished after the latest success).
BackoffRecord NextBackoffRecord(BackoffRecord prev, std::vector<absl::Time> new_succeeded,
                                std::vector<absl::Time> new_failed);

// In-memory backoff records per job key (like Kubernetes, not persisted).
class BackoffStore {
 public:
  BackoffRecord Get(const std::string& key) const;
  void Set(const std::string& key, const BackoffRecord& r);
  void Remove(const std::string& key);

 private:
  mutable absl::Mutex mu_;
  std::map<std::string, BackoffRecord> records_ ABSL_GUARDED_BY(mu_);
};

}  // namespace batchd::controllers::job
