// Validation of spec.failurePolicy and spec.coordinator, with upstream's
// messages (pkg/webhooks/jobset_webhook.go) at the field they are about.
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/jobset/v1alpha2/internal/validation.h"
#include "api/jobset/v1alpha2/jobset_view.h"
#include "api/jobset/v1alpha2/jobset_v1alpha2.h"
#include "api/json_access.h"
#include "api/validation/names.h"
#include "common/string_view.h"
#include "re2/re2.h"

namespace batchd::api::jobset_v1alpha2::internal {
namespace {

constexpr size_t kMaxRuleNameLength = 128;

// The reasons of a failed Job's Failed condition a rule may name.
const std::vector<std::string>& ValidFailureReasons() {
  static const std::vector<std::string> reasons = {"BackoffLimitExceeded", "DeadlineExceeded",
                                                   "FailedIndexes", "MaxFailedIndexesExceeded",
                                                   "PodFailurePolicy"};
  return reasons;
}

// ^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$
bool ValidRuleName(std::string_view name) {
  auto alpha = [](char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'); };
  auto alnum_ = [&](char c) { return alpha(c) || (c >= '0' && c <= '9') || c == '_'; };
  if (name.empty() || !alpha(name.front()) || !alnum_(name.back())) return false;
  for (char c : name) {
    if (!alnum_(c) && c != ',' && c != ':') return false;
  }
  return true;
}

void ValidateRuleName(const Json& rule, const Path& p, ErrorList& errs) {
  const std::string name(StringMember(rule, "name"));
  if (name.empty() || name.size() > kMaxRuleNameLength) {
    errs.push_back(Invalid(p, name,
                           absl::StrCat("invalid failure policy rule name of length ",
                                        name.size(), ", the rule name must be at least 1 "
                                        "characters long and at most ", kMaxRuleNameLength,
                                        " characters long")));
  }
  if (!ValidRuleName(name)) {
    errs.push_back(Invalid(p, name,
                           absl::StrCat("invalid failure policy rule name '", name,
                                        "', a failure policy rule name must start with an "
                                        "alphabetic character, optionally followed by a "
                                        "string of alphanumeric characters or '_,:', and must "
                                        "end with an alphanumeric character or '_'")));
  }
}

void ValidateRuleMatchers(const Json& rule, const std::vector<std::string>& rjob_names,
                          const Path& p, ErrorList& errs) {
  const Json& targets = MemberArray(rule, "targetReplicatedJobs");
  for (size_t i = 0; i < targets.size(); ++i) {
    const std::string name(AsString(targets[i]));
    bool known = false;
    for (const std::string& r : rjob_names) known |= r == name;
    if (known) continue;
    errs.push_back(Invalid(p.Child("targetReplicatedJobs").Index(i), name,
                           absl::StrCat("invalid replicatedJob name '", name,
                                        "' in failure policy does not appear in "
                                        ".spec.ReplicatedJobs")));
  }
  const Json& reasons = MemberArray(rule, "onJobFailureReasons");
  CheckUniqueStrings(reasons, p.Child("onJobFailureReasons"), errs);
  for (size_t i = 0; i < reasons.size(); ++i) {
    const std::string reason(AsString(reasons[i]));
    bool valid = false;
    for (const std::string& r : ValidFailureReasons()) valid |= r == reason;
    if (valid) continue;
    errs.push_back(Invalid(p.Child("onJobFailureReasons").Index(i), reason,
                           absl::StrCat("invalid job failure reason '", reason,
                                        "' in failure policy is not a recognized job failure "
                                        "reason")));
  }
  const Json& patterns = MemberArray(rule, "onJobFailureMessagePatterns");
  CheckUniqueStrings(patterns, p.Child("onJobFailureMessagePatterns"), errs);
  for (size_t i = 0; i < patterns.size(); ++i) {
    const std::string pattern(AsString(patterns[i]));
    RE2::Options opts;
    opts.set_log_errors(false);
    RE2 re(pattern, opts);
    if (!re.ok()) {
      // Upstream skips a pattern Go cannot compile when it matches; batchd
      // refuses it up front so a rule never silently matches less.
      errs.push_back(Invalid(p.Child("onJobFailureMessagePatterns").Index(i), pattern,
                             absl::StrCat("invalid regular expression: ", re.error())));
    }
  }
}

}  // namespace

void ValidateFailurePolicy(const Json& spec, const std::vector<std::string>& rjob_names,
                           ErrorList& errs) {
  const Json* policy = FindMember(spec, "failurePolicy");
  if (policy == nullptr || !policy->is_object()) return;
  const Path p = Path("spec").Child("failurePolicy");
  const Json& max = Member(*policy, "maxRestarts");
  if (max.is_number_integer() && max.get<int64_t>() < 0) {
    errs.push_back(Invalid(p.Child("maxRestarts"), max, "must be greater than or equal to 0"));
  }
  CheckEnum(*policy, "restartStrategy", {kRecreate, kBlockingRecreate, kInPlaceRestart}, false,
            p, errs);
  const Json& rules = MemberArray(*policy, "rules");
  std::map<std::string, std::vector<size_t>> by_name;
  for (size_t i = 0; i < rules.size(); ++i) {
    const Path rp = p.Child("rules").Index(i);
    CheckEnum(rules[i], "action",
              {kFailJobSet, kRestartJobSet, kRestartJobSetAndIgnoreMaxRestarts, kRestartJob,
               kRestartJobAndIgnoreMaxRestarts},
              true, rp, errs);
    ValidateRuleName(rules[i], rp.Child("name"), errs);
    by_name[std::string(StringMember(rules[i], "name"))].push_back(i);
    ValidateRuleMatchers(rules[i], rjob_names, rp, errs);
  }
  for (const auto& [name, indexes] : by_name) {
    if (indexes.size() < 2) continue;
    errs.push_back(Invalid(p.Child("rules").Index(indexes[1]).Child("name"), name,
                           absl::StrCat("rule names are not unique, rules with indices [",
                                        absl::StrJoin(indexes, " "),
                                        "] all have the same name '", name, "'")));
  }
}

void ValidateCoordinator(const Json& js, ErrorList& errs) {
  const Json& spec = MemberObject(js, "spec");
  const Json* coordinator = FindMember(spec, "coordinator");
  if (coordinator == nullptr || !coordinator->is_object()) return;
  const Path p = Path("spec").Child("coordinator");
  const std::string rjob_name(StringMember(*coordinator, "replicatedJob"));
  const int64_t job_index = IntMember(*coordinator, "jobIndex");
  const int64_t pod_index = IntMember(*coordinator, "podIndex");
  const Json* rjob = nullptr;
  for (const Json& r : MemberArray(spec, "replicatedJobs")) {
    if (StringMember(r, "name") == rjob_name) rjob = &r;
  }
  // As upstream: the first problem only.
  if (rjob == nullptr) {
    errs.push_back(Invalid(p.Child("replicatedJob"), rjob_name,
                           absl::StrCat("coordinator replicatedJob ", rjob_name,
                                        " does not exist")));
    return;
  }
  if (job_index < 0 || job_index >= IntMember(*rjob, "replicas", 1)) {
    errs.push_back(Invalid(p.Child("jobIndex"), job_index,
                           absl::StrCat("coordinator job index ", job_index,
                                        " is invalid for replicatedJob ", rjob_name)));
    return;
  }
  const Json& job_spec = MemberAt(*rjob, {"template", "spec"});
  const Json& completions = Member(job_spec, "completions");
  if (StringMember(job_spec, "completionMode") != "Indexed" || !completions.is_number_integer()) {
    errs.push_back(Invalid(p.Child("replicatedJob"), rjob_name,
                           "job for coordinator pod must be indexed completion mode, and "
                           "completions number must be set"));
    return;
  }
  if (pod_index < 0 || pod_index >= completions.get<int64_t>()) {
    errs.push_back(Invalid(p.Child("podIndex"), pod_index,
                           absl::StrCat("coordinator pod index ", pod_index,
                                        " is invalid for replicatedJob ", rjob_name,
                                        " job index ", job_index)));
    return;
  }
  const std::string js_name(StringMember(MemberObject(js, "metadata"), "name"));
  std::string subdomain(StringMember(MemberObject(spec, "network"), "subdomain"));
  if (subdomain.empty()) subdomain = js_name;
  const std::string endpoint =
      absl::StrCat(ChildJobName(js_name, rjob_name, job_index), "-", pod_index, ".", subdomain);
  const validation::Messages bad = validation::IsValidLabelValue(endpoint);
  if (!bad.empty()) {
    errs.push_back(Invalid(p, endpoint,
                           absl::StrCat("spec will lead to invalid label value \"", endpoint,
                                        "\" for coordinator label \"", kCoordinatorKey,
                                        "\" (long JobSet / ReplicatedJob / SubDomain name?): ",
                                        absl::StrJoin(bad, ", "))));
  }
}

}  // namespace batchd::api::jobset_v1alpha2::internal
