// metav1.LabelSelector (struct form) validation, matching and formatting,
// and the time helpers declared in util.h.
#include "absl/strings/string_view.h"
#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/batch/v1/internal/util.h"

namespace batchd::api::batch_v1::internal {
namespace {

struct Requirement {
  std::string key;
  std::string op;  // "=", "in", "notin", "exists", "!".
  std::vector<std::string> values;  // Sorted, unique.
};

// LabelSelectorAsSelector: nullopt when the selector cannot be converted.
// A null selector converts to "nothing" (`nothing` set to true).
std::optional<std::vector<Requirement>> Convert(const Json& sel, bool* nothing) {
  *nothing = sel.is_null();
  std::vector<Requirement> reqs;
  if (*nothing) return reqs;
  if (!sel.is_object()) return std::nullopt;
  if (const Json* ml = Find(sel, {"matchLabels"}); ml != nullptr && ml->is_object()) {
    for (const auto& [k, v] : ml->items()) {
      if (!v.is_string() || !IsQualifiedName(k).empty() ||
          !IsValidLabelValue(v.get<std::string>()).empty()) {
        return std::nullopt;
      }
      reqs.push_back({k, "=", {v.get<std::string>()}});
    }
  }
  if (const Json* me = Find(sel, {"matchExpressions"}); me != nullptr && me->is_array()) {
    for (const Json& e : *me) {
      Requirement r{FindStr(e, {"key"}), "", {}};
      const std::string op = FindStr(e, {"operator"});
      std::set<std::string> vals;
      if (const Json* vs = Find(e, {"values"}); vs != nullptr && vs->is_array()) {
        for (const Json& v : *vs) {
          if (!v.is_string() || !IsValidLabelValue(v.get<std::string>()).empty()) return std::nullopt;
          vals.insert(v.get<std::string>());
        }
      }
      if (op == "In" || op == "NotIn") {
        if (vals.empty()) return std::nullopt;
        r.op = op == "In" ? "in" : "notin";
      } else if (op == "Exists" || op == "DoesNotExist") {
        if (!vals.empty()) return std::nullopt;
        r.op = op == "Exists" ? "exists" : "!";
      } else {
        return std::nullopt;
      }
      if (!IsQualifiedName(r.key).empty()) return std::nullopt;
      r.values.assign(vals.begin(), vals.end());
      reqs.push_back(std::move(r));
    }
  }
  std::stable_sort(reqs.begin(), reqs.end(),
                   [](const Requirement& a, const Requirement& b) { return a.key < b.key; });
  return reqs;
}

bool RequirementMatches(const Requirement& r, const Json& labels) {
  const Json* v = labels.is_object() ? Find(labels, {r.key}) : nullptr;
  const bool has = v != nullptr && v->is_string();
  const std::string value = has ? v->get<std::string>() : "";
  const bool in = has && std::binary_search(r.values.begin(), r.values.end(), value);
  if (r.op == "=" || r.op == "in") return in;
  if (r.op == "notin") return !in;
  if (r.op == "exists") return has;
  return !has;
}

}  // namespace

ErrorList ValidateLabelSelector(const Json& selector, const Path& p) {
  ErrorList errs;
  if (!selector.is_object()) return errs;
  if (const Json* ml = Find(selector, {"matchLabels"}); ml != nullptr && ml->is_object()) {
    const Path mp = p.Child("matchLabels");
    for (const auto& [k, v] : ml->items()) {
      for (const std::string& m : IsQualifiedName(k)) errs.push_back(Invalid(mp, k, m));
      const std::string val = v.is_string() ? v.get<std::string>() : "";
      for (const std::string& m : IsValidLabelValue(val)) errs.push_back(Invalid(mp, val, m));
    }
  }
  const Json* me = Find(selector, {"matchExpressions"});
  if (me == nullptr || !me->is_array()) return errs;
  for (size_t i = 0; i < me->size(); ++i) {
    const Json& e = (*me)[i];
    const Path ep = p.Child("matchExpressions").Index(i);
    const std::string op = FindStr(e, {"operator"});
    const Json* vs = Find(e, {"values"});
    const size_t nvals = vs != nullptr && vs->is_array() ? vs->size() : 0;
    if (op == "In" || op == "NotIn") {
      if (nvals == 0) {
        errs.push_back(Required(ep.Child("values"),
                                "must be specified when `operator` is 'In' or 'NotIn'"));
      }
    } else if (op == "Exists" || op == "DoesNotExist") {
      if (nvals > 0) {
        errs.push_back(Forbidden(ep.Child("values"),
                                 "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"));
      }
    } else {
      errs.push_back(Invalid(ep.Child("operator"), op, "not a valid selector operator"));
    }
    const std::string key = FindStr(e, {"key"});
    for (const std::string& m : IsQualifiedName(key)) errs.push_back(Invalid(ep.Child("key"), key, m));
    for (size_t j = 0; j < nvals; ++j) {
      const std::string val = (*vs)[j].is_string() ? (*vs)[j].get<std::string>() : "";
      for (const std::string& m : IsValidLabelValue(val)) {
        errs.push_back(Invalid(ep.Child("values").Index(j), val, m));
      }
    }
  }
  return errs;
}

bool SelectorConvertible(const Json& selector) {
  bool nothing = false;
  return Convert(selector, &nothing).has_value();
}

bool SelectorMatches(const Json& selector, const Json& labels) {
  bool nothing = false;
  auto reqs = Convert(selector, &nothing);
  if (!reqs.has_value() || nothing) return false;
  return std::all_of(reqs->begin(), reqs->end(),
                     [&](const Requirement& r) { return RequirementMatches(r, labels); });
}

std::string FormatLabelSelector(const Json& selector) {
  bool nothing = false;
  auto reqs = Convert(selector, &nothing);
  if (!reqs.has_value()) return "<error>";
  std::vector<std::string> parts;
  for (const Requirement& r : *reqs) {
    if (r.op == "=") {
      parts.push_back(absl::StrCat(r.key, "=", r.values[0]));
    } else if (r.op == "in" || r.op == "notin") {
      parts.push_back(absl::StrCat(r.key, " ", r.op, " (", absl::StrJoin(r.values, ","), ")"));
    } else if (r.op == "exists") {
      parts.push_back(r.key);
    } else {
      parts.push_back("!" + r.key);
    }
  }
  std::string s = absl::StrJoin(parts, ",");
  return s.empty() ? "<none>" : s;
}

std::optional<absl::Time> ParseRfc3339(absl::string_view s) {
  absl::Time t;
  std::string err;
  if (!absl::ParseTime(absl::RFC3339_full, std::string(s), &t, &err)) return std::nullopt;
  return t;
}

std::string HumanDuration(absl::Duration d) {
  const int64_t seconds = absl::ToInt64Seconds(d);
  if (seconds < -1) return "<invalid>";
  if (seconds < 0) return "0s";
  if (seconds < 60 * 2) return absl::StrCat(seconds, "s");
  const int64_t minutes = absl::ToInt64Minutes(d);
  if (minutes < 10) {
    const int64_t s = seconds % 60;
    return s == 0 ? absl::StrCat(minutes, "m") : absl::StrCat(minutes, "m", s, "s");
  }
  if (minutes < 60 * 3) return absl::StrCat(minutes, "m");
  const int64_t hours = absl::ToInt64Hours(d);
  if (hours < 8) {
    const int64_t m = minutes % 60;
    return m == 0 ? absl::StrCat(hours, "h") : absl::StrCat(hours, "h", m, "m");
  }
  if (hours < 48) return absl::StrCat(hours, "h");
  if (hours < 24 * 8) {
    const int64_t h = hours % 24;
    return h == 0 ? absl::StrCat(hours / 24, "d") : absl::StrCat(hours / 24, "d", h, "h");
  }
  if (hours < 24 * 365 * 2) return absl::StrCat(hours / 24, "d");
  if (hours < 24 * 365 * 8) {
    const int64_t dy = (hours / 24) % 365;
    return dy == 0 ? absl::StrCat(hours / 24 / 365, "y")
                   : absl::StrCat(hours / 24 / 365, "y", dy, "d");
  }
  return absl::StrCat(hours / 24 / 365, "y");
}

std::string TimestampSince(const Json* ts, absl::Time now) {
  if (ts == nullptr || !ts->is_string()) return "<unknown>";
  auto t = ParseRfc3339(ts->get<std::string>());
  if (!t.has_value()) return "<unknown>";
  return HumanDuration(now - *t);
}

}  // namespace batchd::api::batch_v1::internal
