// ParseGoDuration: Go's `time.ParseDuration` grammar — a signed sequence of
// decimal numbers with optional fraction and a unit each ("90s", "1h30m",
// "500ms", "1.5h", "-2m", "0"); units ns, us (µs, μs), ms, s, m, h. Errors
// use Go's wording (`time: invalid duration "x"`, `time: missing unit in
// duration "1"`, `time: unknown unit "d" in duration "1d"`). Exact: integer
// nanoseconds, no floating point.
//
// Thread-safety: a pure function.
#pragma once

#include <string_view>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace batchd::agent::sim {

absl::StatusOr<absl::Duration> ParseGoDuration(std::string_view s);

}  // namespace batchd::agent::sim
