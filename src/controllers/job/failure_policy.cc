#include "controllers/job/failure_policy.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "api/batch/v1/batch_v1.h"
#include "api/meta/object_meta.h"
#include "api/meta/time_util.h"

namespace batchd::controllers::job {

using api::Json;

namespace {

const Json& Field(const Json& o, const char* k) {
  static const Json kNull;
  if (!o.is_object()) return kNull;
  auto it = o.find(k);
  return it == o.end() ? kNull : *it;
}

std::string Str(const Json& v) { return v.is_string() ? v.get<std::string>() : ""; }

const Json& Status(const Json& pod) { return Field(pod, "status"); }

std::optional<absl::Time> ParseTime(const Json& v) {
  if (!v.is_string()) return std::nullopt;
  auto t = api::meta::ParseRfc3339(v.get<std::string>());
  if (!t.ok()) return std::nullopt;
  return *t;
}

// The first terminated container (app containers, then init containers)
// whose non-zero exit code satisfies `req`.
const Json* MatchOnExitCodes(const Json& pod, const Json& req) {
  const std::string op = Str(Field(req, "operator"));
  if (op != "In" && op != "NotIn") return nullptr;
  const std::string container = Str(Field(req, "containerName"));
  const Json& values = Field(req, "values");
  for (const char* list : {"containerStatuses", "initContainerStatuses"}) {
    const Json& statuses = Field(Status(pod), list);
    if (!statuses.is_array()) continue;
    for (const Json& cs : statuses) {
      if (!container.empty() && Str(Field(cs, "name")) != container) continue;
      const Json& term = Field(Field(cs, "state"), "terminated");
      if (!term.is_object()) continue;
      const Json& code = Field(term, "exitCode");
      if (!code.is_number_integer() || code.get<int64_t>() == 0) continue;
      bool in = false;
      if (values.is_array()) {
        for (const Json& v : values) in |= v.is_number_integer() && v == code;
      }
      if (in == (op == "In")) return &cs;
    }
  }
  return nullptr;
}

const Json* MatchOnPodConditions(const Json& pod, const Json& patterns) {
  const Json& conds = Field(Status(pod), "conditions");
  if (!conds.is_array() || !patterns.is_array()) return nullptr;
  for (const Json& p : patterns) {
    std::string want_status = Str(Field(p, "status"));
    if (want_status.empty()) want_status = "True";
    for (const Json& c : conds) {
      if (Str(Field(c, "type")) == Str(Field(p, "type")) &&
          Str(Field(c, "status")) == want_status) {
        return &c;
      }
    }
  }
  return nullptr;
}

}  // namespace

std::string PodPhase(const Json& pod) { return Str(Field(Status(pod), "phase")); }

bool IsPodTerminal(const Json& pod) {
  std::string p = PodPhase(pod);
  return p == "Succeeded" || p == "Failed";
}

bool HasTrackingFinalizer(const Json& pod) {
  return api::meta::HasFinalizer(pod, api::batch_v1::kJobTrackingFinalizer);
}

bool IsPodActive(const Json& pod) {
  return !IsPodTerminal(pod) && !api::meta::IsBeingDeleted(pod);
}

bool IsPodTerminating(const Json& pod) {
  return !IsPodTerminal(pod) && api::meta::IsBeingDeleted(pod);
}

bool IsPodReady(const Json& pod) {
  const Json& conds = Field(Status(pod), "conditions");
  if (!conds.is_array()) return false;
  for (const Json& c : conds) {
    if (Str(Field(c, "type")) == "Ready") return Str(Field(c, "status")) == "True";
  }
  return false;
}

bool OnlyReplaceFailedPods(const Json& job) {
  const Json& spec = Field(job, "spec");
  if (Str(Field(spec, "podReplacementPolicy")) == "Failed") return true;
  return Field(spec, "podFailurePolicy").is_object();
}

bool IsPodFailed(const Json& pod, const Json& job) {
  const std::string phase = PodPhase(pod);
  if (phase == "Failed") return true;
  if (OnlyReplaceFailedPods(job)) return false;
  return api::meta::IsBeingDeleted(pod) && phase != "Succeeded";
}

PolicyMatch MatchPodFailurePolicy(const Json& job, const Json& pod) {
  const Json& rules = Field(Field(Field(job, "spec"), "podFailurePolicy"), "rules");
  if (!rules.is_array()) return {};
  for (size_t i = 0; i < rules.size(); ++i) {
    const Json& rule = rules[i];
    const std::string action = Str(Field(rule, "action"));
    if (action != "FailJob" && action != "Ignore" && action != "Count" && action != "FailIndex") {
      continue;  // Unknown actions are skipped.
    }
    std::string fail_msg;
    if (const Json& req = Field(rule, "onExitCodes"); req.is_object()) {
      const Json* cs = MatchOnExitCodes(pod, req);
      if (cs == nullptr) continue;
      fail_msg = absl::StrCat("Container ", Str(Field(*cs, "name")), " for pod ",
                              api::meta::GetNamespace(pod), "/", api::meta::GetName(pod),
                              " failed with exit code ",
                              Field(Field(Field(*cs, "state"), "terminated"), "exitCode").dump(),
                              " matching ", action, " rule at index ", i);
    } else if (const Json& pats = Field(rule, "onPodConditions"); pats.is_array()) {
      const Json* c = MatchOnPodConditions(pod, pats);
      if (c == nullptr) continue;
      fail_msg = absl::StrCat("Pod ", api::meta::GetNamespace(pod), "/", api::meta::GetName(pod),
                              " has condition ", Str(Field(*c, "type")), " matching ", action,
                              " rule at index ", i);
    } else {
      continue;
    }
    PolicyMatch m;
    m.action = action;
    m.count_failed = action != "Ignore";
    if (action == "FailJob") m.fail_job_message = fail_msg;
    return m;
  }
  return {};
}

bool PastBackoffLimitOnFailure(const Json& job, const std::vector<const Json*>& pods) {
  const Json& spec = Field(job, "spec");
  if (Str(Field(Field(Field(spec, "template"), "spec"), "restartPolicy")) != "OnFailure") {
    return false;
  }
  int64_t restarts = 0;
  for (const Json* p : pods) {
    std::string phase = PodPhase(*p);
    if (phase != "Running" && phase != "Pending") continue;
    for (const char* list : {"initContainerStatuses", "containerStatuses"}) {
      const Json& statuses = Field(Status(*p), list);
      if (!statuses.is_array()) continue;
      for (const Json& cs : statuses) {
        const Json& rc = Field(cs, "restartCount");
        if (rc.is_number_integer()) restarts += rc.get<int64_t>();
      }
    }
  }
  const Json& limit = Field(spec, "backoffLimit");
  int64_t backoff_limit = limit.is_number_integer() ? limit.get<int64_t>() : 6;
  if (backoff_limit == 0) return restarts > 0;
  return restarts >= backoff_limit;
}

absl::Time PodFinishTime(const Json& pod, absl::Time fallback) {
  std::optional<absl::Time> latest;
  for (const char* list : {"initContainerStatuses", "containerStatuses"}) {
    const Json& statuses = Field(Status(pod), list);
    if (!statuses.is_array()) continue;
    for (const Json& cs : statuses) {
      auto t = ParseTime(Field(Field(Field(cs, "state"), "terminated"), "finishedAt"));
      if (t && (!latest || *t > *latest)) latest = t;
    }
  }
  if (latest) return *latest;
  const Json& conds = Field(Status(pod), "conditions");
  if (conds.is_array()) {
    for (const Json& c : conds) {
      if (Str(Field(c, "type")) == "Ready" && Str(Field(c, "status")) == "False") {
        if (auto t = ParseTime(Field(c, "lastTransitionTime"))) return *t;
      }
    }
  }
  if (auto t = api::meta::GetDeletionTimestamp(pod)) {
    // The deletion was requested `deletionGracePeriodSeconds` before it.
    const Json& grace = Field(Field(pod, "metadata"), "deletionGracePeriodSeconds");
    return grace.is_number_integer() ? *t - absl::Seconds(grace.get<int64_t>()) : *t;
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
  std::lock_guard<std::mutex> lock(mu_);
  auto it = records_.find(key);
  return it == records_.end() ? BackoffRecord{} : it->second;
}

void BackoffStore::Set(const std::string& key, const BackoffRecord& r) {
  std::lock_guard<std::mutex> lock(mu_);
  if (r.failures_after_last_success == 0) {
    records_.erase(key);
  } else {
    records_[key] = r;
  }
}

void BackoffStore::Remove(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  records_.erase(key);
}

}  // namespace batchd::controllers::job
