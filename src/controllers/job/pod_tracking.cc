// Pod tracking with finalizers (batch-apis.md §1.4). Every terminated pod
// goes through three durable steps, so a crash between any two neither
// loses nor double-counts it:
//   1. its UID is written to `status.uncountedTerminatedPods` (Indexed
//      successes go straight to `completedIndexes`, which is idempotent);
//   2. its `batch.kubernetes.io/job-tracking` finalizer is removed;
//   3. UIDs whose pods no longer carry the finalizer move from the
//      uncounted lists to `succeeded` / `failed`.
// Only then may the terminal condition (Complete / Failed) be added.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "api/batch/v1/job_status_writer.h"
#include "api/meta/object_meta.h"
#include "common/status_macros.h"
#include "controllers/job/job_reconciler.h"

namespace batchd::controllers::job {

using api::Json;

namespace {

using api::batch_v1::JobStatusView;

// Step 3: uncounted UIDs whose pods lost the finalizer (or are gone) move
// to the counters. Returns whether anything moved; `left` gets the lists as
// they are afterwards.
bool CleanUncounted(Json& job, const std::set<std::string, std::less<>>& uids_with_finalizer,
                    std::vector<std::string> (&left)[2]) {
  bool has_uncounted = false;
  int64_t moved[2] = {0, 0}, counts[2] = {0, 0};
  {
    // Read before the edits below: the view points into `job`.
    const JobStatusView status = JobStatusView::Parse(job);
    has_uncounted = status.has_uncounted;
    const std::vector<std::string_view>* all[2] = {&status.uncounted_succeeded,
                                                   &status.uncounted_failed};
    counts[0] = status.succeeded;
    counts[1] = status.failed;
    for (int i = 0; i < 2; ++i) {
      left[i].clear();
      for (std::string_view uid : *all[i]) {
        if (uids_with_finalizer.count(uid)) left[i].emplace_back(uid);
      }
      moved[i] = static_cast<int64_t>(all[i]->size() - left[i].size());
    }
  }
  if (moved[0] > 0) api::batch_v1::SetJobSucceeded(job, counts[0] + moved[0]);
  if (moved[1] > 0) api::batch_v1::SetJobFailed(job, counts[1] + moved[1]);
  const bool changed = moved[0] > 0 || moved[1] > 0;
  if (changed || !has_uncounted) {
    api::batch_v1::SetJobUncountedTerminatedPods(job, left[0], left[1]);
  }
  return changed;
}

// Writes completedIndexes / succeeded / failedIndexes of an Indexed Job;
// returns whether they changed.
bool WriteIndexes(SyncCtx& c, const std::vector<int>& new_indexes) {
  c.succeeded_indexes = c.succeeded_indexes.With(new_indexes);
  bool changed = api::batch_v1::SetJobCompletedIndexes(c.job, c.succeeded_indexes.String());
  api::batch_v1::SetJobSucceeded(c.job, c.succeeded_indexes.Total());
  if (c.failed_indexes) {
    changed |= api::batch_v1::SetJobFailedIndexes(c.job, c.failed_indexes->String());
  }
  return changed;
}

}  // namespace

bool JobReconciler::CanRemoveFinalizer(const SyncCtx& c, const JobPod& pod, bool failed) const {
  if (api::meta::IsBeingDeleted(c.job) || c.finished ||
      pod.view.phase == api::core_v1::PodPhase::kSucceeded) {
    return true;
  }
  if (!failed) return false;
  if (c.per_index) {
    auto it = c.delayed_per_index.find(pod.index);
    if (it != c.delayed_per_index.end() && it->second == &pod) return false;
  }
  return true;
}

absl::Status JobReconciler::TrackStatusAndRemoveFinalizers(SyncCtx& c, bool needs_flush) {
  std::vector<const JobPod*> pods;
  pods.reserve(c.pods.size());
  for (const JobPod& p : c.pods) pods.push_back(&p);
  if (c.indexed) {
    std::stable_sort(pods.begin(), pods.end(),
                     [](const JobPod* a, const JobPod* b) { return a->index < b->index; });
  }
  std::set<std::string, std::less<>> with_finalizer;
  for (const JobPod* p : pods) {
    std::string uid(p->view.meta.uid);
    if (HasTrackingFinalizer(p->view.meta) && !c.expected_rm_finalizers.count(uid)) {
      with_finalizer.insert(std::move(uid));
    }
  }
  std::vector<std::string> uncounted[2];  // succeeded, failed
  needs_flush |= CleanUncounted(c.job, with_finalizer, uncounted);
  std::vector<std::string>& unc_succeeded = uncounted[0];
  std::vector<std::string>& unc_failed = uncounted[1];
  const std::set<std::string> known_succeeded(unc_succeeded.begin(), unc_succeeded.end());
  const std::set<std::string> known_failed(unc_failed.begin(), unc_failed.end());
  // A failing Job counts its not-yet-terminated pods as failed; a
  // succeeding one (successPolicy) just releases its lingering pods.
  const bool failing =
      c.finished && (c.finished->type == "FailureTarget" || c.finished->type == "Failed");
  std::vector<const JobPod*> rm;
  std::vector<int> new_indexes;
  bool reached_max = false;
  for (const JobPod* p : pods) {
    const std::string uid(p->view.meta.uid);
    if (!HasTrackingFinalizer(p->view.meta) || c.expected_rm_finalizers.count(uid)) continue;
    const bool failed = IsPodFailed(p->view, c.spec);
    if (!CanRemoveFinalizer(c, *p, failed)) continue;
    rm.push_back(p);
    const int ix = p->index;
    const bool valid_ix = !c.indexed || (ix != kUnknownIndex && ix < c.completions);
    if (p->view.phase == api::core_v1::PodPhase::kSucceeded && !known_failed.count(uid)) {
      if (c.indexed) {
        if (valid_ix && !c.prev_succeeded_indexes.Has(ix)) new_indexes.push_back(ix);
      } else if (!known_succeeded.count(uid)) {
        unc_succeeded.push_back(uid);
        needs_flush = true;
      }
    } else if (failed || (failing && !(c.indexed && c.succeeded_indexes.Has(ix)))) {
      if (!known_failed.count(uid) && valid_ix &&
          MatchPodFailurePolicy(c.spec, p->view).count_failed) {
        unc_failed.push_back(uid);
        needs_flush = true;
      }
    }
    if (new_indexes.size() + unc_succeeded.size() + unc_failed.size() >= kMaxUncountedPods) {
      reached_max = true;
      break;
    }
  }
  api::batch_v1::SetJobUncountedTerminatedPods(c.job, unc_succeeded, unc_failed);
  if (c.indexed) needs_flush |= WriteIndexes(c, new_indexes);
  if (c.finished && c.finished->type == "FailureTarget") {
    needs_flush |= api::meta::SetCondition(c.job, api::meta::ConditionShape::kJob, *c.finished, c.now);
    c.finished = api::meta::Condition{"Failed", "True", c.finished->reason, c.finished->message};
  }
  if (c.finished && c.finished->type == "SuccessCriteriaMet") {
    needs_flush |= api::meta::SetCondition(c.job, api::meta::ConditionShape::kJob, *c.finished, c.now);
    c.finished = api::meta::Condition{"Complete", "True", c.finished->reason, c.finished->message};
  }
  if (c.finished && !reached_max && c.terminating == 0) return FinishInOneWrite(c, rm);
  BATCHD_RETURN_IF_ERROR(Flush(c, rm, with_finalizer, needs_flush));
  const bool finished = !reached_max && EnactFinished(c);
  if (finished) needs_flush = true;
  if (needs_flush) {
    BATCHD_RETURN_IF_ERROR(WriteStatus(c));
    if (finished) RecordFinished(c);
  }
  if (reached_max) c.RequeueAfter(absl::ZeroDuration());
  return absl::OkStatus();
}

absl::Status JobReconciler::Flush(SyncCtx& c, const std::vector<const JobPod*>& rm,
                                  std::set<std::string, std::less<>>& with_finalizer,
                                  bool& needs_flush) {
  if (needs_flush) {
    // Step 1: the uncounted UIDs are durable before any finalizer goes.
    BATCHD_RETURN_IF_ERROR(WriteStatus(c));
    if (!c.per_index) backoff_.Set(c.key, c.new_backoff);
    needs_flush = false;
  }
  absl::Status rm_err;
  if (!rm.empty()) {
    // Step 2.
    std::vector<const Json*> objects;
    objects.reserve(rm.size());
    for (const JobPod* p : rm) objects.push_back(p->object);
    std::vector<bool> ok = RemoveFinalizers(c.key, objects, &rm_err);
    for (size_t i = 0; i < rm.size(); ++i) {
      if (ok[i]) with_finalizer.erase(std::string(rm[i]->view.meta.uid));
    }
  }
  // Step 3.
  std::vector<std::string> uncounted[2];
  if (CleanUncounted(c.job, with_finalizer, uncounted)) needs_flush = true;
  if (!rm_err.ok()) {
    if (needs_flush) BATCHD_RETURN_IF_ERROR(WriteStatus(c));
    return rm_err;
  }
  return absl::OkStatus();
}

// A Job that finishes in this sync with every pod terminal counts its
// uncounted pods, takes its terminal condition and clears the uncounted
// lists in one status write, and only then releases the pods' finalizers.
// Steps 1-3 exist so that a pod is counted once even if the controller
// stops between them; once the Job is finished nothing is counted again,
// and a finished Job's pods that still hold the finalizer are released by
// its next sync (Reconcile), so the intermediate write (uncounted UIDs and
// SuccessCriteriaMet / FailureTarget without the terminal condition) buys
// nothing here. What a reader sees at the end is the same: both conditions,
// the counts, completionTime, empty uncounted lists, pods without the
// finalizer. The status write and the releases after it are one chain (one
// store commit in-process): a release lands only with the status before it.
absl::Status JobReconciler::FinishInOneWrite(SyncCtx& c, const std::vector<const JobPod*>& rm) {
  {
    const JobStatusView status = JobStatusView::Parse(c.job);
    const int64_t succeeded = status.succeeded + static_cast<int64_t>(status.uncounted_succeeded.size());
    const int64_t failed = status.failed + static_cast<int64_t>(status.uncounted_failed.size());
    if (!status.uncounted_succeeded.empty()) api::batch_v1::SetJobSucceeded(c.job, succeeded);
    if (!status.uncounted_failed.empty()) api::batch_v1::SetJobFailed(c.job, failed);
  }
  api::batch_v1::SetJobUncountedTerminatedPods(c.job, {}, {});
  if (!EnactFinished(c)) return absl::InternalError("job finish: uncounted pods left");
  std::vector<const Json*> objects;
  objects.reserve(rm.size());
  for (const JobPod* p : rm) objects.push_back(p->object);
  absl::Status err;
  BATCHD_RETURN_IF_ERROR(WriteStatusThenRelease(c, objects, &err));
  RecordFinished(c);
  return err;  // Retried: the finished Job's sync releases what is left.
}

bool JobReconciler::EnactFinished(SyncCtx& c) {
  if (!c.finished) return false;
  bool has_start = false;
  {
    const JobStatusView status = JobStatusView::Parse(c.job);
    if (!status.uncounted_succeeded.empty() || !status.uncounted_failed.empty()) return false;
    has_start = !status.start_time.empty();
  }
  if (c.terminating > 0) return false;
  // A finished Job has a startTime (status validation refuses one without:
  // "startTime is required for finished job"). A Job suspended while its
  // last pods finished has none: the queue's stop cleared it (Kueue resets
  // it so that the templates may change) and a suspended Job sets none. It
  // finishes with the time it is found finished, as completionTime.
  if (!has_start) c.start_time = api::batch_v1::SetJobStartTime(c.job, c.now);
  api::meta::SetCondition(c.job, api::meta::ConditionShape::kJob, *c.finished, c.now);
  if (c.finished->type == "Complete") api::batch_v1::SetJobCompletionTime(c.job, c.now);
  api::batch_v1::SetJobActive(c.job, 0);
  api::batch_v1::SetJobReady(c.job, 0);
  return true;
}

void JobReconciler::RecordFinished(const SyncCtx& c) {
  if (c.finished->type == "Complete") {
    if (c.completions >= 0 && JobStatusView::Parse(c.job).succeeded > c.completions) {
      ctx_.events.Event(c.job, "Warning", "TooManySucceededPods",
                        "Too many succeeded pods running after completion count reached");
    }
    ctx_.events.Event(c.job, "Normal", "Completed", "Job completed");
  } else {
    ctx_.events.Event(c.job, "Warning", c.finished->reason, c.finished->message);
  }
}

}  // namespace batchd::controllers::job
