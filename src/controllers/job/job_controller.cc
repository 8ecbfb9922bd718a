// The Job controller's driver: informer wiring, Reconcile's entry checks
// (missing / foreign-managed / finished Jobs, orphaned pods), status writes
// and finalizer removal.
#include "controllers/job/job_controller.h"

#include <memory>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "api/batch/v1/batch_v1.h"
#include "api/meta/object_meta.h"
#include "client/update_loop.h"
#include "api/meta/object_writers.h"
#include "controllers/job/job_reconciler.h"
#include "registry/errors.h"

namespace batchd::controllers {

using reconcile::Controller;
using reconcile::ControllerContext;

void AddJobController(ControllerContext& ctx, JobControllerOptions opts) {
  // The handlers own the reconciler (shared_ptr captures), so it lives as
  // long as the manager's informers, which outlive its controllers.
  auto reconciler = std::make_shared<job::JobReconciler>(ctx, opts);
  Controller& c = ctx.manager.AddController(
      std::make_unique<Controller>("job-controller", *reconciler, ctx.clock));
  reconciler->Wire(c);
  // Keep-alive: this no-op handler holds the reconciler for the informer's
  // lifetime (Manager owns controllers but not their reconcilers).
  ctx.informers.For(ctx.client.Kind("batch", "v1", "jobs"))
      .AddHandlers({.on_add = [reconciler](const client::ObjectRef&) { (void)reconciler; }});
}

}  // namespace batchd::controllers

namespace batchd::controllers::job {

using reconcile::Result;

using api::Json;

namespace {

using registry::IsReason;

using api::meta::EnsureTypeMeta;

// The working copy of a Job: the informer's copy but its spec. The spec is
// read through SyncCtx::spec (a view into the informer's copy), and a status
// write sends only metadata and status (the status subresource keeps the
// stored spec), so the spec — most of a Job: its pod template — is not
// copied on every sync (most change nothing).
Json WorkingCopy(const Json& job) {
  Json out = Json::object();
  if (!job.is_object()) return out;
  for (auto it = job.begin(); it != job.end(); ++it) {
    if (it.key() != "spec") out.emplace(it.key(), *it);
  }
  return out;
}

}  // namespace

JobReconciler::JobReconciler(ControllerContext& ctx, const JobControllerOptions& opts)
    : ctx_(ctx),
      job_kind_(ctx.client.Kind("batch", "v1", "jobs")),
      pod_kind_(ctx.client.Kind("", "v1", "pods")),
      jobs_(ctx.informers.For(job_kind_)),
      pods_(ctx.informers.For(pod_kind_)),
      pod_groups_(opts.workload_with_job ? std::make_unique<PodGroupSource>(ctx) : nullptr) {}

void JobReconciler::Wire(Controller& controller) {
  client::WorkQueue* q = &controller.queue();
  jobs_.AddHandlers({
      .on_add = [q](const client::ObjectRef& o) { q->Add(client::Informer::KeyOf(*o)); },
      .on_update = [q](const client::ObjectRef&,
                       const client::ObjectRef& o) { q->Add(client::Informer::KeyOf(*o)); },
      .on_delete = [q](const client::ObjectRef& o) { q->Add(client::Informer::KeyOf(*o)); },
  });
  pods_.AddHandlers({
      .on_add =
          [this, q](const client::ObjectRef& p) {
            index_.Upsert(p);
            std::string key = ControllingJobKey(*p);
            if (key.empty()) return;
            expectations_.CreationObserved(key);
            if (api::meta::IsBeingDeleted(*p)) {
              expectations_.DeletionObserved(key, api::meta::GetUid(*p));
            }
            q->Add(key);
          },
      .on_update =
          [this, q](const client::ObjectRef& old_pod, const client::ObjectRef& p) {
            std::string old_key = ControllingJobKey(*old_pod);
            std::string key = ControllingJobKey(*p);
            if (old_key != key) index_.Remove(*old_pod);
            index_.Upsert(p);
            if (!old_key.empty() && old_key != key) q->Add(old_key);
            if (key.empty()) return;
            const std::string uid = api::meta::GetUid(*p);
            if (api::meta::IsBeingDeleted(*p)) expectations_.DeletionObserved(key, uid);
            if (!api::meta::HasFinalizer(*p, api::batch_v1::kJobTrackingFinalizer)) {
              expectations_.FinalizerRemovalObserved(key, uid);
            }
            q->Add(key);
          },
      .on_delete =
          [this, q](const client::ObjectRef& p) {
            index_.Remove(*p);
            std::string key = ControllingJobKey(*p);
            if (key.empty()) return;
            const std::string uid = api::meta::GetUid(*p);
            expectations_.DeletionObserved(key, uid);
            expectations_.FinalizerRemovalObserved(key, uid);
            q->Add(key);
          },
  });
}

absl::StatusOr<Result> JobReconciler::Reconcile(const std::string& key) {
  const size_t slash = key.find('/');
  if (slash == std::string::npos) return Result::Done();
  // Read the in-flight finalizer removals BEFORE snapshotting the pods: the
  // pod handler updates the index before it clears an expectation, so a
  // removal missing here is already visible in the snapshot. Read after the
  // snapshot, an expectation cleared in between would make a stale pod copy
  // (finalizer still on) look uncounted and count it a second time.
  std::set<std::string> in_flight_removals = expectations_.PendingFinalizerRemovals(key);
  // The same holds for pod creations and deletions: only expectations met
  // before the snapshot guarantee the snapshot shows those pods.
  const bool satisfied_before = expectations_.Satisfied(key, ctx_.clock.Now());
  client::ObjectRef job_ref = jobs_.Get(key.substr(0, slash), key.substr(slash + 1));
  if (job_ref && CacheBehindOwnWrite(key, *job_ref)) {
    // Our last status write is not in the cache yet; its watch event
    // enqueues the key again (the timer is a safety net).
    return Result::After(absl::Milliseconds(100));
  }
  // Pods whose Job is gone (or replaced by a same-named one) lose the
  // finalizer; a finished Job's leftovers too. Nothing else is done for
  // those, so their settled pods (no finalizer left) are not even decoded.
  const bool finished = job_ref && api::batch_v1::IsJobFinished(*job_ref);
  std::vector<client::ObjectRef> pods =
      index_.For(key, pods_, /*skip_settled=*/!job_ref || finished);
  const std::string uid = job_ref ? api::meta::GetUid(*job_ref) : "";
  std::vector<const Json*> release;
  SyncCtx c;
  c.expected_rm_finalizers = std::move(in_flight_removals);
  c.expectations_satisfied = satisfied_before;
  for (const auto& p : pods) {
    bool owned = !uid.empty() && api::meta::IsControlledBy(*p, uid);
    if (owned && !finished) {
      c.pod_refs.push_back(p);
      c.pods.push_back(JobPod::Parse(*p));
    } else if (api::meta::HasFinalizer(*p, api::batch_v1::kJobTrackingFinalizer)) {
      release.push_back(p.get());
    }
  }
  if (!release.empty()) {
    absl::Status err;
    RemoveFinalizers(key, release, &err);
    if (!err.ok()) return err;
  }
  if (!job_ref) {
    expectations_.Forget(key);
    backoff_.Remove(key);
    absl::MutexLock lock(&written_mu_);
    written_rv_.erase(key);
    return Result::Done();
  }
  c.spec = api::batch_v1::JobSpecView::Parse(*job_ref);
  if (!c.spec.managed_by.empty() && c.spec.managed_by != api::batch_v1::kJobControllerName) {
    return Result::Done();
  }
  if (finished) {
    backoff_.Remove(key);
    return Result::Done();
  }
  if (c.spec.completion_mode == api::batch_v1::CompletionMode::kUnknown) {
    ctx_.events.Event(*job_ref, "Warning", "UnknownCompletionMode",
                      "Skipped Job sync because completion mode is unknown");
    return Result::Done();
  }
  c.key = key;
  c.job = WorkingCopy(*job_ref);
  c.status_at_start = api::batch_v1::JobStatusView::Parse(*job_ref);
  c.job_ref = std::move(job_ref);
  EnsureTypeMeta(c.job, "batch/v1", "Job");
  c.now = ctx_.clock.Now();
  c.indexed = c.spec.completion_mode == api::batch_v1::CompletionMode::kIndexed;
  return SyncJob(c);
}

bool JobReconciler::CacheBehindOwnWrite(const std::string& key, const Json& cached) {
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

absl::Status JobReconciler::WriteStatus(SyncCtx& c) {
  // c.job goes into the write (no copy) and comes back as written; every
  // caller gives up the sync when the write fails.
  if (!c.new_pods.empty()) return CreateNewPods(c, /*with_status=*/true);
  auto r = ctx_.client.UpdateStatus(job_kind_, std::move(c.job));
  if (!r.ok()) return r.status();
  AcceptStatusWrite(c, std::move(*r));
  return absl::OkStatus();
}

void JobReconciler::AcceptStatusWrite(SyncCtx& c, Json written) {
  int64_t rv = 0;
  if (absl::SimpleAtoi(api::meta::GetResourceVersion(written), &rv)) {
    absl::MutexLock lock(&written_mu_);
    int64_t& last = written_rv_[c.key];
    last = std::max(last, rv);
  }
  c.job = std::move(written);
  EnsureTypeMeta(c.job, "batch/v1", "Job");
}

absl::Status JobReconciler::CreateNewPods(SyncCtx& c, bool with_status) {
  std::vector<Json> pods = std::move(c.new_pods);
  c.new_pods.clear();
  const size_t n = pods.size();
  std::vector<client::Client::ChainedWrite> chain;
  chain.reserve(n + 1);
  for (Json& pod : pods) {
    chain.push_back({&pod_kind_, std::move(pod), /*status=*/false, /*create=*/true});
  }
  if (with_status) chain.push_back({&job_kind_, std::move(c.job), /*status=*/true});
  std::vector<absl::StatusOr<Json>> r = ctx_.client.WriteChain(std::move(chain));
  absl::Status first_err;
  for (size_t i = 0; i < n; ++i) {
    if (i < r.size() && r[i].ok()) {
      ctx_.events.Event(c.job_ref ? *c.job_ref : c.job, "Normal", "SuccessfulCreate",
                        absl::StrCat("Created pod: ", api::meta::GetName(*r[i])));
      continue;
    }
    expectations_.CreationObserved(c.key);
    if (first_err.ok()) {
      first_err = i < r.size() ? r[i].status() : absl::InternalError("write chain: no result");
      ctx_.events.Event(c.job_ref ? *c.job_ref : c.job, "Warning", "FailedCreate",
                        absl::StrCat("Error creating: ", first_err.message()));
    }
  }
  if (!first_err.ok()) return first_err;
  if (!with_status) return absl::OkStatus();
  if (r.size() != n + 1) return absl::InternalError("write chain: no status result");
  if (!r[n].ok()) return r[n].status();
  AcceptStatusWrite(c, std::move(*r[n]));
  return absl::OkStatus();
}

absl::Status JobReconciler::WriteStatusThenRelease(SyncCtx& c, const std::vector<const Json*>& pods,
                                                   absl::Status* rm_err) {
  if (pods.empty()) return WriteStatus(c);
  std::vector<std::string> uids;
  uids.reserve(pods.size());
  std::vector<client::Client::ChainedWrite> chain;
  chain.reserve(pods.size() + 1);
  chain.push_back({&job_kind_, std::move(c.job), /*status=*/true});
  for (const Json* p : pods) {
    uids.push_back(api::meta::GetUid(*p));
    Json pod = *p;  // The informer's copy: its resourceVersion is the precondition.
    api::meta::RemoveFinalizer(pod, api::batch_v1::kJobTrackingFinalizer);
    chain.push_back({&pod_kind_, std::move(pod), /*status=*/false, /*create=*/false,
                     /*version_only=*/true});
  }
  expectations_.ExpectFinalizerRemovals(c.key, uids);
  std::vector<absl::StatusOr<Json>> r = ctx_.client.WriteChain(std::move(chain));
  if (r.size() != pods.size() + 1 || !r[0].ok()) {
    for (const std::string& uid : uids) expectations_.FinalizerRemovalObserved(c.key, uid);
    return r.empty() ? absl::InternalError("update chain: no result") : r[0].status();
  }
  AcceptStatusWrite(c, std::move(*r[0]));
  // A pod changed since the informer's copy (or one after it in the chain):
  // released on its latest version, as RemoveFinalizers does.
  std::vector<const Json*> again;
  for (size_t i = 0; i < pods.size(); ++i) {
    const absl::Status& st = r[i + 1].status();
    if (st.ok() || IsReason(st, "NotFound")) continue;
    expectations_.FinalizerRemovalObserved(c.key, uids[i]);
    again.push_back(pods[i]);
  }
  if (!again.empty()) RemoveFinalizers(c.key, again, rm_err);
  return absl::OkStatus();
}

std::vector<bool> JobReconciler::RemoveFinalizers(const std::string& key,
                                                  const std::vector<const Json*>& pods,
                                                  absl::Status* err) {
  std::vector<bool> ok(pods.size(), false);
  std::vector<std::string> uids;
  for (const Json* p : pods) uids.push_back(api::meta::GetUid(*p));
  expectations_.ExpectFinalizerRemovals(key, uids);
  for (size_t i = 0; i < pods.size(); ++i) {
    Json pod = *pods[i];
    const std::string ns = api::meta::GetNamespace(pod), name = api::meta::GetName(pod);
    // From the informer's copy; re-read on a conflict. Gone or replaced by
    // another pod: ours is gone, which is what removing it was for.
    client::UpdateLoopOptions uopts;
    uopts.attempts = 3;
    absl::Status st =
        client::UpdateLoop(ctx_.client, pod_kind_, ns, name, uids[i], std::move(pod),
                           [](Json& p) {
                             return api::meta::RemoveFinalizer(
                                 p, api::batch_v1::kJobTrackingFinalizer);
                           },
                           uopts)
            .status();
    if (st.ok() || IsReason(st, "NotFound")) {
      ok[i] = true;
    } else {
      expectations_.FinalizerRemovalObserved(key, uids[i]);
      if (err->ok()) *err = st;
    }
  }
  return ok;
}

}  // namespace batchd::controllers::job
