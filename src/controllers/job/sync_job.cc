// One sync of one Job: count its pods, decide failure (podFailurePolicy,
// backoffLimit, activeDeadlineSeconds, per-index limits) or success
// (completions, successPolicy), act (delete pods of a finishing Job, or
// manage pods and the Suspended condition), then track and write status.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "api/batch/v1/job_status_writer.h"
#include "api/meta/conditions.h"
#include "api/meta/object_meta.h"
#include "common/status_macros.h"
#include "controllers/job/job_reconciler.h"

namespace batchd::controllers::job {

using reconcile::Result;

using api::Json;

namespace {

using api::batch_v1::ClearJobStartTime;
using api::batch_v1::JobStatusJson;
using api::batch_v1::JobStatusView;
using api::batch_v1::PodFailurePolicyAction;
using api::batch_v1::SetJobActive;
using api::batch_v1::SetJobReady;
using api::batch_v1::SetJobStartTime;
using api::batch_v1::SetJobTerminating;
using api::core_v1::PodPhase;

// A pod not yet counted: it has the finalizer, is not in the uncounted
// lists and its finalizer removal is not in flight; for Indexed Jobs it
// has a valid index.
bool Uncounted(const SyncCtx& c, const JobPod& p) {
  const std::string uid(p.view.meta.uid);
  if (!HasTrackingFinalizer(p.view.meta) || c.uncounted_succeeded.count(uid) ||
      c.uncounted_failed.count(uid) || c.expected_rm_finalizers.count(uid)) {
    return false;
  }
  if (!c.indexed) return true;
  return p.index != kUnknownIndex && p.index < c.completions;
}

bool CountsAsFailed(const SyncCtx& c, const JobPod& p) {
  if (!IsPodFailed(p.view, c.spec)) return false;
  return MatchPodFailurePolicy(c.spec, p.view).count_failed;
}

// successPolicy: the message of the first satisfied rule.
std::optional<std::string> MatchSuccessPolicy(const SyncCtx& c) {
  if (!c.spec.success_policy || c.succeeded_indexes.empty()) return std::nullopt;
  const std::vector<api::batch_v1::SuccessPolicyRule>& rules = *c.spec.success_policy;
  for (size_t i = 0; i < rules.size(); ++i) {
    const std::optional<int64_t>& count = rules[i].succeeded_count;
    bool met = false;
    if (rules[i].succeeded_indexes) {
      OrderedIntervals want = OrderedIntervals::Parse(*rules[i].succeeded_indexes, c.completions);
      if (want.empty()) continue;
      int overlap = want.CountOverlap(c.succeeded_indexes);
      met = count ? overlap >= *count : overlap == want.Total();
    } else if (count) {
      met = c.succeeded_indexes.Total() >= *count;
    }
    if (met) return absl::StrCat("Matched rules at index ", i);
  }
  return std::nullopt;
}

}  // namespace

void JobReconciler::CountPods(SyncCtx& c) {
  // The status as the sync found it (the working copy's startTime may
  // differ; nothing read here).
  const JobStatusView& status = c.status_at_start;
  c.uncounted_succeeded = {status.uncounted_succeeded.begin(), status.uncounted_succeeded.end()};
  c.uncounted_failed = {status.uncounted_failed.begin(), status.uncounted_failed.end()};
  // Keep the removals read before the pod snapshot (see Reconcile) and add
  // any issued since.
  for (const std::string& uid : expectations_.PendingFinalizerRemovals(c.key)) {
    c.expected_rm_finalizers.insert(uid);
  }
  c.succeeded = status.succeeded + static_cast<int>(c.uncounted_succeeded.size());
  c.failed = status.failed + static_cast<int>(c.uncounted_failed.size());
  std::vector<absl::Time> new_succeeded, new_failed;
  for (const JobPod& p : c.pods) {
    if (IsPodActive(p.view)) c.active.push_back(&p);
    if (IsPodTerminating(p.view)) ++c.terminating;
    if (!Uncounted(c, p)) continue;
    if (p.view.phase == PodPhase::kSucceeded) {
      ++c.succeeded;
      new_succeeded.push_back(PodFinishTime(p.view, c.now));
    } else if (CountsAsFailed(c, p)) {
      ++c.failed;
      new_failed.push_back(PodFinishTime(p.view, c.now));
    }
  }
  c.new_backoff = NextBackoffRecord(backoff_.Get(c.key), std::move(new_succeeded),
                                    std::move(new_failed));
}

void JobReconciler::DecideFailure(SyncCtx& c) {
  if (auto ft = api::meta::GetCondition(c.job, "FailureTarget"); ft && ft->status == "True") {
    c.finished = api::meta::Condition{"Failed", "True", ft->reason, ft->message};
    return;
  }
  if (auto scm = api::meta::GetCondition(c.job, "SuccessCriteriaMet"); scm && scm->status == "True") {
    c.finished = api::meta::Condition{"Complete", "True", scm->reason, scm->message};
    return;
  }
  if (c.spec.pod_failure_policy) {
    for (const JobPod& p : c.pods) {
      if (!IsPodFailed(p.view, c.spec)) continue;
      PolicyMatch m = MatchPodFailurePolicy(c.spec, p.view);
      if (m.fail_job_message) {
        c.finished = api::meta::Condition{"FailureTarget", "True", kReasonPodFailurePolicy,
                               *m.fail_job_message};
        return;
      }
    }
  }
  std::vector<const PodView*> pod_views;
  pod_views.reserve(c.pods.size());
  for (const JobPod& p : c.pods) pod_views.push_back(&p.view);
  if (c.failed > c.spec.backoff_limit || PastBackoffLimitOnFailure(c.spec, pod_views)) {
    c.finished = api::meta::Condition{"FailureTarget", "True", kReasonBackoffLimitExceeded,
                           kMsgBackoffLimitExceeded};
    return;
  }
  const std::optional<int64_t>& deadline = c.spec.active_deadline_seconds;
  // The working copy's: SyncJob may have just set it.
  const std::optional<absl::Time>& start = c.start_time;
  if (deadline && start && !c.spec.suspend) {
    absl::Duration left = absl::Seconds(*deadline) - (c.now - *start);
    if (left <= absl::ZeroDuration()) {
      c.finished = api::meta::Condition{"FailureTarget", "True", kReasonDeadlineExceeded,
                             kMsgDeadlineExceeded};
    } else {
      c.RequeueAfter(left);
    }
  }
}

void JobReconciler::DecideIndexed(SyncCtx& c) {
  c.prev_succeeded_indexes = OrderedIntervals::Parse(
      c.status_at_start.completed_indexes, c.completions);
  std::vector<int> fresh;
  for (const JobPod& p : c.pods) {
    if (p.view.phase == PodPhase::kSucceeded && p.index != kUnknownIndex &&
        p.index < c.completions && HasTrackingFinalizer(p.view.meta)) {
      fresh.push_back(p.index);
    }
  }
  c.succeeded_indexes = c.prev_succeeded_indexes.With(fresh);
  c.succeeded = c.succeeded_indexes.Total();
  if (c.per_index) DecidePerIndex(c);
  if (!c.finished) {
    if (auto msg = MatchSuccessPolicy(c)) {
      c.finished = api::meta::Condition{"SuccessCriteriaMet", "True", kReasonSuccessPolicy, *msg};
    }
  }
}

void JobReconciler::DecidePerIndex(SyncCtx& c) {
  {
    const int64_t limit = c.spec.backoff_limit_per_index.value_or(0);
    OrderedIntervals prev = OrderedIntervals::Parse(
        c.status_at_start.failed_indexes.value_or(""), c.completions);
    std::vector<int> failed_now;
    for (const JobPod& p : c.pods) {
      const int ix = p.index;
      if (ix == kUnknownIndex || ix >= c.completions || prev.Has(ix)) continue;
      if (!HasTrackingFinalizer(p.view.meta) || !IsPodFailed(p.view, c.spec)) continue;
      PolicyMatch m = MatchPodFailurePolicy(c.spec, p.view);
      if (m.action == PodFailurePolicyAction::kFailIndex ||
          (m.count_failed && IndexFailureCount(p.view.meta) >= limit)) {
        failed_now.push_back(ix);
      }
    }
    c.failed_indexes = prev.With(failed_now);
    const int n_failed = c.failed_indexes->Total();
    const std::optional<int32_t>& max_failed = c.spec.max_failed_indexes;
    if (!c.finished) {
      if (max_failed && n_failed > *max_failed) {
        c.finished = api::meta::Condition{"FailureTarget", "True", kReasonMaxFailedIndexesExceeded,
                               kMsgMaxFailedIndexesExceeded};
      } else if (n_failed > 0 && n_failed + c.succeeded_indexes.Total() >= c.completions) {
        c.finished = api::meta::Condition{"FailureTarget", "True", kReasonFailedIndexes, kMsgFailedIndexes};
      }
    }
    // Per index, the latest failed pod keeps its finalizer until its
    // replacement exists (the replacement inherits its failure count).
    std::map<int, std::pair<std::pair<int, std::string_view>, const JobPod*>> latest;
    for (const JobPod& p : c.pods) {
      const int ix = p.index;
      if (ix == kUnknownIndex || ix >= c.completions || c.failed_indexes->Has(ix)) continue;
      std::pair<int, std::string_view> rank{
          IndexFailureCount(p.view.meta) + IndexIgnoredFailureCount(p.view.meta),
          p.view.meta.creation_timestamp};
      auto it = latest.find(ix);
      if (it == latest.end() || rank > it->second.first) latest[ix] = {rank, &p};
    }
    for (const auto& [ix, entry] : latest) {
      const JobPod* p = entry.second;
      if (IsPodFailed(p->view, c.spec) && HasTrackingFinalizer(p->view.meta)) {
        c.delayed_per_index[ix] = p;
      }
    }
  }
}

void JobReconciler::ApplySuspendCondition(SyncCtx& c) {
  if (c.spec.suspend) {
    if (api::meta::SetCondition(c.job, api::meta::ConditionShape::kJob, {"Suspended", "True", "JobSuspended", "Job suspended"}, c.now)) {
      ctx_.events.Event(c.job, "Normal", "Suspended", "Job suspended");
    }
    // The deadline clock stops while suspended; startTime is set afresh on
    // resume. (Kubernetes overwrites it on resume; our status validation
    // only lets it change while suspended, so it is cleared here instead.)
    ClearJobStartTime(c.job);
    c.start_time.reset();
  } else if (api::meta::SetCondition(c.job, api::meta::ConditionShape::kJob, {"Suspended", "False", "JobResumed", "Job resumed"},
                             c.now)) {
    ctx_.events.Event(c.job, "Normal", "Resumed", "Job resumed");
    c.start_time = SetJobStartTime(c.job, c.now);
  }
}

absl::StatusOr<Result> JobReconciler::SyncJob(SyncCtx& c) {
  const Json before = JobStatusJson(c.job);  // A copy: the status is edited below.
  c.completions = c.spec.completions ? *c.spec.completions : -1;
  c.per_index = c.indexed && c.spec.backoff_limit_per_index.has_value();
  if (c.indexed && c.completions < 0) return Result::Done();  // Invalid; validation forbids.
  c.start_time = c.status_at_start.StartTime();
  if (!c.spec.suspend && c.status_at_start.start_time.empty()) {
    c.start_time = SetJobStartTime(c.job, c.now);
  }
  CountPods(c);
  DecideFailure(c);
  if (c.indexed) DecideIndexed(c);
  const bool satisfied = c.expectations_satisfied && expectations_.Satisfied(c.key, c.now);
  const bool job_deleting = api::meta::IsBeingDeleted(c.job);
  int active = static_cast<int>(c.active.size());
  absl::Status manage_err;
  if (c.finished) {
    auto deleted = DeleteActivePods(c, c.active);
    int n = deleted.ok() ? *deleted : 0;
    if (!deleted.ok()) manage_err = deleted.status();
    if (n != active || !satisfied) c.finished.reset();
    active -= n;
    c.terminating += n;
  } else {
    bool managed = false;
    if (satisfied && !job_deleting) {
      auto a = ManageJob(c);
      if (a.ok()) {
        active = *a;
      } else {
        manage_err = a.status();
      }
      managed = true;
    }
    const bool complete = c.completions < 0 ? (c.succeeded > 0 && active == 0)
                                            : (c.succeeded >= c.completions && active == 0);
    if (complete) {
      c.finished = api::meta::Condition{"SuccessCriteriaMet", "True", kReasonCompletionsReached,
                             kMsgCompletionsReached};
    } else if (managed) {
      ApplySuspendCondition(c);
    }
  }
  int ready = 0;
  for (const JobPod* p : c.active) ready += IsPodReady(p->view) ? 1 : 0;
  if (c.finished || c.spec.suspend) ready = 0;
  SetJobActive(c.job, active);
  SetJobReady(c.job, std::min(ready, active));
  SetJobTerminating(c.job, c.terminating);
  const bool needs_flush = JobStatusJson(c.job) != before;
  absl::Status st = TrackStatusAndRemoveFinalizers(c, needs_flush);
  if (!c.new_pods.empty()) {  // No status write took them.
    absl::Status created = CreateNewPods(c, /*with_status=*/false);
    if (st.ok()) st = created;
  }
  BATCHD_RETURN_IF_ERROR(st);
  if (!manage_err.ok()) return manage_err;
  if (c.requeue) return Result::After(*c.requeue);
  return Result::Done();
}

}  // namespace batchd::controllers::job
