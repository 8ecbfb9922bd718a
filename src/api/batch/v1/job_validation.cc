// ValidateJob / ValidateJobSpec / ValidateJobTemplateSpec: Kubernetes'
// batch validation rules, with its field paths and messages.
#include "absl/strings/string_view.h"
#include <algorithm>
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "api/batch/v1/batch_v1.h"
#include "api/batch/v1/internal/job_rules.h"
#include "api/batch/v1/internal/util.h"
#include "api/core/v1/core_v1.h"
#include "api/json_access.h"

namespace batchd::api::batch_v1 {
namespace internal {
namespace {

constexpr int64_t kMaxParallelismForIndexedJob = 100000;
constexpr int64_t kMaxFailedIndexesForIndexedJob = 100000;
constexpr int64_t kCompletionsSoftLimit = 100000;
constexpr int64_t kParallelismLimitForHighCompletions = 10000;
constexpr int64_t kMaxFailedIndexesLimitForHighCompletions = 10000;
constexpr size_t kMaxPodFailurePolicyRules = 20;
constexpr size_t kMaxOnExitCodesValues = 255;
constexpr size_t kMaxOnPodConditionsPatterns = 20;
constexpr size_t kMaxManagedByLength = 63;
constexpr size_t kMaxSucceededIndexesLength = 64 * 1024;
constexpr size_t kMaxSuccessPolicyRules = 20;

ErrorList ValidateOnExitCodes(const Json& req, const Path& p, const std::set<std::string>& names) {
  ErrorList errs;
  const std::string op(AsString(Member(req, "operator")));
  if (op.empty()) {
    errs.push_back(Required(p.Child("operator"), "valid values: [\"In\" \"NotIn\"]"));
  } else if (op != "In" && op != "NotIn") {
    errs.push_back(NotSupported(p.Child("operator"), op, {"In", "NotIn"}));
  }
  if (const Json& c = Member(req, "containerName"); c.is_string() && !names.count(c.get<std::string>())) {
    errs.push_back(Invalid(p.Child("containerName"), c,
                           "must be one of the container or initContainer names in the pod template"));
  }
  const Path vp = p.Child("values");
  const Json& values = Member(req, "values");
  const size_t n = values.is_array() ? values.size() : 0;
  if (n == 0) {
    errs.push_back(Invalid(vp, values.is_null() ? Json::array() : values, "at least one value is required"));
  } else if (n > kMaxOnExitCodesValues) {
    errs.push_back(TooMany(vp, n, kMaxOnExitCodesValues));
  }
  bool ordered = true;
  std::set<int64_t> seen;
  for (size_t j = 0; j < n; ++j) {
    const int64_t v = values[j].is_number_integer() ? values[j].get<int64_t>() : 0;
    if (op == "In" && v == 0) errs.push_back(Invalid(vp.Index(j), v, "must not be 0 for the In operator"));
    if (!seen.insert(v).second) errs.push_back(Duplicate(vp.Index(j), v));
    if (j > 0 && values[j - 1].is_number_integer() && values[j - 1].get<int64_t>() > v) ordered = false;
  }
  if (!ordered) errs.push_back(Invalid(vp, values, "must be ordered"));
  return errs;
}

ErrorList ValidateOnPodConditions(const Json& patterns, const Path& p) {
  ErrorList errs;
  if (patterns.size() > kMaxOnPodConditionsPatterns) {
    errs.push_back(TooMany(p, patterns.size(), kMaxOnPodConditionsPatterns));
  }
  for (size_t j = 0; j < patterns.size(); ++j) {
    const Path pp = p.Index(j);
    const std::string type(AsString(MemberAt(patterns[j], {"type"})));
    for (const std::string& m : IsQualifiedName(type)) errs.push_back(Invalid(pp.Child("type"), type, m));
    const std::string status(AsString(MemberAt(patterns[j], {"status"})));
    if (status.empty()) {
      errs.push_back(Required(pp.Child("status"), "valid values: [\"False\" \"True\" \"Unknown\"]"));
    } else if (status != "True" && status != "False" && status != "Unknown") {
      errs.push_back(NotSupported(pp.Child("status"), status, {"False", "True", "Unknown"}));
    }
  }
  return errs;
}

ErrorList ValidatePodFailurePolicyRule(const Json& spec, const Json& rule, const Path& p,
                                       const std::set<std::string>& names) {
  ErrorList errs;
  const std::string action(AsString(Member(rule, "action")));
  const Path ap = p.Child("action");
  if (action.empty()) {
    errs.push_back(Required(ap, "valid values: [\"Count\" \"FailIndex\" \"FailJob\" \"Ignore\"]"));
  } else if (action == "FailIndex") {
    if (!HasMember(spec, "backoffLimitPerIndex")) {
      errs.push_back(Invalid(ap, action, "requires the backoffLimitPerIndex to be set"));
    }
  } else if (action != "Count" && action != "FailJob" && action != "Ignore") {
    errs.push_back(NotSupported(ap, action, {"Count", "FailIndex", "FailJob", "Ignore"}));
  }
  const bool has_codes = HasMember(rule, "onExitCodes");
  const Json& conds = Member(rule, "onPodConditions");
  const bool has_conds = conds.is_array() && !conds.empty();
  if (has_codes) AppendErrors(errs, ValidateOnExitCodes(Member(rule, "onExitCodes"), p.Child("onExitCodes"), names));
  if (has_conds) AppendErrors(errs, ValidateOnPodConditions(conds, p.Child("onPodConditions")));
  if (has_codes && has_conds) {
    errs.push_back(Invalid(p, nullptr, "specifying both OnExitCodes and OnPodConditions is not supported"));
  }
  if (!has_codes && !has_conds) {
    errs.push_back(Invalid(p, nullptr, "specifying one of OnExitCodes and OnPodConditions is required"));
  }
  return errs;
}

ErrorList ValidatePodFailurePolicy(const Json& spec, const Path& p) {
  ErrorList errs;
  const Json& rules = Member(Member(spec, "podFailurePolicy"), "rules");
  if (!rules.is_array()) return errs;
  if (rules.size() > kMaxPodFailurePolicyRules) {
    errs.push_back(TooMany(p.Child("rules"), rules.size(), kMaxPodFailurePolicyRules));
  }
  std::set<std::string> names;
  const Json* pod_spec = FindMemberAt(spec, {"template", "spec"});
  for (const char* list : {"containers", "initContainers"}) {
    const Json* cs = pod_spec != nullptr ? FindMemberAt(*pod_spec, {list}) : nullptr;
    if (cs == nullptr || !cs->is_array()) continue;
    for (const Json& c : *cs) names.insert(std::string(AsString(Member(c, "name"))));
  }
  for (size_t i = 0; i < rules.size(); ++i) {
    AppendErrors(errs, ValidatePodFailurePolicyRule(spec, rules[i], p.Child("rules").Index(i), names));
  }
  return errs;
}

ErrorList ValidateSuccessPolicyRule(const Json& rule, int64_t completions, const Path& p) {
  ErrorList errs;
  const Json& indexes = Member(rule, "succeededIndexes");
  const Json& count = Member(rule, "succeededCount");
  if (indexes.is_null() && count.is_null()) {
    errs.push_back(Required(p, "at least one of succeededCount or succeededIndexes must be specified"));
  }
  int64_t total = 0;
  if (indexes.is_string()) {
    const std::string s = indexes.get<std::string>();
    const Path ip = p.Child("succeededIndexes");
    if (s.size() > kMaxSucceededIndexesLength) errs.push_back(TooLong(ip, s, kMaxSucceededIndexesLength));
    auto parsed = ValidateIndexesFormat(s, completions);
    if (!parsed.ok()) {
      errs.push_back(Invalid(ip, s, absl::StrCat("error parsing succeededIndexes: ", parsed.status().message())));
    } else {
      total = *parsed;
    }
  }
  if (count.is_number_integer()) {
    const int64_t c = count.get<int64_t>();
    const Path cp = p.Child("succeededCount");
    AppendErrors(errs, NonNegative(count, cp));
    if (c > completions) {
      errs.push_back(Invalid(cp, c, absl::StrCat("must be less than or equal to ", completions,
                                                 " (the number of specified completions)")));
    }
    if (indexes.is_string() && c > total) {
      errs.push_back(Invalid(cp, c, absl::StrCat("must be less than or equal to ", total,
                                                 " (the number of indexes in the specified "
                                                 "succeededIndexes field)")));
    }
  }
  return errs;
}

ErrorList ValidateSuccessPolicy(const Json& spec, const Path& p) {
  ErrorList errs;
  const Json& rules = Member(Member(spec, "successPolicy"), "rules");
  const size_t n = rules.is_array() ? rules.size() : 0;
  if (n == 0) {
    errs.push_back(Required(p.Child("rules"),
                            "at least one rules must be specified when the successPolicy is specified"));
  }
  if (n > kMaxSuccessPolicyRules) errs.push_back(TooMany(p.Child("rules"), n, kMaxSuccessPolicyRules));
  const int64_t completions = AsOptionalInt(Member(spec, "completions")).value_or(0);
  for (size_t i = 0; i < n; ++i) {
    AppendErrors(errs, ValidateSuccessPolicyRule(rules[i], completions, p.Child("rules").Index(i)));
  }
  return errs;
}

ErrorList ValidateNumbers(const Json& spec, const Path& p) {
  ErrorList errs;
  for (const char* f : {"parallelism", "completions", "activeDeadlineSeconds", "backoffLimit",
                        "ttlSecondsAfterFinished", "backoffLimitPerIndex"}) {
    AppendErrors(errs, NonNegative(Member(spec, f), p.Child(f)));
  }
  if (HasMember(spec, "maxFailedIndexes")) {
    AppendErrors(errs, NonNegative(Member(spec, "maxFailedIndexes"), p.Child("maxFailedIndexes")));
    if (!HasMember(spec, "backoffLimitPerIndex")) {
      errs.push_back(Required(p.Child("backoffLimitPerIndex"), "when maxFailedIndexes is specified"));
    }
  }
  if (const Json& mb = Member(spec, "managedBy"); mb.is_string()) {
    const std::string v = mb.get<std::string>();
    AppendErrors(errs, ValidateDomainPrefixedPath(p.Child("managedBy"), v));
    if (v.size() > kMaxManagedByLength) errs.push_back(TooLong(p.Child("managedBy"), v, kMaxManagedByLength));
  }
  return errs;
}

ErrorList ValidateIndexedLimits(const Json& spec, const Path& p) {
  ErrorList errs;
  const auto completions = AsOptionalInt(Member(spec, "completions"));
  const auto parallelism = AsOptionalInt(Member(spec, "parallelism"));
  const auto max_failed = AsOptionalInt(Member(spec, "maxFailedIndexes"));
  const bool per_index = HasMember(spec, "backoffLimitPerIndex");
  if (!HasMember(spec, "completions")) {
    errs.push_back(Required(p.Child("completions"), "when completion mode is Indexed"));
  }
  if (parallelism && *parallelism > kMaxParallelismForIndexedJob) {
    errs.push_back(Invalid(p.Child("parallelism"), *parallelism,
                           absl::StrCat("must be less than or equal to ", kMaxParallelismForIndexedJob,
                                        " when completion mode is Indexed")));
  }
  if (completions && max_failed && *max_failed > *completions) {
    errs.push_back(Invalid(p.Child("maxFailedIndexes"), *max_failed, "must be less than or equal to completions"));
  }
  if (max_failed && *max_failed > kMaxFailedIndexesForIndexedJob) {
    errs.push_back(Invalid(p.Child("maxFailedIndexes"), *max_failed,
                           absl::StrCat("must be less than or equal to ", kMaxFailedIndexesForIndexedJob)));
  }
  if (completions && *completions > kCompletionsSoftLimit && per_index) {
    const std::string tail = absl::StrCat(" when completions are above ", kCompletionsSoftLimit,
                                          " and used with backoff limit per index");
    if (!max_failed) {
      errs.push_back(Required(p.Child("maxFailedIndexes"),
                              absl::StrCat("must be specified when completions is above ", kCompletionsSoftLimit)));
    }
    if (parallelism && *parallelism > kParallelismLimitForHighCompletions) {
      errs.push_back(Invalid(p.Child("parallelism"), *parallelism,
                             absl::StrCat("must be less than or equal to ", kParallelismLimitForHighCompletions, tail)));
    }
    if (max_failed && *max_failed > kMaxFailedIndexesLimitForHighCompletions) {
      errs.push_back(Invalid(p.Child("maxFailedIndexes"), *max_failed,
                             absl::StrCat("must be less than or equal to ", kMaxFailedIndexesLimitForHighCompletions, tail)));
    }
  }
  return errs;
}

ErrorList ValidateCompletionMode(const Json& spec, const Path& p) {
  ErrorList errs;
  const Json& mode = Member(spec, "completionMode");
  const std::string m = mode.is_string() ? mode.get<std::string>() : "";
  if (!mode.is_null() && m != "NonIndexed" && m != "Indexed") {
    errs.push_back(NotSupported(p.Child("completionMode"), mode, {"NonIndexed", "Indexed"}));
  }
  if (m == "Indexed") AppendErrors(errs, ValidateIndexedLimits(spec, p));
  if (mode.is_null() || m == "NonIndexed") {
    for (const char* f : {"backoffLimitPerIndex", "maxFailedIndexes"}) {
      if (HasMember(spec, f)) errs.push_back(Invalid(p.Child(f), Member(spec, f), "requires indexed completion mode"));
    }
  }
  if (HasMember(spec, "successPolicy")) {
    if (m != "Indexed") {
      errs.push_back(Invalid(p.Child("successPolicy"), Member(spec, "successPolicy"), "requires indexed completion mode"));
    } else {
      AppendErrors(errs, ValidateSuccessPolicy(spec, p.Child("successPolicy")));
    }
  }
  return errs;
}

ErrorList ValidatePodReplacementPolicy(const Json& spec, const Path& p) {
  const Json& v = Member(spec, "podReplacementPolicy");
  if (v.is_null()) return {};
  const std::string s = v.is_string() ? v.get<std::string>() : "";
  if (HasMember(spec, "podFailurePolicy")) {
    if (s != "Failed") return {NotSupported(p, v, {"Failed"})};
  } else if (s != "Failed" && s != "TerminatingOrFailed") {
    return {NotSupported(p, v, {"Failed", "TerminatingOrFailed"})};
  }
  return {};
}

ErrorList ValidateRestartPolicy(const Json& spec, const Path& p) {
  const std::string rp(AsString(MemberAt(spec, {"template", "spec", "restartPolicy"})));
  const Path rpp = p.Child("template").Child("spec").Child("restartPolicy");
  if (rp.empty() || rp == "Always") {
    return {Required(rpp, "valid values: \"OnFailure\", \"Never\"")};
  }
  if (rp != "OnFailure" && rp != "Never") return {NotSupported(rpp, rp, {"OnFailure", "Never"})};
  if (HasMember(spec, "podFailurePolicy") && rp != "Never") {
    return {Invalid(rpp, rp, "only \"Never\" is supported when podFailurePolicy is specified")};
  }
  return {};
}

}  // namespace

// validateJobSpec: everything but the selector.
ErrorList ValidateJobSpecBody(const Json& spec, const Path& p) {
  ErrorList errs = ValidateNumbers(spec, p);
  AppendErrors(errs, ValidateCompletionMode(spec, p));
  if (HasMember(spec, "podFailurePolicy")) AppendErrors(errs, ValidatePodFailurePolicy(spec, p.Child("podFailurePolicy")));
  AppendErrors(errs, ValidatePodReplacementPolicy(spec, p.Child("podReplacementPolicy")));
  AppendErrors(errs, core_v1::ValidatePodTemplateSpec(Member(spec, "template"), p.Child("template")));
  AppendErrors(errs, ValidateRestartPolicy(spec, p));
  return errs;
}

ErrorList ValidateJobSpecWithSelector(const Json& spec, const Path& p) {
  ErrorList errs = ValidateJobSpecBody(spec, p);
  const Json& selector = Member(spec, "selector");
  if (selector.is_null()) {
    errs.push_back(Required(p.Child("selector")));
  } else {
    AppendErrors(errs, ValidateLabelSelector(selector, p.Child("selector")));
  }
  const Json* labels = FindMemberAt(spec, {"template", "metadata", "labels"});
  const Json tmpl_labels = labels != nullptr ? *labels : Json::object();
  if (SelectorConvertible(selector) && !SelectorMatches(selector, tmpl_labels)) {
    errs.push_back(Invalid(p.Child("template").Child("metadata").Child("labels"), tmpl_labels,
                           "`selector` does not match template `labels`"));
  }
  return errs;
}

ErrorList ValidateGeneratedSelector(const Json& job, bool require_prefixed_labels) {
  ErrorList errs;
  const Json& spec = Member(job, "spec");
  if (AsBool(Member(spec, "manualSelector")) || !HasMember(spec, "selector")) return errs;
  const std::string uid(AsString(MemberAt(job, {"metadata", "uid"})));
  const std::string name(AsString(MemberAt(job, {"metadata", "name"})));
  if (uid.empty()) errs.push_back(Required(Path("metadata").Child("uid")));
  const Path mp = Path("spec").Child("template").Child("metadata");
  const Json* labels_ptr = FindMemberAt(spec, {"template", "metadata", "labels"});
  const Json& labels =
      labels_ptr != nullptr && labels_ptr->is_object() ? *labels_ptr : EmptyObject();  // No copy.
  auto has_label = [&](const char* key, const std::string& want) {
    const Path lp = mp.Child("labels").Key(key);
    auto it = labels.find(key);
    if (it == labels.end()) {
      errs.push_back(Required(lp, "must be '" + want + "'"));
    } else if (*it != want) {
      errs.push_back(Invalid(lp, labels, "must be '" + want + "'"));
    }
  };
  has_label(kLegacyControllerUidLabel, uid);
  has_label(kLegacyJobNameLabel, name);
  Json expected = Json::object();
  if (require_prefixed_labels) {
    has_label(kControllerUidLabel, uid);
    has_label(kJobNameLabel, name);
    expected[kControllerUidLabel] = uid;
    expected[kJobNameLabel] = name;
  }
  expected[kLegacyControllerUidLabel] = uid;
  expected[kLegacyJobNameLabel] = name;
  const Json& selector = Member(spec, "selector");
  if (SelectorConvertible(selector) && !SelectorMatches(selector, expected)) {
    errs.push_back(Invalid(Path("spec").Child("selector"), selector, "`selector` not auto-generated"));
  }
  return errs;
}

ErrorList ValidateJobWithOptions(const Json& job, bool require_prefixed_labels) {
  // ObjectMeta itself is validated by the registry for every kind.
  ErrorList errs = ValidateGeneratedSelector(job, require_prefixed_labels);
  const Json& spec = Member(job, "spec");
  AppendErrors(errs, ValidateJobSpecWithSelector(spec, Path("spec")));
  const auto completions = AsOptionalInt(Member(spec, "completions"));
  if (AsString(Member(spec, "completionMode")) == "Indexed" && completions && *completions > 0) {
    const std::string name(AsString(MemberAt(job, {"metadata", "name"})));
    const std::string host = absl::StrCat(name, "-", *completions - 1);
    if (!IsDNS1123Label(host).empty()) {
      errs.push_back(Invalid(Path("metadata").Child("name"), name,
                             "will not able to create pod with invalid DNS label: " + host));
    }
  }
  return errs;
}

}  // namespace internal

ErrorList ValidateJob(const Json& job) { return internal::ValidateJobWithOptions(job, true); }

ErrorList ValidateJobTemplateSpec(const Json& tmpl, const Path& path) {
  const Json* spec_ptr = FindMember(tmpl, "spec");
  const Json spec = spec_ptr != nullptr ? *spec_ptr : Json::object();
  const Path sp = path.Child("spec");
  ErrorList errs = internal::ValidateJobSpecBody(spec, sp);
  if (const Json* sel = FindMember(spec, "selector"); sel != nullptr && !sel->is_null()) {
    errs.push_back(Invalid(sp.Child("selector"), *sel, "`selector` will be auto-generated"));
  }
  if (AsBool(Member(spec, "manualSelector"))) {
    errs.push_back(NotSupported(sp.Child("manualSelector"), true, {"nil", "false"}));
  }
  return errs;
}

}  // namespace batchd::api::batch_v1
