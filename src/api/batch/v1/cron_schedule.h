// CronSchedule: a parsed CronJob `spec.schedule`, with the syntax and the
// activation semantics of robfig/cron v3's `ParseStandard` (what Kubernetes
// uses): five fields `minute hour day-of-month month day-of-week`, `*` / `?`,
// lists, ranges, steps, month and weekday names (case-insensitive), the
// macros @yearly @annually @monthly @weekly @daily @midnight @hourly, and
// `@every <duration>` (accepted by ParseStandard, hence by Kubernetes'
// validation). Day-of-week is 0-6 (Sunday = 0); 7 is rejected, as in
// Kubernetes. When both day fields are restricted (neither starts with `*`),
// a day matches if either does. A `TZ=`/`CRON_TZ=` prefix is parsed (the
// CronJob validation rejects it separately).
//
// Values are immutable and cheap to copy; all methods are thread-safe.
#pragma once

#include "absl/strings/string_view.h"
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace batchd::api::batch_v1 {

class CronSchedule {
 public:
  // Parses `spec`. Errors are InvalidArgument with robfig's message text,
  // e.g. "expected exactly 5 fields, found 6: [a b c d e f]".
  static absl::StatusOr<CronSchedule> Parse(absl::string_view spec);

  // The first activation strictly after `after`, evaluated in `tz` (or in
  // the schedule's own `TZ=` zone when it has one). Like robfig, civil
  // times skipped by a DST jump never fire, and a repeated hour may fire
  // twice. Returns `absl::InfiniteFuture()` when nothing matches within five
  // years (e.g. "0 0 30 2 *").
  absl::Time Next(absl::Time after, absl::TimeZone tz) const;

  // True for `@every` schedules (fixed delay rather than a calendar spec).
  bool is_every() const { return every_.has_value(); }

 private:
  CronSchedule() = default;
  // The `@...` macros and `@every`; `out` carries a parsed TZ= zone.
  static absl::StatusOr<CronSchedule> ParseDescriptor(absl::string_view spec, CronSchedule out);

  // Bit sets as in robfig: bit n set when value n matches; bit 63 marks a
  // field written as `*` / `?` (it changes the day-of-month/week rule).
  uint64_t second_ = 1;  // Always second 0 for five-field specs.
  uint64_t minute_ = 0;
  uint64_t hour_ = 0;
  uint64_t dom_ = 0;
  uint64_t month_ = 0;
  uint64_t dow_ = 0;
  std::optional<absl::Duration> every_;
  std::optional<absl::TimeZone> zone_;
};

}  // namespace batchd::api::batch_v1
