// Writers of what the CronJob controller writes: the CronJob status fields
// CronJobStatusView (cronjob_view.h) reads, over the controller's working
// copy, and the Job it creates from spec.jobTemplate.
//
// Thread-safety: free functions over JSON the caller owns.
#pragma once

#include <string_view>

#include "absl/time/time.h"
#include "api/field_error.h"

namespace batchd::api::batch_v1 {

// Appends to status.active (made a list when it is not one) an
// ObjectReference to `job`: batch/v1 Job with its namespace, name, uid and
// resourceVersion.
void AddCronJobActive(Json& cronjob, const Json& job);
// Removes the status.active entries that are objects with uid `job_uid`
// (other entries are kept); returns whether one was removed.
bool RemoveCronJobActive(Json& cronjob, std::string_view job_uid);
// status.lastScheduleTime / status.lastSuccessfulTime.
void SetCronJobLastScheduleTime(Json& cronjob, absl::Time t);
void SetCronJobLastSuccessfulTime(Json& cronjob, absl::Time t);

// A new batch/v1 Job `ns`/`name` from a CronJob's spec.jobTemplate
// (CronJobSpecView::job_template, nullptr: an empty template): its spec and,
// when they are objects, its labels and annotations are copied.
Json NewJobFromTemplate(const Json* job_template, std::string_view name, std::string_view ns);

}  // namespace batchd::api::batch_v1
