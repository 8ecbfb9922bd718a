// One sync of one Job: count its pods, decide failure (podFailurePolicy,
// backoffLimit, activeDeadlineSeconds, per-index limits) or success
// (completions, successPolicy), act (delete pods of a finishing Job, or
// manage pods and the Suspended condition), then track and write status.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "api/meta/object_meta.h"
#include "api/meta/time_util.h"
#include "common/status_macros.h"
#include "controllers/job/job_reconciler.h"

namespace batchd::controllers::job {

using reconcile::Result;

using api::Json;

namespace {

const Json& At(const Json& o, std::initializer_list<const char*> path) {
  static const Json kNull;
  const Json* cur = &o;
  for (const char* k : path) {
    if (!cur->is_object()) return kNull;
    auto it = cur->find(k);
    if (it == cur->end()) return kNull;
    cur = &*it;
  }
  return *cur;
}

int64_t IntAt(const Json& o, std::initializer_list<const char*> path, int64_t def) {
  const Json& v = At(o, path);
  return v.is_number_integer() ? v.get<int64_t>() : def;
}

std::string StrAt(const Json& o, std::initializer_list<const char*> path) {
  const Json& v = At(o, path);
  return v.is_string() ? v.get<std::string>() : "";
}

std::set<std::string> StringSet(const Json& v) {
  std::set<std::string> out;
  if (!v.is_array()) return out;
  for (const Json& s : v) {
    if (s.is_string()) out.insert(s.get<std::string>());
  }
  return out;
}

bool Suspended(const Json& job) {
  const Json& v = At(job, {"spec", "suspend"});
  return v.is_boolean() && v.get<bool>();
}

std::optional<absl::Time> StartTime(const Json& job) {
  const std::string s = StrAt(job, {"status", "startTime"});
  if (s.empty()) return std::nullopt;
  auto t = api::meta::ParseRfc3339(s);
  if (!t.ok()) return std::nullopt;
  return *t;
}

// A pod not yet counted: it has the finalizer, is not in the uncounted
// lists and its finalizer removal is not in flight; for Indexed Jobs it
// has a valid index.
bool Uncounted(const SyncCtx& c, const Json& p) {
  const std::string uid = api::meta::GetUid(p);
  if (!HasTrackingFinalizer(p) || c.uncounted_succeeded.count(uid) ||
      c.uncounted_failed.count(uid) || c.expected_rm_finalizers.count(uid)) {
    return false;
  }
  if (!c.indexed) return true;
  int ix = CompletionIndex(p);
  return ix != kUnknownIndex && ix < c.completions;
}

bool CountsAsFailed(const SyncCtx& c, const Json& p) {
  if (!IsPodFailed(p, c.job)) return false;
  return MatchPodFailurePolicy(c.job, p).count_failed;
}

// successPolicy: the message of the first satisfied rule.
std::optional<std::string> MatchSuccessPolicy(const SyncCtx& c) {
  const Json& rules = At(c.job, {"spec", "successPolicy", "rules"});
  if (!rules.is_array() || c.succeeded_indexes.empty()) return std::nullopt;
  for (size_t i = 0; i < rules.size(); ++i) {
    const Json& count = At(rules[i], {"succeededCount"});
    const Json& idx = At(rules[i], {"succeededIndexes"});
    bool met = false;
    if (idx.is_string()) {
      OrderedIntervals want = OrderedIntervals::Parse(idx.get<std::string>(), c.completions);
      if (want.empty()) continue;
      int overlap = want.CountOverlap(c.succeeded_indexes);
      met = count.is_number_integer() ? overlap >= count.get<int64_t>()
                                      : overlap == want.Total();
    } else if (count.is_number_integer()) {
      met = c.succeeded_indexes.Total() >= count.get<int64_t>();
    }
    if (met) return absl::StrCat("Matched rules at index ", i);
  }
  return std::nullopt;
}

}  // namespace

void JobReconciler::CountPods(SyncCtx& c) {
  const Json& uncounted = At(c.job, {"status", "uncountedTerminatedPods"});
  c.uncounted_succeeded = StringSet(At(uncounted, {"succeeded"}));
  c.uncounted_failed = StringSet(At(uncounted, {"failed"}));
  // Keep the removals read before the pod snapshot (see Reconcile) and add
  // any issued since.
  for (const std::string& uid : expectations_.PendingFinalizerRemovals(c.key)) {
    c.expected_rm_finalizers.insert(uid);
  }
  c.succeeded = static_cast<int>(IntAt(c.job, {"status", "succeeded"}, 0)) +
                static_cast<int>(c.uncounted_succeeded.size());
  c.failed = static_cast<int>(IntAt(c.job, {"status", "failed"}, 0)) +
             static_cast<int>(c.uncounted_failed.size());
  std::vector<absl::Time> new_succeeded, new_failed;
  for (const Json* p : c.pods) {
    if (IsPodActive(*p)) c.active.push_back(p);
    if (IsPodTerminating(*p)) ++c.terminating;
    if (!Uncounted(c, *p)) continue;
    if (PodPhase(*p) == "Succeeded") {
      ++c.succeeded;
      new_succeeded.push_back(PodFinishTime(*p, c.now));
    } else if (CountsAsFailed(c, *p)) {
      ++c.failed;
      new_failed.push_back(PodFinishTime(*p, c.now));
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
  if (At(c.job, {"spec", "podFailurePolicy"}).is_object()) {
    for (const Json* p : c.pods) {
      if (!IsPodFailed(*p, c.job)) continue;
      PolicyMatch m = MatchPodFailurePolicy(c.job, *p);
      if (m.fail_job_message) {
        c.finished = api::meta::Condition{"FailureTarget", "True", kReasonPodFailurePolicy,
                               *m.fail_job_message};
        return;
      }
    }
  }
  const int64_t backoff_limit = IntAt(c.job, {"spec", "backoffLimit"}, 6);
  if (c.failed > backoff_limit || PastBackoffLimitOnFailure(c.job, c.pods)) {
    c.finished = api::meta::Condition{"FailureTarget", "True", kReasonBackoffLimitExceeded,
                           kMsgBackoffLimitExceeded};
    return;
  }
  const Json& deadline = At(c.job, {"spec", "activeDeadlineSeconds"});
  auto start = StartTime(c.job);
  if (deadline.is_number_integer() && start && !Suspended(c.job)) {
    absl::Duration left = absl::Seconds(deadline.get<int64_t>()) - (c.now - *start);
    if (left <= absl::ZeroDuration()) {
      c.finished = api::meta::Condition{"FailureTarget", "True", kReasonDeadlineExceeded,
                             kMsgDeadlineExceeded};
    } else {
      c.RequeueAfter(left);
    }
  }
}

void JobReconciler::DecideIndexed(SyncCtx& c) {
  c.prev_succeeded_indexes =
      OrderedIntervals::Parse(StrAt(c.job, {"status", "completedIndexes"}), c.completions);
  std::vector<int> fresh;
  for (const Json* p : c.pods) {
    int ix = CompletionIndex(*p);
    if (PodPhase(*p) == "Succeeded" && ix != kUnknownIndex && ix < c.completions &&
        HasTrackingFinalizer(*p)) {
      fresh.push_back(ix);
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
    const int64_t limit = IntAt(c.job, {"spec", "backoffLimitPerIndex"}, 0);
    OrderedIntervals prev =
        OrderedIntervals::Parse(StrAt(c.job, {"status", "failedIndexes"}), c.completions);
    std::vector<int> failed_now;
    for (const Json* p : c.pods) {
      int ix = CompletionIndex(*p);
      if (ix == kUnknownIndex || ix >= c.completions || prev.Has(ix)) continue;
      if (!HasTrackingFinalizer(*p) || !IsPodFailed(*p, c.job)) continue;
      PolicyMatch m = MatchPodFailurePolicy(c.job, *p);
      if ((m.action && *m.action == "FailIndex") ||
          (m.count_failed && IndexFailureCount(*p) >= limit)) {
        failed_now.push_back(ix);
      }
    }
    c.failed_indexes = prev.With(failed_now);
    const int n_failed = c.failed_indexes->Total();
    const Json& max_failed = At(c.job, {"spec", "maxFailedIndexes"});
    if (!c.finished) {
      if (max_failed.is_number_integer() && n_failed > max_failed.get<int64_t>()) {
        c.finished = api::meta::Condition{"FailureTarget", "True", kReasonMaxFailedIndexesExceeded,
                               kMsgMaxFailedIndexesExceeded};
      } else if (n_failed > 0 && n_failed + c.succeeded_indexes.Total() >= c.completions) {
        c.finished = api::meta::Condition{"FailureTarget", "True", kReasonFailedIndexes, kMsgFailedIndexes};
      }
    }
    // Per index, the latest failed pod keeps its finalizer until its
    // replacement exists (the replacement inherits its failure count).
    std::map<int, std::pair<std::pair<int, std::string>, const Json*>> latest;
    for (const Json* p : c.pods) {
      int ix = CompletionIndex(*p);
      if (ix == kUnknownIndex || ix >= c.completions || c.failed_indexes->Has(ix)) continue;
      std::pair<int, std::string> rank{IndexFailureCount(*p) + IndexIgnoredFailureCount(*p),
                                       p->value("/metadata/creationTimestamp"_json_pointer,
                                                std::string())};
      auto it = latest.find(ix);
      if (it == latest.end() || rank > it->second.first) latest[ix] = {rank, p};
    }
    for (const auto& [ix, entry] : latest) {
      const Json* p = entry.second;
      if (IsPodFailed(*p, c.job) && HasTrackingFinalizer(*p)) c.delayed_per_index[ix] = p;
    }
  }
}

void JobReconciler::ApplySuspendCondition(SyncCtx& c) {
  if (Suspended(c.job)) {
    if (api::meta::SetCondition(c.job, api::meta::ConditionShape::kJob, {"Suspended", "True", "JobSuspended", "Job suspended"}, c.now)) {
      ctx_.events.Event(c.job, "Normal", "Suspended", "Job suspended");
    }
    // The deadline clock stops while suspended; startTime is set afresh on
    // resume. (Kubernetes overwrites it on resume; our status validation
    // only lets it change while suspended, so it is cleared here instead.)
    c.job["status"].erase("startTime");
  } else if (api::meta::SetCondition(c.job, api::meta::ConditionShape::kJob, {"Suspended", "False", "JobResumed", "Job resumed"},
                             c.now)) {
    ctx_.events.Event(c.job, "Normal", "Resumed", "Job resumed");
    c.job["status"]["startTime"] = api::meta::FormatRfc3339(c.now);
  }
}

absl::StatusOr<Result> JobReconciler::SyncJob(SyncCtx& c) {
  const Json before = At(c.job, {"status"});
  c.completions = static_cast<int>(IntAt(c.job, {"spec", "completions"}, -1));
  c.per_index = c.indexed && At(c.job, {"spec", "backoffLimitPerIndex"}).is_number_integer();
  if (c.indexed && c.completions < 0) return Result::Done();  // Invalid; validation forbids.
  if (!Suspended(c.job) && StrAt(c.job, {"status", "startTime"}).empty()) {
    c.job["status"]["startTime"] = api::meta::FormatRfc3339(c.now);
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
  Json& status = c.job["status"];
  int ready = 0;
  for (const Json* p : c.active) ready += IsPodReady(*p) ? 1 : 0;
  if (c.finished || Suspended(c.job)) ready = 0;
  if (active > 0) {
    status["active"] = active;
  } else {
    status.erase("active");
  }
  status["ready"] = std::min(ready, active);
  status["terminating"] = c.terminating;
  const bool needs_flush = status != before;
  BATCHD_RETURN_IF_ERROR(TrackStatusAndRemoveFinalizers(c, needs_flush));
  if (!manage_err.ok()) return manage_err;
  if (c.requeue) return Result::After(*c.requeue);
  return Result::Done();
}

}  // namespace batchd::controllers::job
