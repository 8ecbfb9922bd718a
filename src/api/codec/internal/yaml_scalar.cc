#include "api/codec/internal/yaml_scalar.h"

#include <cerrno>
#include <cstdlib>
#include <initializer_list>
#include <string>


namespace batchd::api::internal {
namespace {

using Kind = PlainScalar::Kind;

bool OneOf(std::string_view s, std::initializer_list<std::string_view> options) {
  for (std::string_view o : options) {
    if (s == o) return true;
  }
  return false;
}

// Parses an unsigned magnitude in `base` (digits only, at least one).
bool ParseMagnitude(std::string_view digits, int base, uint64_t* out) {
  if (digits.empty()) return false;
  uint64_t v = 0;
  for (char c : digits) {
    int d;
    if (c >= '0' && c <= '9') {
      d = c - '0';
    } else if (c >= 'a' && c <= 'f') {
      d = c - 'a' + 10;
    } else if (c >= 'A' && c <= 'F') {
      d = c - 'A' + 10;
    } else {
      return false;
    }
    if (d >= base) return false;
    if (v > (UINT64_MAX - static_cast<uint64_t>(d)) / static_cast<uint64_t>(base)) return false;
    v = v * static_cast<uint64_t>(base) + static_cast<uint64_t>(d);
  }
  *out = v;
  return true;
}

// Go's strconv.ParseInt/ParseUint with base 0 (prefixes 0x, 0o, 0b, 0).
bool ParseGoInteger(std::string_view s, PlainScalar* out) {
  bool neg = false;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    neg = s[0] == '-';
    s.remove_prefix(1);
  }
  int base = 10;
  if (s.size() >= 2 && s[0] == '0') {
    char p = s[1];
    if (p == 'x' || p == 'X') {
      base = 16, s.remove_prefix(2);
    } else if (p == 'o' || p == 'O') {
      base = 8, s.remove_prefix(2);
    } else if (p == 'b' || p == 'B') {
      base = 2, s.remove_prefix(2);
    } else {
      base = 8, s.remove_prefix(1);
    }
  }
  uint64_t mag = 0;
  if (!ParseMagnitude(s, base, &mag)) return false;
  if (neg) {
    if (mag > static_cast<uint64_t>(INT64_MAX) + 1) return false;
    out->kind = Kind::kInt;
    out->i = mag == static_cast<uint64_t>(INT64_MAX) + 1 ? INT64_MIN : -static_cast<int64_t>(mag);
    return true;
  }
  if (mag <= static_cast<uint64_t>(INT64_MAX)) {
    out->kind = Kind::kInt;
    out->i = static_cast<int64_t>(mag);
  } else {
    out->kind = Kind::kUint;
    out->u = mag;
  }
  return true;
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?
bool IsYamlFloat(std::string_view s) {
  size_t i = 0, n = s.size();
  auto digits = [&] {
    size_t start = i;
    while (i < n && IsDigit(s[i])) ++i;
    return i - start;
  };
  if (i < n && (s[i] == '+' || s[i] == '-')) ++i;
  if (i < n && s[i] == '.') {
    ++i;
    if (digits() == 0) return false;
  } else {
    if (digits() == 0) return false;
    if (i < n && s[i] == '.') {
      ++i;
      digits();
    }
  }
  if (i < n && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < n && (s[i] == '+' || s[i] == '-')) ++i;
    if (digits() == 0) return false;
  }
  return i == n;
}

bool ParseFloat(const std::string& s, double* out) {
  errno = 0;
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || errno == ERANGE) return false;
  *out = v;
  return true;
}

}  // namespace

PlainScalar ResolvePlain(std::string_view text) {
  PlainScalar r;
  if (OneOf(text, {"", "~", "null", "Null", "NULL"})) {
    r.kind = Kind::kNull;
  } else if (OneOf(text, {"y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On",
                          "ON"})) {
    r.kind = Kind::kBool, r.b = true;
  } else if (OneOf(text, {"n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off",
                          "OFF"})) {
    r.kind = Kind::kBool, r.b = false;
  } else if (OneOf(text, {".nan", ".NaN", ".NAN", ".inf", ".Inf", ".INF", "+.inf", "+.Inf",
                          "+.INF", "-.inf", "-.Inf", "-.INF"})) {
    r.kind = Kind::kNonFinite;
  } else if (text == "<<") {
    r.kind = Kind::kMergeKey;
  }
  if (r.kind != Kind::kString) return r;
  char c = text[0];
  if (!(IsDigit(c) || c == '+' || c == '-' || c == '.')) return r;
  std::string plain;
  for (char ch : text) {
    if (ch != '_') plain.push_back(ch);
  }
  if (ParseGoInteger(plain, &r)) return r;
  double f = 0;
  if (IsYamlFloat(plain) && ParseFloat(plain, &f)) {
    r.kind = Kind::kFloat;
    r.f = f;
  }
  return r;
}

std::string SanitizeUtf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  size_t n = s.size(), i = 0;
  while (i < n) {
    unsigned char c = p[i];
    size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    bool ok = len != 0 && i + len <= n;
    uint32_t cp = len == 1 ? c : len == 2 ? (c & 0x1F) : len == 3 ? (c & 0x0F) : (c & 0x07);
    for (size_t k = 1; ok && k < len; ++k) {
      ok = (p[i + k] & 0xC0) == 0x80;
      cp = (cp << 6) | (p[i + k] & 0x3F);
    }
    // Reject overlong forms, surrogates and values past U+10FFFF.
    if (ok && ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) ||
               (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)) || (cp >= 0xD800 && cp <= 0xDFFF))) {
      ok = false;
    }
    if (ok) {
      out.append(s.substr(i, len));
      i += len;
    } else {
      out.append("\xEF\xBF\xBD");
      ++i;
    }
  }
  return out;
}

}  // namespace batchd::api::internal
