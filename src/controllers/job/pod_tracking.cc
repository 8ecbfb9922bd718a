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
#include "api/meta/object_meta.h"
#include "api/meta/time_util.h"
#include "common/status_macros.h"
#include "controllers/job/job_reconciler.h"

namespace batchd::controllers::job {

using api::Json;

namespace {

const Json& StatusOf(const Json& job) {
  static const Json kEmpty = Json::object();
  auto it = job.find("status");
  return it != job.end() && it->is_object() ? *it : kEmpty;
}

int64_t StatusInt(const Json& job, const char* f) {
  const Json& s = StatusOf(job);
  auto it = s.find(f);
  return it != s.end() && it->is_number_integer() ? it->get<int64_t>() : 0;
}

void SetCounter(Json& job, const char* f, int64_t v) {
  if (v > 0) {
    job["status"][f] = v;
  } else {
    job["status"].erase(f);
  }
}

std::vector<std::string> UncountedList(const Json& job, const char* list) {
  std::vector<std::string> out;
  const Json& st = StatusOf(job);
  auto u = st.find("uncountedTerminatedPods");
  if (u == st.end() || !u->is_object()) return out;
  auto l = u->find(list);
  if (l == u->end() || !l->is_array()) return out;
  for (const Json& s : *l) {
    if (s.is_string()) out.push_back(s.get<std::string>());
  }
  return out;
}

void SetUncounted(Json& job, const std::vector<std::string>& succeeded,
                  const std::vector<std::string>& failed) {
  Json u = Json::object();
  if (!succeeded.empty()) u["succeeded"] = succeeded;
  if (!failed.empty()) u["failed"] = failed;
  job["status"]["uncountedTerminatedPods"] = u;
}

// Step 3: uncounted UIDs whose pods lost the finalizer (or are gone) move
// to the counters. Returns whether anything moved.
bool CleanUncounted(Json& job, const std::set<std::string>& uids_with_finalizer) {
  bool changed = false;
  std::vector<std::string> lists[2];
  const char* names[2] = {"succeeded", "failed"};
  for (int i = 0; i < 2; ++i) {
    std::vector<std::string> all = UncountedList(job, names[i]);
    for (const std::string& uid : all) {
      if (uids_with_finalizer.count(uid)) lists[i].push_back(uid);
    }
    const int64_t moved = static_cast<int64_t>(all.size() - lists[i].size());
    if (moved > 0) {
      changed = true;
      SetCounter(job, names[i], StatusInt(job, names[i]) + moved);
    }
  }
  if (changed || !job["status"].contains("uncountedTerminatedPods")) {
    SetUncounted(job, lists[0], lists[1]);
  }
  return changed;
}

// Writes completedIndexes / succeeded / failedIndexes of an Indexed Job;
// returns whether they changed.
bool WriteIndexes(SyncCtx& c, const std::vector<int>& new_indexes) {
  bool changed = false;
  c.succeeded_indexes = c.succeeded_indexes.With(new_indexes);
  const std::string completed = c.succeeded_indexes.String();
  Json& status = c.job["status"];
  if (completed != status.value("completedIndexes", "")) changed = true;
  SetCounter(c.job, "succeeded", c.succeeded_indexes.Total());
  if (completed.empty()) {
    status.erase("completedIndexes");
  } else {
    status["completedIndexes"] = completed;
  }
  if (c.failed_indexes) {
    const std::string failed = c.failed_indexes->String();
    if (status.value("failedIndexes", std::string("\x01")) != failed) changed = true;
    status["failedIndexes"] = failed;
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
  std::set<std::string> with_finalizer;
  for (const JobPod* p : pods) {
    std::string uid(p->view.meta.uid);
    if (HasTrackingFinalizer(p->view.meta) && !c.expected_rm_finalizers.count(uid)) {
      with_finalizer.insert(std::move(uid));
    }
  }
  needs_flush |= CleanUncounted(c.job, with_finalizer);
  std::vector<std::string> unc_succeeded = UncountedList(c.job, "succeeded");
  std::vector<std::string> unc_failed = UncountedList(c.job, "failed");
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
  SetUncounted(c.job, unc_succeeded, unc_failed);
  if (c.indexed) needs_flush |= WriteIndexes(c, new_indexes);
  if (c.finished && c.finished->type == "FailureTarget") {
    needs_flush |= api::meta::SetCondition(c.job, api::meta::ConditionShape::kJob, *c.finished, c.now);
    c.finished = api::meta::Condition{"Failed", "True", c.finished->reason, c.finished->message};
  }
  if (c.finished && c.finished->type == "SuccessCriteriaMet") {
    needs_flush |= api::meta::SetCondition(c.job, api::meta::ConditionShape::kJob, *c.finished, c.now);
    c.finished = api::meta::Condition{"Complete", "True", c.finished->reason, c.finished->message};
  }
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
                                  std::set<std::string>& with_finalizer, bool& needs_flush) {
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
  if (CleanUncounted(c.job, with_finalizer)) needs_flush = true;
  if (!rm_err.ok()) {
    if (needs_flush) BATCHD_RETURN_IF_ERROR(WriteStatus(c));
    return rm_err;
  }
  return absl::OkStatus();
}

bool JobReconciler::EnactFinished(SyncCtx& c) {
  if (!c.finished) return false;
  if (!UncountedList(c.job, "succeeded").empty() || !UncountedList(c.job, "failed").empty()) {
    return false;
  }
  if (c.terminating > 0) return false;
  api::meta::SetCondition(c.job, api::meta::ConditionShape::kJob, *c.finished, c.now);
  if (c.finished->type == "Complete") {
    c.job["status"]["completionTime"] = api::meta::FormatRfc3339(c.now);
  }
  c.job["status"].erase("active");
  c.job["status"]["ready"] = 0;
  return true;
}

void JobReconciler::RecordFinished(const SyncCtx& c) {
  if (c.finished->type == "Complete") {
    if (c.completions >= 0 && StatusInt(c.job, "succeeded") > c.completions) {
      ctx_.events.Event(c.job, "Warning", "TooManySucceededPods",
                        "Too many succeeded pods running after completion count reached");
    }
    ctx_.events.Event(c.job, "Normal", "Completed", "Job completed");
  } else {
    ctx_.events.Event(c.job, "Warning", c.finished->reason, c.finished->message);
  }
}

}  // namespace batchd::controllers::job
