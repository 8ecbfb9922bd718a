// YAML encoding in the style of go-yaml v2 / `kubectl get -o yaml`.
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "api/codec/codec.h"
#include "api/codec/internal/yaml_scalar.h"

namespace batchd::api {
namespace {

enum class Style { kPlain, kSingle, kDouble, kLiteral };

std::vector<std::string_view> SplitLines(std::string_view s) {
  std::vector<std::string_view> lines;
  size_t start = 0;
  for (size_t nl = s.find('\n'); nl != std::string_view::npos; nl = s.find('\n', start)) {
    lines.push_back(s.substr(start, nl - start));
    start = nl + 1;
  }
  lines.push_back(s.substr(start));
  return lines;
}

// True for bytes and code points YAML treats specially: C0 controls except
// tab/newline, DEL, and (as UTF-8) C1 controls, NEL, LS, PS and BOM.
bool HasSpecialChars(std::string_view s, bool allow_newline_and_tab) {
  for (size_t i = 0; i < s.size(); ++i) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c == '\n' || c == '\t') {
      if (!allow_newline_and_tab) return true;
      continue;
    }
    if (c < 0x20 || c == 0x7F) return true;
    if (c == 0xC2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) < 0xA0) return true;
    if (c == 0xE2 && s.substr(i, 3) >= "\xE2\x80\xA8" && s.substr(i, 3) <= "\xE2\x80\xA9") {
      return true;
    }
    if (s.substr(i, 3) == "\xEF\xBB\xBF") return true;
  }
  return false;
}

bool SafeAsPlain(std::string_view s) {
  if (s.empty()) return false;
  if (internal::ResolvePlain(s).kind != internal::PlainScalar::Kind::kString) return false;
  if (s.front() == ' ' || s.back() == ' ' || s.back() == ':') return false;
  if (HasSpecialChars(s, /*allow_newline_and_tab=*/false)) return false;
  if (std::string_view("?:,[]{}#&*!|>'\"%@`").find(s.front()) != std::string_view::npos) {
    return false;
  }
  if (s.front() == '-' && (s.size() == 1 || s[1] == ' ')) return false;
  if (s.substr(0, 3) == "---" || s.substr(0, 3) == "...") return false;
  if (s.find(": ") != std::string_view::npos || s.find(" #") != std::string_view::npos) {
    return false;
  }
  return true;
}

Style ChooseStyle(std::string_view s, bool is_key) {
  if (SafeAsPlain(s)) return Style::kPlain;
  bool multiline = s.find('\n') != std::string_view::npos;
  if (multiline && !is_key && !HasSpecialChars(s, /*allow_newline_and_tab=*/true) &&
      s.find('\t') == std::string_view::npos) {
    // Literal blocks detect indentation from the first non-empty line.
    for (std::string_view line : SplitLines(s)) {
      if (line.empty()) continue;
      return line.front() == ' ' ? Style::kDouble : Style::kLiteral;
    }
    return Style::kDouble;  // Only newlines.
  }
  if (multiline || HasSpecialChars(s, /*allow_newline_and_tab=*/false)) return Style::kDouble;
  // Strings that would read back as another type are double-quoted, as
  // go-yaml does; other unsafe strings are single-quoted.
  if (!s.empty() && internal::ResolvePlain(s).kind != internal::PlainScalar::Kind::kString) {
    return Style::kDouble;
  }
  return s.empty() ? Style::kDouble : Style::kSingle;
}

void AppendDoubleQuoted(std::string_view s, std::string* out) {
  out->push_back('"');
  for (size_t i = 0; i < s.size(); ++i) {
    auto c = static_cast<unsigned char>(s[i]);
    switch (c) {
      case '"': out->append("\\\""); continue;
      case '\\': out->append("\\\\"); continue;
      case '\n': out->append("\\n"); continue;
      case '\t': out->append("\\t"); continue;
      case '\r': out->append("\\r"); continue;
      default: break;
    }
    if (c < 0x20 || c == 0x7F) {
      absl::StrAppendFormat(out, "\\x%02X", c);
    } else if (c == 0xC2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) < 0xA0) {
      absl::StrAppendFormat(out, "\\u%04X", static_cast<unsigned char>(s[i + 1]));
      ++i;
    } else if (c == 0xE2 && i + 2 < s.size() && s[i + 1] == '\x80' &&
               (s[i + 2] == '\xA8' || s[i + 2] == '\xA9')) {
      out->append(s[i + 2] == '\xA8' ? "\\u2028" : "\\u2029");
      i += 2;
    } else if (c == 0xEF && s.substr(i, 3) == "\xEF\xBB\xBF") {
      out->append("\\uFEFF");
      i += 2;
    } else {
      out->push_back(static_cast<char>(c));
    }
  }
  out->push_back('"');
}

void AppendSingleQuoted(std::string_view s, std::string* out) {
  out->push_back('\'');
  for (char c : s) {
    if (c == '\'') out->push_back('\'');
    out->push_back(c);
  }
  out->push_back('\'');
}

// `indent` is the indentation of a literal block's content lines.
void AppendLiteral(std::string_view s, int indent, std::string* out) {
  size_t trailing = 0;
  while (trailing < s.size() && s[s.size() - 1 - trailing] == '\n') ++trailing;
  out->append(trailing == 0 ? "|-" : trailing == 1 ? "|" : "|+");
  std::string_view body = s.substr(0, s.size() - trailing);
  for (std::string_view line : SplitLines(body)) {
    out->push_back('\n');
    if (!line.empty()) out->append(static_cast<size_t>(indent), ' ').append(line);
  }
  for (size_t i = 1; i < trailing; ++i) out->push_back('\n');
}

// Appends a scalar (no trailing newline).
void AppendString(std::string_view s, int indent, bool is_key, std::string* out) {
  std::string clean = internal::SanitizeUtf8(s);
  switch (ChooseStyle(clean, is_key)) {
    case Style::kPlain: out->append(clean); break;
    case Style::kSingle: AppendSingleQuoted(clean, out); break;
    case Style::kDouble: AppendDoubleQuoted(clean, out); break;
    case Style::kLiteral: AppendLiteral(clean, indent, out); break;
  }
}

void AppendScalar(const Json& v, int indent, std::string* out) {
  if (v.is_string()) {
    AppendString(v.get_ref<const std::string&>(), indent, /*is_key=*/false, out);
  } else if (v.is_object()) {
    out->append("{}");
  } else if (v.is_array()) {
    out->append("[]");
  } else {
    out->append(v.dump());  // null, true/false, numbers.
  }
}

constexpr size_t kMaxImplicitKey = 1000;

bool IsBlock(const Json& v) { return (v.is_object() || v.is_array()) && !v.empty(); }

void AppendNode(const Json& v, int indent, bool first_inline, std::string* out);

// After "key:" — a nested block on the next lines, or " scalar".
void AppendMapValue(const Json& v, int indent, std::string* out) {
  if (!IsBlock(v)) {
    out->push_back(' ');
    AppendScalar(v, indent + 2, out);
    out->push_back('\n');
    return;
  }
  out->push_back('\n');
  // Sequences sit at their key's indentation, as kubectl prints them.
  AppendNode(v, v.is_object() ? indent + 2 : indent, /*first_inline=*/false, out);
}

// A non-empty object or array. With `first_inline`, the first line follows
// a "- " already written.
void AppendNode(const Json& v, int indent, bool first_inline, std::string* out) {
  bool first = true;
  if (v.is_object()) {
    for (const auto& [k, val] : v.items()) {
      if (!first || !first_inline) out->append(static_cast<size_t>(indent), ' ');
      first = false;
      std::string key;
      AppendString(k, indent + 2, /*is_key=*/true, &key);
      if (key.size() <= kMaxImplicitKey) {
        out->append(key).push_back(':');
        AppendMapValue(val, indent, out);
        continue;
      }
      // YAML limits implicit keys to 1024 characters; longer ones are explicit.
      out->append("? ").append(key).push_back('\n');
      out->append(static_cast<size_t>(indent), ' ').push_back(':');
      if (IsBlock(val)) {
        out->push_back('\n');
        AppendNode(val, indent + 2, /*first_inline=*/false, out);
      } else {
        AppendMapValue(val, indent, out);
      }
    }
    return;
  }
  for (const Json& item : v) {
    if (!first || !first_inline) out->append(static_cast<size_t>(indent), ' ');
    first = false;
    out->append("- ");
    if (IsBlock(item)) {
      AppendNode(item, indent + 2, /*first_inline=*/true, out);
    } else {
      AppendScalar(item, indent + 2, out);
      out->push_back('\n');
    }
  }
}

}  // namespace

std::string ToYaml(const Json& value) {
  std::string out;
  if (IsBlock(value)) {
    AppendNode(value, 0, /*first_inline=*/false, &out);
  } else {
    AppendScalar(value, 2, &out);
    out.push_back('\n');
  }
  return out;
}

}  // namespace batchd::api
