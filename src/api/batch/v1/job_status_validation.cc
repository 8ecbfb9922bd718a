// ValidateJobUpdateStatus: the status counters and the condition / time
// transition rules Kubernetes enforces with JobManagedBy (on by default since
// 1.32). As in Kubernetes, most rules fire only when the fields they concern
// change, so a controller can fix a status that a spec change invalidated.
#include "absl/strings/string_view.h"
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "api/batch/v1/batch_v1.h"
#include "api/batch/v1/internal/job_rules.h"
#include "api/batch/v1/internal/util.h"
#include "api/json_access.h"

namespace batchd::api::batch_v1 {
namespace {

using internal::ConditionTrue;
using internal::NonNegative;

// The facts about one Job the transition rules look at.
struct Facts {
  bool complete, failed, failure_target, success_criteria_met, finished;
  explicit Facts(const Json& job) {
    const Json& c = MemberAt(job, {"status", "conditions"});
    complete = ConditionTrue(c, "Complete");
    failed = ConditionTrue(c, "Failed");
    failure_target = ConditionTrue(c, "FailureTarget");
    success_criteria_met = ConditionTrue(c, "SuccessCriteriaMet");
    finished = complete || failed;
  }
};

std::optional<absl::Time> TimeAt(const Json& job, std::string_view field) {
  const Json& v = MemberAt(job, {"status", field});
  return v.is_string() ? internal::ParseRfc3339(v.get<std::string>()) : std::nullopt;
}

bool SameTime(const Json& a, const Json& b, std::string_view field) {
  const Json& x = MemberAt(a, {"status", field});
  const Json& y = MemberAt(b, {"status", field});
  if (x.is_null() || y.is_null()) return x.is_null() == y.is_null();
  return TimeAt(a, field) == TimeAt(b, field);
}

ErrorList ValidateCounters(const Json& status, const Path& sp) {
  ErrorList errs;
  for (const char* f : {"active", "succeeded", "failed", "ready", "terminating"}) {
    AppendErrors(errs, NonNegative(MemberAt(status, {f}), sp.Child(f)));
  }
  std::set<std::string> seen;
  for (const char* list : {"succeeded", "failed"}) {
    const Json& uids = MemberAt(status, {"uncountedTerminatedPods", list});
    if (!uids.is_array()) continue;
    for (size_t i = 0; i < uids.size(); ++i) {
      const Path p = sp.Child("uncountedTerminatedPods").Child(list).Index(i);
      const std::string uid = uids[i].is_string() ? uids[i].get<std::string>() : "";
      if (uid.empty()) {
        errs.push_back(Invalid(p, uid, "must not be empty"));
      } else if (!seen.insert(uid).second) {
        errs.push_back(Duplicate(p, uid));
      }
    }
  }
  return errs;
}

// Conditions that may never hold together, checked when they change.
ErrorList ValidateConditionCombos(const Facts& now, const Facts& old, const Json& job,
                                  const Path& sp) {
  ErrorList errs;
  const Path cp = sp.Child("conditions");
  const bool complete_changed = now.complete != old.complete;
  if ((complete_changed || now.failed != old.failed) && now.complete && now.failed) {
    errs.push_back(Invalid(cp, nullptr, "cannot set Complete=True and Failed=true conditions"));
  }
  if ((complete_changed || now.failure_target != old.failure_target) && now.complete &&
      now.failure_target) {
    errs.push_back(Invalid(cp, nullptr, "cannot set Complete=True and FailureTarget=true conditions"));
  }
  if (now.success_criteria_met && now.failed) {
    errs.push_back(Invalid(cp, nullptr, "cannot set SuccessCriteriaMet=True and Failed=true conditions"));
  }
  if (now.success_criteria_met && now.failure_target) {
    errs.push_back(Invalid(cp, nullptr,
                           "cannot set SuccessCriteriaMet=True and FailureTarget=true conditions"));
  }
  if (FindMemberAt(job, {"spec", "successPolicy"}) != nullptr && !now.success_criteria_met && now.complete) {
    errs.push_back(Invalid(cp, nullptr,
                           "cannot set Complete=True for Job with SuccessPolicy unless "
                           "SuccessCriteriaMet=True"));
  }
  for (const auto& [type, was, is] : {std::tuple{"Failed", old.failed, now.failed},
                                      std::tuple{"Complete", old.complete, now.complete},
                                      std::tuple{"FailureTarget", old.failure_target, now.failure_target}}) {
    if (was && !is) {
      errs.push_back(Invalid(cp, nullptr, absl::StrCat("cannot disable the terminal ", type, "=True condition")));
    }
  }
  if (old.success_criteria_met && !now.success_criteria_met) {
    errs.push_back(Invalid(cp, nullptr, "cannot disable the SuccessCriteriaMet=True condition"));
  }
  if (old.complete && !old.success_criteria_met && now.success_criteria_met) {
    errs.push_back(Invalid(cp, nullptr,
                           "cannot set SuccessCriteriaMet=True for Job already has Complete=true "
                           "conditions"));
  }
  return errs;
}

ErrorList ValidateTimes(const Json& job, const Json& old, const Facts& now, const Facts& was,
                        const Path& sp) {
  ErrorList errs;
  const bool start_changed = !SameTime(job, old, "startTime");
  const bool completion_changed = !SameTime(job, old, "completionTime");
  const bool complete_changed = now.complete != was.complete;
  const Json& completion = MemberAt(job, {"status", "completionTime"});
  if ((complete_changed || completion_changed) && !completion.is_null() && !now.complete) {
    errs.push_back(Invalid(sp.Child("completionTime"), completion,
                           "cannot set completionTime when there is no Complete=True condition"));
  }
  if ((complete_changed || completion_changed) && completion.is_null() && now.complete) {
    errs.push_back(Required(sp.Child("completionTime"), "completionTime is required for Complete jobs"));
  }
  const auto start = TimeAt(job, "startTime");
  const auto end = TimeAt(job, "completionTime");
  if ((start_changed || completion_changed) && start && end && *end < *start) {
    errs.push_back(Invalid(sp.Child("completionTime"), completion,
                           "completionTime cannot be set before startTime"));
  }
  if (!completion.is_null() && !MemberAt(old, {"status", "completionTime"}).is_null() && completion_changed) {
    errs.push_back(Invalid(sp.Child("completionTime"), completion, "completionTime cannot be mutated"));
  }
  if ((now.finished != was.finished || start_changed) && now.finished &&
      MemberAt(job, {"status", "startTime"}).is_null()) {
    errs.push_back(Required(sp.Child("startTime"), "startTime is required for finished job"));
  }
  if (start_changed && !MemberAt(old, {"status", "startTime"}).is_null() &&
      !AsBool(MemberAt(job, {"spec", "suspend"}))) {
    errs.push_back(Required(sp.Child("startTime"), "startTime cannot be removed for unsuspended job"));
  }
  return errs;
}

ErrorList ValidateIndexes(const Json& job, const Json& old, const Path& sp) {
  ErrorList errs;
  const std::string completed(AsString(MemberAt(job, {"status", "completedIndexes"})));
  const Json& failed = MemberAt(job, {"status", "failedIndexes"});
  const bool completed_changed = completed != AsString(MemberAt(old, {"status", "completedIndexes"}));
  const bool failed_changed = failed != MemberAt(old, {"status", "failedIndexes"});
  const auto completions = AsOptionalInt(MemberAt(job, {"spec", "completions"}));
  const bool per_index = FindMemberAt(job, {"spec", "backoffLimitPerIndex"}) != nullptr;
  const bool indexed = AsString(MemberAt(job, {"spec", "completionMode"})) == "Indexed";
  if (completed_changed && completions) {
    auto st = internal::ValidateIndexesFormat(completed, *completions);
    if (!st.ok()) {
      errs.push_back(Invalid(sp.Child("completedIndexes"), completed,
                             absl::StrCat("error parsing completedIndexes: ", st.status().message())));
    }
  }
  if (failed_changed && completions && per_index && failed.is_string()) {
    auto st = internal::ValidateIndexesFormat(failed.get<std::string>(), *completions);
    if (!st.ok()) {
      errs.push_back(Invalid(sp.Child("failedIndexes"), failed,
                             absl::StrCat("error parsing failedIndexes: ", st.status().message())));
    }
  }
  if (completed_changed && !completed.empty() && !indexed) {
    errs.push_back(Invalid(sp.Child("completedIndexes"), completed,
                           "cannot set non-empty completedIndexes when non-indexed completion mode"));
  }
  if (failed_changed && !per_index && !failed.is_null()) {
    errs.push_back(Invalid(sp.Child("failedIndexes"), failed,
                           "cannot set non-null failedIndexes when backoffLimitPerIndex is null"));
  }
  if ((failed_changed || completed_changed) && completions && failed.is_string()) {
    absl::Status st = internal::ValidateIndexesDoNotOverlap(completed, failed.get<std::string>(), *completions);
    if (!st.ok()) errs.push_back(Invalid(sp.Child("failedIndexes"), failed, std::string(st.message())));
  }
  return errs;
}

ErrorList ValidateFinishedAndCounters(const Json& job, const Json& old, const Facts& now,
                                      const Facts& was, const Path& sp) {
  ErrorList errs;
  const bool finished_changed = now.finished != was.finished;
  const int64_t active = AsOptionalInt(MemberAt(job, {"status", "active"})).value_or(0);
  if ((finished_changed || active != AsOptionalInt(MemberAt(old, {"status", "active"})).value_or(0)) && active > 0 &&
      now.finished) {
    errs.push_back(Invalid(sp.Child("active"), active, "active>0 is invalid for finished job"));
  }
  const Json& uncounted = MemberAt(job, {"status", "uncountedTerminatedPods"});
  const size_t n_uncounted = Member(uncounted, "succeeded").size() + Member(uncounted, "failed").size();
  if ((finished_changed || uncounted != MemberAt(old, {"status", "uncountedTerminatedPods"})) &&
      now.finished && n_uncounted > 0) {
    errs.push_back(Invalid(sp.Child("uncountedTerminatedPods"), uncounted,
                           "uncountedTerminatedPods needs to be empty for finished job"));
  }
  const int64_t failed = AsOptionalInt(MemberAt(job, {"status", "failed"})).value_or(0);
  if (failed < AsOptionalInt(MemberAt(old, {"status", "failed"})).value_or(0)) {
    errs.push_back(Invalid(sp.Child("failed"), failed, "cannot decrease the failed counter"));
  }
  const bool indexed = AsString(MemberAt(job, {"spec", "completionMode"})) == "Indexed";
  const bool elastic = indexed && MemberAt(job, {"spec", "completions"}) == MemberAt(job, {"spec", "parallelism"});
  const int64_t succeeded = AsOptionalInt(MemberAt(job, {"status", "succeeded"})).value_or(0);
  if (!elastic && succeeded < AsOptionalInt(MemberAt(old, {"status", "succeeded"})).value_or(0)) {
    errs.push_back(Invalid(sp.Child("succeeded"), succeeded, "cannot decrease the succeeded counter"));
  }
  return errs;
}

}  // namespace

ErrorList ValidateJobStatusUpdate(const Json& job, const Json& old) {
  const Path sp("status");
  const Facts now(job), was(old);
  ErrorList errs = ValidateCounters(Member(job, "status"), sp);
  AppendErrors(errs, ValidateConditionCombos(now, was, job, sp));
  AppendErrors(errs, ValidateTimes(job, old, now, was, sp));
  AppendErrors(errs, ValidateIndexes(job, old, sp));
  AppendErrors(errs, ValidateFinishedAndCounters(job, old, now, was, sp));
  return errs;
}

}  // namespace batchd::api::batch_v1
