#include "api/meta/time_util.h"

#include <cstdint>

namespace batchd::api::meta {

std::string FormatRfc3339(absl::Time t) {
  return absl::FormatTime("%Y-%m-%d%ET%H:%M:%SZ", t, absl::UTCTimeZone());
}

std::string FormatRfc3339Micro(absl::Time t) {
  return absl::FormatTime("%Y-%m-%d%ET%H:%M:%E6SZ", t, absl::UTCTimeZone());
}

absl::StatusOr<absl::Time> ParseRfc3339(std::string_view s) {
  absl::Time t;
  std::string err;
  if (!absl::ParseTime(absl::RFC3339_full, std::string(s), &t, &err)) {
    return absl::InvalidArgumentError("parsing time \"" + std::string(s) +
                                      "\" as RFC 3339: " + err);
  }
  return t;
}

std::optional<absl::Time> ParseOptionalRfc3339(std::string_view s) {
  if (s.empty()) return std::nullopt;
  auto t = ParseRfc3339(s);
  if (!t.ok()) return std::nullopt;
  return *t;
}

std::string HumanDuration(absl::Duration d) {
  int64_t seconds = absl::ToInt64Seconds(d);  // Truncates toward zero, as Go's int().
  if (seconds < -1) return "<invalid>";
  if (seconds < 0) return "0s";
  if (seconds < 60 * 2) return std::to_string(seconds) + "s";
  int64_t minutes = absl::ToInt64Minutes(d);
  if (minutes < 10) {
    int64_t s = seconds % 60;
    if (s == 0) return std::to_string(minutes) + "m";
    return std::to_string(minutes) + "m" + std::to_string(s) + "s";
  }
  if (minutes < 60 * 3) return std::to_string(minutes) + "m";
  int64_t hours = absl::ToInt64Hours(d);
  if (hours < 8) {
    int64_t m = minutes % 60;
    if (m == 0) return std::to_string(hours) + "h";
    return std::to_string(hours) + "h" + std::to_string(m) + "m";
  }
  if (hours < 48) return std::to_string(hours) + "h";
  if (hours < 24 * 8) {
    int64_t h = hours % 24;
    if (h == 0) return std::to_string(hours / 24) + "d";
    return std::to_string(hours / 24) + "d" + std::to_string(h) + "h";
  }
  if (hours < 24 * 365 * 2) return std::to_string(hours / 24) + "d";
  if (hours < 24 * 365 * 8) {
    int64_t dy = (hours / 24) % 365;
    if (dy == 0) return std::to_string(hours / 24 / 365) + "y";
    return std::to_string(hours / 24 / 365) + "y" + std::to_string(dy) + "d";
  }
  return std::to_string(hours / 24 / 365) + "y";
}

std::string ShortHumanDuration(absl::Duration d) {
  int64_t seconds = absl::ToInt64Seconds(d);
  if (seconds < -1) return "<invalid>";
  if (seconds < 0) return "0s";
  if (seconds < 60) return std::to_string(seconds) + "s";
  int64_t minutes = absl::ToInt64Minutes(d);
  if (minutes < 60) return std::to_string(minutes) + "m";
  int64_t hours = absl::ToInt64Hours(d);
  if (hours < 24) return std::to_string(hours) + "h";
  if (hours < 24 * 365) return std::to_string(hours / 24) + "d";
  return std::to_string(hours / 24 / 365) + "y";
}

}  // namespace batchd::api::meta
