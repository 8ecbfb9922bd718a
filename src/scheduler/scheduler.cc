#include "scheduler/scheduler.h"

#include <algorithm>
#include <set>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "api/meta/object_meta.h"
#include "api/meta/time_util.h"
#include "registry/errors.h"
#include "scheduler/internal/cache.h"

namespace batchd::scheduler {

using api::Json;
using client::ObjectRef;
using internal::PodInfo;
using reconcile::Result;

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
  bool operator<(const QueueKey& o) const {
    if (priority != o.priority) return priority > o.priority;
    if (created != o.created) return created < o.created;
    return key < o.key;
  }
};

QueueKey KeyFor(const PodInfo& p) { return {p.priority, p.created, p.key}; }

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
  return !n.empty() && node(old_pod) == n && ended(old_pod) == ended(pod);
}

class Scheduler : public reconcile::Reconciler {
 public:
  Scheduler(reconcile::ControllerContext& ctx, SchedulerOptions opts)
      : ctx_(ctx),
        opts_(std::move(opts)),
        pods_(ctx.informers.For("", "v1", "pods")),
        nodes_(ctx.informers.For("", "v1", "nodes")) {}

  void set_controller(reconcile::Controller* c) { controller_ = c; }

  void OnPod(const ObjectRef& obj);
  void OnPodDelete(const ObjectRef& obj);
  void OnNode(const ObjectRef& obj);
  void OnNodeDelete(const ObjectRef& obj);
  absl::StatusOr<Result> Reconcile(const std::string& key) override;

 private:
  struct Pending {
    std::shared_ptr<const PodInfo> info;
    bool active = false;
    absl::Time unschedulable_since;
  };
  struct Decision {
    std::shared_ptr<const PodInfo> pod;
    std::string node;
    std::string message;  // When unschedulable.
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
  void RecordUnschedulable(const PodInfo& p, const std::string& message);
  // Moves unschedulable pods waiting longer than `unschedulable_flush` back to active.
  void FlushDueLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  Result NextResultLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  reconcile::ControllerContext& ctx_;
  const SchedulerOptions opts_;
  client::Informer& pods_;
  client::Informer& nodes_;
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
  pending_.erase(it);
}

void Scheduler::MoveAllToActiveLocked() {
  std::vector<std::string> heads;
  heads.reserve(unschedulable_by_signature_.size());
  for (const auto& [signature, group] : unschedulable_by_signature_) {
    heads.push_back(group.begin()->key);
  }
  for (const auto& k : heads) ActivateLocked(k);
}

void Scheduler::OnPod(const ObjectRef& obj) {
  bool kick = false;
  {
    absl::MutexLock lock(&mu_);
    auto info = internal::ParsePod(*obj, cache_.resources());
    const std::string& key = info->key;
    if (!info->node_name.empty()) {
      RemovePendingLocked(key);
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
    } else if (!cache_.IsAssumed(key)) {
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
  pending_[p.key] = Pending{d.pod, false, {}};
  ActivateLocked(p.key);
  return st;
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
  if (!active_.empty()) return Result::After(absl::ZeroDuration());
  if (unschedulable_.empty() || next_flush_ == absl::InfiniteFuture()) return Result::Done();
  return Result::After(std::max(next_flush_ - ctx_.clock.Now(), absl::ZeroDuration()));
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
    if (!d.node.empty()) {
      first_error = BindOne(d);
      if (!first_error.ok()) break;  // Retried with the queue's backoff, not in a loop.
    } else {
      RecordUnschedulable(*d.pod, d.message);
    }
  }
  if (!first_error.ok()) return first_error;
  absl::MutexLock lock(&mu_);
  return NextResultLocked();
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
}

}  // namespace batchd::scheduler
