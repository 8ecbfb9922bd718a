#include "scheduler/scheduler.h"

#include <algorithm>
#include <deque>
#include <optional>
#include <set>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "api/json_access.h"
#include "api/meta/conditions.h"
#include "api/meta/object_meta.h"
#include "api/meta/time_util.h"
#include "api/scheduling/v1alpha2/scheduling_v1alpha2.h"
#include "registry/errors.h"
#include "scheduler/internal/cache.h"
#include "scheduler/internal/gang.h"
#include "scheduler/internal/preemption.h"

namespace batchd::scheduler {

using api::Json;
using client::ObjectRef;
using internal::GroupPolicy;
using internal::GroupState;
using internal::PodInfo;
using reconcile::Result;
namespace sched_api = api::scheduling_v1alpha2;

absl::Status RegistryBinder::Bind(const std::string& ns, const std::string& name,
                                  const std::string& node) {
  Json binding = {{"apiVersion", "v1"},
                  {"kind", "Binding"},
                  {"metadata", {{"name", name}, {"namespace", ns}}},
                  {"target", {{"apiVersion", "v1"}, {"kind", "Node"}, {"name", node}}}};
  return registry_.Bind(ns, name, binding, registry::WriteOptions{}).status();
}

namespace {

constexpr char kQueueKey[] = "schedule";

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

QueueKey KeyFor(const PodInfo& p) {
  return {p.priority, p.created, p.key, !p.group_key.empty()};
}

// A bound pod matters to the scheduler when it binds, when it ends (its
// resources free) and when it goes away: the status updates in between
// (container states, conditions, the agent's reports) change nothing here, so
// they are not parsed again.
bool BoundAndUnchanged(const Json& old_pod, const Json& pod) {
  auto node = [](const Json& p) -> std::string {
    const Json* spec = p.contains("spec") ? &p["spec"] : nullptr;
    return spec && spec->contains("nodeName") && (*spec)["nodeName"].is_string()
               ? (*spec)["nodeName"].get<std::string>()
               : "";
  };
  auto ended = [](const Json& p) {
    const std::string phase =
        p.contains("status") ? p["status"].value("phase", "") : std::string();
    return phase == "Succeeded" || phase == "Failed";
  };
  const std::string n = node(pod);
  // Deletion starting matters too: a terminating pod is no preemption victim.
  return !n.empty() && node(old_pod) == n && ended(old_pod) == ended(pod) &&
         api::meta::IsBeingDeleted(old_pod) == api::meta::IsBeingDeleted(pod);
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
  // A PodGroupScheduled condition to write on a PodGroup.
  struct GroupWrite {
    std::string ns, name;
    api::meta::Condition condition;
  };
  struct Decision {
    std::shared_ptr<const PodInfo> pod;  // Null for a group status write.
    std::string node;
    std::string message;  // When unschedulable.
    std::optional<GroupWrite> group;
    // Preemption (with `message`): the pod is nominated to `nominate` and
    // `victims` ("ns/name") are to be evicted.
    std::string nominate;
    std::vector<std::string> victims;
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
  // Pops and decides the next pod; false when the active queue is empty.
  bool NextDecisionLocked(Decision* d) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status BindOne(const Decision& d);
  // Tries preemption for the unschedulable `p`; fills `d` when it helps.
  void PreemptLocked(const PodInfo& p, Decision* d) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Writes a preemption decision: nominatedNodeName, then each victim's
  // DisruptionTarget condition, graceful delete and Preempted event.
  void ExecutePreemption(const Decision& d);
  void RecordUnschedulable(const PodInfo& p, const std::string& message);
  // Moves unschedulable pods waiting longer than `unschedulable_flush` back to active.
  void FlushDueLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  Result NextResultLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Gang scheduling (pods with a `group_key`).
  // The state of `p`'s group, created on first use.
  GroupState& GroupLocked(const PodInfo& p) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Drops `key` from group `group_key` (and the group once it is empty).
  void UntrackLocked(const std::string& group_key, const std::string& key, bool bound)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
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

void Scheduler::AddUnschedulableLocked(const std::string& key, const PodInfo& info) {
  if (unschedulable_.insert(key).second) {
    unschedulable_by_signature_[info.signature].insert(KeyFor(info));
  }
}

void Scheduler::RemoveUnschedulableLocked(const std::string& key, const PodInfo& info) {
  if (unschedulable_.erase(key) == 0) return;
  auto g = unschedulable_by_signature_.find(info.signature);
  if (g == unschedulable_by_signature_.end()) return;
  g->second.erase(KeyFor(info));
  if (g->second.empty()) unschedulable_by_signature_.erase(g);
}

void Scheduler::ActivateLocked(const std::string& key) {
  auto it = pending_.find(key);
  if (it == pending_.end() || it->second.active) return;
  RemoveUnschedulableLocked(key, *it->second.info);
  it->second.active = true;
  active_.insert(KeyFor(*it->second.info));
}

void Scheduler::ActivateNextOfLocked(const std::string& signature) {
  auto g = unschedulable_by_signature_.find(signature);
  if (g != unschedulable_by_signature_.end()) ActivateLocked(g->second.begin()->key);
}

void Scheduler::RemovePendingLocked(const std::string& key) {
  auto it = pending_.find(key);
  if (it == pending_.end()) return;
  if (it->second.active) active_.erase(KeyFor(*it->second.info));
  RemoveUnschedulableLocked(key, *it->second.info);
  if (!it->second.info->group_key.empty()) {
    UntrackLocked(it->second.info->group_key, key, /*bound=*/false);
  }
  pending_.erase(it);
}

void Scheduler::MoveAllToActiveLocked() {
  std::vector<std::string> heads;
  heads.reserve(unschedulable_by_signature_.size());
  for (const auto& [signature, group] : unschedulable_by_signature_) {
    heads.push_back(group.begin()->key);
  }
  for (const auto& k : heads) ActivateLocked(k);
  if (!parked_groups_.empty()) {
    std::vector<std::string> groups(parked_groups_.begin(), parked_groups_.end());
    for (const auto& g : groups) WakeGroupLocked(g);
  }
}

void Scheduler::OnPod(const ObjectRef& obj) {
  bool kick = false;
  {
    absl::MutexLock lock(&mu_);
    auto info = internal::ParsePod(*obj, cache_.resources());
    const std::string& key = info->key;
    if (!info->node_name.empty()) {
      RemovePendingLocked(key);
      if (!info->group_key.empty()) {
        if (info->Terminal()) {
          UntrackLocked(info->group_key, key, /*bound=*/true);
        } else {
          GroupLocked(*info).bound.insert(key);
        }
      }
      if (info->Terminal()) {
        if (cache_.RemovePod(key)) {
          MoveAllToActiveLocked();
          kick = !active_.empty();
        }
      } else {
        cache_.AddPod(*info, info->node_name, /*assumed=*/false);
      }
    } else if (!Eligible(*info)) {
      RemovePendingLocked(key);
      cache_.ClearNomination(key);
    } else if (!cache_.IsAssumed(key) && !info->group_key.empty()) {
      kick = OnGroupPodLocked(info);
    } else if (!cache_.IsAssumed(key)) {
      // A nomination made before a restart keeps its room.
      if (!info->nominated_node.empty() && cache_.NominatedNodeOf(key).empty()) {
        cache_.Nominate(*info, info->nominated_node);
      }
      auto it = pending_.find(key);
      if (it == pending_.end()) {
        pending_[key] = Pending{info, false, {}};
        ActivateLocked(key);
        kick = true;
      } else if (it->second.active) {
        active_.erase(KeyFor(*it->second.info));
        it->second.info = info;
        active_.insert(KeyFor(*info));
      } else {
        // Unschedulable: re-file it under its new info (the group and queue
        // position come from it); a changed signature earns a new attempt.
        bool changed = it->second.info->signature != info->signature;
        RemoveUnschedulableLocked(key, *it->second.info);
        it->second.info = info;
        AddUnschedulableLocked(key, *info);
        if (changed) {
          ActivateLocked(key);
          kick = true;
        }
      }
    }
  }
  if (kick) Kick();
}

void Scheduler::OnPodDelete(const ObjectRef& obj) {
  bool kick = false;
  {
    absl::MutexLock lock(&mu_);
    std::string key = client::Informer::KeyOf(*obj);
    RemovePendingLocked(key);
    cache_.ClearNomination(key);
    std::string group_key = internal::GroupKeyOf(*obj);
    if (!group_key.empty()) UntrackLocked(group_key, key, /*bound=*/true);
    if (cache_.RemovePod(key)) {
      MoveAllToActiveLocked();
      kick = !active_.empty();
    }
  }
  if (kick) Kick();
}

void Scheduler::OnNode(const ObjectRef& obj) {
  bool kick = false;
  {
    absl::MutexLock lock(&mu_);
    if (cache_.UpsertNode(*obj)) {
      MoveAllToActiveLocked();
      kick = !active_.empty();
    }
  }
  if (kick) Kick();
}

void Scheduler::OnNodeDelete(const ObjectRef& obj) {
  absl::MutexLock lock(&mu_);
  cache_.RemoveNode(api::meta::GetName(*obj));
}

bool Scheduler::NextDecisionLocked(Decision* d) {
  // A group member at the head takes its whole group; its decisions queue up.
  while (ready_.empty() && !active_.empty() && active_.begin()->gang) {
    std::shared_ptr<const PodInfo> head = pending_[active_.begin()->key].info;
    ScheduleGroupLocked(*head);
  }
  if (!ready_.empty()) {
    *d = std::move(ready_.front());
    ready_.pop_front();
    return true;
  }
  if (active_.empty()) return false;
  std::string key = active_.begin()->key;
  active_.erase(active_.begin());
  Pending& p = pending_[key];
  p.active = false;
  d->pod = p.info;
  d->node.clear();
  if (memo_generation_ != cache_.generation()) {
    memo_.clear();
    memo_generation_ = cache_.generation();
  }
  auto memo = memo_.find(p.info->signature);
  if (memo != memo_.end()) {
    d->message = memo->second.Message();
  } else {
    internal::ScheduleResult r = cache_.Schedule(*p.info);
    if (!r.node.empty()) {
      d->node = r.node;
      cache_.AddPod(*p.info, r.node, /*assumed=*/true);
      const std::string signature = p.info->signature;
      pending_.erase(key);
      memo_generation_ = cache_.generation();  // Assuming frees nothing.
      // There may be room for the next pod like it (it waits in its group).
      ActivateNextOfLocked(signature);
      return true;
    }
    d->message = r.error.Message();
    memo_[p.info->signature] = std::move(r.error);
  }
  // Preemption only for a pod that fits nowhere and outranks some placed pod.
  if (internal::EligibleToPreempt(cache_, *p.info)) PreemptLocked(*p.info, d);
  AddUnschedulableLocked(key, *p.info);
  p.unschedulable_since = ctx_.clock.Now();
  next_flush_ = std::min(next_flush_, p.unschedulable_since + opts_.unschedulable_flush);
  return true;
}

absl::Status Scheduler::BindOne(const Decision& d) {
  const PodInfo& p = *d.pod;
  absl::Status st = opts_.binder->Bind(p.ns, p.name, d.node);
  if (st.ok()) {
    if (opts_.record_events) {
      if (ObjectRef pod = pods_.Get(p.ns, p.name)) {
        ctx_.events.Event(*pod, "Normal", "Scheduled",
                          absl::StrCat("Successfully assigned ", p.key, " to ", d.node));
      }
    }
    return absl::OkStatus();
  }
  absl::MutexLock lock(&mu_);
  cache_.ForgetAssumed(p.key);
  std::string reason = registry::GetPayload(st).reason;
  if (reason == "NotFound" || reason == "Conflict" ||
      st.code() == absl::StatusCode::kNotFound) {
    return absl::OkStatus();  // Deleted or bound elsewhere: the informer will say so.
  }
  if (!p.group_key.empty()) {
    // The member waits again; the ones already bound still count.
    GroupState& g = GroupLocked(p);
    g.bound.erase(p.key);
    g.pending.insert(p.key);
  }
  pending_[p.key] = Pending{d.pod, false, {}};
  ActivateLocked(p.key);
  return st;
}

void Scheduler::PreemptLocked(const PodInfo& p, Decision* d) {
  std::optional<internal::Preemption> pr = internal::FindPreemption(cache_, p);
  if (!pr.has_value()) return;
  d->nominate = pr->node;
  cache_.Nominate(p, pr->node);
  for (const internal::Victim& v : pr->victims) {
    cache_.MarkDeleting(v.key);  // Not chosen again before its deletion is seen.
    d->victims.push_back(v.key);
  }
}

void Scheduler::ExecutePreemption(const Decision& d) {
  const PodInfo& p = *d.pod;
  Json nominate = {{"status", {{"nominatedNodeName", d.nominate}}}};
  (void)ctx_.client.MergePatch(pods_.kind(), p.ns, p.name, nominate, /*status=*/true);
  for (const std::string& key : d.victims) {
    std::vector<std::string> parts = absl::StrSplit(key, absl::MaxSplits('/', 1));
    if (parts.size() != 2) continue;
    ObjectRef victim = pods_.Get(parts[0], parts[1]);
    if (!victim) continue;
    Json conds = api::MemberArray(api::MemberObject(*victim, "status"), "conditions");
    api::meta::Condition c;
    c.type = "DisruptionTarget";
    c.status = api::meta::kConditionTrue;
    c.reason = "PreemptionByScheduler";
    c.message = absl::StrCat(opts_.scheduler_name,
                             ": preempting to accommodate a higher priority pod");
    if (api::meta::SetConditionIn(conds, api::meta::ConditionShape::kPod, c, ctx_.clock.Now())) {
      Json patch = {{"status", {{"conditions", std::move(conds)}}}};
      (void)ctx_.client.MergePatch(pods_.kind(), parts[0], parts[1], patch, /*status=*/true);
    }
    client::DeleteOptions opts;
    opts.precondition_uid = api::meta::GetUid(*victim);  // Its grace period is the pod's.
    absl::Status st = ctx_.client.Delete(pods_.kind(), parts[0], parts[1], opts);
    if (st.ok() && opts_.record_events) {
      ctx_.events.Event(*victim, "Normal", "Preempted",
                        absl::StrCat("Preempted by pod ", p.uid, " on node ", d.nominate));
    }
  }
}

// Writes PodScheduled=False/Unschedulable unless the pod already says so.
void Scheduler::RecordUnschedulable(const PodInfo& p, const std::string& message) {
  // Every retry of a pending pod ends here: most find it already recorded.
  if (!message.empty() && p.unschedulable_message == message) return;
  ObjectRef pod = pods_.Get(p.ns, p.name);
  if (!pod || !pod->contains("status")) return;
  Json conds = (*pod)["status"].value("conditions", Json::array());
  bool found = false;
  for (Json& c : conds) {
    if (c.value("type", "") != "PodScheduled") continue;
    if (c.value("status", "") == "False" && c.value("reason", "") == "Unschedulable" &&
        c.value("message", "") == message) {
      return;
    }
    found = true;
    std::string ltt = c.value("status", "") == "False" ? c.value("lastTransitionTime", "") : "";
    c = {{"type", "PodScheduled"}, {"status", "False"}, {"reason", "Unschedulable"},
         {"message", message}, {"lastProbeTime", nullptr},
         {"lastTransitionTime",
          ltt.empty() ? api::meta::FormatRfc3339(ctx_.clock.Now()) : ltt}};
  }
  if (!found) {
    conds.push_back({{"type", "PodScheduled"}, {"status", "False"}, {"reason", "Unschedulable"},
                     {"message", message}, {"lastProbeTime", nullptr},
                     {"lastTransitionTime", api::meta::FormatRfc3339(ctx_.clock.Now())}});
  }
  Json patch = {{"status", {{"conditions", conds}}}};
  auto r = ctx_.client.MergePatch(pods_.kind(), p.ns, p.name, patch, /*status=*/true);
  if (r.ok() && opts_.record_events) ctx_.events.Event(*pod, "Warning", "FailedScheduling", message);
}

void Scheduler::FlushDueLocked() {
  absl::Time now = ctx_.clock.Now();
  FlushDueGroupsLocked(now);
  if (unschedulable_.empty() || now < next_flush_) return;
  absl::Time earliest = absl::InfiniteFuture();
  std::vector<std::string> due;
  for (const auto& key : unschedulable_) {
    absl::Time at = pending_[key].unschedulable_since + opts_.unschedulable_flush;
    if (at <= now) {
      due.push_back(key);
    } else {
      earliest = std::min(earliest, at);
    }
  }
  for (const auto& key : due) ActivateLocked(key);
  next_flush_ = earliest;
}

Result Scheduler::NextResultLocked() {
  if (!active_.empty() || !ready_.empty()) return Result::After(absl::ZeroDuration());
  absl::Time next = unschedulable_.empty() ? absl::InfiniteFuture() : next_flush_;
  if (!parked_groups_.empty()) next = std::min(next, next_group_due_);
  if (next == absl::InfiniteFuture()) return Result::Done();
  return Result::After(std::max(next - ctx_.clock.Now(), absl::ZeroDuration()));
}

absl::StatusOr<Result> Scheduler::Reconcile(const std::string&) {
  {
    absl::MutexLock lock(&mu_);
    FlushDueLocked();
  }
  absl::Status first_error;
  for (int i = 0; i < opts_.batch_size; ++i) {
    Decision d;
    {
      absl::MutexLock lock(&mu_);
      if (!NextDecisionLocked(&d)) break;
    }
    if (d.group.has_value()) {
      WriteGroupStatus(*d.group);
    } else if (!d.node.empty()) {
      first_error = BindOne(d);
      if (!first_error.ok()) break;  // Retried with the queue's backoff, not in a loop.
    } else {
      if (!d.nominate.empty()) ExecutePreemption(d);
      RecordUnschedulable(*d.pod, d.message);
    }
  }
  if (!first_error.ok()) return first_error;
  absl::MutexLock lock(&mu_);
  return NextResultLocked();
}

GroupState& Scheduler::GroupLocked(const PodInfo& p) {
  auto [it, inserted] = groups_.try_emplace(p.group_key);
  GroupState& g = it->second;
  if (inserted) {
    // "pg/<ns>/<name>" or "wl/<ns>/<name>/<podGroup>/<replicaKey>" (GroupKeyOf).
    std::vector<std::string> parts = absl::StrSplit(p.group_key, '/');
    g.is_pod_group = parts[0] == "pg";
    g.ns = parts.size() > 1 ? parts[1] : "";
    g.name = parts.size() > 2 ? parts[2] : "";
    g.pod_group = !g.is_pod_group && parts.size() > 3 ? parts[3] : "";
    g.policy_key = g.is_pod_group ? internal::PodGroupPolicyKey(g.ns, g.name)
                                  : internal::WorkloadPolicyKey(g.ns, g.name);
  }
  return g;
}

void Scheduler::UntrackLocked(const std::string& group_key, const std::string& key, bool bound) {
  auto it = groups_.find(group_key);
  if (it == groups_.end()) return;
  it->second.pending.erase(key);
  if (bound) it->second.bound.erase(key);
  if (it->second.Empty()) {
    parked_groups_.erase(group_key);
    groups_.erase(it);
  }
}

bool Scheduler::OnGroupPodLocked(std::shared_ptr<const PodInfo> info) {
  const std::string key = info->key;
  GroupState& g = GroupLocked(*info);
  g.pending.insert(key);
  g.bound.erase(key);
  auto it = pending_.find(key);
  if (it == pending_.end()) {
    // A new member may complete the group: the whole group is tried again.
    pending_[key] = Pending{std::move(info), false, {}};
    g.parked = false;
    parked_groups_.erase(pending_[key].info->group_key);
    ActivateLocked(key);
    return true;
  }
  if (it->second.active) active_.erase(KeyFor(*it->second.info));
  it->second.info = std::move(info);
  if (it->second.active) active_.insert(KeyFor(*it->second.info));
  return false;
}

void Scheduler::ScheduleGroupLocked(const PodInfo& head) {
  const std::string group_key = head.group_key;
  GroupState& g = GroupLocked(head);
  g.pending.insert(head.key);
  g.parked = false;
  parked_groups_.erase(group_key);
  // 1. The pending members, in queue order, off the active queue.
  std::vector<std::shared_ptr<const PodInfo>> members;
  for (const std::string& k : g.pending) {
    auto it = pending_.find(k);
    if (it == pending_.end()) continue;
    if (it->second.active) {
      active_.erase(KeyFor(*it->second.info));
      it->second.active = false;
    }
    members.push_back(it->second.info);
  }
  std::sort(members.begin(), members.end(),
            [](const auto& a, const auto& b) { return KeyFor(*a) < KeyFor(*b); });
  // 2. The policy: without its PodGroup / Workload the group stays pending.
  std::optional<GroupPolicy> policy = internal::PolicyOf(g, policies_);
  if (!policy.has_value()) {
    ParkGroupLocked(group_key, g, members,
                    g.is_pod_group
                        ? absl::StrCat("waiting for pod's pod group \"", g.name,
                                       "\" to appear in scheduling queue")
                        : absl::StrCat("waiting for pod's workload \"", g.name, "\" (pod group \"",
                                       g.pod_group, "\") to appear in scheduling queue"));
    return;
  }
  const int bound = static_cast<int>(g.bound.size());
  const int total = static_cast<int>(members.size()) + bound;
  const int min_count = policy->gang ? policy->min_count : 0;
  // 3. The quorum: a gang waits until minCount of its pods exist.
  if (total < min_count) {
    GroupStatusLocked(g, false, absl::StrCat(total, " of ", min_count,
                                             " pods exist, minCount is ", min_count));
    ParkGroupLocked(group_key, g, members,
                    "waiting for minCount pods from a gang to appear in scheduling queue");
    return;
  }
  // 4. One placement pass: at least minCount together, or nothing.
  internal::GangAttempt a = internal::PlaceGang(cache_, members, bound, min_count);
  if (a.admitted) {
    for (auto& [pod, node] : a.placed) {
      pending_.erase(pod->key);
      g.pending.erase(pod->key);
      g.bound.insert(pod->key);
      ready_.push_back(Decision{pod, node, "", std::nullopt});
    }
    g.waiting_since = absl::InfiniteFuture();
    if (policy->gang) {
      GroupStatusLocked(g, true, absl::StrCat(g.bound.size(), " pods placed, minCount is ",
                                              min_count));
    }
    if (!a.unplaced.empty()) ParkGroupLocked(group_key, g, a.unplaced, a.fit_message);
    return;
  }
  // 5. Too few fit: nothing binds, nothing is held; the wait is timed.
  const absl::Time now = ctx_.clock.Now();
  if (g.waiting_since == absl::InfiniteFuture()) g.waiting_since = now;
  std::string why = internal::GangShortfallMessage(a.placeable, bound, total, min_count);
  if (now >= g.waiting_since + opts_.gang_timeout) {
    why = absl::StrCat("timed out after ", absl::FormatDuration(opts_.gang_timeout),
                       " waiting for the gang: ", why);
    g.waiting_since = absl::InfiniteFuture();  // The next attempt starts a new wait.
  }
  GroupStatusLocked(g, false, why);
  ParkGroupLocked(group_key, g, members,
                  absl::StrCat("pod group \"", g.name, g.pod_group.empty() ? "" : "/",
                               g.pod_group, "\": ", why, "; ", a.fit_message));
}

void Scheduler::ParkGroupLocked(const std::string& group_key, GroupState& g,
                                const std::vector<std::shared_ptr<const PodInfo>>& pods,
                                const std::string& message) {
  g.parked = true;
  g.parked_since = ctx_.clock.Now();
  parked_groups_.insert(group_key);
  next_group_due_ = std::min({next_group_due_, g.parked_since + opts_.unschedulable_flush,
                              g.waiting_since + opts_.gang_timeout});
  for (const auto& pod : pods) ready_.push_back(Decision{pod, "", message, std::nullopt});
}

bool Scheduler::WakeGroupLocked(const std::string& group_key) {
  auto it = groups_.find(group_key);
  if (it == groups_.end() || !it->second.parked) return false;
  it->second.parked = false;
  parked_groups_.erase(group_key);
  if (it->second.pending.empty()) return false;
  ActivateLocked(*it->second.pending.begin());  // Its attempt takes the whole group.
  return true;
}

void Scheduler::GroupStatusLocked(GroupState& g, bool scheduled, const std::string& message) {
  if (!g.is_pod_group || g.scheduled_recorded) return;  // True once, then never False.
  if (!scheduled && g.status_message == message) return;
  api::meta::Condition c;
  c.type = sched_api::kPodGroupScheduled;
  c.status = scheduled ? api::meta::kConditionTrue : api::meta::kConditionFalse;
  c.reason = scheduled ? sched_api::kReasonScheduled : sched_api::kReasonUnschedulable;
  c.message = message;
  if (scheduled) {
    g.scheduled_recorded = true;
  } else {
    g.status_message = message;
  }
  ready_.push_back(Decision{nullptr, "", "", GroupWrite{g.ns, g.name, std::move(c)}});
}

void Scheduler::FlushDueGroupsLocked(absl::Time now) {
  if (parked_groups_.empty() || now < next_group_due_) return;
  absl::Time earliest = absl::InfiniteFuture();
  std::vector<std::string> due;
  for (const std::string& key : parked_groups_) {
    const GroupState& g = groups_[key];
    absl::Time at = std::min(g.parked_since + opts_.unschedulable_flush,
                             g.waiting_since + opts_.gang_timeout);
    if (at <= now) {
      due.push_back(key);
    } else {
      earliest = std::min(earliest, at);
    }
  }
  for (const auto& key : due) WakeGroupLocked(key);
  next_group_due_ = earliest;
}

void Scheduler::WriteGroupStatus(const GroupWrite& w) {
  ObjectRef pg = pod_groups_.Get(w.ns, w.name);
  if (!pg) return;
  const Json* current = api::meta::FindCondition(*pg, sched_api::kPodGroupScheduled);
  if (current != nullptr && api::StringMember(*current, "status") == api::meta::kConditionTrue) {
    return;  // Once scheduled, a group does not go back (the KEP's rule).
  }
  Json conds = api::MemberArray(api::MemberObject(*pg, "status"), "conditions");
  int64_t generation = api::IntMember(api::MemberObject(*pg, "metadata"), "generation", 0);
  if (!api::meta::SetConditionIn(conds, api::meta::ConditionShape::kMeta, w.condition,
                                 ctx_.clock.Now(), generation)) {
    return;
  }
  Json patch = {{"status", {{"conditions", std::move(conds)}}}};
  (void)ctx_.client.MergePatch(pod_groups_.kind(), w.ns, w.name, patch, /*status=*/true);
}

void Scheduler::OnPolicyObject(const ObjectRef& obj, bool is_pod_group) {
  const std::string ns = api::meta::GetNamespace(*obj);
  const std::string name = api::meta::GetName(*obj);
  internal::PolicyObject po;
  if (is_pod_group) {
    po.pod_group = sched_api::PodGroupPolicy(*obj);
  } else {
    for (const Json& t : api::MemberArray(api::MemberObject(*obj, "spec"), "podGroupTemplates")) {
      po.templates[api::CopyStringMember(t, "name")] =
          sched_api::ParseSchedulingPolicy(api::Member(t, "schedulingPolicy"));
    }
  }
  const std::string key = is_pod_group ? internal::PodGroupPolicyKey(ns, name)
                                       : internal::WorkloadPolicyKey(ns, name);
  bool kick = false;
  {
    absl::MutexLock lock(&mu_);
    policies_[key] = std::move(po);
    if (is_pod_group) {
      // A PodGroup is added (its spec is immutable): a recreated one starts
      // with no condition, so what was written to the old one is forgotten.
      auto g = groups_.find(key);
      if (g != groups_.end()) {
        g->second.scheduled_recorded = false;
        g->second.status_message.clear();
      }
    }
    // Wake the parked groups this object defines (a Workload may define several).
    std::vector<std::string> woken;
    for (const std::string& g : parked_groups_) {
      if (groups_[g].policy_key == key) woken.push_back(g);
    }
    for (const auto& g : woken) kick = WakeGroupLocked(g) || kick;
  }
  if (kick) Kick();
}

void Scheduler::OnPolicyObjectDelete(const ObjectRef& obj, bool is_pod_group) {
  const std::string ns = api::meta::GetNamespace(*obj);
  const std::string name = api::meta::GetName(*obj);
  absl::MutexLock lock(&mu_);
  policies_.erase(is_pod_group ? internal::PodGroupPolicyKey(ns, name)
                               : internal::WorkloadPolicyKey(ns, name));
}

}  // namespace

void AddScheduler(reconcile::ControllerContext& ctx, SchedulerOptions opts) {
  auto s = std::make_shared<Scheduler>(ctx, std::move(opts));
  auto& c = ctx.manager.AddController(
      std::make_unique<reconcile::Controller>("scheduler", *s, ctx.clock));
  s->set_controller(&c);
  // The handlers own the scheduler; the manager destroys controllers before informers.
  ctx.informers.For("", "v1", "pods")
      .AddHandlers({[s](const ObjectRef& o) { s->OnPod(o); },
                    [s](const ObjectRef& o, const ObjectRef& n) {
                      if (!BoundAndUnchanged(*o, *n)) s->OnPod(n);
                    },
                    [s](const ObjectRef& o) { s->OnPodDelete(o); }});
  ctx.informers.For("", "v1", "nodes")
      .AddHandlers({[s](const ObjectRef& o) { s->OnNode(o); },
                    [s](const ObjectRef&, const ObjectRef& n) { s->OnNode(n); },
                    [s](const ObjectRef& o) { s->OnNodeDelete(o); }});
  // Group-defining objects: only their spec matters (status writes, such as
  // the scheduler's own PodGroupScheduled, are ignored).
  for (const char* plural : {sched_api::kPodGroups, sched_api::kWorkloads}) {
    bool is_pod_group = std::string_view(plural) == sched_api::kPodGroups;
    ctx.informers.For(sched_api::kGroup, sched_api::kVersion, plural)
        .AddHandlers({[s, is_pod_group](const ObjectRef& o) { s->OnPolicyObject(o, is_pod_group); },
                      [s, is_pod_group](const ObjectRef& o, const ObjectRef& n) {
                        if (api::Member(*o, "spec") != api::Member(*n, "spec")) {
                          s->OnPolicyObject(n, is_pod_group);
                        }
                      },
                      [s, is_pod_group](const ObjectRef& o) {
                        s->OnPolicyObjectDelete(o, is_pod_group);
                      }});
  }
}

}  // namespace batchd::scheduler
