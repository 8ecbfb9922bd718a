#include "controllers/jobset/internal/policies.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/string_view.h"
#include "re2/re2.h"

namespace batchd::controllers::jobset::internal {

namespace js = api::jobset_v1alpha2;

namespace {

bool Contains(const std::vector<std::string_view>& list, std::string_view v) {
  return std::find(list.begin(), list.end(), v) != list.end();
}

// Go's regexp.MatchString: some part of `message` matches. A pattern that
// does not compile matches nothing (validation refuses those).
bool AnyPatternMatches(const std::vector<std::string_view>& patterns, std::string_view message) {
  for (std::string_view p : patterns) {
    RE2::Options opts;
    opts.set_log_errors(false);
    RE2 re(re2::StringPiece(p.data(), p.size()), opts);
    if (re.ok() && RE2::PartialMatch(re2::StringPiece(message.data(), message.size()), re)) {
      return true;
    }
  }
  return false;
}

bool RuleApplies(const js::FailurePolicyRuleView& rule, const ChildJob& job) {
  if (!rule.on_job_failure_reasons.empty() &&
      !Contains(rule.on_job_failure_reasons, job.failure_reason)) {
    return false;
  }
  if (!rule.on_job_failure_message_patterns.empty() &&
      !AnyPatternMatches(rule.on_job_failure_message_patterns, job.failure_message)) {
    return false;
  }
  if (job.rjob.empty()) return false;
  return rule.target_replicated_jobs.empty() || Contains(rule.target_replicated_jobs, job.rjob);
}

// The Job among `failed` accepted by `pred` that failed first (Jobs without
// a failure time are skipped, as upstream; ties keep list order).
template <typename Pred>
const ChildJob* EarliestFailed(const std::vector<ChildJob>& failed, Pred pred) {
  const ChildJob* first = nullptr;
  for (const ChildJob& j : failed) {
    if (!j.failure_time || !pred(j)) continue;
    if (first == nullptr || *j.failure_time < *first->failure_time) first = &j;
  }
  return first;
}

std::string WithFirstFailedJob(std::string_view message, std::string_view job) {
  return absl::StrCat(Sv(message), " (first failed job: ", Sv(job), ")");
}

FailureDecision Fail(const char* reason, const char* message, std::string_view job) {
  FailureDecision d;
  d.kind = FailureDecision::Kind::kFail;
  d.reason = reason;
  d.message = WithFirstFailedJob(message, job);
  d.job = std::string(job);
  return d;
}

FailureDecision Restart(const js::FailurePolicyRuleView* rule, bool counts, std::string_view job) {
  FailureDecision d;
  d.kind = FailureDecision::Kind::kRestart;
  d.counts_towards_max = counts;
  d.reason = rule != nullptr ? absl::StrCat(js::kRestartingFailurePolicyReasonPrefix,
                                            Sv(rule->name))
                             : js::kRestartingDefaultFailurePolicyReason;
  d.action_reason = counts ? js::kRestartJobSetActionReason : js::kRestartIgnoreMaxActionReason;
  d.action_message = WithFirstFailedJob(
      counts ? js::kRestartJobSetActionMessage : js::kRestartIgnoreMaxActionMessage, job);
  d.message = d.action_message;
  d.job = std::string(job);
  return d;
}

}  // namespace

FailureDecision DecideFailure(const js::JobSetSpecView& spec, const js::JobSetStatusView& status,
                              const ChildJobs& jobs) {
  auto any = [](const ChildJob&) { return true; };
  const ChildJob* first = EarliestFailed(jobs.failed, any);
  if (first == nullptr) first = &jobs.failed.front();
  if (!spec.failure_policy) return Fail(js::kFailedJobsReason, js::kFailedJobsMessage, first->name());
  const js::FailurePolicyRuleView* rule = nullptr;
  const ChildJob* job = first;
  for (const js::FailurePolicyRuleView& r : spec.failure_policy->rules) {
    if (const ChildJob* m = EarliestFailed(jobs.failed, [&](const ChildJob& j) {
          return RuleApplies(r, j);
        })) {
      rule = &r;
      job = m;
      break;
    }
  }
  const js::FailurePolicyAction action =
      rule != nullptr ? rule->action : js::FailurePolicyAction::kRestartJobSet;
  switch (action) {
    case js::FailurePolicyAction::kFailJobSet:
      return Fail(js::kFailJobSetActionReason, js::kFailJobSetActionMessage, job->name());
    case js::FailurePolicyAction::kRestartJobSetAndIgnoreMaxRestarts:
      return Restart(rule, false, job->name());
    case js::FailurePolicyAction::kRestartJobSet:
    case js::FailurePolicyAction::kUnknown:  // Refused by validation.
      break;
  }
  if (status.restarts_count_towards_max >= spec.failure_policy->max_restarts) {
    return Fail(js::kReachedMaxRestartsReason, js::kReachedMaxRestartsMessage, job->name());
  }
  return Restart(rule, true, job->name());
}

bool SuccessPolicyMet(const js::JobSetSpecView& spec, const ChildJobs& jobs) {
  int64_t matching = 0;
  for (const ChildJob& j : jobs.succeeded) {
    if (spec.success_policy.Targets(j.rjob)) ++matching;
  }
  int64_t expected = 0;
  if (spec.success_policy.any) {
    expected = 1;
  } else {
    for (const js::ReplicatedJobView& r : spec.replicated_jobs) {
      if (spec.success_policy.Targets(r.name)) expected += r.replicas;
    }
  }
  return matching >= expected;
}

bool DependenciesReached(const js::ReplicatedJobView& rjob, const js::JobSetSpecView& spec,
                         const Counts& counts) {
  for (const js::DependsOnView& dep : rjob.depends_on) {
    const js::ReplicatedJobCounts* c = FindCounts(counts, dep.name);
    const js::ReplicatedJobView* target = spec.ReplicatedJob(dep.name);
    if (c == nullptr || target == nullptr) return false;
    const int64_t reached = dep.status == js::DependencyStatus::kComplete
                                ? c->succeeded
                                : int64_t{c->ready} + c->succeeded + c->failed;
    if (reached != target->replicas) return false;
  }
  return true;
}

bool AllReplicasStarted(int32_t replicas, const js::ReplicatedJobCounts* c) {
  return c != nullptr && int64_t{c->failed} + c->ready + c->succeeded == replicas;
}

bool AllJobsReady(const js::JobSetSpecView& spec, const Counts& counts) {
  int64_t ready = 0;
  for (const js::ReplicatedJobCounts& c : counts) ready += int64_t{c.ready} + c.succeeded;
  return spec.GlobalReplicas() == ready;
}

std::optional<absl::Duration> TtlRemaining(const js::JobSetView& jobset, absl::Time now) {
  if (!jobset.spec.ttl_seconds_after_finished) return std::nullopt;
  const std::optional<absl::Time> finished = jobset.status.FinishedTime();
  if (!finished) return std::nullopt;
  return *finished + absl::Seconds(*jobset.spec.ttl_seconds_after_finished) - now;
}

}  // namespace batchd::controllers::jobset::internal
