// The pod integration's reconciler (see pod_reconciler.h): wiring and the
// indexes, single pods, pod groups, and the shared tail (readiness,
// eviction, start, stop).
#include "controllers/workload/internal/pod_reconciler.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "api/core/v1/pod_view.h"
#include "api/kueue/queue_views.h"
#include "api/kueue/workload_writers.h"
#include "api/meta/conditions.h"
#include "api/meta/object_meta.h"
#include "api/meta/object_writers.h"
#include "common/status_macros.h"
#include "common/string_view.h"
#include "controllers/workload/internal/workload_util.h"
#include "registry/errors.h"

namespace batchd::controllers::workload::internal {

using api::Json;
using api::core_v1::PodPhase;
using api::core_v1::PodView;
using client::ObjectRef;
using reconcile::Result;

namespace {

constexpr char kGroupKeyPrefix[] = "group/";
// Kueue's limit on a group's roles (one pod set each).
constexpr size_t kMaxRoles = 8;
constexpr char kWaitingForReplacementPods[] = "WaitingForReplacementPods";

using registry::IsGone;

// A pod with apiVersion and kind (informer copies may lack them), for
// events and owner references.
Json Typed(const Json& pod) {
  Json out = pod;
  api::meta::EnsureTypeMeta(out, "v1", "Pod");
  return out;
}

api::meta::OwnerReference PodRef(const Json& pod, bool controller) {
  api::meta::OwnerReference ref;
  ref.api_version = "v1";
  ref.kind = "Pod";
  ref.name = api::meta::GetName(pod);
  ref.uid = api::meta::GetUid(pod);
  ref.controller = controller;
  ref.block_owner_deletion = controller;
  return ref;
}

// Which of a group's runnable pods are kept when there are too many: those
// with the finalizer, then ungated ones, then the oldest (Kueue's
// sortActivePods); the tail goes.
void SortToKeep(std::vector<ObjectRef>& pods) {
  std::stable_sort(pods.begin(), pods.end(), [](const ObjectRef& a, const ObjectRef& b) {
    const bool fa = api::meta::HasFinalizer(*a, kPodFinalizer);
    const bool fb = api::meta::HasFinalizer(*b, kPodFinalizer);
    if (fa != fb) return fa;
    const bool ga = IsGated(*a), gb = IsGated(*b);
    if (ga != gb) return !ga;
    const auto ca = api::meta::GetCreationTimestamp(*a), cb = api::meta::GetCreationTimestamp(*b);
    if (ca != cb) return ca < cb;
    return api::meta::GetName(*a) < api::meta::GetName(*b);
  });
}

bool Finished(const Json& wl) { return api::meta::IsConditionTrue(wl, api::kueue::kFinished); }

}  // namespace

PodReconciler::PodReconciler(reconcile::ControllerContext& ctx, const api::KindDef& pod_kind,
                             const api::KindDef& wl_kind, const api::KindDef& rf_kind,
                             bool wait_for_pods_ready)
    : ctx_(ctx),
      pod_kind_(pod_kind),
      wl_kind_(wl_kind),
      pods_(ctx.informers.For(pod_kind)),
      workloads_(ctx.informers.For(wl_kind)),
      flavors_(ctx.informers.For(rf_kind)),
      wait_for_pods_ready_(wait_for_pods_ready) {}

std::string PodReconciler::KeyOf(const Json& pod) {
  const std::string group = GroupName(pod);
  if (group.empty()) return client::Informer::KeyOf(pod);
  return absl::StrCat(kGroupKeyPrefix, api::meta::GetNamespace(pod), "/", group);
}

// ---- Wiring and indexes ---------------------------------------------------

void PodReconciler::Wire(reconcile::Controller& controller, std::shared_ptr<PodReconciler> self) {
  client::WorkQueue* q = &controller.queue();
  auto enqueue = [q](const ObjectRef& o) {
    if (IsManaged(*o) || api::meta::HasFinalizer(*o, kPodFinalizer)) q->Add(KeyOf(*o));
  };
  pods_.AddHandlers({
      .on_add =
          [self, enqueue](const ObjectRef& o) {
            self->OnPod(o, false);
            enqueue(o);
          },
      .on_update =
          [self, q](const ObjectRef& old_pod, const ObjectRef& o) {
            self->OnPod(o, false);
            if (!IsManaged(*o) && !api::meta::HasFinalizer(*o, kPodFinalizer)) return;
            q->Add(KeyOf(*o));
            if (KeyOf(*old_pod) != KeyOf(*o)) q->Add(KeyOf(*old_pod));
          },
      .on_delete =
          [self, enqueue](const ObjectRef& o) {
            self->OnPod(o, true);
            enqueue(o);
          },
  });
  workloads_.AddHandlers({
      .on_add = [self](const ObjectRef& wl) { self->OnWorkload(wl, false); },
      .on_update = [self](const ObjectRef&, const ObjectRef& wl) { self->OnWorkload(wl, false); },
      .on_delete = [self](const ObjectRef& wl) { self->OnWorkload(wl, true); },
  });
  controller_ = &controller;
}

void PodReconciler::OnPod(const ObjectRef& pod, bool deleted) {
  const std::string group = GroupName(*pod);
  if (group.empty() || (!IsManaged(*pod) && !deleted)) return;
  const std::string key = absl::StrCat(api::meta::GetNamespace(*pod), "/", group);
  absl::MutexLock lock(&mu_);
  if (deleted) {
    auto it = group_pods_.find(key);
    if (it == group_pods_.end()) return;
    it->second.erase(api::meta::GetName(*pod));
    if (it->second.empty()) group_pods_.erase(it);
  } else {
    group_pods_[key].insert(api::meta::GetName(*pod));
  }
}

void PodReconciler::OnWorkload(const ObjectRef& wl, bool deleted) {
  const std::string ns = api::meta::GetNamespace(*wl);
  if (api::meta::GetAnnotation(*wl, kIsGroupWorkloadAnnotation).value_or("") == "true") {
    controller_->queue().Add(absl::StrCat(kGroupKeyPrefix, ns, "/", api::meta::GetName(*wl)));
    return;
  }
  auto ref = api::meta::GetControllerRef(*wl);
  if (!ref || ref->api_version != "v1" || ref->kind != "Pod") return;
  const std::string key = absl::StrCat(ns, "/", ref->name);
  {
    absl::MutexLock lock(&mu_);
    if (deleted) {
      auto it = owned_.find(key);
      if (it != owned_.end()) {
        it->second.erase(api::meta::GetName(*wl));
        if (it->second.empty()) owned_.erase(it);
      }
    } else {
      owned_[key].insert(api::meta::GetName(*wl));
    }
  }
  controller_->queue().Add(key);
}

std::vector<ObjectRef> PodReconciler::GroupPods(const std::string& ns, const std::string& group) {
  std::set<std::string> names;
  {
    absl::MutexLock lock(&mu_);
    auto it = group_pods_.find(absl::StrCat(ns, "/", group));
    if (it != group_pods_.end()) names = it->second;
  }
  std::vector<ObjectRef> out;
  for (const std::string& name : names) {
    ObjectRef pod = pods_.Get(ns, name);
    if (pod && IsManaged(*pod) && GroupName(*pod) == group) out.push_back(std::move(pod));
  }
  return out;
}

std::pair<size_t, size_t> PodReconciler::IndexSizesForTest() {
  absl::MutexLock lock(&mu_);
  return {group_pods_.size(), owned_.size()};
}

std::set<std::string> PodReconciler::OwnedWorkloads(const std::string& pod_key) {
  absl::MutexLock lock(&mu_);
  auto it = owned_.find(pod_key);
  return it == owned_.end() ? std::set<std::string>{} : it->second;
}

absl::StatusOr<Result> PodReconciler::Reconcile(const std::string& key) {
  std::string_view rest = key;
  const bool group = rest.rfind(kGroupKeyPrefix, 0) == 0;
  if (group) rest.remove_prefix(sizeof(kGroupKeyPrefix) - 1);
  const size_t slash = rest.find('/');
  if (slash == std::string_view::npos) return Result::Done();
  const std::string ns(rest.substr(0, slash)), name(rest.substr(slash + 1));
  return group ? ReconcileGroup(ns, name) : ReconcileSingle(ns, name);
}

// ---- A single pod ---------------------------------------------------------

absl::StatusOr<Result> PodReconciler::ReconcileSingle(const std::string& ns,
                                                      const std::string& name) {
  const std::string key = absl::StrCat(ns, "/", name);
  ObjectRef pod = pods_.Get(ns, name);
  if (!pod) {
    // The pod is gone: so is its Workload (the garbage collector would too).
    const std::set<std::string> owned = OwnedWorkloads(key);
    BATCHD_RETURN_IF_ERROR(DeleteWorkloads(ns, {owned.begin(), owned.end()}));
    return Result::Done();
  }
  if (!GroupName(*pod).empty()) return Result::Done();  // its group's key handles it
  if (!IsManaged(*pod) || api::meta::IsBeingDeleted(*pod)) {
    BATCHD_RETURN_IF_ERROR(Finalize({pod}));
    return Result::Done();
  }
  const std::string uid = api::meta::GetUid(*pod);
  std::optional<Json> wl;
  std::vector<std::string> stale;  // e.g. of an earlier pod with this name
  for (const std::string& wl_name : OwnedWorkloads(key)) {
    ObjectRef w = workloads_.Get(ns, wl_name);
    if (!w) continue;
    if (!wl && api::meta::IsControlledBy(*w, uid)) {
      wl = *w;
    } else {
      stale.push_back(wl_name);
    }
  }
  BATCHD_RETURN_IF_ERROR(DeleteWorkloads(ns, stale));
  Unit unit{ns, name, false, {pod}};
  if (wl && Finished(*wl)) {
    BATCHD_RETURN_IF_ERROR(Finalize(unit.pods));
    return Result::Done();
  }
  if (auto fin = adapter_.Finished(*pod)) {
    if (wl) BATCHD_RETURN_IF_ERROR(MarkFinished(unit, std::move(*wl), fin->success, fin->message));
    BATCHD_RETURN_IF_ERROR(Finalize(unit.pods));
    return Result::Done();
  }
  if (!wl) {
    if (!IsGated(*pod)) {
      // Running without a Workload (it was deleted): Kueue stops it.
      BATCHD_RETURN_IF_ERROR(Stop(unit, "NoMatchingWorkload", "Missing Workload"));
      return Result::Done();
    }
    BATCHD_ASSIGN_OR_RETURN(std::vector<Json> podsets, adapter_.PodSets(*pod));
    BATCHD_RETURN_IF_ERROR(CreateWorkload(
        unit, WorkloadName(adapter_.Gvk(), name, uid), std::move(podsets)));
    return Result::Done();
  }
  return Drive(unit, std::move(*wl));
}

// ---- A pod group ----------------------------------------------------------

absl::StatusOr<Result> PodReconciler::ReconcileGroup(const std::string& ns,
                                                     const std::string& name) {
  std::vector<ObjectRef> pods = GroupPods(ns, name);
  ObjectRef existing = workloads_.Get(ns, name);
  const bool ours =
      existing &&
      api::meta::GetAnnotation(*existing, kIsGroupWorkloadAnnotation).value_or("") == "true";
  if (pods.empty()) {
    if (ours) BATCHD_RETURN_IF_ERROR(DeleteWorkloads(ns, {name}));
    return Result::Done();
  }
  Unit unit{ns, name, true, pods};
  // Pods deleted before they ran, or after they ended, are let go.
  std::vector<ObjectRef> gone;
  for (const ObjectRef& p : pods) {
    const PodView v = PodView::Parse(*p);
    if (v.meta.being_deleted() && (v.node_name.empty() || v.terminal())) gone.push_back(p);
  }
  BATCHD_RETURN_IF_ERROR(Finalize(gone));
  if (existing && !ours) {
    ctx_.events.Event(Typed(unit.first()), "Warning", "WorkloadNameConflict",
                      absl::StrCat("A Workload named \"", name,
                                   "\" already exists but is not a pod group workload; this pod "
                                   "group cannot be admitted"));
    return Result::Done();
  }
  if (existing && Finished(*existing)) {
    BATCHD_RETURN_IF_ERROR(Finalize(pods));
    return Result::Done();
  }
  absl::StatusOr<int32_t> total = GroupTotalCount(unit.first());
  if (!total.ok()) {
    ctx_.events.Event(Typed(unit.first()), "Warning", "ErrWorkloadCompose",
                      std::string(total.status().message()));
    return Result::Done();
  }
  int32_t succeeded = 0;
  bool running = false, unretriable = false;
  std::vector<ObjectRef> runnable, inactive;
  for (const ObjectRef& p : pods) {
    const PodView v = PodView::Parse(*p);
    succeeded += v.phase == PodPhase::kSucceeded ? 1 : 0;
    running = running || !v.terminal();
    unretriable = unretriable || IsUnretriable(*p);
    (RunnableOrSucceeded(*p) ? runnable : inactive).push_back(p);
  }
  if (succeeded >= *total || (!running && unretriable)) {
    if (existing) {
      BATCHD_RETURN_IF_ERROR(MarkFinished(unit, *existing, succeeded >= *total,
                                          absl::StrCat("Pods succeeded: ", succeeded, "/", *total,
                                                       ".")));
    }
    BATCHD_RETURN_IF_ERROR(Finalize(pods));
    return Result::Done();
  }

  if (!existing) {
    BATCHD_RETURN_IF_ERROR(Finalize(inactive));
    // Pods that run without a Workload (it was deleted) are stopped, as Kueue
    // stops a job whose Workload is gone.
    if (std::any_of(runnable.begin(), runnable.end(), [](const ObjectRef& p) {
          return !IsGated(*p) && !PodView::Parse(*p).terminal();
        })) {
      BATCHD_RETURN_IF_ERROR(Stop(unit, "NoMatchingWorkload", "Missing Workload"));
      return Result::Done();
    }
    // The group's metadata must agree among its pods that did not fail.
    const std::string queue = QueueName(unit.first());
    for (const ObjectRef& p : pods) {
      if (PodView::Parse(*p).phase == PodPhase::kFailed) continue;
      absl::StatusOr<int32_t> n = GroupTotalCount(*p);
      std::string why;
      if (QueueName(*p) != queue) {
        why = absl::StrCat("pods '", api::meta::GetName(unit.first()), "' and '",
                           api::meta::GetName(*p), "' have different queue names: ", queue,
                           "!=", QueueName(*p));
      } else if (!n.ok() || *n != *total) {
        why = absl::StrCat("pods '", api::meta::GetName(unit.first()), "' and '",
                           api::meta::GetName(*p), "' have different '",
                           kGroupTotalCountAnnotation, "' values");
      }
      if (!why.empty()) {
        ctx_.events.Event(Typed(unit.first()), "Warning", "ErrWorkloadCompose", why);
        return Result::Done();
      }
    }
    if (runnable.size() < static_cast<size_t>(*total)) {
      ctx_.events.Event(Typed(unit.first()), "Warning", "ErrWorkloadCompose",
                        absl::StrCat("'", name, "' group has fewer runnable pods than expected"));
      return Result::Done();
    }
    SortToKeep(runnable);
    std::vector<ObjectRef> excess(runnable.begin() + *total, runnable.end());
    runnable.resize(*total);
    BATCHD_RETURN_IF_ERROR(DeleteExcess(excess));
    std::map<std::string, std::pair<ObjectRef, int32_t>> roles;  // role -> (first pod, count)
    for (const ObjectRef& p : runnable) {
      auto [it, inserted] = roles.try_emplace(RoleHash(*p), p, 0);
      ++it->second.second;
    }
    if (roles.size() > kMaxRoles) {
      ctx_.events.Event(Typed(unit.first()), "Warning", "ErrWorkloadCompose",
                        absl::StrCat("pod group can't include more than ", kMaxRoles, " roles"));
      return Result::Done();
    }
    std::vector<Json> podsets;
    for (const auto& [role, first] : roles) podsets.push_back(PodSetOf(*first.first, role, first.second));
    unit.pods = runnable;
    BATCHD_RETURN_IF_ERROR(CreateWorkload(unit, name, std::move(podsets)));
    return Result::Done();
  }

  // The group has its Workload: fit the pods to its roles.
  Json wl = *existing;
  const api::kueue::WorkloadPodSetsView sets = api::kueue::WorkloadPodSetsView::Parse(wl);
  std::vector<ObjectRef> kept, excess, replaced;
  int32_t absent = 0;
  for (const api::kueue::PodSetView& ps : sets.pod_sets) {
    std::vector<ObjectRef> role_runnable, role_inactive;
    for (const ObjectRef& p : runnable) {
      if (RoleHash(*p) == ps.name) role_runnable.push_back(p);
    }
    for (const ObjectRef& p : inactive) {
      if (RoleHash(*p) == ps.name) role_inactive.push_back(p);
    }
    const int64_t count = ps.count;
    absent += static_cast<int32_t>(std::max<int64_t>(0, count - role_runnable.size()));
    SortToKeep(role_runnable);
    for (size_t i = 0; i < role_runnable.size(); ++i) {
      (static_cast<int64_t>(i) < count ? kept : excess).push_back(role_runnable[i]);
    }
    // Failed pods a replacement stands in for are let go, the oldest first.
    const int64_t replaceable = std::min<int64_t>(
        role_inactive.size(), static_cast<int64_t>(role_inactive.size() + role_runnable.size()) - count);
    for (int64_t i = 0; i < replaceable; ++i) replaced.push_back(role_inactive[i]);
  }
  if (kept.size() + excess.size() != runnable.size()) {
    // A pod of a role the Workload does not have: the Workload no longer
    // describes the group; a new one is made from the pods.
    ctx_.events.Event(Typed(unit.first()), "Normal", "DeletedWorkload",
                      absl::StrCat("Deleted not matching Workload: ", ns, "/", name));
    BATCHD_RETURN_IF_ERROR(DeleteWorkloads(ns, {name}));
    return Result::Done();
  }
  BATCHD_RETURN_IF_ERROR(DeleteExcess(excess));
  BATCHD_RETURN_IF_ERROR(Finalize(replaced));
  // Replacement pods own the Workload too (it goes when the last pod goes).
  const std::vector<api::meta::OwnerReference> owners = api::meta::GetOwnerReferences(wl);
  bool added = false;
  for (const ObjectRef& p : kept) {
    const std::string uid = api::meta::GetUid(*p);
    if (std::none_of(owners.begin(), owners.end(), [&](const auto& o) { return o.uid == uid; })) {
      api::meta::SetOwnerReference(wl, PodRef(*p, false));
      added = true;
    }
  }
  if (added) {
    auto r = ctx_.client.Update(wl_kind_, wl);
    if (!r.ok()) return r.status();
    wl = std::move(*r);
  }
  // Kueue's WaitingForReplacementPods condition.
  const auto waiting = api::meta::GetCondition(wl, kWaitingForReplacementPods);
  if (absent > 0 || (waiting && waiting->status == api::meta::kConditionTrue)) {
    api::meta::Condition c{kWaitingForReplacementPods,
                           absent > 0 ? api::meta::kConditionTrue : api::meta::kConditionFalse,
                           absent > 0 ? "PodsFailed" : "PodsReady",
                           absent > 0 ? "Some Failed pods need replacement"
                                      : "No pods need replacement"};
    if (api::meta::SetCondition(wl, api::meta::ConditionShape::kMeta, c, ctx_.clock.Now())) {
      BATCHD_RETURN_IF_ERROR(WriteWorkloadStatus(wl));
    }
  }
  unit.pods = kept;
  unit.pods.insert(unit.pods.end(), inactive.begin(), inactive.end());
  if (unit.pods.empty()) return Result::Done();
  return Drive(unit, std::move(wl));
}

// ---- The shared tail ------------------------------------------------------

absl::StatusOr<Result> PodReconciler::Drive(const Unit& unit, Json wl) {
  const int32_t total = unit.group ? GroupTotalCount(unit.first()).value_or(1) : 1;
  if (wait_for_pods_ready_) BATCHD_RETURN_IF_ERROR(SyncPodsReady(unit, total, wl));
  if (auto evicted = api::meta::GetCondition(wl, api::kueue::kEvicted);
      evicted && evicted->status == api::meta::kConditionTrue) {
    BATCHD_RETURN_IF_ERROR(
        Stop(unit, absl::StrCat("WorkloadEvictedDueTo", evicted->reason), evicted->message));
    const bool running = std::any_of(unit.pods.begin(), unit.pods.end(),
                                     [&](const ObjectRef& p) { return adapter_.IsActive(*p); });
    if (!HasQuotaReservation(wl) || running) return Result::Done();
    // Its pods are stopped: release the quota and hand the Workload back to its queue.
    api::kueue::ClearReservation(wl, evicted->reason, evicted->message,
                                 api::kueue::WorkloadView::Parse(wl).active, ctx_.clock.Now());
    BATCHD_RETURN_IF_ERROR(WriteWorkloadStatus(wl));
    return Result::Done();
  }
  const bool gated = std::any_of(unit.pods.begin(), unit.pods.end(), [](const ObjectRef& p) {
    return IsGated(*p) && !PodView::Parse(*p).terminal() && !api::meta::IsBeingDeleted(*p);
  });
  if (gated) {
    if (IsAdmitted(wl)) {
      BATCHD_RETURN_IF_ERROR(Run(unit, wl));
      return Result::Done();
    }
    const std::string queue = QueueName(unit.first());
    if (api::kueue::WorkloadView::Parse(wl).queue_name != queue) {
      api::kueue::SetQueueName(wl, queue);
      auto r = ctx_.client.Update(wl_kind_, wl);
      if (!r.ok()) return r.status();
    }
    return Result::Done();
  }
  if (!IsAdmitted(wl)) {
    BATCHD_RETURN_IF_ERROR(Stop(unit, "NotAdmitted", "Not admitted by cluster queue"));
  }
  return Result::Done();
}

absl::Status PodReconciler::DeleteWorkloads(const std::string& ns,
                                            const std::vector<std::string>& names) {
  for (const std::string& name : names) {
    ObjectRef wl = workloads_.Get(ns, name);
    if (!wl) continue;
    client::DeleteOptions opts;
    opts.precondition_uid = api::meta::GetUid(*wl);
    absl::Status s = ctx_.client.Delete(wl_kind_, ns, name, opts);
    if (!s.ok() && !IsGone(s)) return s;
  }
  return absl::OkStatus();
}

absl::Status PodReconciler::CreateWorkload(const Unit& unit, const std::string& name,
                                           std::vector<Json> podsets) {
  const Json& first = unit.first();
  Json wl = api::kueue::NewWorkload(unit.ns, name, QueueName(first), podsets);
  if (unit.group) {
    api::meta::SetAnnotation(wl, kIsGroupWorkloadAnnotation, "true");
    for (const ObjectRef& p : unit.pods) api::meta::SetOwnerReference(wl, PodRef(*p, false));
  } else {
    api::meta::SetLabel(wl, kJobUidLabel, api::meta::GetUid(first));
    api::meta::SetOwnerReference(wl, PodRef(first, true));
  }
  BATCHD_RETURN_IF_ERROR(SetWorkloadPriority(ctx_.client, first, "", podsets, wl));
  auto r = ctx_.client.Create(wl_kind_, unit.ns, std::move(wl));
  // Made by an earlier reconcile whose Workload the informer has not
  // delivered yet: its event brings the unit back.
  if (!r.ok() && registry::GetPayload(r.status()).reason == "AlreadyExists") {
    return absl::OkStatus();
  }
  if (!r.ok()) return r.status();
  ctx_.events.Event(Typed(first), "Normal", "CreatedWorkload",
                    absl::StrCat("Created Workload: ", unit.ns, "/", name));
  return absl::OkStatus();
}

absl::Status PodReconciler::MarkFinished(const Unit& unit, Json wl, bool success,
                                         const std::string& message) {
  api::kueue::SetFinished(wl, success, message, ctx_.clock.Now());
  BATCHD_RETURN_IF_ERROR(WriteWorkloadStatus(wl));
  ctx_.events.Event(Typed(unit.first()), "Normal", "FinishedWorkload",
                    absl::StrCat("Workload '", unit.ns, "/", api::meta::GetName(wl),
                                 "' is declared finished"));
  return absl::OkStatus();
}

// PodsReady=True once an admitted unit's pods are all ready or succeeded, as
// the generic reconciler reports it; written only when it flips.
absl::Status PodReconciler::SyncPodsReady(const Unit& unit, int32_t total, Json& wl) {
  const auto current = api::meta::GetCondition(wl, api::kueue::kPodsReady);
  const bool was_true = current && current->status == api::meta::kConditionTrue;
  const bool admitted = IsAdmitted(wl);
  int32_t ready = 0;
  for (const ObjectRef& p : unit.pods) {
    const PodView v = PodView::Parse(*p);
    ready += v.phase == PodPhase::kSucceeded || v.ConditionStatus("Ready") == "True" ? 1 : 0;
  }
  const bool now_ready = admitted && (was_true || ready >= total);
  if (current && current->status == (now_ready ? api::meta::kConditionTrue
                                               : api::meta::kConditionFalse)) {
    return absl::OkStatus();
  }
  if (!current && !admitted) return absl::OkStatus();
  api::kueue::PodsReadyState state = api::kueue::PodsReadyState::kReady;
  if (!now_ready) {
    state = current ? api::kueue::PodsReadyState::kWaitForRecovery
                    : api::kueue::PodsReadyState::kWaitForStart;
  }
  api::kueue::SetPodsReady(wl, state, ctx_.clock.Now());
  return WriteWorkloadStatus(wl);
}

absl::Status PodReconciler::Run(const Unit& unit, const Json& wl) {
  auto lookup = [this](const std::string& name) -> std::shared_ptr<const Json> {
    return flavors_.Get("", name);
  };
  BATCHD_ASSIGN_OR_RETURN(std::vector<PodSetInfo> infos, PodSetsInfoFromAdmission(wl, lookup));
  const std::string cq(api::kueue::WorkloadView::Parse(wl).admission_cluster_queue);
  for (const ObjectRef& p : unit.pods) {
    if (!IsGated(*p) || PodView::Parse(*p).terminal() || api::meta::IsBeingDeleted(*p)) continue;
    const std::string role = unit.group ? RoleHash(*p) : "main";
    auto info = std::find_if(infos.begin(), infos.end(),
                             [&](const PodSetInfo& i) { return i.name == role; });
    if (info == infos.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("pod ", api::meta::GetName(*p), ": no pod set ", role, " in the admission"));
    }
    Json pod = *p;
    BATCHD_RETURN_IF_ERROR(adapter_.RunWithPodSetsInfo(pod, {*info}));
    auto r = ctx_.client.Update(pod_kind_, std::move(pod));
    if (!r.ok() && !IsGone(r.status())) return r.status();
    if (r.ok()) {
      ctx_.events.Event(Typed(*r), "Normal", "Started",
                        absl::StrCat("Admitted by clusterQueue ", cq));
    }
  }
  return absl::OkStatus();
}

absl::Status PodReconciler::Stop(const Unit& unit, const std::string& reason,
                                 const std::string& message) {
  for (const ObjectRef& p : unit.pods) {
    const PodView v = PodView::Parse(*p);
    if (v.meta.being_deleted() || v.terminal() || IsGated(*p)) continue;
    Json pod = *p;
    api::meta::SetCondition(pod, api::meta::ConditionShape::kPod,
                            {kTerminationTargetCondition, api::meta::kConditionTrue, reason, message},
                            ctx_.clock.Now());
    auto r = ctx_.client.UpdateStatus(pod_kind_, std::move(pod));
    if (!r.ok()) {
      if (IsGone(r.status())) continue;
      return r.status();
    }
    client::DeleteOptions opts;
    opts.precondition_uid = api::meta::GetUid(*p);
    absl::Status s = ctx_.client.Delete(pod_kind_, unit.ns, api::meta::GetName(*p), opts);
    if (!s.ok() && !IsGone(s)) return s;
    ctx_.events.Event(Typed(*r), "Normal", "Stopped", message);
  }
  return absl::OkStatus();
}

absl::Status PodReconciler::Finalize(const std::vector<ObjectRef>& pods) {
  for (const ObjectRef& p : pods) {
    if (!api::meta::HasFinalizer(*p, kPodFinalizer)) continue;
    Json pod = *p;
    api::meta::RemoveFinalizer(pod, kPodFinalizer);
    auto r = ctx_.client.Update(pod_kind_, std::move(pod));
    if (!r.ok() && !IsGone(r.status())) return r.status();
  }
  return absl::OkStatus();
}

absl::Status PodReconciler::DeleteExcess(const std::vector<ObjectRef>& pods) {
  BATCHD_RETURN_IF_ERROR(Finalize(pods));
  for (const ObjectRef& p : pods) {
    if (api::meta::IsBeingDeleted(*p)) continue;
    client::DeleteOptions opts;
    opts.precondition_uid = api::meta::GetUid(*p);
    absl::Status s = ctx_.client.Delete(pod_kind_, api::meta::GetNamespace(*p),
                                        api::meta::GetName(*p), opts);
    if (!s.ok() && !IsGone(s)) return s;
    ctx_.events.Event(Typed(*p), "Normal", "ExcessPodDeleted", "Excess pod deleted");
  }
  return absl::OkStatus();
}

absl::Status PodReconciler::WriteWorkloadStatus(Json& wl) {
  auto r = ctx_.client.UpdateStatus(wl_kind_, wl);
  if (!r.ok()) return r.status();
  wl = std::move(*r);
  return absl::OkStatus();
}

}  // namespace batchd::controllers::workload::internal
