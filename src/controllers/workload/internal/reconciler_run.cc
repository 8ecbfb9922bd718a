// The generic reconciler's transitions: start a job on admission, stop it
// (suspend, reset status, restore templates) on eviction or lost admission,
// release the reservation once its pods are gone, and report PodsReady and
// Finished on the Workload.
#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"
#include "api/json_access.h"
#include "api/kueue/queue_views.h"
#include "api/kueue/workload_writers.h"
#include "api/meta/conditions.h"
#include "api/meta/object_meta.h"
#include "common/status_macros.h"
#include "common/string_view.h"
#include "controllers/workload/internal/reconciler.h"
#include "controllers/workload/internal/workload_util.h"

namespace batchd::controllers::workload::internal {

using api::kueue::PodsReadyState;
using api::meta::kConditionFalse;
using api::meta::kConditionTrue;
using reconcile::Result;

absl::Status IntegrationReconciler::UpdateJob(Json& job, bool status) {
  // Every caller gives up when the write fails: `job` is not read again.
  auto r = status ? ctx_.client.UpdateStatus(job_kind_, std::move(job))
                  : ctx_.client.Update(job_kind_, std::move(job));
  if (!r.ok()) return r.status();
  job = std::move(*r);
  EnsureTypeMeta(job);
  return absl::OkStatus();
}

absl::Status IntegrationReconciler::WriteWorkloadStatus(Json wl) {
  return ctx_.client.UpdateStatusForVersion(wl_kind_, std::move(wl)).status();
}

absl::StatusOr<Result> IntegrationReconciler::MarkFinished(const Json& job, const Json& wl,
                                                           const FinishedState& fin) {
  Json next = wl;
  api::kueue::SetFinished(next, fin.success, fin.message, ctx_.clock.Now());
  BATCHD_RETURN_IF_ERROR(WriteWorkloadStatus(std::move(next)));
  ctx_.events.Event(job, "Normal", "FinishedWorkload",
                    absl::StrCat("Workload '", api::meta::GetNamespace(wl), "/",
                                 api::meta::GetName(wl), "' is declared finished"));
  return Result::Done();
}

// PodsReady=True once an admitted job's pods are all ready or succeeded; it
// stays True while the Workload remains admitted (pods move from ready to
// succeeded through uncounted states). Written only when the status flips.
absl::Status IntegrationReconciler::SyncPodsReady(const Json& job,
                                                  std::shared_ptr<const Json>& wl) {
  const auto current = api::meta::GetCondition(*wl, api::kueue::kPodsReady);
  const bool was_true = current && current->status == kConditionTrue;
  const bool admitted = IsAdmitted(*wl);
  const bool ready = admitted && (was_true || adapter_->PodsReady(job));
  if (current && current->status == (ready ? kConditionTrue : kConditionFalse)) {
    return absl::OkStatus();
  }
  if (!current && !admitted) return absl::OkStatus();  // Nothing to report while pending.
  PodsReadyState state = PodsReadyState::kReady;
  if (!ready) state = current ? PodsReadyState::kWaitForRecovery : PodsReadyState::kWaitForStart;
  Json next = *wl;  // Copied only to be written.
  api::kueue::SetPodsReady(next, state, ctx_.clock.Now());
  BATCHD_ASSIGN_OR_RETURN(Json written, ctx_.client.UpdateStatus(wl_kind_, std::move(next)));
  wl = std::make_shared<const Json>(std::move(written));
  return absl::OkStatus();
}

// Kueue's reconciler step 4 (ReclaimablePods): the pods that will never run
// again give their quota back while the job still runs.
absl::StatusOr<bool> IntegrationReconciler::SyncReclaimablePods(const Json& job,
                                                                const Json& wl) {
  std::map<std::string, int32_t> sizes;
  for (const api::kueue::PodSetView& ps : api::kueue::WorkloadPodSetsView::Parse(wl).pod_sets) {
    sizes[std::string(ps.name)] = ps.count;
  }
  Json want = Json::array();
  for (auto [name, count] : adapter_->ReclaimablePods(job)) {
    auto it = sizes.find(name);
    if (it != sizes.end()) count = std::min(count, it->second);
    if (count > 0) want.push_back({{"name", name}, {"count", count}});
  }
  const Json* have = api::FindMemberAt(wl, {"status", "reclaimablePods"});
  auto as_map = [](const Json* list) {
    std::map<std::string, int64_t> out;
    if (list == nullptr || !list->is_array()) return out;
    for (const Json& e : *list) out[api::CopyStringMember(e, "name")] = api::IntMember(e, "count");
    return out;
  };
  if (as_map(have) == as_map(&want)) return false;
  Json next = wl;  // Copied only to be written.
  Json& status = api::MutableObject(next, "status");
  if (want.empty()) {
    status.erase("reclaimablePods");
  } else {
    status["reclaimablePods"] = std::move(want);
  }
  BATCHD_RETURN_IF_ERROR(WriteWorkloadStatus(std::move(next)));
  return true;
}

absl::StatusOr<Result> IntegrationReconciler::HandleEviction(Json& job, const Json& wl) {
  const api::meta::Condition evicted = *api::meta::GetCondition(wl, api::kueue::kEvicted);
  std::vector<PodSetInfo> originals = PodSetsInfoFromSpec(wl);
  BATCHD_RETURN_IF_ERROR(StopJob(job, &originals, evicted.message));
  if (!HasQuotaReservation(wl) || adapter_->IsActive(job)) return Result::Done();
  // The pods are gone: release the quota and hand the Workload back to its queue.
  const bool active = api::kueue::WorkloadView::Parse(wl).active;
  Json next = wl;
  api::kueue::ClearReservation(next, evicted.reason, evicted.message, /*requeue=*/active,
                               ctx_.clock.Now());
  BATCHD_RETURN_IF_ERROR(WriteWorkloadStatus(std::move(next)));
  return Result::Done();
}

absl::StatusOr<Result> IntegrationReconciler::StartJob(Json& job, const Json& wl) {
  auto lookup = [this](const std::string& name) -> std::shared_ptr<const Json> {
    return flavors_.Get("", name);
  };
  BATCHD_ASSIGN_OR_RETURN(std::vector<PodSetInfo> infos, PodSetsInfoFromAdmission(wl, lookup));
  // Record what the templates hold now, so that a stop restores exactly it.
  BATCHD_ASSIGN_OR_RETURN(std::vector<Json> podsets, adapter_->PodSets(job));
  const std::vector<PodSetInfo> originals = PodSetsInfoFromPodSets(podsets);
  api::meta::SetAnnotation(job, kOriginalPodSetsAnnotation, PodSetsInfoToJson(originals).dump());
  BATCHD_RETURN_IF_ERROR(adapter_->RunWithPodSetsInfo(job, infos));
  BATCHD_RETURN_IF_ERROR(UpdateJob(job, /*status=*/false));
  const api::kueue::WorkloadView view = api::kueue::WorkloadView::Parse(wl);
  ctx_.events.Event(job, "Normal", "Started",
                    absl::StrCat("Admitted by clusterQueue ", Sv(view.admission_cluster_queue)));
  return Result::Done();
}

// Three writes, because a Job's templates may change only while it is
// suspended and has no startTime: suspend (marked "stopping" so a crash in
// between resumes here), reset status, then restore and unmark. Each write
// is skipped when already done, so a stopped job costs nothing.
absl::Status IntegrationReconciler::StopJobWithoutWorkload(Json& job,
                                                           const std::vector<Json>& stale) {
  if (Suspended(job) || adapter_->Finished(job)) return absl::OkStatus();
  std::vector<PodSetInfo> originals;
  if (stale.size() == 1) originals = PodSetsInfoFromSpec(stale[0]);
  return StopJob(job, stale.size() == 1 ? &originals : nullptr,
                 stale.size() == 1 ? "No matching Workload; restoring pod templates "
                                     "according to existent Workload"
                                   : "Missing Workload; unable to restore pod templates");
}

absl::Status IntegrationReconciler::StopJob(Json& job, const std::vector<PodSetInfo>* fallback,
                                            const std::string& message) {
  if (adapter_->Finished(job)) {
    // It finished while being stopped (its pods succeeded first): keep its
    // status (a finished Job needs its startTime) and templates, drop the
    // mark, so that Reconcile goes on to mark the Workload Finished.
    if (api::meta::RemoveAnnotation(job, kStoppingAnnotation)) {
      BATCHD_RETURN_IF_ERROR(UpdateJob(job, /*status=*/false));
    }
    return absl::OkStatus();
  }
  std::vector<PodSetInfo> originals;
  auto raw = api::meta::GetAnnotation(job, kOriginalPodSetsAnnotation);
  if (raw) {
    auto parsed = PodSetsInfoFromJson(Json::parse(*raw, nullptr, /*allow_exceptions=*/false));
    if (parsed) originals = std::move(*parsed);
  } else if (fallback != nullptr) {
    originals = *fallback;
  }
  if (!adapter_->IsSuspended(job)) {
    adapter_->Suspend(job);
    api::meta::SetAnnotation(job, kStoppingAnnotation, "true");
    BATCHD_RETURN_IF_ERROR(UpdateJob(job, /*status=*/false));
    ctx_.events.Event(job, "Normal", "Stopped", message);
  }
  if (adapter_->ResetStatusForRestore(job)) {
    BATCHD_RETURN_IF_ERROR(UpdateJob(job, /*status=*/true));
  }
  bool changed = !originals.empty() && adapter_->RestorePodSetsInfo(job, originals);
  changed = api::meta::RemoveAnnotation(job, kStoppingAnnotation) || changed;
  changed = api::meta::RemoveAnnotation(job, kOriginalPodSetsAnnotation) || changed;
  if (changed) BATCHD_RETURN_IF_ERROR(UpdateJob(job, /*status=*/false));
  return absl::OkStatus();
}

}  // namespace batchd::controllers::workload::internal
