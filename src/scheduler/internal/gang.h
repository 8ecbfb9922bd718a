// Internal to scheduler/: gang (all-or-nothing) placement over the cache and
// the bookkeeping of pod groups. A pod joins a group through
// `spec.schedulingGroup.podGroupName` (a scheduling.k8s.io PodGroup) or
// `spec.workloadRef` (a v1alpha1 Workload pod group, one group per
// (workload, podGroup, replica key)); the group's policy comes from that
// object. `PlaceGang` decides one group in one pass: either at least
// minCount members (bound ones included) are placed at once, or nothing is
// and the cache is left as it was. Pure: no I/O, no clock.
//
// Thread-safety: none; the Scheduler serializes access with its mutex.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/time/time.h"
#include "api/scheduling/v1alpha2/scheduling_v1alpha2.h"
#include "scheduler/internal/cache.h"

namespace batchd::scheduler::internal {

using api::scheduling_v1alpha2::GroupPolicy;

// The key of the object that holds a group's policy: "pg/<ns>/<name>" for a
// PodGroup, "wl/<ns>/<name>" for a Workload.
std::string PodGroupPolicyKey(const std::string& ns, const std::string& name);
std::string WorkloadPolicyKey(const std::string& ns, const std::string& name);
// The group key of `pod` ("" when it names no group), as `PodInfo::group_key`.
std::string GroupKeyOf(const api::Json& pod);

// What the scheduler tracks of one group.
struct GroupState {
  std::string policy_key;   // PodGroupPolicyKey / WorkloadPolicyKey.
  std::string pod_group;    // The Workload's pod group ("" for a PodGroup).
  std::string ns, name;     // The PodGroup or Workload.
  bool is_pod_group = false;
  absl::flat_hash_set<std::string> pending;  // Unbound, schedulable members.
  absl::flat_hash_set<std::string> bound;    // Bound or assumed, not terminal.
  // Parked: the last attempt placed nothing; retried on cluster changes,
  // new members, policy changes, the periodic flush and the gang timeout.
  bool parked = false;
  absl::Time parked_since = absl::InfinitePast();
  // Start of the current wait for placement (the first failed attempt).
  absl::Time waiting_since = absl::InfiniteFuture();
  bool scheduled_recorded = false;   // PodGroupScheduled=True written.
  std::string status_message;        // Last PodGroupScheduled=False message written.
  // Members already taken in a group disruption (a whole-gang preemption or
  // disruptionMode PodGroup), so they do not trigger another one; each is
  // forgotten when the pod is deleted (bounded by the group's pods).
  absl::flat_hash_set<std::string> disrupted;
  bool Empty() const { return pending.empty() && bound.empty() && disrupted.empty(); }
};

// The policies of the group-defining objects the scheduler has seen.
struct PolicyObject {
  GroupPolicy pod_group;  // For a PodGroup.
  absl::flat_hash_map<std::string, GroupPolicy> templates;  // For a Workload.
};

// The policy of `g`, or nullopt when its PodGroup / Workload (or the
// Workload's pod group) is missing from `objects`.
std::optional<GroupPolicy> PolicyOf(
    const GroupState& g, const absl::flat_hash_map<std::string, PolicyObject>& objects);

struct GangAttempt {
  // True when the members in `placed` are to bind (they are assumed in the
  // cache); false when the group could not reach minCount and nothing was
  // kept.
  bool admitted = false;
  std::vector<std::pair<std::shared_ptr<const PodInfo>, std::string>> placed;  // (pod, node)
  std::vector<std::shared_ptr<const PodInfo>> unplaced;
  int placeable = 0;        // How many members found a node in the pass.
  std::string fit_message;  // Why the first unplaced member fits nowhere.
};

// Places `members` (in queue order) one by one on `cache`, each seeing the
// ones before it. With `min_count` <= 0 (basic policy) every placed pod is
// kept. Otherwise the placements are kept only when `placeable + bound >=
// min_count`; else they are undone.
GangAttempt PlaceGang(Cache& cache, const std::vector<std::shared_ptr<const PodInfo>>& members,
                      int bound, int min_count);

// "7 of 8 pods can be placed, minCount is 8"; the count includes bound members.
std::string GangShortfallMessage(int placeable, int bound, int total, int min_count);

// Go's time.Duration text for whole seconds ("5m0s", "1h0m0s", "30s"), as
// kube-scheduler prints the Permit timeout; other durations in Abseil's form.
std::string FormatGoDuration(absl::Duration d);

// A gang's pods after the wait timed out, as kube-scheduler rejects the
// waiting pods of a gang at Permit: "rejected due to timeout after waiting
// 5m0s at plugin GangScheduling".
std::string GangTimeoutMessage(absl::Duration timeout);

}  // namespace batchd::scheduler::internal
