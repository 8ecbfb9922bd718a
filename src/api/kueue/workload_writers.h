// Writers of Kueue v1beta2 Workloads for the job integrations: the one place
// where the JSON a controller builds or edits on a Workload is spelled out
// (reads go through api/kueue/queue_views.h). A new Workload for a job and
// its pod sets, the queue and priority the integration sets on it, and the
// status edits of a job's lifecycle: PodsReady, Finished, and the release
// of the reservation once an evicted job's pods are gone.
//
// Conditions are written through api/meta/conditions.h (metav1 shape).
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
#include "api/kueue/kueue.h"

namespace batchd::api::kueue {

// Workload condition types beside kueue.h's kQuotaReserved, kAdmitted and
// kFinished.
inline constexpr char kEvicted[] = "Evicted";
inline constexpr char kPodsReady[] = "PodsReady";
inline constexpr char kRequeued[] = "Requeued";

// A `spec.podSets` entry: {name, count, minCount?, template}.
Json NewPodSet(std::string_view name, int32_t count, std::optional<int32_t> min_count,
               Json pod_template);

// A pod set's `topologyRequest` (Kueue's PodSetTopologyRequest); empty
// strings and nullopt are left out.
struct PodSetTopologyRequestValue {
  std::string required;
  std::string preferred;
  bool unconstrained = false;
  std::string pod_index_label;
  std::string slice_required_topology;
  std::optional<int32_t> slice_size;
  // Multi-layer slices (podsetSliceRequiredTopologyConstraints), outermost
  // first; used instead of slice_required_topology / slice_size.
  struct SliceLayer {
    std::string topology;
    int32_t size = 0;
    friend bool operator==(const SliceLayer&, const SliceLayer&) = default;
  };
  std::vector<SliceLayer> slice_layers;
  std::string pod_set_group_name;
  std::string sub_group_index_label;
  std::optional<int32_t> sub_group_count;
  friend bool operator==(const PodSetTopologyRequestValue&, const PodSetTopologyRequestValue&) =
      default;
};
// pod_set.topologyRequest = request.
void SetPodSetTopologyRequest(Json& pod_set, const PodSetTopologyRequestValue& request);

// Kueue's UseLimitsAsMissingRequestsInPod on a pod template: each container
// and init container that has limits gets a request for every resource it
// limits without requesting. A pod set's template carries the requests
// quota is counted by.
void UseLimitsAsMissingRequests(Json& pod_template);

// A new v1beta2 Workload `ns/name` for `queue_name` with `pod_sets` (entries
// as NewPodSet builds them). Labels, owner references and priority are the
// caller's to add.
Json NewWorkload(std::string_view ns, std::string_view name, std::string_view queue_name,
                 std::vector<Json> pod_sets);

// spec.podSets = pod_sets.
void SetPodSets(Json& wl, std::vector<Json> pod_sets);
// spec.queueName = queue_name.
void SetQueueName(Json& wl, std::string_view queue_name);

// Where a Workload's priority comes from (spec.priorityClassRef).
enum class PriorityClassSource {
  kWorkloadPriorityClass,  // kueue.x-k8s.io WorkloadPriorityClass
  kPriorityClass,          // scheduling.k8s.io PriorityClass
};
// spec.priorityClassRef names `priority_class` (a WorkloadPriorityClass or a
// PriorityClass object, as `source` says) and spec.priority is its `value`.
void SetPriorityClass(Json& wl, PriorityClassSource source, const Json& priority_class);
// spec.priority = priority, without a class reference.
void SetPriority(Json& wl, int32_t priority);

// Finished=True, reason Succeeded or Failed, with the job's message.
// Returns whether the condition changed.
bool SetFinished(Json& wl, bool succeeded, std::string_view message, absl::Time now);

// The PodsReady condition an integration reports for an admitted job.
enum class PodsReadyState {
  kReady,            // True: every pod is ready or succeeded.
  kWaitForStart,     // False: the pods have not all started yet.
  kWaitForRecovery,  // False: they had, and some are not ready any more.
};
// Returns whether the condition changed.
bool SetPodsReady(Json& wl, PodsReadyState state, absl::Time now);

// Releases an evicted Workload's reservation once its job's pods are gone:
// status.admission is cleared, QuotaReserved=False (Pending) with the
// eviction's message, Admitted=False (NoReservation), and Requeued with the
// eviction's reason and message, True when the Workload is active (goes
// back to its queue), False when it is not.
void ClearReservation(Json& wl, std::string_view eviction_reason,
                      std::string_view eviction_message, bool requeue, absl::Time now);

}  // namespace batchd::api::kueue
