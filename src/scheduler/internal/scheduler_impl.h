// Internal to scheduler/: the Scheduler reconciler, declared here so its
// definitions can live in three files by concern: scheduler.cc (the queue,
// informer handlers, decisions and binds), scheduler_gangs.cc (pod groups:
// one-pass gang placement, PodGroup status, the wait timeout, disruptionMode
// PodGroup) and scheduler_preemption.cc (DefaultPreemption's effects:
// nominations, victims, whole-gang eviction).
//
// Thread-safety: the informer handlers and Reconcile may run on different
// threads; every member below `mu_` is guarded by it. API writes happen in
// Reconcile outside the lock.
#pragma once

#include <deque>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/synchronization/mutex.h"
#include "api/meta/conditions.h"
#include "reconcile/context.h"
#include "scheduler/internal/cache.h"
#include "scheduler/internal/gang.h"
#include "scheduler/internal/preemption.h"
#include "scheduler/scheduler.h"

namespace batchd::scheduler::internal {

using client::ObjectRef;
using reconcile::Result;
namespace sched_api = api::scheduling_v1alpha2;

inline constexpr char kQueueKey[] = "schedule";

struct QueueKey {
  int32_t priority;
  absl::Time created;
  std::string key;
  bool gang = false;  // Has a `group_key`: popped as its whole group. Not ordered on.
  bool operator<(const QueueKey& o) const {
    if (priority != o.priority) return priority > o.priority;
    if (created != o.created) return created < o.created;
    return key < o.key;
  }
};

inline QueueKey KeyFor(const PodInfo& p) {
  return {p.priority, p.created, p.key, !p.group_key.empty()};
}

class Scheduler : public reconcile::Reconciler {
 public:
  Scheduler(reconcile::ControllerContext& ctx, SchedulerOptions opts)
      : ctx_(ctx),
        opts_(std::move(opts)),
        pods_(ctx.informers.For("", "v1", "pods")),
        nodes_(ctx.informers.For("", "v1", "nodes")),
        pod_groups_(ctx.informers.For(sched_api::kGroup, sched_api::kVersion,
                                      sched_api::kPodGroups)) {}

  void set_controller(reconcile::Controller* c) { controller_ = c; }

  void OnPod(const ObjectRef& obj);
  void OnPodDelete(const ObjectRef& obj);
  void OnNode(const ObjectRef& obj);
  void OnNodeDelete(const ObjectRef& obj);
  void OnNamespace(const ObjectRef& obj, bool deleted);
  // A PodGroup or Workload was added or changed (its policy) or deleted.
  void OnPolicyObject(const ObjectRef& obj, bool is_pod_group);
  void OnPolicyObjectDelete(const ObjectRef& obj, bool is_pod_group);
  absl::StatusOr<Result> Reconcile(const std::string& key) override;

 private:
  struct Pending {
    std::shared_ptr<const PodInfo> info;
    bool active = false;
    absl::Time unschedulable_since;
  };
  // A condition (PodGroupScheduled, DisruptionTarget) to write on a PodGroup.
  struct GroupWrite {
    std::string ns, name;
    api::meta::Condition condition;
  };
  // Pods evicted together (preemption victims, a disrupted pod group): each
  // gets `condition` (DisruptionTarget), a graceful delete with a uid
  // precondition and the event (`event_reason`, `event_message`).
  struct Eviction {
    std::vector<std::string> victims;  // "ns/name".
    api::meta::Condition condition;
    std::string event_reason, event_message;
  };
  struct Decision {
    // The pod decided; null for a group status write or an eviction alone.
    std::shared_ptr<const PodInfo> pod;
    std::string node;
    std::string message;  // When unschedulable.
    std::optional<GroupWrite> group;
    // Preemption: `pod` is nominated to `nominate`; the pods in `unnominate`
    // (lower priority, nominated to the same node) lose their nomination.
    std::string nominate;
    std::vector<std::string> unnominate;
    // `pod` is no longer a preemptor: its nominatedNodeName is removed.
    bool clear_nomination = false;
    std::optional<Eviction> eviction;
  };
  bool Eligible(const PodInfo& p) const {
    return p.scheduler_name == opts_.scheduler_name && !p.deleting && !p.gated &&
           (p.phase == "Pending" || p.phase.empty());
  }
  void Kick() {
    if (controller_ != nullptr) controller_->queue().Add(kQueueKey);
  }
  void ActivateLocked(const std::string& key) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void RemovePendingLocked(const std::string& key) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void AddUnschedulableLocked(const std::string& key, const PodInfo& info) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void RemoveUnschedulableLocked(const std::string& key, const PodInfo& info) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Activates the first unschedulable pod of `signature`, if any.
  void ActivateNextOfLocked(const std::string& signature) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void MoveAllToActiveLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A pod was placed: the pods waiting on required pod affinity get another
  // attempt. Returns whether any pod is active.
  bool WakeAffinityWaitersLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Pops and decides the next pod; false when the active queue is empty.
  bool NextDecisionLocked(Decision* d) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Binds `binds` with one Binder::BindMany, then FinishBind for each;
  // returns the first error.
  absl::Status BindAll(const std::vector<Decision>& binds);
  // After a bind: the Scheduled Event, or the pod back in the queue.
  absl::Status FinishBind(const Decision& d, absl::Status st);
  // Tries preemption for the unschedulable `p` (DefaultPreemption's
  // PostFilter); fills `d` when victims are chosen, and clears a nomination
  // that no longer holds. Returns what its message says about preemption.
  PreemptionNote PreemptLocked(const PodInfo& p, Decision* d) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The gangs among the placed pods, for the victim search: whole gangs only.
  Gangs GangsLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Writes `pod`'s status.nominatedNodeName (`node`, or removes it when empty).
  void WriteNomination(const std::string& key, const std::string& node);
  // Evicts `e.victims`: DisruptionTarget condition, graceful delete, event.
  void ExecuteEviction(const Eviction& e);
  void RecordUnschedulable(const PodInfo& p, const std::string& message);
  // Moves unschedulable pods waiting longer than `unschedulable_flush` back to active.
  void FlushDueLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  Result NextResultLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Gang scheduling (pods with a `group_key`).
  // The state of `p`'s group, created on first use.
  GroupState& GroupLocked(const PodInfo& p) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Drops `key` from group `group_key` (and the group once it is empty):
  // from its pending members, from its bound ones when `bound`, and from its
  // disrupted ones when `deleted` (the pod is gone from the API).
  void UntrackLocked(const std::string& group_key, const std::string& key, bool bound,
                     bool deleted = false) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A pending, schedulable member was added or changed; returns whether to kick.
  bool OnGroupPodLocked(std::shared_ptr<const PodInfo> info) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Decides the whole group of `head` in one pass; the decisions go to `ready_`.
  void ScheduleGroupLocked(const PodInfo& head) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void ParkGroupLocked(const std::string& group_key, GroupState& g,
                       const std::vector<std::shared_ptr<const PodInfo>>& pods,
                       const std::string& message) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Gives a parked group another attempt; returns whether it was parked.
  bool WakeGroupLocked(const std::string& group_key) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Queues a PodGroupScheduled write when it says something new.
  void GroupStatusLocked(GroupState& g, bool scheduled, const std::string& message)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Queues DisruptionTarget=True (`reason`, `message`) for `g` if it is a PodGroup.
  void GroupDisruptionLocked(const GroupState& g, const std::string& reason,
                             const std::string& message) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // disruptionMode PodGroup: `trigger`, a member with DisruptionTarget=True
  // (preempted, evicted from a failed node), takes every other member of its
  // group with it, as one decision queued to `ready_`. Returns whether one was.
  bool DisruptGroupLocked(const PodInfo& trigger) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void FlushDueGroupsLocked(absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void WriteGroupStatus(const GroupWrite& w);

  reconcile::ControllerContext& ctx_;
  const SchedulerOptions opts_;
  client::Informer& pods_;
  client::Informer& nodes_;
  client::Informer& pod_groups_;
  reconcile::Controller* controller_ = nullptr;

  absl::Mutex mu_;
  internal::Cache cache_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, Pending> pending_ ABSL_GUARDED_BY(mu_);
  std::set<QueueKey> active_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_set<std::string> unschedulable_ ABSL_GUARDED_BY(mu_);
  // The unschedulable pods grouped by signature, each group in queue order.
  // Pods of one signature have identical constraints, so when capacity frees
  // only each group's first pod is retried; the next follows when it binds.
  // A freed slot then costs O(groups) instead of O(pending pods).
  absl::flat_hash_map<std::string, std::set<QueueKey>> unschedulable_by_signature_ ABSL_GUARDED_BY(mu_);
  absl::Time next_flush_ ABSL_GUARDED_BY(mu_) = absl::InfiniteFuture();  // No unschedulable pod is due before.
  // Failure memo for pods with equal constraints; valid for one cache generation.
  uint64_t memo_generation_ ABSL_GUARDED_BY(mu_) = 0;
  absl::flat_hash_map<std::string, internal::FitError> memo_ ABSL_GUARDED_BY(mu_);
  // Unschedulable pods that failed with required pod affinity terms: any
  // placement may satisfy them. Bound: a subset of `pending_`.
  absl::flat_hash_set<std::string> affinity_waiters_ ABSL_GUARDED_BY(mu_);

  // Gang scheduling. Only pods of a group and PodGroup / Workload events
  // touch these; other pods never look at them.
  absl::flat_hash_map<std::string, GroupState> groups_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_set<std::string> parked_groups_ ABSL_GUARDED_BY(mu_);
  // No parked group is due (flush or timeout) before.
  absl::Time next_group_due_ ABSL_GUARDED_BY(mu_) = absl::InfiniteFuture();
  // Policies of the PodGroups and Workloads seen, by PodGroupPolicyKey /
  // WorkloadPolicyKey.
  absl::flat_hash_map<std::string, internal::PolicyObject> policies_ ABSL_GUARDED_BY(mu_);
  // Decisions made for a whole group, handed out before the next pod is popped.
  std::deque<Decision> ready_ ABSL_GUARDED_BY(mu_);
};

}  // namespace batchd::scheduler::internal
