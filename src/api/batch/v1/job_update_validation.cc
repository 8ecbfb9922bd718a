// Job update and status-update validation (ValidateJobUpdate,
// ValidateJobUpdateStatus with the JobManagedBy-era transition checks), and
// the completed/failed index string helpers.
#include "absl/strings/string_view.h"
#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "api/batch/v1/batch_v1.h"
#include "api/batch/v1/internal/job_rules.h"
#include "api/batch/v1/internal/util.h"
#include "api/json_access.h"
#include "api/meta/conditions.h"

namespace batchd::api::batch_v1 {
namespace internal {
namespace {

// Go's strconv.Atoi (base 10, optional sign).
std::optional<int64_t> Atoi(absl::string_view s) {
  bool neg = false;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    neg = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s.empty() || s.size() > 18) return std::nullopt;
  int64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  return neg ? -v : v;
}

absl::Status ParseIndexInterval(absl::string_view s, int64_t completions, int64_t* x, int64_t* y) {
  std::vector<absl::string_view> limits = absl::StrSplit(s, '-');
  if (limits.size() > 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the fragment \"", s,
        "\" violates the requirement that an index interval can have at most two parts separated "
        "by '-'"));
  }
  for (size_t i = 0; i < limits.size(); ++i) {
    auto v = Atoi(limits[i]);
    if (!v) {
      return absl::InvalidArgumentError(
          absl::StrCat("cannot convert string to integer for index: \"", limits[i], "\""));
    }
    if (*v >= completions) {
      return absl::InvalidArgumentError(absl::StrCat("too large index: \"", limits[i], "\""));
    }
    (i == 0 ? *x : *y) = *v;
  }
  if (limits.size() == 1) {
    *y = *x;
  } else if (*x >= *y) {
    return absl::InvalidArgumentError(
        absl::StrCat("non-increasing order, previous: ", *x, ", current: ", *y));
  }
  return absl::OkStatus();
}

// Copies `key` of `from` into `to` (or removes it from `to`).
void CopyMember(const Json& from, Json& to, const char* key) {
  const Json* v = FindMemberAt(from, {key});
  if (v != nullptr && !v->is_null()) {
    to[key] = *v;
  } else if (to.is_object()) {
    to.erase(key);
  }
}

// validatePodTemplateUpdate: while suspended and never started, node
// affinity, nodeSelector, tolerations, schedulingGates, labels and
// annotations may change.
ErrorList ValidateTemplateUpdate(const Json& tmpl, Json old_tmpl, bool allow_scheduling) {
  if (allow_scheduling && old_tmpl.is_object() && tmpl.is_object()) {
    const Json* new_spec_ptr = FindMember(tmpl, "spec");
    const Json& new_spec = new_spec_ptr != nullptr ? *new_spec_ptr : EmptyObject();
    Json& old_spec = old_tmpl["spec"];
    if (!old_spec.is_object()) old_spec = Json::object();
    const Json* new_aff = FindMember(new_spec, "affinity");
    const bool new_has = new_aff != nullptr && new_aff->is_object();
    const bool old_has = old_spec.contains("affinity") && old_spec["affinity"].is_object();
    if (!new_has && old_has) {
      old_spec["affinity"].erase("nodeAffinity");
      if (old_spec["affinity"].empty()) old_spec.erase("affinity");
    } else if (new_has && !old_has) {
      old_spec["affinity"] = Json::object();
      CopyMember(*new_aff, old_spec["affinity"], "nodeAffinity");
    } else if (new_has && old_has) {
      CopyMember(*new_aff, old_spec["affinity"], "nodeAffinity");
    }
    for (const char* f : {"nodeSelector", "tolerations", "schedulingGates"}) {
      CopyMember(new_spec, old_spec, f);
    }
    Json& old_meta = old_tmpl["metadata"];
    if (!old_meta.is_object()) old_meta = Json::object();
    const Json* new_meta = FindMember(tmpl, "metadata");
    for (const char* f : {"labels", "annotations"}) {
      CopyMember(new_meta ? *new_meta : EmptyObject(), old_meta, f);
    }
    if (old_meta.empty() && FindMember(tmpl, "metadata") == nullptr) old_tmpl.erase("metadata");
  }
  return Immutable(tmpl, old_tmpl, Path("spec").Child("template"));
}

ErrorList ValidateCompletionsUpdate(const Json& spec, const Json& old_spec) {
  const Path p = Path("spec").Child("completions");
  const Json& now = Member(spec, "completions");
  const Json& before = Member(old_spec, "completions");
  if (AsString(Member(spec, "completionMode")) != "Indexed") return Immutable(now, before, p);
  if (now == before || now.is_null()) return {};
  if (now != Member(spec, "parallelism")) {
    return {Invalid(p, now, "can only be modified in tandem with spec.parallelism")};
  }
  return {};
}

}  // namespace

absl::StatusOr<int64_t> ValidateIndexesFormat(absl::string_view indexes, int64_t completions) {
  if (indexes.empty()) return 0;
  std::optional<int64_t> last;
  int64_t total = 0;
  for (absl::string_view interval : absl::StrSplit(indexes, ',')) {
    int64_t x = 0, y = 0;
    absl::Status st = ParseIndexInterval(interval, completions, &x, &y);
    if (!st.ok()) return st;
    if (last && *last >= x) {
      return absl::InvalidArgumentError(
          absl::StrCat("non-increasing order, previous: ", *last, ", current: ", x));
    }
    total += y - x + 1;
    last = y;
  }
  return total;
}

absl::Status ValidateIndexesDoNotOverlap(absl::string_view completed, absl::string_view failed,
                                         int64_t completions) {
  if (completed.empty() || failed.empty()) return absl::OkStatus();
  auto parse_all = [&](absl::string_view s) {
    std::vector<std::pair<int64_t, int64_t>> out;
    for (absl::string_view interval : absl::StrSplit(s, ',')) {
      int64_t x = 0, y = 0;
      if (ParseIndexInterval(interval, completions, &x, &y).ok()) out.emplace_back(x, y);
    }
    return out;
  };
  const auto c = parse_all(completed);
  const auto f = parse_all(failed);
  size_t i = 0, j = 0;
  while (i < c.size() && j < f.size()) {
    if (c[i].first <= f[j].second && f[j].first <= c[i].second) {
      return absl::InvalidArgumentError(absl::StrCat(
          "failedIndexes and completedIndexes overlap at index: ", std::max(c[i].first, f[j].first)));
    }
    if (c[i].first <= f[j].first) {
      ++i;
    } else {
      ++j;
    }
  }
  return absl::OkStatus();
}

bool ConditionTrue(const Json& conditions, std::string_view type) {
  const Json* c = meta::FindConditionIn(conditions, type);
  return c != nullptr && StringMember(*c, "status") == meta::kConditionTrue;
}

}  // namespace internal

bool JobConditionTrue(const Json& job, std::string_view type) {
  return meta::IsConditionTrue(job, type);
}

bool IsJobFinished(const Json& job) {
  return JobConditionTrue(job, "Complete") || JobConditionTrue(job, "Failed");
}

ErrorList ValidateJobUpdate(const Json& job, const Json& old) {
  using internal::Immutable;
  const Json& spec = Member(job, "spec");
  const Json& old_spec = Member(old, "spec");
  const Json& old_labels = MemberAt(old_spec, {"template", "metadata", "labels"});
  const bool had_prefixed = old_labels.is_object() && old_labels.contains(kJobNameLabel) &&
                            old_labels.contains(kControllerUidLabel);
  ErrorList errs = internal::ValidateJobWithOptions(job, had_prefixed);
  const Path sp("spec");
  AppendErrors(errs, internal::ValidateCompletionsUpdate(spec, old_spec));
  AppendErrors(errs, Immutable(Member(spec, "selector"), Member(old_spec, "selector"), sp.Child("selector")));
  const bool allow_scheduling =
      AsBool(Member(old_spec, "suspend")) && MemberAt(old, {"status", "startTime"}).is_null();
  AppendErrors(errs, internal::ValidateTemplateUpdate(Member(spec, "template"),
                                                          Member(old_spec, "template"), allow_scheduling));
  for (const char* f : {"completionMode", "podFailurePolicy", "backoffLimitPerIndex", "managedBy",
                        "successPolicy"}) {
    AppendErrors(errs, Immutable(MemberAt(spec, {f}), MemberAt(old_spec, {f}), sp.Child(f)));
  }
  return errs;
}

}  // namespace batchd::api::batch_v1
