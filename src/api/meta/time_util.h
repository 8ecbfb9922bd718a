// Time formatting as the Kubernetes API does it: `metav1.Time` is RFC 3339
// in UTC with whole seconds ("2024-05-01T12:00:00Z"), `metav1.MicroTime`
// (e.g. Lease `renewTime`) has six fractional digits, and `kubectl get` ages
// use apimachinery's `duration.HumanDuration` ("90s", "3m10s", "2d1h").
//
// Thread-safety: stateless pure functions, safe from any thread. Nothing here
// reads the clock; callers pass `Clock::Now()` differences in.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace batchd::api::meta {

// "2006-01-02T15:04:05Z" (sub-second part truncated).
std::string FormatRfc3339(absl::Time t);
// "2006-01-02T15:04:05.000000Z".
std::string FormatRfc3339Micro(absl::Time t);
// Accepts "Z" or "+hh:mm"/"-hh:mm" offsets and any fractional seconds.
// InvalidArgument on anything else.
absl::StatusOr<absl::Time> ParseRfc3339(std::string_view s);
// The same for an optional field: nullopt when `s` is empty or unparsable.
std::optional<absl::Time> ParseOptionalRfc3339(std::string_view s);

// Ages as `kubectl get` prints them (~2-3 significant figures): "0s", "90s",
// "3m10s", "70m", "3h1m", "47h", "2d1h", "8d", "2y1d", "8y"; "<invalid>"
// for durations below -1s.
std::string HumanDuration(absl::Duration d);
// The one-unit form: "59s", "1m", "23h", "364d", "2y".
std::string ShortHumanDuration(absl::Duration d);

}  // namespace batchd::api::meta
