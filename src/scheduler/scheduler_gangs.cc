// The Scheduler's pod groups (scheduler_impl.h): the group of a pod, the
// one-pass gang decision, parking and waking, the wait timeout, the
// PodGroupScheduled and DisruptionTarget conditions, disruptionMode
// PodGroup, and the PodGroup / Workload informers.
#include <algorithm>

#include "absl/strings/str_split.h"
#include "api/meta/conditions.h"
#include "absl/strings/str_cat.h"
#include "api/json_access.h"
#include "api/meta/object_meta.h"
#include "api/scheduling/v1alpha2/scheduling_v1alpha2.h"
#include "scheduler/internal/scheduler_impl.h"

namespace batchd::scheduler::internal {

using api::Json;
namespace sched_api = api::scheduling_v1alpha2;

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

void Scheduler::UntrackLocked(const std::string& group_key, const std::string& key, bool bound,
                              bool deleted) {
  auto it = groups_.find(group_key);
  if (it == groups_.end()) return;
  it->second.pending.erase(key);
  if (bound) it->second.bound.erase(key);
  if (deleted) it->second.disrupted.erase(key);
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
  // Bound members count toward minCount unless they are leaving (deleted,
  // or taken in a group disruption): a gang recreated after a disruption
  // waits for its own quorum, not for its predecessors' terminating pods.
  int bound = 0;
  for (const std::string& k : g.bound) {
    const internal::PlacedPod* placed = cache_.placed(k);
    bound += !g.disrupted.contains(k) && (placed == nullptr || !placed->deleting) ? 1 : 0;
  }
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
      GroupStatusLocked(g, true, absl::StrCat(bound + static_cast<int>(a.placed.size()),
                                              " pods placed, minCount is ", min_count));
    }
    if (!a.unplaced.empty()) ParkGroupLocked(group_key, g, a.unplaced, a.fit_message);
    if (!a.placed.empty()) WakeAffinityWaitersLocked();
    return;
  }
  // 5. Too few fit: nothing binds, nothing is held; the wait is timed.
  const absl::Time now = ctx_.clock.Now();
  if (g.waiting_since == absl::InfiniteFuture()) g.waiting_since = now;
  const std::string why = internal::GangShortfallMessage(a.placeable, bound, total, min_count);
  const std::string group_name =
      absl::StrCat("pod group \"", g.name, g.pod_group.empty() ? "" : "/", g.pod_group, "\"");
  if (now >= g.waiting_since + opts_.gang_timeout) {
    // As kube-scheduler rejects a gang's waiting pods at Permit: the pods go
    // back to waiting with the timeout as their reason (a FailedScheduling
    // event each), and the next attempt starts a new wait. The one-pass
    // decision assumed nothing, so no capacity is released; a nomination a
    // member may carry (restored from its status) is dropped all the same.
    const std::string rejected = internal::GangTimeoutMessage(opts_.gang_timeout);
    for (const auto& m : members) cache_.ClearNomination(m->key);
    g.waiting_since = absl::InfiniteFuture();
    GroupStatusLocked(g, false, absl::StrCat(rejected, ": ", why));
    ParkGroupLocked(group_key, g, members,
                    absl::StrCat(rejected, "; ", group_name, ": ", why, "; ", a.fit_message));
    return;
  }
  GroupStatusLocked(g, false, why);
  ParkGroupLocked(group_key, g, members,
                  absl::StrCat(group_name, ": ", why, "; ", a.fit_message));
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

void Scheduler::GroupDisruptionLocked(const GroupState& g, const std::string& reason,
                                      const std::string& message) {
  if (!g.is_pod_group) return;  // Workloads have no status.
  api::meta::Condition c;
  c.type = sched_api::kDisruptionTarget;
  c.status = api::meta::kConditionTrue;
  c.reason = reason;
  c.message = message;
  ready_.push_back(Decision{nullptr, "", "", GroupWrite{g.ns, g.name, std::move(c)}});
}

bool Scheduler::DisruptGroupLocked(const PodInfo& trigger) {
  GroupState& g = GroupLocked(trigger);
  if (g.disrupted.contains(trigger.key)) return false;  // Part of a disruption already decided.
  std::optional<GroupPolicy> policy = internal::PolicyOf(g, policies_);
  if (!policy.has_value() || !policy->disrupt_whole) return false;  // disruptionMode Pod.
  // One decision: every other member not already leaving, bound or pending.
  g.disrupted.insert(trigger.key);
  std::vector<std::string> others;
  for (const auto* members : {&g.bound, &g.pending}) {
    for (const std::string& k : *members) {
      if (k != trigger.key && !g.disrupted.contains(k)) others.push_back(k);
    }
  }
  std::sort(others.begin(), others.end());
  if (others.empty()) return false;
  Eviction e;
  e.victims = others;
  for (const std::string& k : others) {
    g.disrupted.insert(k);
    cache_.MarkDeleting(k);  // No preemption victim any more; its room is coming.
  }
  e.condition.type = "DisruptionTarget";
  e.condition.status = api::meta::kConditionTrue;
  e.condition.reason = trigger.disruption_reason;  // The cause: preemption, a failed node...
  e.condition.message =
      absl::StrCat(opts_.scheduler_name, ": pod group \"", g.name,
                   g.pod_group.empty() ? "" : "/", g.pod_group,
                   "\" is disrupted as a whole (disruptionMode PodGroup): pod ", trigger.key,
                   " is a disruption target (", trigger.disruption_reason, ")");
  e.event_reason = "PodGroupDisrupted";
  e.event_message = e.condition.message;
  GroupDisruptionLocked(g, trigger.disruption_reason, e.condition.message);
  ready_.push_back(Decision{nullptr, "", "", std::nullopt, "", {}, false, std::move(e)});
  return true;
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
  if (w.condition.type == sched_api::kPodGroupScheduled) {
    const Json* current = api::meta::FindCondition(*pg, sched_api::kPodGroupScheduled);
    if (current != nullptr &&
        api::StringMember(*current, "status") == api::meta::kConditionTrue) {
      return;  // Once scheduled, a group does not go back (the KEP's rule).
    }
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
      po.templates[api::CopyStringMember(t, "name")] = sched_api::ParseGroupPolicy(t);
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


}  // namespace batchd::scheduler::internal
