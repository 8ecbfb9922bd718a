// Time-formatting helpers shared by the core/v1 sources.
#include <cinttypes>
#include <cstdio>

#include "api/meta/time_util.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "api/core/v1/internal/schemas.h"

namespace batchd::api::core_v1::internal {

bool ParseTime(const Json& v, absl::Time* out) {
  if (!v.is_string()) return false;
  std::string err;
  return absl::ParseTime(absl::RFC3339_full, v.get<std::string>(), out, &err);
}

// Go's duration.HumanDuration as kubectl prints ages: "45s", "5m", "5m3s",
// "3h", "3h4m", "2d", "2d3h", "400d", "3y20d"...
std::string HumanDuration(absl::Duration d) { return meta::HumanDuration(d); }

std::string HumanAge(const Json& rfc3339, absl::Time now) {
  absl::Time t;
  if (!ParseTime(rfc3339, &t)) return "<unknown>";
  return HumanDuration(now - t);
}

}  // namespace batchd::api::core_v1::internal
