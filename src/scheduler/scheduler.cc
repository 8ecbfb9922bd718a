#include "scheduler/scheduler.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "api/json_access.h"
#include "api/meta/conditions.h"
#include "api/meta/object_meta.h"
#include "api/meta/time_util.h"
#include "api/scheduling/v1alpha2/scheduling_v1alpha2.h"
#include "registry/errors.h"
#include "scheduler/internal/preemption.h"
#include "scheduler/internal/scheduler_impl.h"

namespace batchd::scheduler {

using api::Json;
using client::ObjectRef;
using internal::Scheduler;
namespace sched_api = api::scheduling_v1alpha2;

namespace {
Json BindingFor(const std::string& ns, const std::string& name, const std::string& node) {
  return {{"apiVersion", "v1"},
          {"kind", "Binding"},
          {"metadata", {{"name", name}, {"namespace", ns}}},
          {"target", {{"apiVersion", "v1"}, {"kind", "Node"}, {"name", node}}}};
}
}  // namespace

absl::Status RegistryBinder::Bind(const std::string& ns, const std::string& name,
                                  const std::string& node) {
  return registry_.Bind(ns, name, BindingFor(ns, name, node), registry::WriteOptions{}).status();
}

std::vector<absl::Status> RegistryBinder::BindMany(const std::vector<Request>& reqs) {
  std::vector<registry::Registry::BindRequest> binds;
  binds.reserve(reqs.size());
  for (const Request& r : reqs) binds.push_back({r.ns, r.name, BindingFor(r.ns, r.name, r.node)});
  std::vector<absl::Status> out;
  out.reserve(reqs.size());
  registry::WriteOptions opts;
  opts.version_only = true;  // Only the outcomes are read.
  for (auto& r : registry_.BindMany(binds, opts)) out.push_back(r.status());
  return out;
}

namespace {

// Whether `pod` has DisruptionTarget=True.
bool HasDisruptionTarget(const Json& pod) {
  const Json* c = api::meta::FindCondition(pod, "DisruptionTarget");
  return c != nullptr && api::StringMember(*c, "status") == api::meta::kConditionTrue;
}

// A bound pod matters to the scheduler when it binds, when it ends (its
// resources free) and when it goes away, and a member of a pod group also
// when it becomes a disruption target (disruptionMode PodGroup): the status
// updates in between (container states, conditions, the agent's reports)
// change nothing here, so they are not parsed again.
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
  // Deletion starting matters too: a terminating pod is no preemption victim;
  // and labels, which other pods' inter-pod affinity matches.
  if (n.empty() || node(old_pod) != n || ended(old_pod) != ended(pod) ||
      api::meta::IsBeingDeleted(old_pod) != api::meta::IsBeingDeleted(pod) ||
      api::MemberAt(old_pod, {"metadata", "labels"}) != api::MemberAt(pod, {"metadata", "labels"})) {
    return false;
  }
  const Json& spec = api::Member(pod, "spec");
  const bool grouped = api::FindMember(spec, "schedulingGroup") != nullptr ||
                       api::FindMember(spec, "workloadRef") != nullptr;
  return !grouped || HasDisruptionTarget(old_pod) == HasDisruptionTarget(pod);
}

}  // namespace

namespace internal {

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
  affinity_waiters_.erase(key);
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
        // Before the member leaves its group's books: the others go with it.
        if (!info->disruption_reason.empty()) kick = DisruptGroupLocked(*info);
        if (info->Terminal()) {
          UntrackLocked(info->group_key, key, /*bound=*/true);
        } else {
          GroupLocked(*info).bound.insert(key);
        }
      }
      if (info->Terminal()) {
        if (cache_.RemovePod(key)) {
          MoveAllToActiveLocked();
          kick = kick || !active_.empty();
        }
      } else {
        const bool newly_placed = cache_.NodeOf(key) != info->node_name;
        cache_.AddPod(*info, info->node_name, /*assumed=*/false);
        if (newly_placed) kick = WakeAffinityWaitersLocked() || kick;
      }
    } else if (!Eligible(*info)) {
      RemovePendingLocked(key);
      cache_.ClearNomination(key);
    } else if (!cache_.IsAssumed(key) && !info->group_key.empty()) {
      kick = OnGroupPodLocked(info);
    } else if (!cache_.IsAssumed(key)) {
      auto it = pending_.find(key);
      if (it == pending_.end()) {
        // A nomination made before a restart keeps its room. Only for a pod
        // seen the first time: a nomination the scheduler has since cleared
        // is not restored from an older copy of the pod.
        if (!info->nominated_node.empty() && cache_.NominatedNodeOf(key).empty()) {
          cache_.Nominate(*info, info->nominated_node);
        }
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
    if (!group_key.empty()) UntrackLocked(group_key, key, /*bound=*/true, /*deleted=*/true);
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

void Scheduler::OnNamespace(const ObjectRef& obj, bool deleted) {
  bool kick = false;
  {
    absl::MutexLock lock(&mu_);
    const std::string name = api::meta::GetName(*obj);
    if (deleted) {
      cache_.RemoveNamespace(name);
      return;
    }
    const Json& labels = api::MemberAt(*obj, {"metadata", "labels"});
    if (cache_.UpsertNamespace(name, labels.is_object() ? api::StringMap(labels)
                                                         : internal::Labels{})) {
      MoveAllToActiveLocked();
      kick = !active_.empty();
    }
  }
  if (kick) Kick();
}

bool Scheduler::WakeAffinityWaitersLocked() {
  if (affinity_waiters_.empty()) return false;
  for (const std::string& key : affinity_waiters_) ActivateLocked(key);
  affinity_waiters_.clear();
  return !active_.empty();
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
  // A decision that depends on which pods are placed (inter-pod affinity)
  // is neither shared with nor taken from pods of the same signature.
  const bool memoizable = !cache_.PlacementSensitive(*p.info);
  auto memo = memoizable ? memo_.find(p.info->signature) : memo_.end();
  internal::FitError unshared;
  const internal::FitError* error = memo == memo_.end() ? &unshared : &memo->second;
  if (memo == memo_.end()) {
    internal::ScheduleResult r = cache_.Schedule(*p.info);
    if (!r.node.empty()) {
      d->node = r.node;
      cache_.AddPod(*p.info, r.node, /*assumed=*/true);
      const std::string signature = p.info->signature;
      pending_.erase(key);
      affinity_waiters_.erase(key);
      memo_generation_ = cache_.generation();  // Assuming frees nothing.
      // There may be room for the next pod like it (it waits in its group),
      // and pods waiting for a pod to be attracted to may now find one.
      ActivateNextOfLocked(signature);
      WakeAffinityWaitersLocked();
      return true;
    }
    if (p.info->inter_pod != nullptr && !p.info->inter_pod->affinity.empty()) {
      affinity_waiters_.insert(key);  // Retried when some pod is placed.
    }
    if (memoizable) {
      error = &memo_.emplace(p.info->signature, std::move(r.error)).first->second;
    } else {
      unshared = std::move(r.error);
    }
  }
  // It fits nowhere: DefaultPreemption's PostFilter, then the message.
  internal::PreemptionNote note = PreemptLocked(*p.info, d);
  d->message = error->Message(note);
  AddUnschedulableLocked(key, *p.info);
  p.unschedulable_since = ctx_.clock.Now();
  next_flush_ = std::min(next_flush_, p.unschedulable_since + opts_.unschedulable_flush);
  return true;
}

absl::Status Scheduler::BindAll(const std::vector<Decision>& binds) {
  if (binds.empty()) return absl::OkStatus();
  std::vector<Binder::Request> reqs;
  reqs.reserve(binds.size());
  for (const Decision& d : binds) reqs.push_back({d.pod->ns, d.pod->name, d.node});
  std::vector<absl::Status> st = opts_.binder->BindMany(reqs);
  absl::Status first_error;
  for (size_t i = 0; i < binds.size(); ++i) {
    absl::Status e = FinishBind(binds[i], i < st.size() ? st[i] : absl::InternalError("no result"));
    if (first_error.ok()) first_error = e;
  }
  return first_error;
}

absl::Status Scheduler::FinishBind(const Decision& d, absl::Status st) {
  const PodInfo& p = *d.pod;
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
  // Binds wait in `binds` and go out together (one store commit) when the
  // pass ends or another kind of decision comes; the pods are assumed in the
  // cache meanwhile, as for a single bind.
  std::vector<Decision> binds;
  for (int i = 0; i < opts_.batch_size; ++i) {
    Decision d;
    {
      absl::MutexLock lock(&mu_);
      if (!NextDecisionLocked(&d)) break;
    }
    if (!d.node.empty() && !d.group.has_value()) {
      binds.push_back(std::move(d));
      continue;
    }
    first_error = BindAll(binds);
    binds.clear();
    if (!first_error.ok()) break;  // Retried with the queue's backoff, not in a loop.
    if (d.group.has_value()) {
      WriteGroupStatus(*d.group);
    } else {
      if (d.pod != nullptr && (!d.nominate.empty() || d.clear_nomination)) {
        WriteNomination(d.pod->key, d.nominate);
      }
      for (const std::string& key : d.unnominate) WriteNomination(key, "");
      if (d.eviction.has_value()) ExecuteEviction(*d.eviction);
      if (d.pod != nullptr) RecordUnschedulable(*d.pod, d.message);
    }
  }
  if (first_error.ok()) first_error = BindAll(binds);
  if (!first_error.ok()) return first_error;
  absl::MutexLock lock(&mu_);
  return NextResultLocked();
}


}  // namespace internal

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
  // Namespace labels, for inter-pod terms' namespaceSelector.
  ctx.informers.For("", "v1", "namespaces")
      .AddHandlers({[s](const ObjectRef& o) { s->OnNamespace(o, false); },
                    [s](const ObjectRef&, const ObjectRef& n) { s->OnNamespace(n, false); },
                    [s](const ObjectRef& o) { s->OnNamespace(o, true); }});
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
