#include "agent/sim/go_duration.h"

#include <cstdint>
#include <limits>

#include "absl/strings/str_cat.h"

namespace batchd::agent::sim {

namespace {

// Nanoseconds per unit, or 0 when unknown.
int64_t UnitNanos(std::string_view u) {
  if (u == "ns") return 1;
  if (u == "us" || u == "\xC2\xB5s" || u == "\xCE\xBCs") return 1000;
  if (u == "ms") return 1000000;
  if (u == "s") return 1000000000;
  if (u == "m") return int64_t{60} * 1000000000;
  if (u == "h") return int64_t{3600} * 1000000000;
  return 0;
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

}  // namespace

absl::StatusOr<absl::Duration> ParseGoDuration(std::string_view input) {
  const std::string orig(input);
  auto invalid = [&] {
    return absl::InvalidArgumentError(absl::StrCat("time: invalid duration \"", orig, "\""));
  };
  std::string_view s = input;
  bool neg = false;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
    neg = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s == "0") return absl::ZeroDuration();
  if (s.empty()) return invalid();
  const unsigned __int128 kMax = static_cast<unsigned __int128>(1) << 63;
  unsigned __int128 total = 0;  // Nanoseconds.
  while (!s.empty()) {
    if (!IsDigit(s[0]) && s[0] != '.') return invalid();
    unsigned __int128 whole = 0;
    size_t i = 0;
    size_t int_digits = 0;
    for (; i < s.size() && IsDigit(s[i]); ++i, ++int_digits) {
      whole = whole * 10 + (s[i] - '0');
      if (whole > kMax) return invalid();
    }
    unsigned __int128 frac = 0, frac_scale = 1;
    size_t frac_digits = 0;
    if (i < s.size() && s[i] == '.') {
      for (++i; i < s.size() && IsDigit(s[i]); ++i, ++frac_digits) {
        if (frac_scale < kMax) {  // Extra digits beyond ns precision are dropped.
          frac = frac * 10 + (s[i] - '0');
          frac_scale *= 10;
        }
      }
    }
    if (int_digits == 0 && frac_digits == 0) return invalid();
    size_t u = i;
    while (u < s.size() && s[u] != '.' && !IsDigit(s[u])) ++u;
    std::string_view unit = s.substr(i, u - i);
    if (unit.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("time: missing unit in duration \"", orig, "\""));
    }
    int64_t per = UnitNanos(unit);
    if (per == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("time: unknown unit \"", std::string(unit), "\" in duration \"", orig, "\""));
    }
    total += whole * per + frac * per / frac_scale;
    if (total > kMax) return invalid();
    s.remove_prefix(u);
  }
  if (!neg && total == kMax) return invalid();
  int64_t nanos = total == kMax ? std::numeric_limits<int64_t>::min()
                                : static_cast<int64_t>(total) * (neg ? -1 : 1);
  return absl::Nanoseconds(nanos);
}

}  // namespace batchd::agent::sim
