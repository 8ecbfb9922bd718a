// ValidateCronJobCreate / ValidateCronJobUpdate: schedule syntax, time zone,
// concurrency policy, the job template (as a JobSpec without selector) and
// the 52-character name limit.
#include "absl/strings/string_view.h"
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "api/batch/v1/batch_v1.h"
#include "api/batch/v1/cron_schedule.h"
#include "api/batch/v1/internal/job_rules.h"
#include "api/batch/v1/internal/util.h"
#include "api/json_access.h"

namespace batchd::api::batch_v1 {
namespace {

// The cronjob controller appends an 11-character suffix to make Job names.
constexpr size_t kMaxCronJobNameLength = 63 - 11;

ErrorList ValidateSchedule(const std::string& schedule, bool allow_tz, bool has_time_zone,
                           const Path& p) {
  ErrorList errs;
  auto parsed = CronSchedule::Parse(schedule);
  if (!parsed.ok()) errs.push_back(Invalid(p, schedule, std::string(parsed.status().message())));
  const bool mentions_tz = absl::StrContains(schedule, "TZ");
  if (allow_tz && mentions_tz && has_time_zone) {
    errs.push_back(Invalid(p, schedule, "cannot use both timeZone field and TZ or CRON_TZ in schedule"));
  } else if (!allow_tz && mentions_tz) {
    errs.push_back(Invalid(p, schedule, "cannot use TZ or CRON_TZ in schedule, use timeZone field instead"));
  }
  return errs;
}

// One path component of an IANA name: [A-Za-z.\-_0-9+]{1,14}, not "." / "..",
// not starting with '-'.
bool ValidZonePart(absl::string_view part) {
  if (part.empty() || part.size() > 14 || part == "." || part == ".." || part[0] == '-') return false;
  for (char c : part) {
    const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '-' || c == '_' || c == '+';
    if (!ok) return false;
  }
  return true;
}

ErrorList ValidateTimeZone(const Json& tz, const Path& p) {
  if (!tz.is_string()) return {};
  const std::string name = tz.get<std::string>();
  if (name.empty()) return {Invalid(p, name, "timeZone must be nil or non-empty string")};
  for (absl::string_view part : absl::StrSplit(name, '/')) {
    if (!ValidZonePart(part)) return {Invalid(p, name, "unknown time zone " + name)};
  }
  ErrorList errs;
  if (absl::EqualsIgnoreCase(name, "Local")) {
    errs.push_back(Invalid(p, name,
                           "timeZone must be an explicit time zone as defined in "
                           "https://www.iana.org/time-zones"));
  }
  absl::TimeZone zone;
  // Go's time.LoadLocation("Local") succeeds; only the check above rejects it.
  if (name != "Local" && !absl::LoadTimeZone(name, &zone)) {
    errs.push_back(Invalid(p, name, "unknown time zone " + name));
  }
  return errs;
}

ErrorList ValidateConcurrencyPolicy(const Json& v, const Path& p) {
  const std::string s = v.is_string() ? v.get<std::string>() : "";
  if (s == "Allow" || s == "Forbid" || s == "Replace") return {};
  if (s.empty()) return {Required(p)};
  return {NotSupported(p, s, {"Allow", "Forbid", "Replace"})};
}

// validateCronJobSpec; `old_spec` is null on create.
ErrorList ValidateCronJobSpec(const Json& spec, const Json& old_spec, const Path& p) {
  ErrorList errs;
  const Json& schedule = Member(spec, "schedule");
  const std::string sched = schedule.is_string() ? schedule.get<std::string>() : "";
  const Json& tz = Member(spec, "timeZone");
  if (sched.empty()) {
    errs.push_back(Required(p.Child("schedule")));
  } else {
    const bool allow_tz = absl::StrContains(std::string(AsString(Member(old_spec, "schedule"))), "TZ");
    AppendErrors(errs, ValidateSchedule(sched, allow_tz, !tz.is_null(), p.Child("schedule")));
  }
  AppendErrors(errs, internal::NonNegative(Member(spec, "startingDeadlineSeconds"),
                                     p.Child("startingDeadlineSeconds")));
  if (old_spec.is_null() || Member(old_spec, "timeZone") != tz) {
    AppendErrors(errs, ValidateTimeZone(tz, p.Child("timeZone")));
  }
  AppendErrors(errs, ValidateConcurrencyPolicy(Member(spec, "concurrencyPolicy"), p.Child("concurrencyPolicy")));
  const Json& tmpl = Member(spec, "jobTemplate");
  AppendErrors(errs, ValidateJobTemplateSpec(tmpl.is_null() ? Json::object() : tmpl, p.Child("jobTemplate")));
  for (const char* f : {"successfulJobsHistoryLimit", "failedJobsHistoryLimit"}) {
    AppendErrors(errs, internal::NonNegative(MemberAt(spec, {f}), p.Child(f)));
  }
  return errs;
}

}  // namespace

ErrorList ValidateCronJobCreate(const Json& cronjob) {
  // ObjectMeta itself is validated by the registry for every kind.
  ErrorList errs = ValidateCronJobSpec(Member(cronjob, "spec"), Json(), Path("spec"));
  const std::string name(AsString(MemberAt(cronjob, {"metadata", "name"})));
  if (name.size() > kMaxCronJobNameLength) {
    errs.push_back(Invalid(Path("metadata").Child("name"), name, "must be no more than 52 characters"));
  }
  return errs;
}

ErrorList ValidateCronJobUpdate(const Json& cronjob, const Json& old) {
  // The 52-character limit is not applied on update, so that older long
  // names stay updatable (as in Kubernetes).
  const Json& old_spec = Member(old, "spec");
  return ValidateCronJobSpec(Member(cronjob, "spec"), old_spec.is_null() ? Json::object() : old_spec,
                             Path("spec"));
}

}  // namespace batchd::api::batch_v1
