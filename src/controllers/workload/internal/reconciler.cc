// The generic reconciler's driver: informer wiring and the owner index,
// the decision sequence of Reconcile, and Workload bookkeeping (one matching
// Workload per job, creation with priority, cleanup when the job is gone).
// Starting, stopping and status syncing live in reconciler_run.cc.
#include "controllers/workload/internal/reconciler.h"

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "api/json_access.h"
#include "api/kueue/queue_views.h"
#include "api/kueue/workload_writers.h"
#include "api/meta/conditions.h"
#include "api/meta/object_meta.h"
#include "api/meta/object_writers.h"
#include "common/status_macros.h"
#include "controllers/workload/internal/workload_util.h"
#include "registry/errors.h"

namespace batchd::controllers::workload::internal {

using reconcile::Controller;
using reconcile::ControllerContext;
using reconcile::Result;

using registry::IsGone;

IntegrationReconciler::IntegrationReconciler(ControllerContext& ctx,
                                             std::shared_ptr<const JobAdapter> adapter,
                                             IntegrationOptions options,
                                             const api::KindDef& job_kind,
                                             const api::KindDef& wl_kind,
                                             const api::KindDef& rf_kind)
    : ctx_(ctx),
      adapter_(std::move(adapter)),
      options_(options),
      gvk_(adapter_->Gvk()),
      job_kind_(job_kind),
      wl_kind_(wl_kind),
      rf_kind_(rf_kind),
      jobs_(ctx.informers.For(job_kind)),
      workloads_(ctx.informers.For(wl_kind)),
      flavors_(ctx.informers.For(rf_kind)),
      pod_kind_(ctx.client.Kind("", "v1", "pods")),
      pods_(ctx.informers.For(pod_kind_)) {}

void IntegrationReconciler::EnsureTypeMeta(Json& job) const {
  api::meta::EnsureTypeMeta(job, gvk_.ApiVersion(), gvk_.kind);
}

std::string IntegrationReconciler::OwnerKey(const Json& wl) const {
  return api::meta::ControllerKey(wl, gvk_.ApiVersion(), gvk_.kind);
}

void IntegrationReconciler::Wire(Controller& controller) {
  client::WorkQueue* q = &controller.queue();
  queue_ = q;
  WireElasticPods();
  // Jobs outside the queueing system (no queue name and no Workload, with
  // manageJobsWithoutQueueName off) are never acted on: dropping their events
  // here spares a wake-up and a copy of the job per event of every unqueued
  // Job. A job whose queue name went away still has its Workload indexed.
  auto managed = [this](const client::ObjectRef& o) {
    return options_.manage_jobs_without_queue_name || !QueueName(*o).empty() ||
           !OwnedNames(client::Informer::KeyOf(*o)).empty();
  };
  auto enqueue = [q, managed](const client::ObjectRef& o) {
    if (managed(o)) q->Add(client::Informer::KeyOf(*o));
  };
  jobs_.AddHandlers({
      .on_add = enqueue,
      .on_update =
          [q, managed](const client::ObjectRef& old_job, const client::ObjectRef& o) {
            if (managed(old_job) || managed(o)) q->Add(client::Informer::KeyOf(*o));
          },
      .on_delete = enqueue,
  });
  // A Workload stays indexed under its job while the job may still exist,
  // even after the garbage collector orphans it (Orphan propagation), so
  // that the job's removal also removes it.
  auto track = [this, q](const client::ObjectRef& wl) {
    std::string key = OwnerKey(*wl);
    if (key.empty()) return;
    {
      absl::MutexLock lock(&mu_);
      owned_[key].insert(api::meta::GetName(*wl));
    }
    q->Add(key);
  };
  workloads_.AddHandlers({
      .on_add = track,
      .on_update =
          [this, q, track](const client::ObjectRef& old_wl, const client::ObjectRef& wl) {
            std::string old_key = OwnerKey(*old_wl);
            if (!old_key.empty() && old_key != OwnerKey(*wl)) q->Add(old_key);
            track(wl);
          },
      .on_delete =
          [this, q](const client::ObjectRef& wl) {
            std::string key = OwnerKey(*wl);
            if (key.empty()) return;
            {
              absl::MutexLock lock(&mu_);
              auto it = owned_.find(key);
              if (it != owned_.end()) {
                it->second.erase(api::meta::GetName(*wl));
                if (it->second.empty()) owned_.erase(it);
              }
            }
            q->Add(key);
          },
  });
}

std::set<std::string> IntegrationReconciler::OwnedNames(const std::string& key) {
  absl::MutexLock lock(&mu_);
  auto it = owned_.find(key);
  return it == owned_.end() ? std::set<std::string>{} : it->second;
}

bool IntegrationReconciler::Suspended(const Json& job) const {
  return adapter_->IsSuspended(job) && !api::meta::GetAnnotation(job, kStoppingAnnotation);
}

Json IntegrationReconciler::OriginalView(const Json& job) const {
  Json view = job;
  auto raw = api::meta::GetAnnotation(job, kOriginalPodSetsAnnotation);
  if (!raw) return view;
  Json parsed = Json::parse(*raw, nullptr, /*allow_exceptions=*/false);
  if (auto originals = PodSetsInfoFromJson(parsed)) adapter_->RestorePodSetsInfo(view, *originals);
  return view;
}

absl::StatusOr<Result> IntegrationReconciler::Reconcile(const std::string& key) {
  const size_t slash = key.find('/');
  if (slash == std::string::npos) return Result::Done();
  const std::string ns = key.substr(0, slash), name = key.substr(slash + 1);
  client::ObjectRef ref = jobs_.Get(ns, name);
  if (!ref) return JobGone(ns, name);
  JobCopy copy(std::move(ref));
  // The owner reference and the events of a job are made from its type.
  if (!copy.get().contains("apiVersion") || !copy.get().contains("kind")) {
    EnsureTypeMeta(copy.Mutable());
  }
  if (adapter_->Skip(copy.get()) || api::meta::IsBeingDeleted(copy.get())) return Result::Done();
  if (!options_.manage_jobs_without_queue_name && QueueName(copy.get()).empty()) {
    return Result::Done();
  }
  if (api::meta::GetAnnotation(copy.get(), kStoppingAnnotation)) {
    // A stop was interrupted between its writes: finish it first.
    BATCHD_RETURN_IF_ERROR(StopJob(copy.Mutable(), nullptr, "Stopping"));
  }

  const std::optional<std::string> prebuilt =
      api::meta::GetLabel(copy.get(), kPrebuiltWorkloadLabel);
  if (prebuilt) {
    // Kueue's prebuilt workload (MultiKueue's copy on a worker): the job
    // adopts the named Workload instead of creating one.
    client::ObjectRef pw = workloads_.Get(ns, *prebuilt);
    if (!pw) return Result::After(absl::Seconds(1));  // not in the cache yet
    if (!api::meta::GetControllerRef(*pw)) {
      Json adopted = *pw;
      api::meta::SetOwnerReference(adopted, api::meta::NewControllerRef(copy.get()));
      auto r = ctx_.client.Update(wl_kind_, std::move(adopted));
      if (!r.ok() && !absl::IsAborted(r.status()) && !IsGone(r.status())) return r.status();
      return Result::Done();  // The Workload's event brings the job back.
    }
    if (!api::meta::IsControlledBy(*pw, api::meta::GetUid(copy.get()))) return Result::Done();
  }
  BATCHD_ASSIGN_OR_RETURN(Matched m, EnsureOneWorkload(copy));
  // Read-only from here but where a write needs it (copy.Mutable()); a
  // reference to the current version (a write replaces the copy).
  const Json& job = copy.get();
  if (m.requeue) return Result::Done();
  if (m.wl && api::meta::IsConditionTrue(*m.wl, api::kueue::kFinished)) return Result::Done();
  if (auto fin = adapter_->Finished(job)) {
    if (!m.wl) return Result::Done();
    return MarkFinished(job, *m.wl, *fin);
  }
  if (!m.wl) {
    // A job stopped without a Workload waits for its pods to go.
    if (adapter_->IsActive(job) || prebuilt) return Result::Done();
    return CreateWorkload(job);
  }
  BATCHD_ASSIGN_OR_RETURN(bool reclaimable_written, SyncReclaimablePods(job, *m.wl));
  if (reclaimable_written) return Result::Done();
  if (options_.wait_for_pods_ready) BATCHD_RETURN_IF_ERROR(SyncPodsReady(job, m.wl));
  const Json& wl = *m.wl;
  if (api::meta::IsConditionTrue(wl, api::kueue::kEvicted)) {
    return HandleEviction(copy.Mutable(), wl);
  }
  if (Suspended(job)) {
    if (IsAdmitted(wl)) return StartJob(copy.Mutable(), wl);
    const std::string q = QueueName(job);
    if (api::kueue::WorkloadView::Parse(wl).queue_name != q) {
      Json next = wl;
      api::kueue::SetQueueName(next, q);
      auto r = ctx_.client.Update(wl_kind_, std::move(next));
      if (!r.ok()) return r.status();
    }
    return Result::Done();
  }
  if (!IsAdmitted(wl)) {
    std::vector<PodSetInfo> originals = PodSetsInfoFromSpec(wl);
    BATCHD_RETURN_IF_ERROR(StopJob(copy.Mutable(), &originals, "Not admitted by cluster queue"));
  } else if (IsElastic(job)) {
    BATCHD_RETURN_IF_ERROR(UngateElasticPods(job, wl));
  }
  return Result::Done();
}

absl::StatusOr<Result> IntegrationReconciler::JobGone(const std::string& ns,
                                                      const std::string& name) {
  const std::string key = ns + "/" + name;
  std::vector<std::string> gone;
  for (const std::string& wl_name : OwnedNames(key)) {
    client::ObjectRef wl = workloads_.Get(ns, wl_name);
    if (!wl) {
      gone.push_back(wl_name);
      continue;
    }
    // Orphaned (no controller) or still ours; never one adopted elsewhere.
    if (api::meta::GetControllerRef(*wl) && OwnerKey(*wl) != key) continue;
    client::DeleteOptions opts;
    opts.precondition_uid = api::meta::GetUid(*wl);
    absl::Status s = ctx_.client.Delete(wl_kind_, ns, wl_name, opts);
    if (!s.ok() && !IsGone(s)) return s;
  }
  absl::MutexLock lock(&mu_);
  match_memo_.erase(key);
  auto it = owned_.find(key);
  if (it != owned_.end()) {
    for (const std::string& g : gone) it->second.erase(g);
    if (it->second.empty()) owned_.erase(it);
  }
  return Result::Done();
}

absl::StatusOr<IntegrationReconciler::Matched> IntegrationReconciler::EnsureOneWorkload(
    JobCopy& copy) {
  // Read-only: a stop below edits copy.Mutable(); `job` is not read after it.
  const Json& job = copy.get();
  const std::string ns = api::meta::GetNamespace(job);
  const std::string uid = api::meta::GetUid(job);
  // OriginalView copies the job: only when it has original pod sets to restore.
  std::vector<Json> podsets;
  bool have_podsets = false;
  auto build_podsets = [&]() -> absl::Status {
    if (have_podsets) return absl::OkStatus();
    if (api::meta::GetAnnotation(job, kOriginalPodSetsAnnotation)) {
      BATCHD_ASSIGN_OR_RETURN(podsets, adapter_->PodSets(OriginalView(job)));
    } else {
      BATCHD_ASSIGN_OR_RETURN(podsets, adapter_->PodSets(job));
    }
    have_podsets = true;
    return absl::OkStatus();
  };
  const std::string key = ns + "/" + api::meta::GetName(job);
  const Json& meta = api::MemberObject(job, "metadata");
  const Json& labels = api::Member(meta, "labels");
  const Json& annotations = api::Member(meta, "annotations");
  // The Workload (uid, generation) whose pod sets matched this very job's
  // last time; none when the job changed since (its pod sets are then
  // built here, as their errors are reported whatever the Workloads).
  std::optional<std::pair<std::string, int64_t>> matched_before;
  {
    absl::MutexLock lock(&mu_);
    auto it = match_memo_.find(key);
    if (it != match_memo_.end() && it->second.job_uid == uid &&
        it->second.job_generation == api::meta::GetGeneration(job) &&
        it->second.labels == labels && it->second.annotations == annotations) {
      matched_before.emplace(it->second.wl_uid, it->second.wl_generation);
    }
  }
  if (!matched_before || IsElastic(job)) BATCHD_RETURN_IF_ERROR(build_podsets());
  if (IsElastic(job)) {
    // The templates as before admission, but the counts the job has now
    // (the original-podsets annotation keeps the counts it started with).
    BATCHD_ASSIGN_OR_RETURN(std::vector<Json> live, adapter_->PodSets(job));
    for (size_t i = 0; i < podsets.size() && i < live.size(); ++i) {
      podsets[i]["count"] = api::Member(live[i], "count");
    }
    return EnsureElasticWorkloads(copy.Mutable(), podsets);
  }
  Matched m;
  std::vector<Json> stale;
  for (const std::string& wl_name : OwnedNames(key)) {
    client::ObjectRef wl = workloads_.Get(ns, wl_name);
    if (!wl || OwnerKey(*wl).empty()) continue;
    const bool mine = api::meta::IsControlledBy(*wl, uid);
    // Kueue's equivalentToWorkload also compares the execution time limit.
    const Json* limit = api::FindMemberAt(*wl, {"spec", "maximumExecutionTimeSeconds"});
    const std::optional<int32_t> wl_limit =
        limit != nullptr && limit->is_number_integer() ? std::optional(limit->get<int32_t>())
                                                       : std::nullopt;
    bool equivalent = false;
    if (mine && !m.wl && wl_limit == MaxExecutionTimeSeconds(job)) {
      const std::string wl_uid = api::meta::GetUid(*wl);
      const int64_t wl_generation = api::meta::GetGeneration(*wl);
      if (matched_before && matched_before->first == wl_uid &&
          matched_before->second == wl_generation) {
        equivalent = true;
      } else {
        BATCHD_RETURN_IF_ERROR(build_podsets());
        equivalent =
            EquivalentPodSets(podsets, api::kueue::WorkloadPodSetsView::Parse(*wl).pod_sets);
        if (equivalent) {
          absl::MutexLock lock(&mu_);
          match_memo_[key] = MatchMemo{uid,    api::meta::GetGeneration(job), labels, annotations,
                                       wl_uid, wl_generation};
        }
      }
    }
    if (equivalent) {
      m.wl = std::move(wl);
    } else {
      stale.push_back(*wl);
    }
  }
  // StopJobWithoutWorkload does nothing to a suspended or finished job
  // (most jobs without a Workload): the copy is made only to stop one.
  if (!m.wl && !Suspended(job) && !adapter_->Finished(job)) {
    BATCHD_RETURN_IF_ERROR(StopJobWithoutWorkload(copy.Mutable(), stale));
  }
  const Json& job_now = copy.get();
  for (const Json& wl : stale) {
    client::DeleteOptions opts;
    opts.precondition_uid = api::meta::GetUid(wl);
    absl::Status s = ctx_.client.Delete(wl_kind_, ns, api::meta::GetName(wl), opts);
    if (!s.ok() && !IsGone(s)) return s;
    ctx_.events.Event(job_now, "Normal", "DeletedWorkload",
                      absl::StrCat("Deleted not matching Workload: ", ns, "/",
                                   api::meta::GetName(wl)));
    m.requeue = true;
  }
  return m;
}

absl::StatusOr<std::optional<Json>> IntegrationReconciler::ResizeElastic(
    const Json& wl, const std::vector<Json>& podsets) {
  Json want = api::Member(api::Member(wl, "spec"), "podSets");
  if (!want.is_array() || want.size() != podsets.size()) return std::optional<Json>();
  const bool reserved = HasQuotaReservation(wl);
  std::vector<Json> same_counts = podsets;
  for (size_t i = 0; i < podsets.size(); ++i) {
    const int64_t job_count = api::IntMember(podsets[i], "count", 1);
    const int64_t wl_count = api::IntMember(want[i], "count", 1);
    if (reserved && job_count > wl_count) return std::optional<Json>();  // a scale-up
    same_counts[i]["count"] = wl_count;
    want[i]["count"] = job_count;
  }
  if (!EquivalentPodSets(same_counts, api::Member(api::Member(wl, "spec"), "podSets"))) {
    return std::optional<Json>();
  }
  Json resized = wl;
  resized["spec"]["podSets"] = std::move(want);
  auto r = ctx_.client.Update(wl_kind_, resized);
  if (!r.ok()) return r.status();
  return std::optional<Json>(std::move(*r));
}

absl::StatusOr<Result> IntegrationReconciler::CreateWorkload(const Json& job) {
  const Json view = OriginalView(job);
  BATCHD_ASSIGN_OR_RETURN(std::vector<Json> podsets, adapter_->PodSets(view));
  const std::string ns = api::meta::GetNamespace(job);
  const std::string name =
      WorkloadName(gvk_, api::meta::GetName(job), api::meta::GetUid(job));
  Json wl = api::kueue::NewWorkload(ns, name, QueueName(job), podsets);
  if (const std::string uid = api::meta::GetUid(job); !uid.empty()) {
    api::meta::SetLabel(wl, kJobUidLabel, uid);
  }
  api::meta::SetOwnerReference(wl, api::meta::NewControllerRef(job));
  if (std::optional<int32_t> limit = MaxExecutionTimeSeconds(job)) {
    wl["spec"]["maximumExecutionTimeSeconds"] = *limit;
  }
  if (IsElastic(job)) api::meta::SetAnnotation(wl, kElasticJobAnnotation, "true");
  BATCHD_RETURN_IF_ERROR(SetPriority(view, podsets, wl));
  auto r = ctx_.client.Create(wl_kind_, ns, std::move(wl));
  if (!r.ok()) return r.status();
  ctx_.events.Event(job, "Normal", "CreatedWorkload",
                    absl::StrCat("Created Workload: ", ns, "/", name));
  return Result::Done();
}

absl::Status IntegrationReconciler::SetPriority(const Json& job, const std::vector<Json>& podsets,
                                                Json& wl) {
  return SetWorkloadPriority(ctx_.client, job, adapter_->PriorityClassName(job), podsets, wl);
}

}  // namespace batchd::controllers::workload::internal
