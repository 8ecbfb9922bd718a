// QueueingConfig: the fields of Kueue's Configuration file
// (`apiVersion: config.kueue.x-k8s.io/v1beta1|v1beta2`, `kind: Configuration`)
// that batchd applies — waitForPodsReady (with its requeuing strategy),
// fairSharing, manageJobsWithoutQueueName, integrations.frameworks,
// managedJobsNamespaceSelector, integrations.podOptions (namespaceSelector,
// podSelector) and featureGates — parsed with Kueue's defaults for each version. Other fields
// Kueue knows (webhook, metrics, leaderElection, ...) are accepted and
// ignored; fields Kueue does not know are rejected, as Kueue's strict decoder
// does. `QueueingConfig{}` is what `batchd server` runs without `--config`:
// waitForPodsReady and fair sharing off.
//
// Thread-safety: plain value types and a pure parse function.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "api/labels/selector.h"

namespace batchd::controllers::queueing {

enum class RequeuingTimestamp { kEviction, kCreation };

struct RequeuingStrategy {
  RequeuingTimestamp timestamp = RequeuingTimestamp::kEviction;
  // Requeues before the workload is deactivated; nullopt = unlimited.
  std::optional<int32_t> backoff_limit_count;
  int32_t backoff_base_seconds = 60;
  int32_t backoff_max_seconds = 3600;
};

struct WaitForPodsReadyConfig {
  bool enable = false;
  absl::Duration timeout = absl::Minutes(30);
  bool block_admission = false;
  // Measured from the last PodsReady=False after the workload ran; nullopt
  // or zero disables it.
  std::optional<absl::Duration> recovery_timeout;
  RequeuingStrategy requeuing;
};

enum class FairSharingStrategy { kLessThanOrEqualToFinalShare, kLessThanInitialShare };

struct FairSharingConfig {
  bool enable = false;
  std::vector<FairSharingStrategy> preemption_strategies = {
      FairSharingStrategy::kLessThanOrEqualToFinalShare,
      FairSharingStrategy::kLessThanInitialShare};
};

// admissionFairSharing (Kueue's AdmissionFairSharing; its presence enables
// it unless featureGates.AdmissionFairSharing is false).
struct AdmissionFairSharingConfig {
  absl::Duration usage_half_life = absl::ZeroDuration();         // usageHalfLifeTime
  absl::Duration usage_sampling_interval = absl::Minutes(5);     // usageSamplingInterval
  std::map<std::string, double> resource_weights;                // resourceWeights
};

// multiKueue: the MultiKueue admission check's settings (Kueue's
// defaults); dispatcherName AllAtOnce or Incremental (not an external one).
struct MultiKueueSettings {
  absl::Duration gc_interval = absl::Minutes(1);  // 0: no garbage collection
  std::string origin = "multikueue";
  absl::Duration worker_lost_timeout = absl::Minutes(15);
  std::string dispatcher_name = "kueue.x-k8s.io/multikueue-dispatcher-all-at-once";
};

struct QueueingConfig {
  std::string api_version;  // As written; "" for the built-in default.
  WaitForPodsReadyConfig wait_for_pods_ready;
  FairSharingConfig fair_sharing;
  std::optional<AdmissionFairSharingConfig> admission_fair_sharing;
  bool manage_jobs_without_queue_name = false;
  std::vector<std::string> frameworks = {"batch/job", "jobset.x-k8s.io/jobset"};
  std::map<std::string, bool> feature_gates;
  // managedJobsNamespaceSelector (nullopt: Kueue's default, every namespace
  // but kube-system and kueue-system) and the v1beta1
  // integrations.podOptions.namespaceSelector (nullopt: unset); a pod is
  // managed only in a namespace both select.
  std::optional<api::labels::LabelSelector> managed_jobs_namespace_selector;
  std::optional<api::labels::LabelSelector> pod_namespace_selector;
  // integrations.podOptions.podSelector: only pods it selects are managed.
  std::optional<api::labels::LabelSelector> pod_selector;
  // objectRetentionPolicies.workloads.afterFinished: a finished Workload is
  // deleted this long after its Finished condition (nullopt: kept while its
  // owner exists and deleted with it, Kueue's default).
  std::optional<absl::Duration> workload_retention_after_finished;
  MultiKueueSettings multi_kueue;

  bool FrameworkEnabled(std::string_view name) const;
};

// Parses one YAML (or JSON) document. Defaults per version:
//   v1beta2: waitForPodsReady is on unless featureGates.DisableWaitForPodsReady
//            (timeout 30m, blockAdmission false, recoveryTimeout = timeout);
//            a `fairSharing` block enables fair sharing.
//   v1beta1: waitForPodsReady only with `enable: true` (timeout 5m,
//            blockAdmission defaults to enable, no recoveryTimeout);
//            fairSharing needs `enable: true`.
//   both:    requeuing timestamp Eviction, backoff base 60s, max 3600s,
//            unlimited count; frameworks ["batch/job", "jobset.x-k8s.io/jobset"].
// Errors are InvalidArgument naming the field, e.g.
//   "invalid queueing configuration: waitForPodsReady.timeout: Invalid value: \"5x\": ..."
absl::StatusOr<QueueingConfig> ParseQueueingConfig(std::string_view yaml);

// "LessThanOrEqualToFinalShare" / "LessThanInitialShare".
std::string_view FairSharingStrategyName(FairSharingStrategy s);

}  // namespace batchd::controllers::queueing
