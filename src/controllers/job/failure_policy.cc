#include "controllers/job/failure_policy.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "api/batch/v1/batch_v1.h"
#include "api/meta/conditions.h"
#include "api/meta/time_util.h"
#include "common/string_view.h"

namespace batchd::controllers::job {

using api::batch_v1::ExitCodesOperator;
using api::batch_v1::PodFailurePolicyAction;
using api::core_v1::ContainerStatusView;
using api::core_v1::PodPhase;

namespace {

// The first terminated container (app containers, then init containers)
// whose non-zero exit code satisfies `req`.
const ContainerStatusView* MatchOnExitCodes(const PodView& pod,
                                            const api::batch_v1::PodFailurePolicyOnExitCodes& req) {
  if (req.op == ExitCodesOperator::kUnknown) return nullptr;
  for (const std::vector<ContainerStatusView>* list :
       {&pod.container_statuses, &pod.init_container_statuses}) {
    for (const ContainerStatusView& cs : *list) {
      if (!req.container_name.empty() && cs.name != req.container_name) continue;
      if (!cs.state.terminated() || cs.state.exit_code == 0) continue;
      const bool in = std::find(req.values.begin(), req.values.end(), cs.state.exit_code) !=
                      req.values.end();
      if (in == (req.op == ExitCodesOperator::kIn)) return &cs;
    }
  }
  return nullptr;
}

// The first pattern that one of the pod's conditions matches, or nullptr.
const api::batch_v1::PodFailurePolicyOnPodCondition* MatchOnPodConditions(
    const PodView& pod, const std::vector<api::batch_v1::PodFailurePolicyOnPodCondition>& patterns) {
  for (const auto& pattern : patterns) {
    if (pod.HasCondition(pattern.type, pattern.status)) return &pattern;
  }
  return nullptr;
}

}  // namespace

bool HasTrackingFinalizer(const api::meta::ObjectMetaView& pod) {
  return pod.HasFinalizer(api::batch_v1::kJobTrackingFinalizer);
}

bool IsPodActive(const PodView& pod) { return !pod.terminal() && !pod.meta.being_deleted(); }

bool IsPodTerminating(const PodView& pod) { return !pod.terminal() && pod.meta.being_deleted(); }

bool IsPodReady(const PodView& pod) {
  return pod.ConditionStatus("Ready") == api::meta::kConditionTrue;
}

bool IsPodFailed(const PodView& pod, const JobSpecView& spec) {
  if (pod.phase == PodPhase::kFailed) return true;
  if (spec.OnlyReplaceFailedPods()) return false;
  return pod.meta.being_deleted() && pod.phase != PodPhase::kSucceeded;
}

PolicyMatch MatchPodFailurePolicy(const JobSpecView& spec, const PodView& pod) {
  if (!spec.pod_failure_policy) return {};
  const std::vector<api::batch_v1::PodFailurePolicyRule>& rules = *spec.pod_failure_policy;
  for (size_t i = 0; i < rules.size(); ++i) {
    const api::batch_v1::PodFailurePolicyRule& rule = rules[i];
    if (rule.action == PodFailurePolicyAction::kUnknown) continue;  // Skipped.
    std::string fail_msg;
    if (rule.on_exit_codes) {
      const ContainerStatusView* cs = MatchOnExitCodes(pod, *rule.on_exit_codes);
      if (cs == nullptr) continue;
      fail_msg = absl::StrCat("Container ", Sv(cs->name), " for pod ", Sv(pod.meta.namespace_),
                              "/", Sv(pod.meta.name), " failed with exit code ",
                              cs->state.exit_code, " matching ", Sv(rule.action_name),
                              " rule at index ", i);
    } else if (rule.on_pod_conditions) {
      const auto* c = MatchOnPodConditions(pod, *rule.on_pod_conditions);
      if (c == nullptr) continue;
      fail_msg = absl::StrCat("Pod ", Sv(pod.meta.namespace_), "/", Sv(pod.meta.name),
                              " has condition ", Sv(c->type), " matching ", Sv(rule.action_name),
                              " rule at index ", i);
    } else {
      continue;
    }
    PolicyMatch m;
    m.action = rule.action;
    m.count_failed = rule.action != PodFailurePolicyAction::kIgnore;
    if (rule.action == PodFailurePolicyAction::kFailJob) m.fail_job_message = std::move(fail_msg);
    return m;
  }
  return {};
}

bool PastBackoffLimitOnFailure(const JobSpecView& spec, const std::vector<const PodView*>& pods) {
  if (spec.template_restart_policy != api::core_v1::RestartPolicy::kOnFailure) return false;
  int64_t restarts = 0;
  for (const PodView* p : pods) {
    if (p->phase != PodPhase::kRunning && p->phase != PodPhase::kPending) continue;
    for (const std::vector<ContainerStatusView>* list :
         {&p->init_container_statuses, &p->container_statuses}) {
      for (const ContainerStatusView& cs : *list) restarts += cs.restart_count;
    }
  }
  if (spec.backoff_limit == 0) return restarts > 0;
  return restarts >= spec.backoff_limit;
}

absl::Time PodFinishTime(const PodView& pod, absl::Time fallback) {
  std::optional<absl::Time> latest;
  for (const std::vector<ContainerStatusView>* list :
       {&pod.init_container_statuses, &pod.container_statuses}) {
    for (const ContainerStatusView& cs : *list) {
      if (!cs.state.terminated()) continue;
      auto t = api::meta::ParseOptionalRfc3339(cs.state.finished_at);
      if (t && (!latest || *t > *latest)) latest = t;
    }
  }
  if (latest) return *latest;
  if (auto t = pod.ConditionTransitionTime("Ready", api::meta::kConditionFalse)) return *t;
  if (auto t = pod.meta.DeletionTime()) {
    // The deletion was requested `deletionGracePeriodSeconds` before it.
    return pod.meta.deletion_grace_period_seconds
               ? *t - absl::Seconds(*pod.meta.deletion_grace_period_seconds)
               : *t;
  }
  return fallback;
}

absl::Duration RemainingBackoff(int failures, std::optional<absl::Time> last_failure,
                                absl::Time now) {
  if (failures <= 0 || !last_failure) return absl::ZeroDuration();
  absl::Duration backoff = kDefaultPodFailureBackoff;
  for (int i = 1; i < failures; ++i) {
    backoff *= 2;
    if (backoff >= kMaxPodFailureBackoff) {
      backoff = kMaxPodFailureBackoff;
      break;
    }
  }
  absl::Duration elapsed = now - *last_failure;
  if (backoff < elapsed) return absl::ZeroDuration();
  return backoff - elapsed;
}

BackoffRecord NextBackoffRecord(BackoffRecord prev, std::vector<absl::Time> new_succeeded,
                                std::vector<absl::Time> new_failed) {
  std::sort(new_succeeded.begin(), new_succeeded.end());
  std::sort(new_failed.begin(), new_failed.end());
  if (new_succeeded.empty()) {
    if (new_failed.empty()) return prev;
    prev.failures_after_last_success += static_cast<int>(new_failed.size());
    prev.last_failure = new_failed.back();
    return prev;
  }
  BackoffRecord r;
  const absl::Time last_success = new_succeeded.back();
  for (auto it = new_failed.rbegin(); it != new_failed.rend() && *it > last_success; ++it) {
    if (!r.last_failure) r.last_failure = *it;
    ++r.failures_after_last_success;
  }
  return r;
}

BackoffRecord BackoffStore::Get(const std::string& key) const {
  absl::MutexLock lock(&mu_);
  auto it = records_.find(key);
  return it == records_.end() ? BackoffRecord{} : it->second;
}

void BackoffStore::Set(const std::string& key, const BackoffRecord& r) {
  absl::MutexLock lock(&mu_);
  if (r.failures_after_last_success == 0) {
    records_.erase(key);
  } else {
    records_[key] = r;
  }
}

void BackoffStore::Remove(const std::string& key) {
  absl::MutexLock lock(&mu_);
  records_.erase(key);
}

}  // namespace batchd::controllers::job
