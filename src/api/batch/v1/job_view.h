// JobView: the typed view of a batch/v1 Job that the Job controller, the
// Kueue integration, the TTL controller and the CronJob controller read (see
// api/meta/object_view.h for what a view is and its lifetime rule: it points
// into the JSON it was parsed from).
//
// The spec and the status are parsed separately: the Job controller keeps
// the spec view of the informer's object for a whole sync while it edits a
// working copy's status, and reads that status again as it changes.
//
// Only the fields batchd's components use are here; add a field when a
// component needs it, parsed in Parse, never read as a string literal at the
// call site.
//
// Thread-safety: immutable after Parse.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "absl/time/time.h"
#include "api/core/v1/pod_view.h"
#include "api/field_error.h"
#include "api/meta/object_view.h"

namespace batchd::api::batch_v1 {

// kUnknown: a mode this version does not know (the controller skips the Job).
enum class CompletionMode { kNonIndexed, kIndexed, kUnknown };
enum class PodReplacementPolicy { kTerminatingOrFailed, kFailed };

// spec.podFailurePolicy.rules[*] (batch-apis.md §1.3).
enum class PodFailurePolicyAction { kUnknown, kFailJob, kFailIndex, kIgnore, kCount };
enum class ExitCodesOperator { kUnknown, kIn, kNotIn };

struct PodFailurePolicyOnExitCodes {
  std::string_view container_name;  // "" = any container.
  ExitCodesOperator op = ExitCodesOperator::kUnknown;
  std::vector<int64_t> values;
};

struct PodFailurePolicyOnPodCondition {
  std::string_view type;
  std::string_view status;  // "True" when unset.
};

struct PodFailurePolicyRule {
  PodFailurePolicyAction action = PodFailurePolicyAction::kUnknown;
  std::string_view action_name;  // As written, for messages.
  std::optional<PodFailurePolicyOnExitCodes> on_exit_codes;
  // Set when `onPodConditions` is a list (and `onExitCodes` is absent).
  std::optional<std::vector<PodFailurePolicyOnPodCondition>> on_pod_conditions;
};

// spec.successPolicy.rules[*].
struct SuccessPolicyRule {
  std::optional<std::string_view> succeeded_indexes;
  std::optional<int64_t> succeeded_count;
};

struct JobSpecView {
  int32_t parallelism = 1;
  std::optional<int32_t> completions;  // nullopt: a work-queue Job.
  CompletionMode completion_mode = CompletionMode::kNonIndexed;
  int32_t backoff_limit = 6;
  std::optional<int32_t> backoff_limit_per_index;
  std::optional<int32_t> max_failed_indexes;
  std::optional<int64_t> active_deadline_seconds;
  std::optional<int32_t> ttl_seconds_after_finished;
  bool suspend = false;
  PodReplacementPolicy pod_replacement_policy = PodReplacementPolicy::kTerminatingOrFailed;
  std::string_view managed_by;
  // Present when spec.podFailurePolicy is an object.
  std::optional<std::vector<PodFailurePolicyRule>> pod_failure_policy;
  // Present when spec.successPolicy.rules is a list.
  std::optional<std::vector<SuccessPolicyRule>> success_policy;
  const Json* pod_template = nullptr;  // spec.template, or nullptr.
  core_v1::RestartPolicy template_restart_policy = core_v1::RestartPolicy::kAlways;

  // REQUIRES: `job` is a Job object that outlives the view.
  static JobSpecView Parse(const Json& job);

  // podReplacementPolicy Failed, or a podFailurePolicy: a pod is replaced
  // only once it is fully terminal.
  bool OnlyReplaceFailedPods() const {
    return pod_replacement_policy == PodReplacementPolicy::kFailed ||
           pod_failure_policy.has_value();
  }
};

struct JobStatusView {
  std::string_view start_time;       // RFC 3339, "" when unset.
  std::string_view completion_time;  // RFC 3339, "" when unset.
  int32_t active = 0;
  int32_t succeeded = 0;
  int32_t failed = 0;
  std::optional<int32_t> ready;
  std::optional<int32_t> terminating;
  std::string_view completed_indexes;
  std::optional<std::string_view> failed_indexes;
  // status.uncountedTerminatedPods: pod UIDs; `has_uncounted` tells an
  // absent field from an empty one.
  bool has_uncounted = false;
  std::vector<std::string_view> uncounted_succeeded;
  std::vector<std::string_view> uncounted_failed;
  const Json* conditions = nullptr;  // status.conditions; read with api/meta/conditions.h.

  // REQUIRES: `job` outlives the view.
  static JobStatusView Parse(const Json& job);

  std::optional<absl::Time> StartTime() const;
  std::optional<absl::Time> CompletionTime() const;
  // When the Job finished: the lastTransitionTime of the first True Complete
  // or Failed condition (in list order) that has a parsable one; nullopt
  // when none has.
  std::optional<absl::Time> FinishedTime() const;
};

struct JobView {
  meta::ObjectMetaView meta;
  JobSpecView spec;
  JobStatusView status;

  // REQUIRES: `job` outlives the view.
  static JobView Parse(const Json& job);

  // The Complete or Failed condition is True: the Job is finished.
  bool Finished() const;
};

}  // namespace batchd::api::batch_v1
