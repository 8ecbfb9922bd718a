// The JobSet controller's driver: informer wiring, the reconcile in
// upstream's order (jobset_controller.go), child Job creation / deletion /
// suspension, and the one status write per reconcile.
#include "controllers/jobset/jobset_controller.h"

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "api/batch/v1/job_status_writer.h"
#include "api/batch/v1/job_writers.h"
#include "api/core/v1/pod_view.h"
#include "api/core/v1/restart_generation.h"
#include "api/jobset/v1alpha2/child_job_writer.h"
#include "api/jobset/v1alpha2/jobset_view.h"
#include "api/jobset/v1alpha2/jobset_writers.h"
#include "api/json_access.h"
#include "api/meta/object_meta.h"
#include "api/meta/object_writers.h"
#include "common/status_macros.h"
#include "common/string_view.h"
#include "controllers/jobset/internal/child_jobs.h"
#include "controllers/jobset/internal/in_place.h"
#include "controllers/jobset/internal/policies.h"
#include "controllers/jobset/internal/volume_claims.h"
#include "registry/errors.h"

namespace batchd::controllers {
namespace jobset::internal {
namespace {

namespace js = api::jobset_v1alpha2;
using api::Json;
using client::ObjectRef;
using reconcile::ControllerContext;
using reconcile::Result;

using registry::IsReason;

// The JobSet "ns/name" that controls `job`, or "".
std::string OwningJobSetKey(const Json& job) {
  return api::meta::ControllerKey(job, js::kApiVersion, js::kKind);
}

// The Jobs controlled by JobSets, by JobSet key: what a reconcile reads
// instead of scanning the namespace. Bound: one entry per such Job in the
// Job informer (removed when the Job is deleted or changes owner).
class ChildIndex {
 public:
  void Upsert(const ObjectRef& job) {
    std::string key = OwningJobSetKey(*job);
    if (key.empty()) return;
    absl::MutexLock lock(&mu_);
    jobs_[key][api::meta::GetName(*job)] = job;
  }
  void Remove(const Json& job) {
    std::string key = OwningJobSetKey(job);
    if (key.empty()) return;
    absl::MutexLock lock(&mu_);
    auto it = jobs_.find(key);
    if (it == jobs_.end()) return;
    it->second.erase(api::meta::GetName(job));
    if (it->second.empty()) jobs_.erase(it);
  }
  // The Jobs of JobSet `key` controlled by `uid`.
  std::vector<ObjectRef> For(const std::string& key, std::string_view uid) const {
    std::vector<ObjectRef> out;
    absl::MutexLock lock(&mu_);
    auto it = jobs_.find(key);
    if (it == jobs_.end()) return out;
    for (const auto& [name, job] : it->second) {
      if (api::meta::IsControlledBy(*job, uid)) out.push_back(job);
    }
    return out;
  }

 private:
  mutable absl::Mutex mu_;
  std::map<std::string, std::map<std::string, ObjectRef>> jobs_ ABSL_GUARDED_BY(mu_);
};

bool HasClaimVolume(const Json& pod) {
  for (const Json& v : api::MemberArray(api::MemberObject(pod, "spec"), "volumes")) {
    if (api::FindMember(v, "persistentVolumeClaim") != nullptr) return true;
  }
  return false;
}

// The JobSet "ns/name" of a pod the controller follows — one that restarts
// in place, or one mounting a claim (its node may hold a claim directory) —
// or "".
std::string TrackedJobSetKey(const Json& pod) {
  std::optional<std::string> name = api::meta::GetLabel(pod, js::kJobSetNameKey);
  if (!name) return "";
  if (!api::meta::GetAnnotation(pod, api::core_v1::kRestartGenerationAnnotation) &&
      !HasClaimVolume(pod)) {
    return "";
  }
  return api::meta::GetNamespace(pod) + "/" + *name;
}

struct PendingEvent {
  std::string type, reason, message;
};

// One reconcile of one JobSet.
struct Sync {
  std::string key;
  ObjectRef cached;     // The informer's JobSet: `view` points into it.
  js::JobSetView view;  // Parsed once; spec and status as read.
  Json js;              // Working copy; its status is edited.
  ChildJobs jobs;
  Counts counts;
  bool status_changed = false;
  // Condition events, recorded once the status write that carries them
  // succeeds (as upstream).
  std::vector<PendingEvent> events;
  std::optional<absl::Duration> requeue;
};

class JobSetReconciler : public reconcile::Reconciler {
 public:
  explicit JobSetReconciler(ControllerContext& ctx)
      : ctx_(ctx),
        jobset_kind_(ctx.client.Kind(js::kGroup, js::kVersion, js::kPlural)),
        job_kind_(ctx.client.Kind("batch", "v1", "jobs")),
        service_kind_(ctx.client.Kind("", "v1", "services")),
        pod_kind_(ctx.client.Kind("", "v1", "pods")),
        jobsets_(ctx.informers.For(jobset_kind_)),
        jobs_(ctx.informers.For(job_kind_)),
        services_(ctx.informers.For(service_kind_)),
        pods_(ctx.informers.For(pod_kind_)),
        nodes_(ctx.informers.For("", "v1", "nodes")) {}

  absl::StatusOr<Result> Reconcile(const std::string& key) override;
  void Wire(reconcile::Controller& controller);

 private:
  absl::Status SyncJobSet(Sync& s);
  absl::Status SyncFinished(Sync& s);
  void ApplyFailurePolicy(Sync& s);
  absl::Status CreateJobs(Sync& s);
  absl::Status CreateJob(Sync& s, const js::ReplicatedJobView& rjob, int64_t index);
  absl::Status DeleteJobs(const std::vector<ChildJob>& jobs);
  absl::Status EnsureHeadlessService(Sync& s);
  absl::Status SyncInPlaceRestart(Sync& s);
  // volumeClaimPolicies with Delete (internal/volume_claims.h): the
  // finalizer and the nodes' annotation; returns whether it wrote the JobSet.
  absl::StatusOr<bool> SyncClaimBookkeeping(Sync& s);
  absl::StatusOr<Result> FinalizeClaims(Sync& s);
  // The JobSet's pods (its uid), cleanup pods excluded.
  std::vector<ObjectRef> PodsOf(const Sync& s) const;
  void RememberWrite(const std::string& key, const Json& written);
  absl::Status SuspendJobs(Sync& s);
  absl::Status ResumeJobs(Sync& s);
  absl::Status ResumeJob(const ChildJob& job, const js::ReplicatedJobView& rjob);
  absl::Status WriteStatus(Sync& s);

  void SetCondition(Sync& s, api::meta::Condition c, const char* event_type);
  void SetFailed(Sync& s, const std::string& reason, const std::string& message);
  void SetCompleted(Sync& s);
  bool CacheBehindOwnWrite(const std::string& key, const Json& cached);

  ControllerContext& ctx_;
  const api::KindDef& jobset_kind_;
  const api::KindDef& job_kind_;
  const api::KindDef& service_kind_;
  const api::KindDef& pod_kind_;
  client::Informer& jobsets_;
  client::Informer& jobs_;
  client::Informer& services_;
  client::Informer& pods_;
  client::Informer& nodes_;
  ChildIndex children_;
  // The resourceVersion of each JobSet's last status write: a reconcile that
  // reads an older copy (restarts not yet bumped) waits for the cache rather
  // than acting on the stale count. Bound: one entry per live JobSet
  // (erased when the cache catches up or the JobSet is gone).
  absl::Mutex written_mu_;
  std::map<std::string, int64_t> written_rv_ ABSL_GUARDED_BY(written_mu_);
};

void JobSetReconciler::Wire(reconcile::Controller& controller) {
  client::WorkQueue* q = &controller.queue();
  auto enqueue = [q](const ObjectRef& o) { q->Add(client::Informer::KeyOf(*o)); };
  jobsets_.AddHandlers({.on_add = enqueue,
                        .on_update = [enqueue](const ObjectRef&, const ObjectRef& o) {
                          enqueue(o);
                        },
                        .on_delete = enqueue});
  // A Service of a JobSet that goes away is created again.
  auto enqueue_owner = [q](const ObjectRef& o) {
    if (std::string key = OwningJobSetKey(*o); !key.empty()) q->Add(key);
  };
  services_.AddHandlers({.on_add = nullptr, .on_update = nullptr, .on_delete = enqueue_owner});
  // In-place restarts and claim bookkeeping follow some JobSets' pods
  // (TrackedJobSetKey).
  auto enqueue_in_place = [q](const ObjectRef& p) {
    if (std::string key = TrackedJobSetKey(*p); !key.empty()) q->Add(key);
  };
  pods_.AddHandlers({.on_add = enqueue_in_place,
                     .on_update = [enqueue_in_place](const ObjectRef&,
                                                     const ObjectRef& p) { enqueue_in_place(p); },
                     .on_delete = enqueue_in_place});
  jobs_.AddHandlers({
      .on_add =
          [this, q](const ObjectRef& j) {
            children_.Upsert(j);
            if (std::string key = OwningJobSetKey(*j); !key.empty()) q->Add(key);
          },
      .on_update =
          [this, q](const ObjectRef& old_job, const ObjectRef& j) {
            const std::string old_key = OwningJobSetKey(*old_job), key = OwningJobSetKey(*j);
            if (old_key != key) children_.Remove(*old_job);
            children_.Upsert(j);
            if (!old_key.empty() && old_key != key) q->Add(old_key);
            if (!key.empty()) q->Add(key);
          },
      .on_delete =
          [this, q](const ObjectRef& j) {
            children_.Remove(*j);
            if (std::string key = OwningJobSetKey(*j); !key.empty()) q->Add(key);
          },
  });
}

absl::StatusOr<Result> JobSetReconciler::Reconcile(const std::string& key) {
  const size_t slash = key.find('/');
  if (slash == std::string::npos) return Result::Done();
  ObjectRef cached = jobsets_.Get(key.substr(0, slash), key.substr(slash + 1));
  if (!cached) {
    absl::MutexLock lock(&written_mu_);
    written_rv_.erase(key);
    return Result::Done();
  }
  if (CacheBehindOwnWrite(key, *cached)) {
    // Our last status write is not in the cache yet; its watch event
    // enqueues the key again (the timer is a safety net).
    return Result::After(absl::Milliseconds(100));
  }
  Sync s{key, cached, js::JobSetView::Parse(*cached), *cached, {}, {}, false, {}, {}};
  if (s.view.ManagedByOther()) return Result::Done();
  api::meta::EnsureTypeMeta(s.js, js::kApiVersion, js::kKind);
  if (s.view.meta.being_deleted()) return FinalizeClaims(s);
  if (s.view.spec.DeletesClaims()) {
    BATCHD_ASSIGN_OR_RETURN(bool wrote, SyncClaimBookkeeping(s));
    if (wrote) return Result::Done();  // Its watch event brings the JobSet back.
  }
  // As upstream: a failed step writes no status (the next attempt
  // recomputes it from the Jobs).
  BATCHD_RETURN_IF_ERROR(SyncJobSet(s));
  BATCHD_RETURN_IF_ERROR(WriteStatus(s));
  return s.requeue ? Result::After(*s.requeue) : Result::Done();
}

absl::Status JobSetReconciler::SyncJobSet(Sync& s) {
  const js::JobSetSpecView& spec = s.view.spec;
  s.jobs = Classify(children_.For(s.key, s.view.meta.uid), s.view.status.restarts);
  s.counts = CountReplicatedJobs(spec, s.jobs);
  s.status_changed |= js::SetReplicatedJobsStatus(s.js, s.counts);
  s.status_changed |= js::SetRestarts(s.js, s.view.status.restarts,
                                      s.view.status.restarts_count_towards_max);
  if (s.view.status.Finished()) return SyncFinished(s);
  BATCHD_RETURN_IF_ERROR(DeleteJobs(s.jobs.previous));
  if (!spec.suspend && AllJobsReady(spec, s.counts)) {
    SetCondition(s, {js::kConditionRestarting, "False", js::kRestartingJobsReadyReason,
                     js::kRestartingJobsReadyMessage},
                 "Normal");
  }
  if (!s.jobs.failed.empty()) {
    ApplyFailurePolicy(s);
    return absl::OkStatus();
  }
  if (!s.jobs.succeeded.empty() && SuccessPolicyMet(spec, s.jobs)) {
    SetCompleted(s);
    return absl::OkStatus();
  }
  if (spec.InPlaceRestart() && !spec.suspend) {
    BATCHD_RETURN_IF_ERROR(SyncInPlaceRestart(s));
    if (js::JobSetStatusView::Parse(s.js).Finished()) return absl::OkStatus();
  }
  BATCHD_RETURN_IF_ERROR(EnsureHeadlessService(s));
  BATCHD_RETURN_IF_ERROR(CreateJobs(s));
  return spec.suspend ? SuspendJobs(s) : ResumeJobs(s);
}

// A finished JobSet: its active Jobs are deleted, and the JobSet itself once
// its TTL has passed.
absl::Status JobSetReconciler::SyncFinished(Sync& s) {
  BATCHD_RETURN_IF_ERROR(DeleteJobs(s.jobs.active));
  std::optional<absl::Duration> remaining = TtlRemaining(s.view, ctx_.clock.Now());
  if (!remaining) return absl::OkStatus();
  if (*remaining > absl::ZeroDuration()) {
    s.requeue = *remaining;
    return absl::OkStatus();
  }
  client::DeleteOptions opts;
  opts.propagation_policy = "Foreground";
  opts.precondition_uid = std::string(s.view.meta.uid);
  absl::Status st = ctx_.client.Delete(jobset_kind_, std::string(s.view.meta.namespace_),
                                       std::string(s.view.meta.name), opts);
  return st.ok() || IsReason(st, "NotFound") ? absl::OkStatus() : st;
}

void JobSetReconciler::ApplyFailurePolicy(Sync& s) {
  const FailureDecision d = DecideFailure(s.view.spec, s.view.status, s.jobs);
  if (d.kind == FailureDecision::Kind::kFail) {
    SetFailed(s, d.reason, d.message);
    return;
  }
  // The restart is this one status write; the next reconcile sees the new
  // attempt number and replaces the Jobs of the old one.
  s.status_changed |= js::SetRestarts(
      s.js, s.view.status.restarts + 1,
      s.view.status.restarts_count_towards_max + (d.counts_towards_max ? 1 : 0));
  SetCondition(s, {js::kConditionRestarting, "True", d.reason, d.message}, "Warning");
  s.events.push_back({"Warning", d.action_reason, d.action_message});
}

absl::Status JobSetReconciler::CreateJobs(Sync& s) {
  const js::JobSetSpecView& spec = s.view.spec;
  const bool in_order = !spec.suspend && spec.in_order_startup;
  // BlockingRecreate: nothing new until every Job of the old attempt is gone.
  const bool blocked = spec.failure_policy &&
                       spec.failure_policy->restart_strategy ==
                           js::RestartStrategy::kBlockingRecreate &&
                       !s.jobs.previous.empty();
  for (const js::ReplicatedJobView& rjob : spec.replicated_jobs) {
    if (!DependenciesReached(rjob, spec, s.counts)) continue;
    if (in_order && AllReplicasStarted(rjob.replicas, FindCounts(s.counts, rjob.name))) continue;
    std::vector<std::string> errors;
    for (int64_t i = 0; i < rjob.replicas && !blocked; ++i) {
      if (s.jobs.Has(js::ChildJobName(s.view.meta.name, rjob.name, i))) continue;
      if (absl::Status st = CreateJob(s, rjob, i); !st.ok()) errors.emplace_back(st.message());
    }
    if (!errors.empty()) {
      const std::string msg = absl::StrJoin(errors, "\n");
      ctx_.events.Event(s.js, "Warning", js::kJobCreationFailedReason, msg);
      return absl::UnavailableError(msg);
    }
    // InOrder: the next replicated job waits until these Jobs are ready.
    if (in_order) {
      SetCondition(s, {js::kConditionStartupInProgress, "True", js::kInOrderInProgressReason,
                       js::kInOrderInProgressMessage},
                   "Normal");
      return absl::OkStatus();
    }
  }
  if (in_order) {
    SetCondition(s, {js::kConditionStartupCompleted, "True", js::kInOrderCompletedReason,
                     js::kInOrderCompletedMessage},
                 "Normal");
  }
  return absl::OkStatus();
}

absl::Status JobSetReconciler::CreateJob(Sync& s, const js::ReplicatedJobView& rjob,
                                         int64_t index) {
  Json job = js::NewChildJob(s.js, s.view, rjob, index);
  const std::string ns(s.view.meta.namespace_), name = api::meta::GetName(job);
  auto created = ctx_.client.Create(job_kind_, ns, std::move(job));
  if (created.ok()) return absl::OkStatus();
  if (IsReason(created.status(), "AlreadyExists")) {
    // Ours, not in the cache yet: nothing to do. Somebody else's: an error.
    auto live = ctx_.client.Get(job_kind_, ns, name);
    if (live.ok() && api::meta::IsControlledBy(*live, s.view.meta.uid)) return absl::OkStatus();
  }
  return absl::Status(created.status().code(),
                      absl::StrCat("job \"", name, "\" creation failed with error: ",
                                   created.status().message()));
}

// With DNS hostnames enabled, the headless Service named after the
// subdomain, unless a Service of that name exists (as upstream, whoever owns
// it). Its EndpointSlices give each pod's hostname an address.
absl::Status JobSetReconciler::EnsureHeadlessService(Sync& s) {
  if (!s.view.spec.enable_dns_hostnames) return absl::OkStatus();
  const std::string ns(s.view.meta.namespace_), name(s.view.Subdomain());
  if (services_.Get(ns, name)) return absl::OkStatus();
  auto created = ctx_.client.Create(service_kind_, ns, js::NewHeadlessService(s.js, s.view));
  if (created.ok() || IsReason(created.status(), "AlreadyExists")) return absl::OkStatus();
  ctx_.events.Event(s.js, "Warning", js::kHeadlessServiceCreationFailedReason,
                    std::string(created.status().message()));
  return created.status();
}

// In-place restart (internal/in_place.h): reads the pods of the current
// attempt, asks them for the next generation or releases the barrier, and
// keeps status.current/previousInPlaceRestartAttempt.
absl::Status JobSetReconciler::SyncInPlaceRestart(Sync& s) {
  const std::string ns(s.view.meta.namespace_);
  const std::string attempt = std::to_string(s.view.status.restarts);
  std::vector<InPlacePod> pods;
  for (const ObjectRef& p :
       pods_.ListMatching(ns, absl::StrCat(js::kJobSetNameKey, "=", Sv(s.view.meta.name)))) {
    if (api::meta::GetLabel(*p, js::kJobSetUidKey) != std::string(s.view.meta.uid) ||
        api::meta::GetLabel(*p, js::kRestartsKey) != attempt || api::meta::IsBeingDeleted(*p) ||
        api::StringMember(api::Member(*p, "status"), "phase") == "Failed") {
      continue;
    }
    pods.push_back(ParseInPlacePod(*p));
  }
  const InPlaceDecision d =
      DecideInPlace(pods, s.view.spec.TotalPods(), s.view.status.restarts_count_towards_max,
                    s.view.spec.failure_policy->max_restarts, s.view.status.current_in_place_attempt);
  if (d.fail) {
    SetFailed(s, js::kReachedMaxRestartsReason, js::kReachedMaxRestartsMessage);
    return absl::OkStatus();
  }
  absl::Status first;
  for (const InPlacePatch& patch : d.patches) {
    auto r = ctx_.client.MergePatch(pod_kind_, patch.ns, patch.name, InPlacePatchBody(patch),
                                    /*status=*/false);
    if (!r.ok() && !IsReason(r.status(), "NotFound") && first.ok()) first = r.status();
  }
  BATCHD_RETURN_IF_ERROR(first);
  if (d.started_generation >= 0) {
    s.events.push_back({"Warning", js::kInPlaceRestartReason,
                        absl::StrCat("restarting every pod in place (attempt ",
                                     d.started_generation, "): ", d.restart_message)});
    s.status_changed = true;  // The event goes out with the status write.
  }
  s.status_changed |= js::SetInPlaceRestartAttempts(s.js, d.current, d.previous);
  return absl::OkStatus();
}

std::vector<ObjectRef> JobSetReconciler::PodsOf(const Sync& s) const {
  std::vector<ObjectRef> out;
  for (const ObjectRef& p : pods_.ListMatching(
           std::string(s.view.meta.namespace_),
           absl::StrCat(js::kJobSetNameKey, "=", Sv(s.view.meta.name)))) {
    if (api::meta::GetLabel(*p, js::kJobSetUidKey) == std::string(s.view.meta.uid) &&
        !api::meta::GetLabel(*p, js::kClaimCleanupLabel)) {
      out.push_back(p);
    }
  }
  return out;
}

void JobSetReconciler::RememberWrite(const std::string& key, const Json& written) {
  int64_t rv = 0;
  if (!absl::SimpleAtoi(api::meta::GetResourceVersion(written), &rv)) return;
  absl::MutexLock lock(&written_mu_);
  int64_t& last = written_rv_[key];
  last = std::max(last, rv);
}

absl::StatusOr<bool> JobSetReconciler::SyncClaimBookkeeping(Sync& s) {
  Json updated = *s.cached;
  api::meta::EnsureTypeMeta(updated, js::kApiVersion, js::kKind);
  bool changed = api::meta::AddFinalizer(updated, js::kVolumeClaimsFinalizer);
  std::set<std::string> nodes = RecordedClaimNodes(updated);
  const size_t before = nodes.size();
  for (const ObjectRef& p : PodsOf(s)) {
    const std::string_view node = api::core_v1::PodView::Parse(*p).node_name;
    if (!node.empty() && HasClaimVolume(*p)) nodes.emplace(node);
  }
  if (nodes.size() != before) {
    api::meta::SetAnnotation(updated, js::kClaimNodesAnnotation, ClaimNodesValue(nodes));
    changed = true;
  }
  if (!changed) return false;
  auto written = ctx_.client.Update(jobset_kind_, std::move(updated));
  if (!written.ok()) return written.status();
  RememberWrite(s.key, *written);
  return true;
}

// A deleted JobSet with claims to delete: its Jobs go, then, once none of
// its pods is left, a cleanup pod runs on each recorded node that still
// exists (simulated nodes hold no directories); when all have succeeded the
// cleanup pods and the finalizer go.
absl::StatusOr<Result> JobSetReconciler::FinalizeClaims(Sync& s) {
  if (!api::meta::HasFinalizer(s.js, js::kVolumeClaimsFinalizer)) return Result::Done();
  const ChildJobs jobs = Classify(children_.For(s.key, s.view.meta.uid), s.view.status.restarts);
  for (const auto* list : {&jobs.active, &jobs.succeeded, &jobs.failed, &jobs.previous}) {
    BATCHD_RETURN_IF_ERROR(DeleteJobs(*list));
  }
  if (!PodsOf(s).empty()) return Result::After(absl::Milliseconds(500));
  const std::string ns(s.view.meta.namespace_);
  const std::vector<std::string> claims = ClaimsToDelete(s.view);
  bool done = true;
  size_t index = 0;
  for (const std::string& node : RecordedClaimNodes(s.js)) {
    const size_t i = index++;
    ObjectRef n = nodes_.Get("", node);
    if (!n || api::meta::GetAnnotation(*n, "batchd.io/simulated") == "true") continue;
    const std::string name = ClaimCleanupPodName(s.view.meta.name, i);
    ObjectRef pod = pods_.Get(ns, name);
    if (!pod) {
      auto created = ctx_.client.Create(pod_kind_, ns, NewClaimCleanupPod(s.view, node, i, claims));
      if (!created.ok() && !IsReason(created.status(), "AlreadyExists")) return created.status();
      done = false;
      continue;
    }
    const std::string_view phase = api::StringMember(api::Member(*pod, "status"), "phase");
    if (phase == "Succeeded") continue;
    done = false;
    if (phase == "Failed" && !api::meta::IsBeingDeleted(*pod)) {
      ctx_.events.Event(s.js, "Warning", "VolumeClaimDeletionFailed",
                        absl::StrCat("deleting the claims on node ", node, " failed; retrying"));
      (void)ctx_.client.Delete(pod_kind_, ns, name, {});
    }
  }
  if (!done) return Result::After(absl::Milliseconds(500));
  for (const ObjectRef& p : pods_.ListMatching(
           ns, absl::StrCat(js::kClaimCleanupLabel, "=", Sv(s.view.meta.uid)))) {
    absl::Status st = ctx_.client.Delete(pod_kind_, ns, api::meta::GetName(*p), {});
    if (!st.ok() && !IsReason(st, "NotFound")) return st;
  }
  Json updated = *s.cached;
  api::meta::EnsureTypeMeta(updated, js::kApiVersion, js::kKind);
  api::meta::RemoveFinalizer(updated, js::kVolumeClaimsFinalizer);
  auto written = ctx_.client.Update(jobset_kind_, std::move(updated));
  if (!written.ok() && !IsReason(written.status(), "NotFound")) return written.status();
  return Result::Done();
}

// Deletes with foreground propagation (the Job goes once its pods have), as
// upstream; Jobs already being deleted are left alone.
absl::Status JobSetReconciler::DeleteJobs(const std::vector<ChildJob>& jobs) {
  absl::Status first;
  for (const ChildJob& j : jobs) {
    if (j.view.meta.being_deleted()) continue;
    client::DeleteOptions opts;
    opts.propagation_policy = "Foreground";
    opts.precondition_uid = std::string(j.view.meta.uid);
    absl::Status st = ctx_.client.Delete(job_kind_, std::string(j.view.meta.namespace_),
                                         std::string(j.name()), opts);
    if (!st.ok() && !IsReason(st, "NotFound") && first.ok()) first = st;
  }
  return first;
}

absl::Status JobSetReconciler::SuspendJobs(Sync& s) {
  for (const ChildJob& j : s.jobs.active) {
    if (j.view.spec.suspend) continue;
    Json job = *j.ref;
    api::meta::EnsureTypeMeta(job, "batch/v1", "Job");
    api::batch_v1::SetSuspend(job, true);
    BATCHD_RETURN_IF_ERROR(ctx_.client.Update(job_kind_, std::move(job)).status());
  }
  SetCondition(s, {js::kConditionSuspended, "True", js::kSuspendedReason, js::kSuspendedMessage},
               "Normal");
  SetCondition(s, {js::kConditionRestarting, "False", js::kRestartingJobSetSuspendedReason,
                   js::kSuspendedMessage},
               "Normal");
  return absl::OkStatus();
}

// Resumes the suspended Jobs of each replicated job whose dependencies are
// reached (one replicated job at a time under InOrder).
absl::Status JobSetReconciler::ResumeJobs(Sync& s) {
  const js::JobSetSpecView& spec = s.view.spec;
  for (const js::ReplicatedJobView& rjob : spec.replicated_jobs) {
    if (!DependenciesReached(rjob, spec, s.counts)) continue;
    if (spec.in_order_startup &&
        AllReplicasStarted(rjob.replicas, FindCounts(s.counts, rjob.name))) {
      continue;
    }
    for (const ChildJob& j : s.jobs.active) {
      if (j.rjob == rjob.name && j.view.spec.suspend) BATCHD_RETURN_IF_ERROR(ResumeJob(j, rjob));
    }
    if (spec.in_order_startup) {
      SetCondition(s, {js::kConditionStartupInProgress, "True", js::kInOrderInProgressReason,
                       js::kInOrderInProgressMessage},
                   "Normal");
      return absl::OkStatus();
    }
  }
  SetCondition(s, {js::kConditionSuspended, "False", js::kResumedReason, js::kResumedMessage},
               "Normal");
  return absl::OkStatus();
}

// Unsuspends a Job, first bringing in the pod template fields that may have
// changed while the JobSet was suspended (labels, annotations, nodeSelector,
// tolerations, schedulingGates: merged, as other controllers may have added
// their own). A Job that ran before loses its startTime first, as Kubernetes
// allows template edits only on never-started suspended Jobs.
absl::Status JobSetReconciler::ResumeJob(const ChildJob& j, const js::ReplicatedJobView& rjob) {
  Json job = *j.ref;
  api::meta::EnsureTypeMeta(job, "batch/v1", "Job");
  if (api::batch_v1::ClearJobStartTime(job)) {
    BATCHD_ASSIGN_OR_RETURN(job, ctx_.client.UpdateStatus(job_kind_, std::move(job)));
    api::meta::EnsureTypeMeta(job, "batch/v1", "Job");
  }
  const Json& tmpl =
      rjob.job_template ? api::MemberAt(*rjob.job_template, {"spec", "template"}) : Json();
  const Json& tmeta = api::MemberObject(tmpl, "metadata");
  const Json& tspec = api::MemberObject(tmpl, "spec");
  api::batch_v1::MergeTemplateLabels(job, api::MemberObject(tmeta, "labels"));
  api::batch_v1::MergeTemplateAnnotations(job, api::MemberObject(tmeta, "annotations"));
  api::batch_v1::MergeTemplateNodeSelector(job, api::MemberObject(tspec, "nodeSelector"));
  api::batch_v1::MergeTemplateTolerations(job, api::MemberArray(tspec, "tolerations"));
  for (const Json& gate : api::MemberArray(tspec, "schedulingGates")) {
    std::string_view name = api::StringMember(gate, "name");
    if (!name.empty()) api::batch_v1::AddTemplateSchedulingGate(job, name);
  }
  api::batch_v1::SetSuspend(job, false);
  return ctx_.client.Update(job_kind_, std::move(job)).status();
}

absl::Status JobSetReconciler::WriteStatus(Sync& s) {
  if (!s.status_changed) return absl::OkStatus();
  auto written = ctx_.client.UpdateStatus(jobset_kind_, s.js);
  if (!written.ok()) return written.status();
  RememberWrite(s.key, *written);
  for (const PendingEvent& e : s.events) ctx_.events.Event(s.js, e.type, e.reason, e.message);
  return absl::OkStatus();
}

void JobSetReconciler::SetCondition(Sync& s, api::meta::Condition c, const char* event_type) {
  if (!js::SetJobSetCondition(s.js, c, ctx_.clock.Now())) return;
  s.status_changed = true;
  s.events.push_back({event_type, std::move(c.reason), std::move(c.message)});
}

void JobSetReconciler::SetFailed(Sync& s, const std::string& reason, const std::string& message) {
  SetCondition(s, {js::kConditionFailed, "True", reason, message}, "Warning");
  SetCondition(s, {js::kConditionRestarting, "False", js::kRestartingJobSetFailedReason,
                   js::kRestartingJobSetFailedMessage},
               "Normal");
  s.status_changed |= js::SetTerminalState(s.js, js::kTerminalFailed);
}

void JobSetReconciler::SetCompleted(Sync& s) {
  SetCondition(s, {js::kConditionCompleted, "True", js::kAllJobsCompletedReason,
                   js::kAllJobsCompletedMessage},
               "Normal");
  SetCondition(s, {js::kConditionRestarting, "False", js::kRestartingJobSetCompletedReason,
                   js::kAllJobsCompletedMessage},
               "Normal");
  s.status_changed |= js::SetTerminalState(s.js, js::kTerminalCompleted);
}

bool JobSetReconciler::CacheBehindOwnWrite(const std::string& key, const Json& cached) {
  int64_t rv = 0;
  if (!absl::SimpleAtoi(api::meta::GetResourceVersion(cached), &rv)) return false;
  absl::MutexLock lock(&written_mu_);
  auto it = written_rv_.find(key);
  if (it == written_rv_.end()) return false;
  if (rv >= it->second) {
    written_rv_.erase(it);  // Caught up.
    return false;
  }
  return true;
}

}  // namespace
}  // namespace jobset::internal

void AddJobSetController(reconcile::ControllerContext& ctx) {
  // The handlers own the reconciler (shared_ptr captures), so it lives as
  // long as the manager's informers, which outlive its controllers.
  auto reconciler = std::make_shared<jobset::internal::JobSetReconciler>(ctx);
  reconcile::Controller& c = ctx.manager.AddController(
      std::make_unique<reconcile::Controller>("jobset", *reconciler, ctx.clock));
  reconciler->Wire(c);
  ctx.informers.For(ctx.client.Kind(api::jobset_v1alpha2::kGroup,
                                    api::jobset_v1alpha2::kVersion,
                                    api::jobset_v1alpha2::kPlural))
      .AddHandlers({.on_add = [reconciler](const client::ObjectRef&) { (void)reconciler; }});
}

}  // namespace batchd::controllers
