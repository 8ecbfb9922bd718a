// "multikueue-workloads": the dispatch state machine of one manager
// Workload whose ClusterQueue applies a MultiKueue AdmissionCheck. What the
// workers hold is read from the manager's watches on them
// (internal/remote_watch.h), never requested per workload; their events
// (and the manager's Workload events) trigger a reconcile.
//
//  1. Quota reserved on the manager, check Pending, no copy reserving: the
//     dispatcher nominates workers — AllAtOnce: every reachable worker of
//     the MultiKueueConfig; Incremental (Kueue's): up to 3 workers not yet
//     nominated, in name order, then 3 more every 5 minutes while none
//     reserves — and a copy of the Workload (same name and spec, label
//     kueue.x-k8s.io/multikueue-origin, annotation with the manager's uid)
//     is created on each reachable nominated worker;
//     status.nominatedClusterNames lists them.
//  2. A copy holds quota on worker W (the one in status.clusterName when
//     several do, else the first in the config's order): the copies on the
//     other workers are deleted, the job (batch/v1 Job or JobSet) is created
//     on W only (a copy of the manager's with the label
//     kueue.x-k8s.io/prebuilt-workload-name, no managedBy, suspended: W's
//     job integration adopts the prebuilt Workload and starts it),
//     status.clusterName = W, and the check is Ready — or, for a Job not
//     `managedBy: kueue.x-k8s.io/multikueue`, stays Pending with the same
//     message, so the manager's Job stays suspended (Kueue's behaviour for
//     Jobs without managedBy). A JobSet not managed by MultiKueue is
//     Rejected ("The owner is not managed by Kueue: ..."), as Kueue's JobSet
//     adapter does.
//  3. While it runs: a managedBy job's status is copied from W's. When W's
//     Workload is Finished, the condition is copied to the manager's
//     Workload.
//  4. Finished, quota released, or the check Retry/Rejected: every copy
//     (job, then Workload) is deleted. A deleted manager Workload deletes
//     its copies too (and the garbage collection catches what is missed).
//  5. W's copy lost its reservation (evicted there, or deleted): Retry. W
//     unreachable (its probe fails or its watches cannot sync): after
//     workerLostTimeout (counted from the first failure), Retry; the check
//     controller then evicts and requeues the workload, which is dispatched
//     again.
//
// A job is only ever created on the worker whose copy reserved quota, so
// only one copy of it runs — unless W is partitioned from the manager but
// alive past workerLostTimeout (Kueue's trade-off, docs/multikueue.md).
// Owners other than batch/v1 Job and JobSet are Rejected ("No multikueue
// adapter").
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

// A transport failure: the worker hangs, is gone, or answered garbage.
bool Unreachable(const absl::Status& s) {
  return absl::IsUnavailable(s) || absl::IsDeadlineExceeded(s);
}

bool Reserving(const Json& wl) {
  return api::meta::IsConditionTrue(wl, api::kueue::kQuotaReserved) ||
         api::meta::IsConditionTrue(wl, api::kueue::kFinished);
}

// The manager's bookkeeping stays there; the worker's copy starts
// suspended, without managedBy, labelled with the prebuilt Workload and
// our origin.
Json RemoteMeta(const Json& local, const std::string& workload_name, const std::string& origin) {
  Json meta = {{"name", api::meta::GetName(local)},
               {"namespace", api::meta::GetNamespace(local)}};
  const Json& m = MemberObject(local, "metadata");
  if (api::HasMember(m, "labels")) meta["labels"] = m["labels"];
  if (api::HasMember(m, "annotations")) meta["annotations"] = m["annotations"];
  meta["labels"][kPrebuiltWorkloadLabel] = workload_name;
  meta["labels"][kOriginLabel] = origin;
  meta["annotations"][kOriginUidAnnotation] = api::meta::GetUid(local);
  meta["annotations"].erase("batchd.io/original-podsets-info");
  meta["annotations"].erase("kueue.x-k8s.io/stopping");
  return meta;
}

bool JobFinished(const Json& job) {
  return api::meta::IsConditionTrue(job, "Complete") || api::meta::IsConditionTrue(job, "Failed");
}

bool JobSetFinished(const Json& js) {
  return api::meta::IsConditionTrue(js, "Completed") || api::meta::IsConditionTrue(js, "Failed");
}

const JobKindAdapter kJobAdapter{"batch/v1", "Job", "batch", "v1", "jobs",
                                 /*reject_unmanaged=*/false, &RemoteJob, &JobFinished};
const JobKindAdapter kJobSetAdapter{"jobset.x-k8s.io/v1alpha2", "JobSet", "jobset.x-k8s.io",
                                    "v1alpha2", "jobsets", /*reject_unmanaged=*/true,
                                    &RemoteJobSet, &JobSetFinished};

}  // namespace

const JobKindAdapter* AdapterFor(const std::string& api_version, const std::string& kind) {
  for (const JobKindAdapter* a : {&kJobAdapter, &kJobSetAdapter}) {
    if (a->api_version == api_version && a->kind == kind) return a;
  }
  return nullptr;
}

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
  Json meta = RemoteMeta(local_job, workload_name, origin);
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

Json RemoteJobSet(const Json& local, const std::string& workload_name, const std::string& origin) {
  Json meta = RemoteMeta(local, workload_name, origin);
  Json spec = MemberObject(local, "spec");
  // Without managedBy the worker's JobSet controller runs it.
  spec.erase("managedBy");
  spec["suspend"] = true;
  return {{"apiVersion", "jobset.x-k8s.io/v1alpha2"}, {"kind", "JobSet"},
          {"metadata", std::move(meta)}, {"spec", std::move(spec)}};
}

// What one worker holds of a workload, read from the watches.
struct DispatchReconciler::Remote {
  std::string cluster;
  std::shared_ptr<client::Client> client;
  std::shared_ptr<WorkerWatches> watches;
  bool reachable = false;
  ObjectRef wl;  // our copy (uid matches), if any
};

DispatchReconciler::DispatchReconciler(reconcile::ControllerContext& ctx,
                                       const MultiKueueOptions& opts,
                                       std::shared_ptr<Workers> workers)
    : ctx_(ctx),
      opts_(opts),
      workers_(std::move(workers)),
      wl_kind_(ctx.client.Kind(api::kueue::kGroup, api::kueue::kStorageVersion,
                               api::kueue::kWorkloads)),
      workloads_(ctx.informers.For(wl_kind_)),
      checks_(ctx.informers.For(api::kueue::kGroup, api::kueue::kStorageVersion,
                                api::kueue::kAdmissionChecks)),
      configs_(ctx.informers.For(api::kueue::kGroup, api::kueue::kStorageVersion,
                                 api::kueue::kMultiKueueConfigs)),
      lookup_{checks_, configs_} {
  for (const JobKindAdapter* a : {&kJobAdapter, &kJobSetAdapter}) {
    owners_[a->plural] = &ctx.informers.For(a->group, a->version, a->plural);
  }
}

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

std::optional<absl::Time> DispatchReconciler::LostSince(const std::string& cluster,
                                                        const JobKindAdapter& adapter) const {
  std::optional<Worker> w = workers_->Get(cluster);
  if (!w) return std::nullopt;
  std::optional<absl::Time> since = w->inactive_since;
  if (w->watches) {
    for (RemoteWatch* rw : {&w->watches->workloads(), w->watches->For(adapter.plural)}) {
      std::optional<absl::Time> t = rw->UnsyncedSince();
      if (t && (!since || *t < *since)) since = t;
    }
  } else if (!since) {
    since = ctx_.clock.Now();
  }
  return since;
}

bool DispatchReconciler::RemoveRemote(const std::string& ns, const std::string& name,
                                      const std::vector<std::string>& clusters) {
  const std::string key = ns + "/" + name;
  bool all = true;
  client::DeleteOptions bg;
  bg.propagation_policy = "Background";
  std::string owner_hint;
  const JobKindAdapter* adapter = nullptr;
  std::map<std::string, std::string> created_copies, created_jobs;
  std::set<std::string> deleting;
  {
    absl::MutexLock lock(&mu_);
    auto it = dispatched_.find(key);
    if (it != dispatched_.end()) {
      owner_hint = it->second.owner;
      adapter = it->second.adapter;
      created_copies = it->second.copies;
      created_jobs = it->second.jobs;
      deleting = it->second.deleting;
    }
  }
  bool cluster_ok = true;
  // Deletes `obj_name` of `k` on `remote`: `seen` by the watch (once: a
  // deletion in flight is not sent again while the watch still shows it),
  // or created by this process and not seen yet (uid precondition: only
  // that object).
  auto remove = [&](client::Client& remote, const std::string& cluster, const api::KindDef& k,
                    const std::string& obj_name, const ObjectRef& seen, const std::string& uid) {
    const std::string mark = cluster + "/" + k.plural + "/" + uid;
    if (seen && deleting.count(mark) > 0) return;
    client::DeleteOptions opts = bg;
    if (!seen) opts.precondition_uid = uid;
    absl::Status s = remote.Delete(k, ns, obj_name, opts);
    if (!s.ok() && Unreachable(s)) {
      workers_->MarkUnreachable(cluster, ctx_.clock.Now(), std::string(s.message()));
    }
    // Gone, or another object of that name now (not ours).
    if (!s.ok() && !IsGone(s) && !absl::IsAborted(s) && !absl::IsFailedPrecondition(s)) {
      all = false;
      cluster_ok = false;
      return;
    }
    if (seen) {
      absl::MutexLock lock(&mu_);
      auto it = dispatched_.find(key);
      if (it != dispatched_.end()) it->second.deleting.insert(mark);
    }
  };
  for (const std::string& cluster : clusters) {
    std::optional<Worker> w = workers_->Get(cluster);
    if (!w || !w->active || !w->client || !w->watches || !w->watches->workloads().Synced()) {
      all = false;
      continue;
    }
    client::Client& remote = *w->client;
    cluster_ok = true;
    ObjectRef copy = w->watches->workloads().Get(ns, name);
    std::set<std::string> owners;
    if (!owner_hint.empty()) owners.insert(owner_hint);
    if (copy) {
      if (auto ref = api::meta::GetControllerRef(*copy)) owners.insert(ref->name);
    }
    // The job first (Kueue's order), our copy of it only. The dispatched
    // kind's watch must be synced to tell that nothing is left; the other
    // kind's is read only when it is (a worker without JobSets answers
    // their LIST with 404).
    for (RemoteWatch* rw : {&w->watches->jobs(), &w->watches->jobsets()}) {
      const bool ours = adapter == nullptr || rw->kind().plural == adapter->plural;
      if (!rw->Synced()) {
        if (ours && adapter != nullptr) all = false;
        continue;
      }
      if (!ours) continue;
      for (const std::string& o : owners) {
        ObjectRef job = rw->Get(ns, o);
        if (job && api::meta::GetLabel(*job, kPrebuiltWorkloadLabel).value_or("") == name) {
          remove(remote, cluster, rw->kind(), o, job, api::meta::GetUid(*job));
        } else if (!job && o == owner_hint && created_jobs.count(cluster) > 0) {
          remove(remote, cluster, rw->kind(), o, nullptr, created_jobs[cluster]);
        }
      }
    }
    if (copy) {
      remove(remote, cluster, w->watches->workloads().kind(), name, copy,
             api::meta::GetUid(*copy));
    } else if (created_copies.count(cluster) > 0) {
      remove(remote, cluster, w->watches->workloads().kind(), name, nullptr,
             created_copies[cluster]);
    }
    if (cluster_ok) {
      // Withdrawn there: nothing created and unseen is left to delete.
      absl::MutexLock lock(&mu_);
      auto it = dispatched_.find(key);
      if (it != dispatched_.end()) {
        it->second.copies.erase(cluster);
        it->second.jobs.erase(cluster);
      }
    }
  }
  return all;
}

void DispatchReconciler::Created(const std::string& key, const std::string& cluster, bool job,
                                 const Json& obj) {
  absl::MutexLock lock(&mu_);
  auto it = dispatched_.find(key);
  if (it == dispatched_.end()) return;
  (job ? it->second.jobs : it->second.copies)[cluster] = api::meta::GetUid(obj);
}

bool DispatchReconciler::CreatedUnseen(const std::string& key, const std::string& cluster,
                                       bool job, bool seen) {
  absl::MutexLock lock(&mu_);
  auto it = dispatched_.find(key);
  if (it == dispatched_.end()) return false;
  auto& created = job ? it->second.jobs : it->second.copies;
  if (seen) {
    created.erase(cluster);  // the watch has it now
    return false;
  }
  return created.count(cluster) > 0;
}

// The copies are gone: a suspended managedBy job keeps no status mirrored
// from them (its active pods would hold the quota forever, as nothing else
// writes that job's status).
absl::Status DispatchReconciler::ResetMirroredStatus(const Json& wl) {
  auto owner = api::meta::GetControllerRef(wl);
  if (!owner) return absl::OkStatus();
  const JobKindAdapter* adapter = AdapterFor(owner->api_version, owner->kind);
  if (adapter == nullptr) return absl::OkStatus();
  client::Informer& jobs = *owners_.at(adapter->plural);
  ObjectRef job = jobs.Get(api::meta::GetNamespace(wl), owner->name);
  if (!job) return absl::OkStatus();
  const Json& spec = MemberObject(*job, "spec");
  const Json& st = MemberObject(*job, "status");
  if (StringMember(spec, "managedBy") != kControllerName || !api::BoolMember(spec, "suspend") ||
      st.empty() || adapter->finished(*job)) {
    return absl::OkStatus();
  }
  Json reset = *job;
  reset["status"] = Json::object();
  api::meta::EnsureTypeMeta(reset, adapter->api_version, adapter->kind);
  auto r = ctx_.client.UpdateStatus(jobs.kind(), std::move(reset));
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
    rounds_.erase(key);
    auto it = dispatched_.find(key);
    if (it == dispatched_.end()) return Result::Done();
    clusters = it->second.clusters;
  }
  if (!RemoveRemote(ns, name, clusters)) return Result::After(opts_.sync_interval);
  absl::MutexLock lock(&mu_);
  dispatched_.erase(key);
  return Result::Done();
}

std::vector<std::string> DispatchReconciler::NominateIncrementally(
    const std::string& key, const Json& wl, const std::vector<std::string>& clusters,
    absl::Time now, absl::Duration* requeue) {
  std::vector<std::string> nominated;
  for (const Json& n : MemberArray(MemberObject(wl, "status"), "nominatedClusterNames")) {
    const std::string c(api::AsString(n));
    if (std::find(clusters.begin(), clusters.end(), c) != clusters.end()) nominated.push_back(c);
  }
  std::vector<std::string> rest;
  for (const std::string& c : clusters) {
    if (std::find(nominated.begin(), nominated.end(), c) == nominated.end()) rest.push_back(c);
  }
  std::sort(rest.begin(), rest.end());
  absl::MutexLock lock(&mu_);
  auto it = rounds_.find(key);
  // Kueue's: a round lasts while now - start <= 5 min.
  if (it != rounds_.end() && now - it->second <= kIncrementalRoundTimeout) {
    if (!rest.empty()) *requeue = it->second + kIncrementalRoundTimeout + absl::Seconds(1) - now;
    return nominated;
  }
  if (rest.empty()) return nominated;  // every worker nominated: wait for one
  if (rest.size() > kIncrementalRoundSize) rest.resize(kIncrementalRoundSize);
  nominated.insert(nominated.end(), rest.begin(), rest.end());
  rounds_[key] = now;
  if (nominated.size() < clusters.size()) {
    *requeue = kIncrementalRoundTimeout + absl::Seconds(1);
  }
  return nominated;
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
  auto forget = [&] {
    absl::MutexLock lock(&mu_);
    dispatched_.erase(key);
    rounds_.erase(key);
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
    bool was_dispatched = false;
    {
      absl::MutexLock lock(&mu_);
      rounds_.erase(key);
      was_dispatched = dispatched_.count(key) > 0;
    }
    if (!finished && !reserved) {
      api::kueue::StatusUpdate update(wl);
      update.status().erase("clusterName");
      update.status().erase("nominatedClusterNames");
      if (absl::Status s = write(update); !s.ok()) return s;
      // (Also when a lost worker keeps its copy: it was given up on.)
      if (absl::Status s = ResetMirroredStatus(wl); !s.ok()) return s;
    }
    // An unreachable worker that holds none of our copies as far as this
    // process knows (never dispatched, e.g. still pending) is not waited
    // for: when it comes back every workload of the check is reconciled.
    if (!removed && was_dispatched) return Result::After(opts_.sync_interval);
    forget();
    return Result::Done();
  }

  api::kueue::StatusUpdate update(wl);
  auto owner = api::meta::GetControllerRef(wl);
  const JobKindAdapter* adapter =
      owner ? AdapterFor(owner->api_version, owner->kind) : nullptr;
  auto reject = [&](const std::string& message) -> absl::StatusOr<Result> {
    CheckStateUpdate rejected;
    rejected.state = admissioncheck::kRejected;
    rejected.message = message;
    SetCheckState(update.status(), check, rejected, now);
    if (absl::Status s = write(update); !s.ok()) return s;
    return Result::Done();
  };
  if (adapter == nullptr) {
    return reject(absl::StrCat("No multikueue adapter found for owner kind \"",
                               owner ? owner->api_version + "/" + owner->kind : "", "\""));
  }
  client::Informer& local_jobs = *owners_.at(adapter->plural);
  ObjectRef job = local_jobs.Get(ns, owner->name);
  if (!job) return Result::After(opts_.sync_interval);  // not in the cache yet
  const std::string managed_by(StringMember(MemberObject(*job, "spec"), "managedBy"));
  const bool managed = managed_by == kControllerName;
  if (!managed && adapter->reject_unmanaged) {
    return reject(absl::StrCat("The owner is not managed by Kueue: Expecting spec.managedBy to be \"",
                               kControllerName, "\" not \"", managed_by, "\""));
  }
  {
    absl::MutexLock lock(&mu_);
    Dispatched& d = dispatched_[key];
    d.clusters = clusters;
    d.adapter = adapter;
    d.owner = owner->name;
  }

  // What each worker holds, from the watches.
  const std::string uid = api::meta::GetUid(wl);
  std::vector<Remote> remotes;
  for (const std::string& cluster : clusters) {
    Remote r;
    r.cluster = cluster;
    std::optional<Worker> w = workers_->Get(cluster);
    if (w && w->active && w->client && w->watches && w->watches->workloads().Synced() &&
        w->watches->For(adapter->plural)->Synced()) {
      r.client = w->client;
      r.watches = w->watches;
      r.reachable = true;
      if (ObjectRef got = w->watches->workloads().Get(ns, name)) {
        if (api::meta::GetAnnotation(*got, kOriginUidAnnotation).value_or("") == uid) {
          CreatedUnseen(key, cluster, /*job=*/false, /*seen=*/true);
          r.wl = std::move(got);
        } else {
          // A copy of an earlier workload of this name: withdraw it.
          RemoveRemote(ns, name, {cluster});
        }
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
    RemoteWatch& rjobs = *w.watches->For(adapter->plural);
    ObjectRef rjob = rjobs.Get(ns, owner->name);
    const bool remote_finished = api::meta::IsConditionTrue(*w.wl, api::kueue::kFinished);
    if (remote_finished && managed && (!rjob || !adapter->finished(*rjob))) {
      // The job's final status may not have reached its watch yet (it is
      // another stream than the Workloads'): read it once, so that what is
      // mirrored before the copies go is final.
      auto fresh = w.client->Get(rjobs.kind(), ns, owner->name);
      if (fresh.ok()) {
        if (api::meta::GetLabel(*fresh, kOriginLabel).value_or("") == opts_.origin) {
          rjob = std::make_shared<const Json>(std::move(*fresh));
        }
      } else if (!IsGone(fresh.status())) {
        return Result::After(opts_.sync_interval);
      }
    }
    bool mirror_failed = false;
    if (rjob) CreatedUnseen(key, w.cluster, /*job=*/true, /*seen=*/true);
    if (!rjob && !remote_finished && !CreatedUnseen(key, w.cluster, /*job=*/true, false)) {
      auto created =
          w.client->Create(rjobs.kind(), ns, adapter->remote(*job, name, opts_.origin));
      if (!created.ok() && Unreachable(created.status())) {
        workers_->MarkUnreachable(w.cluster, now, std::string(created.status().message()));
      }
      if (!created.ok() && !absl::IsAlreadyExists(created.status())) {
        BATCHD_LOG_INFO("multikueue: creating {} {}/{} on {}: {}", adapter->kind, ns, owner->name,
                        w.cluster, created.status().ToString());
        return Result::After(opts_.sync_interval);
      }
      if (created.ok()) {
        Created(key, w.cluster, /*job=*/true, *created);
        ctx_.events.Event(wl, "Normal", "MultiKueue",
                          absl::StrCat("The workload got reservation on \"", w.cluster,
                                       "\"; its ", adapter->kind, " was created there"));
      }
    } else if (rjob && managed &&
               MemberObject(*rjob, "status") != MemberObject(*job, "status")) {
      Json mirrored = *job;
      mirrored["status"] = MemberObject(*rjob, "status");
      api::meta::EnsureTypeMeta(mirrored, adapter->api_version, adapter->kind);
      auto r = ctx_.client.UpdateStatus(local_jobs.kind(), std::move(mirrored));
      if (!r.ok()) {
        // A conflict with the manager's own writes included: nothing else
        // brings this back (the manager's jobs are not watched here).
        BATCHD_LOG_DEBUG("multikueue: syncing {} status {}/{}: {}", adapter->kind, ns,
                         owner->name, r.status().ToString());
        mirror_failed = !IsGone(r.status());
      }
    }
    if (remote_finished && !mirror_failed) {  // (the final status first)
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
    // The watches bring every later change.
    return mirror_failed ? Result::After(opts_.sync_interval) : Result::Done();
  }

  if (!current.empty()) {
    // It had a worker and no copy holds quota now.
    auto it = std::find_if(remotes.begin(), remotes.end(),
                           [&](const Remote& r) { return r.cluster == current; });
    std::string why;
    if (it != remotes.end() && it->reachable) {
      why = absl::StrCat("The workload lost its reservation on \"", current, "\"");
    } else {
      const absl::Time since = LostSince(current, *adapter).value_or(now);
      if (now - since < opts_.worker_lost_timeout) {
        // Wait; a worker that comes back (or re-syncs) enqueues it sooner.
        return Result::After(opts_.worker_lost_timeout - (now - since));
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

  // Dispatch: the dispatcher's nominees get a copy (the reachable ones that
  // lack one); copies on other workers are withdrawn.
  absl::Duration requeue = absl::ZeroDuration();
  std::vector<std::string> nominees;
  const bool incremental = opts_.dispatcher_name == kDispatcherIncremental;
  if (incremental) {
    nominees = NominateIncrementally(key, wl, clusters, now, &requeue);
  } else {
    for (const Remote& r : remotes) {
      if (r.reachable) nominees.push_back(r.cluster);
    }
  }
  std::set<std::string> placed;  // nominees that hold a copy
  bool failed = false;
  const Json copy = RemoteWorkload(wl, opts_.origin);
  for (Remote& r : remotes) {
    const bool nominee = std::find(nominees.begin(), nominees.end(), r.cluster) != nominees.end();
    if (!nominee) {
      if (r.wl) RemoveRemote(ns, name, {r.cluster});
      continue;
    }
    if (!r.reachable) continue;
    if (!r.wl && !CreatedUnseen(key, r.cluster, /*job=*/false, /*seen=*/false)) {
      auto created = r.client->Create(r.watches->workloads().kind(), ns, copy);
      if (!created.ok() && Unreachable(created.status())) {
        workers_->MarkUnreachable(r.cluster, now, std::string(created.status().message()));
      }
      if (!created.ok() && !absl::IsAlreadyExists(created.status())) {
        BATCHD_LOG_INFO("multikueue: creating workload {} on {}: {}", key, r.cluster,
                        created.status().ToString());
        failed = true;
        continue;
      }
      if (created.ok()) Created(key, r.cluster, /*job=*/false, *created);
    }
    placed.insert(r.cluster);
  }
  // AllAtOnce: the workers that hold a copy; Incremental: every nominee, in
  // the order nominated (Kueue keeps an unreachable one listed).
  std::vector<std::string> nominated;
  for (const std::string& c : nominees) {
    if (incremental || placed.count(c) > 0) nominated.push_back(c);
  }
  if (nominated.empty()) {
    update.status().erase("nominatedClusterNames");
  } else {
    update.status()["nominatedClusterNames"] = nominated;
  }
  if (absl::Status s = write(update); !s.ok()) return s;
  if (failed && (requeue == absl::ZeroDuration() || opts_.sync_interval < requeue)) {
    requeue = opts_.sync_interval;
  }
  return requeue > absl::ZeroDuration() ? Result::After(requeue) : Result::Done();
}

}  // namespace batchd::controllers::multikueue::internal
