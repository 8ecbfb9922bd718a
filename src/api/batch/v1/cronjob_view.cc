#include "api/batch/v1/cronjob_view.h"

#include <algorithm>

#include "api/json_access.h"
#include "api/meta/time_util.h"

namespace batchd::api::batch_v1 {

namespace {

ConcurrencyPolicy ParseConcurrencyPolicy(const Json& v) {
  if (!v.is_string()) return ConcurrencyPolicy::kAllow;  // The default.
  const std::string_view p = AsString(v);
  if (p == "Allow") return ConcurrencyPolicy::kAllow;
  if (p == "Forbid") return ConcurrencyPolicy::kForbid;
  if (p == "Replace") return ConcurrencyPolicy::kReplace;
  return ConcurrencyPolicy::kUnknown;
}

}  // namespace

CronJobSpecView CronJobSpecView::Parse(const Json& cronjob) {
  CronJobSpecView v;
  const Json& spec = MemberObject(cronjob, "spec");
  v.schedule = StringMember(spec, "schedule");
  if (const Json& tz = Member(spec, "timeZone"); tz.is_string()) v.time_zone = AsString(tz);
  v.starting_deadline_seconds = AsOptionalInt(Member(spec, "startingDeadlineSeconds"));
  v.concurrency_policy = ParseConcurrencyPolicy(Member(spec, "concurrencyPolicy"));
  v.suspend = BoolMember(spec, "suspend");
  v.successful_jobs_history_limit = AsOptionalInt(Member(spec, "successfulJobsHistoryLimit"));
  v.failed_jobs_history_limit = AsOptionalInt(Member(spec, "failedJobsHistoryLimit"));
  if (const Json& t = Member(spec, "jobTemplate"); t.is_object()) v.job_template = &t;
  return v;
}

CronJobStatusView CronJobStatusView::Parse(const Json& cronjob) {
  CronJobStatusView v;
  const Json& status = MemberObject(cronjob, "status");
  const Json& active = MemberArray(status, "active");
  v.active_entries = active.size();
  for (const Json& ref : active) {
    if (!ref.is_object()) continue;
    v.active.push_back({StringMember(ref, "name"), StringMember(ref, "uid")});
  }
  v.last_schedule_time = meta::ParseOptionalRfc3339(StringMember(status, "lastScheduleTime"));
  v.last_successful_time = meta::ParseOptionalRfc3339(StringMember(status, "lastSuccessfulTime"));
  return v;
}

bool CronJobStatusView::HasActiveUid(std::string_view uid) const {
  return std::any_of(active.begin(), active.end(),
                     [&](const CronJobActiveRef& r) { return r.uid == uid; });
}

bool CronJobStatusView::HasActiveName(std::string_view name) const {
  return std::any_of(active.begin(), active.end(),
                     [&](const CronJobActiveRef& r) { return r.name == name; });
}

}  // namespace batchd::api::batch_v1
