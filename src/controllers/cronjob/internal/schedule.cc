#include "controllers/cronjob/internal/schedule.h"

#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace batchd::controllers::cronjob::internal {

namespace {

// Exact walks below this many missed times; beyond it, start near the end.
constexpr int64_t kExactWalkLimit = 1000;

// The last activation <= now, walking from `from` (exclusive); nullopt when
// the first activation after `from` is already past now. Bounded by `cap`.
std::optional<absl::Time> WalkToNow(const api::batch_v1::CronSchedule& sched, absl::TimeZone tz,
                                    absl::Time from, absl::Time now, int64_t cap) {
  std::optional<absl::Time> last;
  absl::Time t = sched.Next(from, tz);
  for (int64_t i = 0; i < cap && t <= now; ++i) {
    last = t;
    t = sched.Next(t, tz);
  }
  return last;
}

}  // namespace

absl::StatusOr<MostRecent> MostRecentScheduleTime(const ScheduleInputs& in, absl::Time now,
                                                  const api::batch_v1::CronSchedule& sched,
                                                  absl::TimeZone tz, bool use_deadline) {
  MostRecent out;
  out.earliest = in.last_schedule.value_or(in.creation);
  if (use_deadline && in.starting_deadline_seconds) {
    absl::Time deadline = now - absl::Seconds(*in.starting_deadline_seconds);
    if (deadline > out.earliest) out.earliest = deadline;
  }
  absl::Time t1 = sched.Next(out.earliest, tz);
  if (t1 == absl::InfiniteFuture() || now < t1) return out;
  absl::Time t2 = sched.Next(t1, tz);
  if (t2 == absl::InfiniteFuture() || now < t2) {
    out.time = t1;
    out.missed = 1;
    return out;
  }
  int64_t interval = absl::ToInt64Seconds(absl::Floor(t2 - t1 + absl::Milliseconds(500), absl::Seconds(1)));
  if (interval < 1) {
    return absl::InvalidArgumentError(
        "time difference between two schedules is less than 1 second");
  }
  int64_t elapsed = absl::ToInt64Seconds(now - t1);
  out.missed = elapsed / interval + 1;
  if (out.missed <= kExactWalkLimit) {
    out.time = WalkToNow(sched, tz, out.earliest, now, kExactWalkLimit + 1);
    return out;
  }
  // Too many to walk: start a couple of intervals before the estimated end,
  // falling back to an exact (bounded) walk for irregular schedules.
  absl::Time start = t1 + absl::Seconds((out.missed - 2) * interval);
  out.time = WalkToNow(sched, tz, start, now, kExactWalkLimit);
  if (!out.time) out.time = WalkToNow(sched, tz, t1, now, 100 * kExactWalkLimit);
  return out;
}

std::optional<absl::Duration> NextScheduleDelay(const ScheduleInputs& in, absl::Time now,
                                                const api::batch_v1::CronSchedule& sched,
                                                absl::TimeZone tz) {
  auto mr = MostRecentScheduleTime(in, now, sched, tz, /*use_deadline=*/false);
  if (!mr.ok()) return std::nullopt;
  absl::Time next = sched.Next(mr->time.value_or(mr->earliest), tz);
  if (next == absl::InfiniteFuture()) return std::nullopt;
  return next + kNextScheduleDelta - now;
}

std::string JobName(const std::string& cronjob, absl::Time scheduled) {
  return absl::StrCat(cronjob, "-", absl::ToUnixSeconds(scheduled) / 60);
}

std::string FormatScheduledTimestamp(absl::Time t, absl::TimeZone tz) {
  std::string out = absl::FormatTime("%Y-%m-%dT%H:%M:%S", t, tz);
  int offset = tz.At(t).offset;
  if (offset == 0) return out + "Z";
  char sign = offset < 0 ? '-' : '+';
  offset = std::abs(offset);
  return absl::StrFormat("%s%c%02d:%02d", out, sign, offset / 3600, (offset % 3600) / 60);
}

}  // namespace batchd::controllers::cronjob::internal
