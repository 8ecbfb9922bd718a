// Status writers for the Kueue objects the queue manager updates: the
// ClusterQueue, LocalQueue and Cohort statuses it recomputes every cycle, and
// a Workload's admission, requeue state and conditions. The writers are the
// one place these status fields are spelt (as queue_views.h is for reads);
// they take typed values and build the JSON.
//
// A write starts from a StatusUpdate: a copy of the object's current
// `status` only, never of the whole object (a Workload's pod templates, a
// queue's spec). Writers edit that copy; the caller asks `changed()` and
// builds the object to send only when there is something to write, so a
// cycle that changes nothing copies no object:
//
//   api::kueue::StatusUpdate update(*cq_ref);
//   api::kueue::SetClusterQueueStatus(update, values, now);
//   if (update.changed()) client.UpdateStatus(kind, std::move(update).Build(api_version, kind));
//
// Thread-safety: a StatusUpdate is a value owned by one caller; the free
// functions are pure.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/time/time.h"
#include "api/field_error.h"
#include "api/kueue/queue_views.h"
#include "api/kueue/topology_assignment.h"
#include "api/meta/conditions.h"
#include "api/resource/amount.h"

namespace batchd::api::kueue {

// Kueue's rendering of a resource amount in a status: cpu as DecimalSI,
// memory, ephemeral-storage and hugepages-* as BinarySI when a whole number
// of bytes, everything else DecimalSI.
Json ResourceQuantityJson(std::string_view resource, Amount amount);

// The new status of one object, built from a copy of its current status.
class StatusUpdate {
 public:
  // REQUIRES: `obj` outlives the update (hold its ObjectRef).
  explicit StatusUpdate(const Json& obj);

  // The status being built (an object).
  Json& status() { return status_; }
  const Json& status() const { return status_; }
  // metadata.generation of `obj`: the observedGeneration conditions record.
  int64_t generation() const { return generation_; }
  // Whether the status differs from the object's current one.
  bool changed() const;
  // `obj` with the new status and the given type meta, for UpdateStatus:
  // copies every member of `obj` but its old status (the one copy of the
  // object, made only for a write).
  Json Build(std::string_view api_version, std::string_view kind) &&;

 private:
  const Json* obj_;
  Json status_;
  int64_t generation_ = 0;
};

// Sets a status condition by metav1's rules (api/meta/conditions.h,
// ConditionShape::kMeta, observedGeneration from the object); returns
// whether it changed.
bool SetCondition(StatusUpdate& update, const meta::Condition& condition, absl::Time now);
// Removes the condition of `type`; returns whether there was one.
bool RemoveCondition(StatusUpdate& update, std::string_view type);

// --- ClusterQueue, LocalQueue, Cohort ---------------------------------------

struct ResourceUsageStatus {
  std::string_view name;
  Amount total;
  std::optional<Amount> borrowed;  // ClusterQueues write it; LocalQueues do not.
};

// One entry of flavorsReservation / flavorsUsage.
struct FlavorUsageStatus {
  std::string_view name;
  std::vector<ResourceUsageStatus> resources;
};

// The queue's `Active` condition.
struct ActiveCondition {
  bool active = false;
  std::string_view reason;
  std::string_view message;
};

struct ClusterQueueStatusValues {
  int64_t pending_workloads = 0;
  int64_t reserving_workloads = 0;
  int64_t admitted_workloads = 0;
  // Written as both flavorsReservation and flavorsUsage (batchd reserves
  // what it admits).
  std::vector<FlavorUsageStatus> flavors_usage;
  std::optional<int64_t> weighted_share;  // fairSharing.weightedShare; nullopt: not written.
  ActiveCondition active;
};
void SetClusterQueueStatus(StatusUpdate& update, const ClusterQueueStatusValues& values,
                           absl::Time now);

struct LocalQueueStatusValues {
  int64_t pending_workloads = 0;
  int64_t reserving_workloads = 0;
  int64_t admitted_workloads = 0;
  std::vector<FlavorUsageStatus> flavors_usage;  // flavorsReservation and flavorsUsage.
  ActiveCondition active;
};
void SetLocalQueueStatus(StatusUpdate& update, const LocalQueueStatusValues& values,
                         absl::Time now);

// status.fairSharing.weightedShare of a Cohort (or ClusterQueue).
void SetFairSharingStatus(StatusUpdate& update, int64_t weighted_share);

// --- Workload ----------------------------------------------------------------

// status.admission.podSetAssignments[*].
struct PodSetAssignmentStatus {
  std::string_view name;
  std::vector<std::pair<std::string_view, std::string_view>> flavors;  // resource -> flavor
  std::vector<ResourceAmount> resource_usage;  // Total over `count` pods.
  int32_t count = 0;
  std::optional<TopologyAssignmentValue> topology;  // written in the v1beta2 form
};

// status.admission.
struct AdmissionStatus {
  std::string_view cluster_queue;
  std::vector<PodSetAssignmentStatus> pod_set_assignments;
};

// Sets status.admission (quota reserved).
void SetAdmission(StatusUpdate& update, const AdmissionStatus& admission);
// Removes status.requeueState.requeueAt (an admitted workload no longer
// backs off), keeping the count.
void ClearRequeueAt(StatusUpdate& update);
// status.requeueState = {count, requeueAt}.
void SetRequeueState(StatusUpdate& update, int32_t count, absl::Time requeue_at);
// Removes status.requeueState.
void ClearRequeueState(StatusUpdate& update);
// status.unhealthyNodes = [{name}...] (nodes of a topology-aware workload
// that failed); an empty list removes the field.
void SetUnhealthyNodes(StatusUpdate& update, const std::vector<std::string>& names);

// The merge patch that sets a Workload's spec.active.
Json ActivePatch(bool active);

}  // namespace batchd::api::kueue
