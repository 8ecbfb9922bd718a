// CronJobView: the typed view of a batch/v1 CronJob that the CronJob
// controller reads (see api/meta/object_view.h for what a view is and its
// lifetime rule: it points into the JSON it was parsed from).
//
// The controller edits the status of a working copy during a sync; it parses
// the spec once and reads the status it changes from that copy (or parses a
// fresh CronJobStatusView after each edit).
//
// Thread-safety: immutable after Parse.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "absl/time/time.h"
#include "api/field_error.h"
#include "api/meta/object_view.h"

namespace batchd::api::batch_v1 {

// kUnknown: a policy this version does not know (validation refuses it).
enum class ConcurrencyPolicy { kAllow, kForbid, kReplace, kUnknown };

// One entry of status.active (an ObjectReference to a Job).
struct CronJobActiveRef {
  std::string_view name;
  std::string_view uid;
};

struct CronJobSpecView {
  std::string_view schedule;
  std::optional<std::string_view> time_zone;  // Set when spec.timeZone is a string.
  std::optional<int64_t> starting_deadline_seconds;
  ConcurrencyPolicy concurrency_policy = ConcurrencyPolicy::kAllow;
  bool suspend = false;
  std::optional<int64_t> successful_jobs_history_limit;
  std::optional<int64_t> failed_jobs_history_limit;
  const Json* job_template = nullptr;  // spec.jobTemplate, or nullptr.

  // REQUIRES: `cronjob` outlives the view.
  static CronJobSpecView Parse(const Json& cronjob);
};

struct CronJobStatusView {
  std::vector<CronJobActiveRef> active;  // Entries that are objects.
  // Every entry of status.active, object or not (Kubernetes' Forbid policy
  // counts them all).
  size_t active_entries = 0;
  std::optional<absl::Time> last_schedule_time;    // nullopt: unset or unparsable.
  std::optional<absl::Time> last_successful_time;  // nullopt: unset or unparsable.

  // REQUIRES: `cronjob` outlives the view.
  static CronJobStatusView Parse(const Json& cronjob);

  bool HasActiveUid(std::string_view uid) const;
  bool HasActiveName(std::string_view name) const;
};

}  // namespace batchd::api::batch_v1
