// JobSetView: the typed view of a jobset.x-k8s.io/v1alpha2 JobSet that the
// JobSet controller reads (see api/meta/object_view.h for what a view is and
// its lifetime rule: it points into the JSON it was parsed from). Absent
// fields read as upstream's Go zero values or defaults.
//
// Only the fields batchd's components use are here; add a field when a
// component needs it, parsed in Parse, never read as a string literal at the
// call site.
//
// Thread-safety: immutable after Parse.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/time/time.h"
#include "api/field_error.h"
#include "api/jobset/v1alpha2/constants.h"
#include "api/meta/object_view.h"

namespace batchd::api::jobset_v1alpha2 {

enum class DependencyStatus { kReady, kComplete };
enum class FailurePolicyAction {
  kUnknown,
  kFailJobSet,
  kRestartJobSet,
  kRestartJobSetAndIgnoreMaxRestarts,
};
enum class RestartStrategy { kRecreate, kBlockingRecreate, kInPlaceRestart, kOther };

struct DependsOnView {
  std::string_view name;
  DependencyStatus status = DependencyStatus::kReady;
};

struct ReplicatedJobView {
  std::string_view name;
  std::string_view group_name;
  int32_t replicas = 1;
  const Json* job_template = nullptr;  // The JobTemplateSpec `template`, or nullptr.
  int32_t parallelism = 1;             // template.spec.parallelism (default 1).
  std::optional<int32_t> completions;  // template.spec.completions.
  std::vector<DependsOnView> depends_on;
};

struct FailurePolicyRuleView {
  std::string_view name;
  FailurePolicyAction action = FailurePolicyAction::kUnknown;
  std::vector<std::string_view> on_job_failure_reasons;
  std::vector<std::string_view> on_job_failure_message_patterns;
  std::vector<std::string_view> target_replicated_jobs;
};

struct FailurePolicyView {
  int32_t max_restarts = 0;
  RestartStrategy restart_strategy = RestartStrategy::kRecreate;
  std::vector<FailurePolicyRuleView> rules;
};

struct SuccessPolicyView {
  bool any = false;  // Operator Any (else All).
  std::vector<std::string_view> target_replicated_jobs;  // Empty: all.
  bool Targets(std::string_view rjob) const;
};

struct CoordinatorView {
  std::string_view replicated_job;
  int64_t job_index = 0;
  int64_t pod_index = 0;
};

// One template of spec.volumeClaimPolicies: the claim "<name>-<jobset>".
struct VolumeClaimView {
  std::string_view name;
  bool delete_with_jobset = true;  // retentionPolicy.whenDeleted Delete (the default).
};

struct JobSetSpecView {
  // spec.failurePolicy.restartStrategy is InPlaceRestart.
  bool InPlaceRestart() const {
    return failure_policy && failure_policy->restart_strategy == RestartStrategy::kInPlaceRestart;
  }

  std::vector<ReplicatedJobView> replicated_jobs;
  bool enable_dns_hostnames = false;  // As upstream: only an explicit true enables.
  std::string_view subdomain;
  bool publish_not_ready_addresses = true;
  SuccessPolicyView success_policy;
  std::optional<FailurePolicyView> failure_policy;
  bool in_order_startup = false;
  bool suspend = false;
  std::optional<CoordinatorView> coordinator;
  std::optional<std::string_view> managed_by;
  std::optional<int32_t> ttl_seconds_after_finished;
  std::vector<VolumeClaimView> volume_claims;
  // Some claim is deleted with the JobSet.
  bool DeletesClaims() const;

  // REQUIRES: `js` is a JobSet that outlives the view.
  static JobSetSpecView Parse(const Json& js);

  const ReplicatedJobView* ReplicatedJob(std::string_view name) const;
  // Σ replicas.
  int64_t GlobalReplicas() const;
  // Σ replicas × parallelism: the pods the JobSet runs at once.
  int64_t TotalPods() const;
};

struct ReplicatedJobStatusView {
  std::string_view name;
  int32_t ready = 0;
  int32_t succeeded = 0;
  int32_t failed = 0;
  int32_t active = 0;
  int32_t suspended = 0;
};

struct JobSetStatusView {
  int32_t restarts = 0;
  int32_t restarts_count_towards_max = 0;
  std::string_view terminal_state;
  // In-place restarts: the attempt every pod runs, and the one given up last.
  std::optional<int32_t> current_in_place_attempt;
  std::optional<int32_t> previous_in_place_attempt;
  std::vector<ReplicatedJobStatusView> replicated_jobs;
  const Json* conditions = nullptr;  // status.conditions; read with api/meta/conditions.h.

  // REQUIRES: `js` outlives the view.
  static JobSetStatusView Parse(const Json& js);

  const ReplicatedJobStatusView* ReplicatedJob(std::string_view name) const;
  // The Completed or Failed condition is True.
  bool Finished() const;
  // The lastTransitionTime of the True Completed / Failed condition; nullopt
  // when not finished or when it has none that parses.
  std::optional<absl::Time> FinishedTime() const;
};

struct JobSetView {
  meta::ObjectMetaView meta;
  JobSetSpecView spec;
  JobSetStatusView status;

  // REQUIRES: `js` outlives the view.
  static JobSetView Parse(const Json& js);

  // spec.network.subdomain, or the JobSet's name (upstream defaults it in
  // the controller so that it works with generateName).
  std::string_view Subdomain() const;
  // spec.managedBy names another controller: this one skips the JobSet.
  bool ManagedByOther() const;
  // "<js>-<rjob>-<jobIdx>-<podIdx>.<subdomain>" of spec.coordinator; "" when unset.
  std::string CoordinatorEndpoint() const;
};

// "<claim>-<jobset>", the claim a volumeClaimPolicies template names.
std::string ClaimName(std::string_view claim, std::string_view jobset);

// "<jobset>-<rjob>-<index>", the name of a child Job.
std::string ChildJobName(std::string_view jobset, std::string_view rjob, int64_t index);

}  // namespace batchd::api::jobset_v1alpha2
