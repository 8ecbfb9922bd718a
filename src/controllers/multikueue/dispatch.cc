// "multikueue-workloads": the dispatch state machine of one manager
// Workload whose ClusterQueue applies a MultiKueue AdmissionCheck (Kueue's
// AllAtOnce dispatcher):
//
//  1. Quota reserved on the manager, check Pending, no copy reserving: a
//     copy of the Workload (same name and spec, label
//     kueue.x-k8s.io/multikueue-origin, annotation with the manager's uid)
//     on every reachable worker of the MultiKueueConfig;
//     status.nominatedClusterNames lists them.
//  2. A copy holds quota on worker W (the one in status.clusterName when
//     several do, else the first in the config's order): the copies on the
//     other workers are deleted, the Job is created on W only (a copy of the
//     manager's Job with the label kueue.x-k8s.io/prebuilt-workload-name, no
//     managedBy, suspended: W's job integration adopts the prebuilt Workload
//     and starts it), status.clusterName = W, and the check is Ready — or,
//     for a Job not `managedBy: kueue.x-k8s.io/multikueue`, stays Pending
//     with the same message, so the manager's Job stays suspended (Kueue's
//     behaviour for Jobs without managedBy).
//  3. While it runs: a managedBy Job's status is copied from W's Job.
//     When W's Workload is Finished, the condition is copied to the
//     manager's Workload.
//  4. Finished, quota released, or the check Retry/Rejected: every copy
//     (Job, then Workload) is deleted. A deleted manager Workload deletes
//     its copies too (and the garbage collection catches what is missed).
//  5. W's copy lost its reservation (evicted there, or deleted): Retry. W
//     unreachable: after workerLostTimeout (counted from W's first failed
//     probe), Retry; the check controller then evicts and requeues the
//     workload, which is dispatched again.
//
// A Job is only ever created on the worker whose copy reserved quota, so
// only one copy of it runs — unless W is partitioned from the manager but
// alive past workerLostTimeout (Kueue's trade-off, docs/multikueue.md).
// Owners other than batch/v1 Job are Rejected ("No multikueue adapter").
#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/json_access.h"
#include "api/kueue/kueue.h"
#include "api/kueue/queue_writers.h"
#include "api/kueue/workload_writers.h"
#include "api/meta/conditions.h"
#include "api/meta/object_meta.h"
#include "api/meta/object_writers.h"
#include "common/logging.h"
#include "controllers/admissioncheck/admission_checks.h"
#include "controllers/multikueue/internal/multikueue_impl.h"

namespace batchd::controllers::multikueue::internal {

using admissioncheck::CheckStateUpdate;
using admissioncheck::SetCheckState;
using api::MemberArray;
using api::MemberObject;
using api::StringMember;
using api::meta::kConditionTrue;
using client::ObjectRef;
using reconcile::Result;

namespace {

bool IsGone(const absl::Status& s) { return absl::IsNotFound(s); }

bool Reserving(const Json& wl) {
  return api::meta::IsConditionTrue(wl, api::kueue::kQuotaReserved) ||
         api::meta::IsConditionTrue(wl, api::kueue::kFinished);
}

}  // namespace

Json RemoteWorkload(const Json& local, const std::string& origin) {
  Json meta = {{"name", api::meta::GetName(local)},
               {"namespace", api::meta::GetNamespace(local)}};
  const Json& m = MemberObject(local, "metadata");
  if (api::HasMember(m, "labels")) meta["labels"] = m["labels"];
  meta["labels"][kOriginLabel] = origin;
  meta["annotations"] = Json::object();
  meta["annotations"][kOriginUidAnnotation] = api::meta::GetUid(local);
  return {{"apiVersion", std::string(api::kueue::kGroup) + "/" + api::kueue::kStorageVersion},
          {"kind", "Workload"},
          {"metadata", std::move(meta)},
          {"spec", MemberObject(local, "spec")}};
}

Json RemoteJob(const Json& local_job, const std::string& workload_name,
               const std::string& origin) {
  Json meta = {{"name", api::meta::GetName(local_job)},
               {"namespace", api::meta::GetNamespace(local_job)}};
  const Json& m = MemberObject(local_job, "metadata");
  if (api::HasMember(m, "labels")) meta["labels"] = m["labels"];
  if (api::HasMember(m, "annotations")) meta["annotations"] = m["annotations"];
  meta["labels"][kPrebuiltWorkloadLabel] = workload_name;
  meta["labels"][kOriginLabel] = origin;
  meta["annotations"][kOriginUidAnnotation] = api::meta::GetUid(local_job);
  // The manager's bookkeeping stays there.
  meta["annotations"].erase("batchd.io/original-podsets-info");
  meta["annotations"].erase("kueue.x-k8s.io/stopping");
  Json spec = MemberObject(local_job, "spec");
  spec.erase("managedBy");
  // The worker's Job controller picks its own selector and uid labels.
  if (!api::IntMember(spec, "manualSelector", 0) &&
      !(spec.contains("manualSelector") && spec["manualSelector"].is_boolean() &&
        spec["manualSelector"].get<bool>())) {
    spec.erase("selector");
    if (const Json* labels = api::FindMemberAt(spec, {"template", "metadata", "labels"});
        labels != nullptr && labels->is_object()) {
      Json& l = spec["template"]["metadata"]["labels"];
      for (const char* k : {"controller-uid", "batch.kubernetes.io/controller-uid"}) l.erase(k);
    }
  }
  spec["suspend"] = true;
  return {{"apiVersion", "batch/v1"}, {"kind", "Job"}, {"metadata", std::move(meta)},
          {"spec", std::move(spec)}};
}

struct DispatchReconciler::Remote {
  std::string cluster;
  std::shared_ptr<client::Client> client;
  bool reachable = false;
  std::optional<Json> wl;  // our copy (uid matches), if any
};

DispatchReconciler::DispatchReconciler(reconcile::ControllerContext& ctx,
                                       const MultiKueueOptions& opts,
                                       std::shared_ptr<Workers> workers)
    : ctx_(ctx),
      opts_(opts),
      workers_(std::move(workers)),
      wl_kind_(ctx.client.Kind(api::kueue::kGroup, api::kueue::kStorageVersion,
                               api::kueue::kWorkloads)),
      job_kind_(ctx.client.Kind("batch", "v1", "jobs")),
      workloads_(ctx.informers.For(wl_kind_)),
      jobs_(ctx.informers.For(job_kind_)),
      checks_(ctx.informers.For(api::kueue::kGroup, api::kueue::kStorageVersion,
                                api::kueue::kAdmissionChecks)),
      configs_(ctx.informers.For(api::kueue::kGroup, api::kueue::kStorageVersion,
                                 api::kueue::kMultiKueueConfigs)),
      lookup_{checks_, configs_} {}

reconcile::Controller& DispatchReconciler::Register() {
  controller_ = &ctx_.manager.AddController(
      std::make_unique<reconcile::Controller>("multikueue-workloads", *this, ctx_.clock));
  reconcile::Controller* c = controller_;
  auto on_wl = [this, c](const ObjectRef& o) {
    for (const Json& s : MemberArray(MemberObject(*o, "status"), "admissionChecks")) {
      if (lookup_.IsOurs(std::string(StringMember(s, "name")))) {
        c->Enqueue(*o);
        return;
      }
    }
  };
  workloads_.AddHandlers({on_wl, [on_wl](const ObjectRef&, const ObjectRef& n) { on_wl(n); },
                          [this, c](const ObjectRef& o) {
                            const std::string key = client::Informer::KeyOf(*o);
                            absl::MutexLock lock(&mu_);
                            if (dispatched_.count(key) > 0) c->queue().Add(key);
                          }});
  return *controller_;
}

bool DispatchReconciler::RemoveRemote(const std::string& ns, const std::string& name,
                                      const std::vector<std::string>& clusters) {
  bool all = true;
  client::DeleteOptions bg;
  bg.propagation_policy = "Background";
  std::string job_hint;
  {
    absl::MutexLock lock(&mu_);
    auto it = dispatched_.find(ns + "/" + name);
    if (it != dispatched_.end() && !it->second.empty()) job_hint = it->second.back();
  }
  for (const std::string& cluster : clusters) {
    std::optional<Worker> w = workers_->Get(cluster);
    if (!w || !w->active || !w->client) {
      all = false;
      continue;
    }
    client::Client& remote = *w->client;
    const api::KindDef& wl_kind =
        remote.Kind(api::kueue::kGroup, api::kueue::kStorageVersion, api::kueue::kWorkloads);
    const api::KindDef& job_kind = remote.Kind("batch", "v1", "jobs");
    auto copy = remote.Get(wl_kind, ns, name);
    if (!copy.ok() && !IsGone(copy.status())) {
      all = false;
      continue;
    }
    std::set<std::string> jobs;
    if (!job_hint.empty()) jobs.insert(job_hint);
    if (copy.ok()) {
      if (auto ref = api::meta::GetControllerRef(*copy); ref && ref->kind == "Job") {
        jobs.insert(ref->name);
      }
    }
    for (const std::string& j : jobs) {
      auto job = remote.Get(job_kind, ns, j);
      if (!job.ok()) {
        if (!IsGone(job.status())) all = false;
        continue;
      }
      // Only our copy of it.
      if (api::meta::GetLabel(*job, kPrebuiltWorkloadLabel).value_or("") != name ||
          !api::meta::GetLabel(*job, kOriginLabel)) {
        continue;
      }
      absl::Status s = remote.Delete(job_kind, ns, j, bg);
      if (!s.ok() && !IsGone(s)) all = false;
    }
    if (copy.ok()) {
      absl::Status s = remote.Delete(wl_kind, ns, name, bg);
      if (!s.ok() && !IsGone(s)) all = false;
    }
  }
  return all;
}

// The copies are gone: a suspended managedBy Job keeps no status mirrored
// from them (its active pods would hold the quota forever, as nothing else
// writes that Job's status).
absl::Status DispatchReconciler::ResetMirroredStatus(const Json& wl) {
  auto owner = api::meta::GetControllerRef(wl);
  if (!owner || owner->api_version != "batch/v1" || owner->kind != "Job") return absl::OkStatus();
  ObjectRef job = jobs_.Get(api::meta::GetNamespace(wl), owner->name);
  if (!job) return absl::OkStatus();
  const Json& spec = MemberObject(*job, "spec");
  const Json& st = MemberObject(*job, "status");
  if (StringMember(spec, "managedBy") != kControllerName || !api::BoolMember(spec, "suspend") ||
      st.empty()) {
    return absl::OkStatus();
  }
  for (const char* done : {"Complete", "Failed"}) {
    if (api::meta::IsConditionTrue(*job, done)) return absl::OkStatus();
  }
  Json reset = *job;
  reset["status"] = Json::object();
  api::meta::EnsureTypeMeta(reset, "batch/v1", "Job");
  auto r = ctx_.client.UpdateStatus(job_kind_, std::move(reset));
  if (!r.ok() && !absl::IsNotFound(r.status()) && !absl::IsAborted(r.status())) {
    return r.status();
  }
  return absl::OkStatus();
}

absl::StatusOr<Result> DispatchReconciler::WorkloadGone(const std::string& ns,
                                                        const std::string& name) {
  const std::string key = ns + "/" + name;
  std::vector<std::string> clusters;
  {
    absl::MutexLock lock(&mu_);
    auto it = dispatched_.find(key);
    if (it == dispatched_.end()) return Result::Done();
    clusters.assign(it->second.begin(), it->second.end() - 1);  // the last entry is the job
  }
  if (!RemoveRemote(ns, name, clusters)) return Result::After(opts_.sync_interval);
  absl::MutexLock lock(&mu_);
  dispatched_.erase(key);
  return Result::Done();
}

absl::StatusOr<Result> DispatchReconciler::Reconcile(const std::string& key) {
  const size_t slash = key.find('/');
  if (slash == std::string::npos) return Result::Done();
  const std::string ns = key.substr(0, slash), name = key.substr(slash + 1);
  ObjectRef ref = workloads_.Get(ns, name);
  if (!ref) return WorkloadGone(ns, name);
  const Json& wl = *ref;
  const Json& status = MemberObject(wl, "status");
  std::string check, state;
  for (const Json& s : MemberArray(status, "admissionChecks")) {
    if (lookup_.IsOurs(std::string(StringMember(s, "name")))) {
      check = std::string(StringMember(s, "name"));
      state = std::string(StringMember(s, "state"));
      break;
    }
  }
  if (check.empty()) return Result::Done();
  std::string problem;
  const std::vector<std::string> clusters = lookup_.ClustersOf(*checks_.Get("", check), &problem);
  if (!problem.empty()) return Result::Done();  // The check is inactive (and so its queues).
  const absl::Time now = ctx_.clock.Now();
  auto remember = [&](const std::string& job) {
    std::vector<std::string> v = clusters;
    v.push_back(job);
    absl::MutexLock lock(&mu_);
    dispatched_[key] = std::move(v);
  };
  auto forget = [&] {
    absl::MutexLock lock(&mu_);
    dispatched_.erase(key);
  };
  auto write = [&](api::kueue::StatusUpdate& update) -> absl::Status {
    if (!update.changed()) return absl::OkStatus();
    auto r = ctx_.client.UpdateStatus(
        wl_kind_, std::move(update).Build(wl_kind_.ApiVersion(), wl_kind_.kind));
    // Gone, or changed since read: the newer version's event enqueues it.
    if (!r.ok() && !absl::IsNotFound(r.status()) && !absl::IsAborted(r.status())) {
      return r.status();
    }
    return absl::OkStatus();
  };

  const bool finished = api::meta::IsConditionTrue(wl, api::kueue::kFinished);
  const bool reserved = api::HasMember(status, "admission") &&
                        api::meta::IsConditionTrue(wl, api::kueue::kQuotaReserved) &&
                        !api::meta::IsConditionTrue(wl, api::kueue::kEvicted);
  if (finished || !reserved || state == admissioncheck::kRetry ||
      state == admissioncheck::kRejected) {
    const bool removed = RemoveRemote(ns, name, clusters);
    if (!finished && !reserved) {
      api::kueue::StatusUpdate update(wl);
      update.status().erase("clusterName");
      update.status().erase("nominatedClusterNames");
      if (absl::Status s = write(update); !s.ok()) return s;
    }
    // (Also when a lost worker keeps its copy: it was given up on.)
    if (!finished && !reserved) {
      if (absl::Status s = ResetMirroredStatus(wl); !s.ok()) return s;
    }
    if (!removed) return Result::After(opts_.sync_interval);
    forget();
    return Result::Done();
  }

  api::kueue::StatusUpdate update(wl);
  auto owner = api::meta::GetControllerRef(wl);
  if (!owner || owner->api_version != "batch/v1" || owner->kind != "Job") {
    CheckStateUpdate rejected;
    rejected.state = admissioncheck::kRejected;
    rejected.message = absl::StrCat("No multikueue adapter found for owner kind \"",
                                    owner ? owner->api_version + "/" + owner->kind : "", "\"");
    SetCheckState(update.status(), check, rejected, now);
    if (absl::Status s = write(update); !s.ok()) return s;
    return Result::Done();
  }
  ObjectRef job = jobs_.Get(ns, owner->name);
  if (!job) return Result::After(opts_.sync_interval);  // not in the cache yet
  const bool managed = StringMember(MemberObject(*job, "spec"), "managedBy") == kControllerName;
  remember(owner->name);

  // What each worker holds.
  const std::string uid = api::meta::GetUid(wl);
  std::vector<Remote> remotes;
  for (const std::string& cluster : clusters) {
    Remote r;
    r.cluster = cluster;
    std::optional<Worker> w = workers_->Get(cluster);
    if (w && w->active && w->client) {
      r.client = w->client;
      auto got = r.client->Get(
          r.client->Kind(api::kueue::kGroup, api::kueue::kStorageVersion, api::kueue::kWorkloads),
          ns, name);
      if (got.ok()) {
        r.reachable = true;
        if (api::meta::GetAnnotation(*got, kOriginUidAnnotation).value_or("") == uid) {
          r.wl = std::move(*got);
        } else {
          // A copy of an earlier workload of this name: withdraw it.
          RemoveRemote(ns, name, {cluster});
        }
      } else if (IsGone(got.status())) {
        r.reachable = true;
      } else {
        BATCHD_LOG_DEBUG("multikueue: {} on {}: {}", key, cluster, got.status().ToString());
      }
    }
    remotes.push_back(std::move(r));
  }
  const std::string current(StringMember(status, "clusterName"));
  int winner = -1;
  for (size_t i = 0; i < remotes.size(); ++i) {
    if (!remotes[i].wl || !Reserving(*remotes[i].wl)) continue;
    if (winner < 0 || remotes[i].cluster == current) winner = static_cast<int>(i);
  }

  if (winner >= 0) {
    Remote& w = remotes[static_cast<size_t>(winner)];
    for (const Remote& r : remotes) {
      if (&r != &w && r.wl) RemoveRemote(ns, name, {r.cluster});
    }
    const api::KindDef& rjob_kind = w.client->Kind("batch", "v1", "jobs");
    auto rjob = w.client->Get(rjob_kind, ns, owner->name);
    if (!rjob.ok() && IsGone(rjob.status()) && !api::meta::IsConditionTrue(*w.wl, api::kueue::kFinished)) {
      auto created = w.client->Create(rjob_kind, ns, RemoteJob(*job, name, opts_.origin));
      if (!created.ok() && !absl::IsAlreadyExists(created.status())) {
        BATCHD_LOG_INFO("multikueue: creating job {}/{} on {}: {}", ns, owner->name, w.cluster,
                        created.status().ToString());
      } else if (created.ok()) {
        ctx_.events.Event(wl, "Normal", "MultiKueue",
                          absl::StrCat("The workload got reservation on \"", w.cluster,
                                       "\"; its Job was created there"));
      }
    } else if (rjob.ok() && managed &&
               MemberObject(*rjob, "status") != MemberObject(*job, "status")) {
      Json mirrored = *job;
      mirrored["status"] = MemberObject(*rjob, "status");
      api::meta::EnsureTypeMeta(mirrored, "batch/v1", "Job");
      auto r = ctx_.client.UpdateStatus(job_kind_, std::move(mirrored));
      if (!r.ok()) {
        BATCHD_LOG_DEBUG("multikueue: syncing job status {}/{}: {}", ns, owner->name,
                         r.status().ToString());
      }
    }
    if (api::meta::IsConditionTrue(*w.wl, api::kueue::kFinished)) {
      const Json* fin = api::meta::FindCondition(*w.wl, api::kueue::kFinished);
      api::kueue::SetCondition(update,
                               {api::kueue::kFinished, kConditionTrue,
                                std::string(StringMember(*fin, "reason")),
                                std::string(StringMember(*fin, "message"))},
                               now);
    }
    CheckStateUpdate ready;
    ready.state = managed ? admissioncheck::kReady : admissioncheck::kPending;
    ready.message = absl::StrCat("The workload got reservation on \"", w.cluster, "\"");
    SetCheckState(update.status(), check, ready, now);
    update.status()["clusterName"] = w.cluster;
    update.status().erase("nominatedClusterNames");
    if (absl::Status s = write(update); !s.ok()) return s;
    return Result::After(opts_.sync_interval);
  }

  if (!current.empty()) {
    // It had a worker and no copy holds quota now.
    auto it = std::find_if(remotes.begin(), remotes.end(),
                           [&](const Remote& r) { return r.cluster == current; });
    std::string why;
    if (it != remotes.end() && it->reachable) {
      why = absl::StrCat("The workload lost its reservation on \"", current, "\"");
    } else {
      std::optional<Worker> w = workers_->Get(current);
      const absl::Time since = w && w->inactive_since ? *w->inactive_since : now;
      if (now - since < opts_.worker_lost_timeout) {
        return Result::After(
            std::min(opts_.sync_interval, opts_.worker_lost_timeout - (now - since)));
      }
      why = absl::StrCat("Reserving remote lost: cluster \"", current,
                         "\" unreachable for more than ",
                         absl::FormatDuration(opts_.worker_lost_timeout));
    }
    CheckStateUpdate retry;
    retry.state = admissioncheck::kRetry;
    retry.message = why;
    SetCheckState(update.status(), check, retry, now);
    update.status().erase("clusterName");
    ctx_.events.Event(wl, "Normal", "MultiKueue", why);
    if (absl::Status s = write(update); !s.ok()) return s;
    return Result::Done();
  }

  // Dispatch: a copy on every reachable worker that lacks one.
  std::vector<std::string> nominated;
  const Json copy = RemoteWorkload(wl, opts_.origin);
  for (Remote& r : remotes) {
    if (!r.reachable) continue;
    if (!r.wl) {
      auto created = r.client->Create(
          r.client->Kind(api::kueue::kGroup, api::kueue::kStorageVersion, api::kueue::kWorkloads),
          ns, copy);
      if (!created.ok() && !absl::IsAlreadyExists(created.status())) {
        BATCHD_LOG_INFO("multikueue: creating workload {} on {}: {}", key, r.cluster,
                        created.status().ToString());
        continue;
      }
    }
    nominated.push_back(r.cluster);
  }
  if (nominated.empty()) {
    update.status().erase("nominatedClusterNames");
  } else {
    update.status()["nominatedClusterNames"] = nominated;
  }
  if (absl::Status s = write(update); !s.ok()) return s;
  return Result::After(opts_.sync_interval);
}

}  // namespace batchd::controllers::multikueue::internal
