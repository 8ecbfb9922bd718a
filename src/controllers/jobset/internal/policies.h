// Internal to controllers/jobset: the JobSet policies as pure decisions over
// a JobSet's view and its classified child Jobs (upstream's
// failure_policy.go, success_policy.go, startup_policy.go, depends_on.go and
// ttl_after_finished.go), so each is unit-tested without a server.
//
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "api/jobset/v1alpha2/jobset_view.h"
#include "api/jobset/v1alpha2/jobset_writers.h"
#include "controllers/jobset/internal/child_jobs.h"

namespace batchd::controllers::jobset::internal {

using Counts = std::vector<api::jobset_v1alpha2::ReplicatedJobCounts>;

// What the failure policy does about the current attempt's failed Jobs.
struct FailureDecision {
  enum class Kind { kFail, kRestart };
  Kind kind = Kind::kFail;
  // kRestart: whether the restart counts towards maxRestarts
  // (RestartJobSet) or not (RestartJobSetAndIgnoreMaxRestarts).
  bool counts_towards_max = false;
  // kFail: the Failed condition. kRestart: the RestartingJobSet condition.
  std::string reason;
  std::string message;
  // kRestart: the Warning event of the action.
  std::string action_reason;
  std::string action_message;
  std::string job;  // The failed Job the decision is about.
};

// REQUIRES: `jobs.failed` is not empty.
// No failure policy: fail (FailedJobs). Otherwise the first rule (in order)
// that matches a failed Job — by its Failed condition's reason (one of
// onJobFailureReasons), message (some RE2 pattern of
// onJobFailureMessagePatterns matches part of it) and replicated job
// (targetReplicatedJobs); empty lists match anything — acts on the Job of
// those that failed earliest; without a match the action is RestartJobSet.
// RestartJobSet fails the JobSet (ReachedMaxRestarts) once
// restartsCountTowardsMax >= maxRestarts.
FailureDecision DecideFailure(const api::jobset_v1alpha2::JobSetSpecView& spec,
                              const api::jobset_v1alpha2::JobSetStatusView& status,
                              const ChildJobs& jobs);

// The success policy holds: Any — one targeted Job succeeded; All — every
// Job of the targeted replicated jobs did.
bool SuccessPolicyMet(const api::jobset_v1alpha2::JobSetSpecView& spec, const ChildJobs& jobs);

// Every dependsOn of `rjob` is reached: Ready — ready + succeeded + failed
// Jobs of the dependency == its replicas; Complete — succeeded == replicas.
bool DependenciesReached(const api::jobset_v1alpha2::ReplicatedJobView& rjob,
                         const api::jobset_v1alpha2::JobSetSpecView& spec, const Counts& counts);

// InOrder startup: every Job of the replicated job is ready, succeeded or
// failed (false when it has no counts).
bool AllReplicasStarted(int32_t replicas, const api::jobset_v1alpha2::ReplicatedJobCounts* c);

// Every Job of the JobSet is ready or succeeded.
bool AllJobsReady(const api::jobset_v1alpha2::JobSetSpecView& spec, const Counts& counts);

// How long until a finished JobSet with ttlSecondsAfterFinished expires
// (<= 0: expired); nullopt when it has no TTL or no finish time.
std::optional<absl::Duration> TtlRemaining(const api::jobset_v1alpha2::JobSetView& jobset,
                                           absl::Time now);

}  // namespace batchd::controllers::jobset::internal
