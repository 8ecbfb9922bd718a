#include "api/labels/field_selector.h"

#include <algorithm>

namespace batchd::api::labels {
namespace {

// Splits on unescaped commas; escapes stay in the terms.
std::vector<std::string> SplitTerms(std::string_view s) {
  std::vector<std::string> terms;
  if (s.empty()) return terms;
  size_t start = 0;
  bool in_slash = false;
  for (size_t i = 0; i < s.size(); ++i) {
    if (in_slash) {
      in_slash = false;
    } else if (s[i] == '\\') {
      in_slash = true;
    } else if (s[i] == ',') {
      terms.emplace_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  terms.emplace_back(s.substr(start));
  return terms;
}

// Splits a term at the first operator; "!=" and "==" win over "=".
bool SplitTerm(std::string_view term, std::string* lhs, FieldRequirement::Op* op,
               std::string_view* rhs) {
  for (size_t i = 0; i < term.size(); ++i) {
    std::string_view rest = term.substr(i);
    size_t len = 0;
    if (rest.substr(0, 2) == "!=") {
      *op = FieldRequirement::Op::kNotEquals;
      len = 2;
    } else if (rest.substr(0, 2) == "==") {
      *op = FieldRequirement::Op::kEquals;
      len = 2;
    } else if (rest.substr(0, 1) == "=") {
      *op = FieldRequirement::Op::kEquals;
      len = 1;
    } else {
      continue;
    }
    *lhs = std::string(term.substr(0, i));
    *rhs = term.substr(i + len);
    return true;
  }
  return false;
}

absl::StatusOr<std::string> Unescape(std::string_view s) {
  std::string out;
  bool in_slash = false;
  for (char c : s) {
    if (in_slash) {
      if (c != '\\' && c != ',' && c != '=') {
        return absl::InvalidArgumentError(
            std::string("invalid field selector: invalid escape sequence: \\") + c);
      }
      out += c;
      in_slash = false;
    } else if (c == '\\') {
      in_slash = true;
    } else if (c == ',' || c == '=') {
      return absl::InvalidArgumentError(
          std::string("invalid field selector: unescaped character in value: ") + c);
    } else {
      out += c;
    }
  }
  if (in_slash) {
    return absl::InvalidArgumentError("invalid field selector: invalid escape sequence: \\");
  }
  return out;
}

std::string Escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '\\' || c == ',' || c == '=') out += '\\';
    out += c;
  }
  return out;
}

}  // namespace

absl::StatusOr<FieldSelector> FieldSelector::Parse(std::string_view selector) {
  std::vector<std::string> terms = SplitTerms(selector);
  std::sort(terms.begin(), terms.end());
  FieldSelector out;
  for (const std::string& term : terms) {
    if (term.empty()) continue;
    FieldRequirement r;
    std::string_view rhs;
    if (!SplitTerm(term, &r.field, &r.op, &rhs)) {
      return absl::InvalidArgumentError("invalid selector: '" + std::string(selector) +
                                        "'; can't understand '" + term + "'");
    }
    absl::StatusOr<std::string> value = Unescape(rhs);
    if (!value.ok()) return value.status();
    r.value = *std::move(value);
    out.requirements_.push_back(std::move(r));
  }
  return out;
}

bool FieldSelector::Matches(const Getter& getter) const {
  for (const FieldRequirement& r : requirements_) {
    std::string have = getter(r.field).value_or("");
    bool equal = have == r.value;
    if (equal != (r.op == FieldRequirement::Op::kEquals)) return false;
  }
  return true;
}

std::vector<std::string> FieldSelector::Fields() const {
  std::vector<std::string> out;
  for (const FieldRequirement& r : requirements_) out.push_back(r.field);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::optional<std::string> FieldSelector::RequiresExactMatch(std::string_view field) const {
  for (const FieldRequirement& r : requirements_) {
    if (r.field == field && r.op == FieldRequirement::Op::kEquals) return r.value;
  }
  return std::nullopt;
}

std::string FieldSelector::String() const {
  std::string out;
  for (size_t i = 0; i < requirements_.size(); ++i) {
    const FieldRequirement& r = requirements_[i];
    if (i) out += ",";
    out += r.field + (r.op == FieldRequirement::Op::kEquals ? "=" : "!=") + Escape(r.value);
  }
  return out;
}

}  // namespace batchd::api::labels
