// Schedule arithmetic of the CronJob controller (batch-apis.md §2.3, the v2
// controller): which scheduled time is due now, how many were missed, when
// to look again, and the deterministic Job name / scheduled-timestamp
// annotation for a scheduled time.
//
// Pure functions over values; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "api/batch/v1/cron_schedule.h"

namespace batchd::controllers::cronjob::internal {

// Requeue slack after a schedule time (Kubernetes' nextScheduleDelta).
inline constexpr absl::Duration kNextScheduleDelta = absl::Milliseconds(100);
// More missed start times than this raise the TooManyMissedTimes event.
inline constexpr int64_t kTooManyMissed = 100;

struct ScheduleInputs {
  absl::Time creation;                               // metadata.creationTimestamp.
  std::optional<absl::Time> last_schedule;           // status.lastScheduleTime.
  std::optional<int64_t> starting_deadline_seconds;  // spec.startingDeadlineSeconds.
};

struct MostRecent {
  absl::Time earliest;             // Where the search started.
  std::optional<absl::Time> time;  // The most recent schedule time <= now, if any.
  int64_t missed = 0;              // Approximate number of missed times.
};

// The most recent schedule time in (earliest, now], where earliest is
// lastScheduleTime (or creation), raised to now - startingDeadlineSeconds
// when `use_deadline`. InvalidArgument when two consecutive activations are
// less than a second apart (an impossible schedule).
absl::StatusOr<MostRecent> MostRecentScheduleTime(const ScheduleInputs& in, absl::Time now,
                                                  const api::batch_v1::CronSchedule& sched,
                                                  absl::TimeZone tz, bool use_deadline);

// How long until the reconcile after the next activation (next + 100ms);
// nullopt when the schedule never fires again or is invalid.
std::optional<absl::Duration> NextScheduleDelay(const ScheduleInputs& in, absl::Time now,
                                                const api::batch_v1::CronSchedule& sched,
                                                absl::TimeZone tz);

// "<cronjob>-<minutes since the epoch>".
std::string JobName(const std::string& cronjob, absl::Time scheduled);

// RFC 3339 in `tz` as Go formats it: "2026-01-01T09:00:00+09:00", "...Z" for UTC.
std::string FormatScheduledTimestamp(absl::Time t, absl::TimeZone tz);

}  // namespace batchd::controllers::cronjob::internal
