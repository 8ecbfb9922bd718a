#include "api/batch/v1/job_view.h"

#include "api/json_access.h"
#include "api/meta/conditions.h"
#include "api/meta/time_util.h"

namespace batchd::api::batch_v1 {

namespace {

std::optional<int32_t> OptionalInt32(const Json& obj, std::string_view key) {
  std::optional<int64_t> v = AsOptionalInt(Member(obj, key));
  if (!v) return std::nullopt;
  return static_cast<int32_t>(*v);
}

PodFailurePolicyAction ParseAction(std::string_view action) {
  if (action == "FailJob") return PodFailurePolicyAction::kFailJob;
  if (action == "FailIndex") return PodFailurePolicyAction::kFailIndex;
  if (action == "Ignore") return PodFailurePolicyAction::kIgnore;
  if (action == "Count") return PodFailurePolicyAction::kCount;
  return PodFailurePolicyAction::kUnknown;
}

ExitCodesOperator ParseOperator(std::string_view op) {
  if (op == "In") return ExitCodesOperator::kIn;
  if (op == "NotIn") return ExitCodesOperator::kNotIn;
  return ExitCodesOperator::kUnknown;
}

PodFailurePolicyRule ParseRule(const Json& rule) {
  PodFailurePolicyRule r;
  r.action_name = StringMember(rule, "action");
  r.action = ParseAction(r.action_name);
  if (const Json& req = Member(rule, "onExitCodes"); req.is_object()) {
    PodFailurePolicyOnExitCodes codes;
    codes.container_name = StringMember(req, "containerName");
    codes.op = ParseOperator(StringMember(req, "operator"));
    for (const Json& v : MemberArray(req, "values")) {
      if (v.is_number_integer()) codes.values.push_back(v.get<int64_t>());
    }
    r.on_exit_codes = std::move(codes);
  } else if (const Json& patterns = Member(rule, "onPodConditions"); patterns.is_array()) {
    r.on_pod_conditions.emplace();
    for (const Json& p : patterns) {
      std::string_view status = StringMember(p, "status");
      r.on_pod_conditions->push_back(
          {StringMember(p, "type"), status.empty() ? std::string_view("True") : status});
    }
  }
  return r;
}

std::vector<std::string_view> Strings(const Json& list) {
  std::vector<std::string_view> out;
  if (!list.is_array()) return out;  // (A ternary with Json::array() would copy `list`.)
  for (const Json& s : list) {
    if (s.is_string()) out.push_back(AsString(s));
  }
  return out;
}

}  // namespace

JobSpecView JobSpecView::Parse(const Json& job) {
  JobSpecView v;
  const Json& spec = Member(job, "spec");
  v.parallelism = OptionalInt32(spec, "parallelism").value_or(1);
  v.completions = OptionalInt32(spec, "completions");
  if (std::string_view mode = StringMember(spec, "completionMode"); mode == "Indexed") {
    v.completion_mode = CompletionMode::kIndexed;
  } else if (!mode.empty() && mode != "NonIndexed") {
    v.completion_mode = CompletionMode::kUnknown;
  }
  v.backoff_limit = OptionalInt32(spec, "backoffLimit").value_or(6);
  v.backoff_limit_per_index = OptionalInt32(spec, "backoffLimitPerIndex");
  v.max_failed_indexes = OptionalInt32(spec, "maxFailedIndexes");
  v.active_deadline_seconds = AsOptionalInt(Member(spec, "activeDeadlineSeconds"));
  v.ttl_seconds_after_finished = OptionalInt32(spec, "ttlSecondsAfterFinished");
  v.suspend = BoolMember(spec, "suspend");
  if (StringMember(spec, "podReplacementPolicy") == "Failed") {
    v.pod_replacement_policy = PodReplacementPolicy::kFailed;
  }
  v.managed_by = StringMember(spec, "managedBy");
  if (const Json& policy = Member(spec, "podFailurePolicy"); policy.is_object()) {
    v.pod_failure_policy.emplace();
    for (const Json& rule : MemberArray(policy, "rules")) {
      v.pod_failure_policy->push_back(ParseRule(rule));
    }
  }
  if (const Json& rules = MemberAt(spec, {"successPolicy", "rules"}); rules.is_array()) {
    v.success_policy.emplace();
    for (const Json& rule : rules) {
      SuccessPolicyRule r;
      if (const Json& ix = Member(rule, "succeededIndexes"); ix.is_string()) {
        r.succeeded_indexes = AsString(ix);
      }
      r.succeeded_count = AsOptionalInt(Member(rule, "succeededCount"));
      v.success_policy->push_back(r);
    }
  }
  if (const Json& t = Member(spec, "template"); t.is_object()) v.pod_template = &t;
  v.template_restart_policy =
      core_v1::ParseRestartPolicy(AsString(MemberAt(spec, {"template", "spec", "restartPolicy"})));
  return v;
}

JobStatusView JobStatusView::Parse(const Json& job) {
  JobStatusView v;
  const Json& status = Member(job, "status");
  v.start_time = StringMember(status, "startTime");
  v.completion_time = StringMember(status, "completionTime");
  v.active = static_cast<int32_t>(IntMember(status, "active"));
  v.succeeded = static_cast<int32_t>(IntMember(status, "succeeded"));
  v.failed = static_cast<int32_t>(IntMember(status, "failed"));
  v.ready = OptionalInt32(status, "ready");
  v.terminating = OptionalInt32(status, "terminating");
  v.completed_indexes = StringMember(status, "completedIndexes");
  if (const Json& f = Member(status, "failedIndexes"); f.is_string()) v.failed_indexes = AsString(f);
  if (const Json& u = Member(status, "uncountedTerminatedPods"); !u.is_null()) {
    v.has_uncounted = true;
    v.uncounted_succeeded = Strings(Member(u, "succeeded"));
    v.uncounted_failed = Strings(Member(u, "failed"));
  }
  if (const Json& c = Member(status, "conditions"); c.is_array()) v.conditions = &c;
  return v;
}

std::optional<absl::Time> JobStatusView::StartTime() const {
  return meta::ParseOptionalRfc3339(start_time);
}

std::optional<absl::Time> JobStatusView::CompletionTime() const {
  return meta::ParseOptionalRfc3339(completion_time);
}

std::optional<absl::Time> JobStatusView::FinishedTime() const {
  if (conditions == nullptr || !conditions->is_array()) return std::nullopt;
  for (const Json& c : *conditions) {
    if (StringMember(c, "status") != meta::kConditionTrue) continue;
    const std::string_view type = StringMember(c, "type");
    if (type != "Complete" && type != "Failed") continue;
    if (auto t = meta::ParseOptionalRfc3339(StringMember(c, "lastTransitionTime"))) return t;
  }
  return std::nullopt;
}

JobView JobView::Parse(const Json& job) {
  return JobView{meta::ObjectMetaView::Parse(job), JobSpecView::Parse(job),
                 JobStatusView::Parse(job)};
}

bool JobView::Finished() const {
  if (status.conditions == nullptr) return false;
  for (std::string_view type : {"Complete", "Failed"}) {
    const Json* c = meta::FindConditionIn(*status.conditions, type);
    if (c != nullptr && StringMember(*c, "status") == meta::kConditionTrue) return true;
  }
  return false;
}

}  // namespace batchd::api::batch_v1
