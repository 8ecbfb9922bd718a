#include "api/batch/v1/internal/util.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace batchd::api::batch_v1::internal {
namespace {

std::string RegexError(std::string msg, absl::string_view fmt,
                       std::initializer_list<absl::string_view> examples) {
  if (examples.size() == 0) return absl::StrCat(msg, " (regex used for validation is '", fmt, "')");
  msg += " (e.g. ";
  bool first = true;
  for (absl::string_view e : examples) {
    if (!first) msg += "or ";
    first = false;
    absl::StrAppend(&msg, "'", e, "', ");
  }
  return absl::StrCat(msg, "regex used for validation is '", fmt, "')");
}

std::string MaxLenError(size_t n) { return absl::StrCat("must be no more than ", n, " characters"); }

bool IsLowerAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }
bool IsAlnum(char c) { return IsLowerAlnum(c) || (c >= 'A' && c <= 'Z'); }

// [a-z0-9]([-a-z0-9]*[a-z0-9])?
bool MatchesDnsLabel(absl::string_view v) {
  if (v.empty() || !IsLowerAlnum(v.front()) || !IsLowerAlnum(v.back())) return false;
  return std::all_of(v.begin(), v.end(), [](char c) { return IsLowerAlnum(c) || c == '-'; });
}

// ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]
bool MatchesQualifiedName(absl::string_view v) {
  if (v.empty() || !IsAlnum(v.front()) || !IsAlnum(v.back())) return false;
  return std::all_of(v.begin(), v.end(),
                     [](char c) { return IsAlnum(c) || c == '-' || c == '_' || c == '.'; });
}

constexpr absl::string_view kQualifiedNameFmt = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
constexpr absl::string_view kQualifiedNameMsg =
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character";

}  // namespace

const Json* Find(const Json& obj, std::initializer_list<absl::string_view> path) {
  const Json* cur = &obj;
  for (absl::string_view key : path) {
    if (!cur->is_object()) return nullptr;
    auto it = cur->find(std::string(key));
    if (it == cur->end()) return nullptr;
    cur = &*it;
  }
  return cur;
}

std::optional<int64_t> FindInt(const Json& obj, std::initializer_list<absl::string_view> path) {
  const Json* v = Find(obj, path);
  if (v == nullptr || !v->is_number_integer()) return std::nullopt;
  return v->get<int64_t>();
}

std::string FindStr(const Json& obj, std::initializer_list<absl::string_view> path) {
  const Json* v = Find(obj, path);
  return v != nullptr && v->is_string() ? v->get<std::string>() : std::string();
}

bool FindBool(const Json& obj, std::initializer_list<absl::string_view> path) {
  const Json* v = Find(obj, path);
  return v != nullptr && v->is_boolean() && v->get<bool>();
}

Json& Ensure(Json& obj, std::initializer_list<absl::string_view> path) {
  Json* cur = &obj;
  for (absl::string_view key : path) {
    if (!cur->is_object()) *cur = Json::object();
    cur = &(*cur)[std::string(key)];
  }
  return *cur;
}

std::vector<std::string> IsDNS1123Subdomain(absl::string_view v) {
  std::vector<std::string> errs;
  if (v.size() > 253) errs.push_back(MaxLenError(253));
  bool ok = !v.empty();
  for (absl::string_view part : absl::StrSplit(v, '.')) ok = ok && MatchesDnsLabel(part);
  if (!ok) {
    errs.push_back(RegexError(
        "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' "
        "or '.', and must start and end with an alphanumeric character",
        "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*", {"example.com"}));
  }
  return errs;
}

std::vector<std::string> IsDNS1123Label(absl::string_view v) {
  std::vector<std::string> errs;
  if (v.size() > 63) errs.push_back(MaxLenError(63));
  if (!MatchesDnsLabel(v)) {
    errs.push_back(RegexError(
        "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
        "and must start and end with an alphanumeric character",
        "[a-z0-9]([-a-z0-9]*[a-z0-9])?", {"my-name", "123-abc"}));
  }
  return errs;
}

std::vector<std::string> IsQualifiedName(absl::string_view v) {
  std::vector<std::string> errs;
  std::vector<absl::string_view> parts = absl::StrSplit(v, '/');
  absl::string_view name;
  if (parts.size() == 1) {
    name = parts[0];
  } else if (parts.size() == 2) {
    name = parts[1];
    if (parts[0].empty()) {
      errs.push_back("prefix part must be non-empty");
    } else {
      for (const std::string& m : IsDNS1123Subdomain(parts[0])) errs.push_back("prefix part " + m);
    }
  } else {
    errs.push_back(absl::StrCat(
        "a qualified name ",
        RegexError(std::string(kQualifiedNameMsg), kQualifiedNameFmt, {"MyName", "my.name", "123-abc"}),
        " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"));
    return errs;
  }
  if (name.empty()) {
    errs.push_back("name part must be non-empty");
  } else if (name.size() > 63) {
    errs.push_back("name part " + MaxLenError(63));
  }
  if (!MatchesQualifiedName(name)) {
    errs.push_back("name part " + RegexError(std::string(kQualifiedNameMsg), kQualifiedNameFmt,
                                             {"MyName", "my.name", "123-abc"}));
  }
  return errs;
}

std::vector<std::string> IsValidLabelValue(absl::string_view v) {
  std::vector<std::string> errs;
  if (v.size() > 63) errs.push_back(MaxLenError(63));
  if (!v.empty() && !MatchesQualifiedName(v)) {
    errs.push_back(RegexError(
        "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' "
        "or '.', and must start and end with an alphanumeric character",
        "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?", {"MyValue", "my_value", "12345"}));
  }
  return errs;
}

ErrorList ValidateDomainPrefixedPath(const Path& p, absl::string_view v) {
  if (v.empty()) return {Required(p)};
  std::vector<absl::string_view> seg = absl::StrSplit(v, absl::MaxSplits('/', 1));
  if (seg.size() != 2 || seg[0].empty() || seg[1].empty()) {
    return {Invalid(p, std::string(v), "must be a domain-prefixed path (such as \"acme.io/foo\")")};
  }
  ErrorList errs;
  for (const std::string& m : IsDNS1123Subdomain(seg[0])) {
    errs.push_back(Invalid(p, std::string(seg[0]), m));
  }
  static constexpr absl::string_view kPathChars =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789/-._~%!$&'()*+,;=:";
  if (seg[1].find_first_not_of(kPathChars) != absl::string_view::npos) {
    errs.push_back(Invalid(p, std::string(seg[1]),
                           "Invalid path (regex used for validation is "
                           "'[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+')"));
  }
  return errs;
}

ErrorList NonNegative(const Json& value, const Path& p) {
  if (value.is_number_integer() && value.get<int64_t>() < 0) {
    return {Invalid(p, value, "must be greater than or equal to 0")};
  }
  return {};
}

ErrorList Immutable(const Json& now, const Json& old, const Path& p) {
  if (now == old) return {};
  return {Invalid(p, now, "field is immutable")};
}

}  // namespace batchd::api::batch_v1::internal
