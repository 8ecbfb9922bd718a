#include "api/batch/v1/job_status_writer.h"

#include <string>

#include "api/json_access.h"
#include "api/meta/time_util.h"

namespace batchd::api::batch_v1 {

namespace {

Json& Status(Json& job) { return MutableObject(job, "status"); }

void SetCount(Json& job, const char* field, int64_t n) {
  if (n > 0) {
    Status(job)[field] = n;
  } else {
    Status(job).erase(field);
  }
}

}  // namespace

const Json& JobStatusJson(const Json& job) { return Member(job, "status"); }

absl::Time SetJobStartTime(Json& job, absl::Time t) {
  Status(job)["startTime"] = meta::FormatRfc3339(t);
  return absl::FromUnixSeconds(absl::ToUnixSeconds(t));  // As FormatRfc3339 truncates.
}

bool ClearJobStartTime(Json& job) {
  Json* status = FindMutableMemberAt(job, {"status"});
  return status != nullptr && status->is_object() && status->erase("startTime") > 0;
}

void SetJobCompletionTime(Json& job, absl::Time t) {
  Status(job)["completionTime"] = meta::FormatRfc3339(t);
}

void SetJobActive(Json& job, int64_t n) { SetCount(job, "active", n); }
void SetJobSucceeded(Json& job, int64_t n) { SetCount(job, "succeeded", n); }
void SetJobFailed(Json& job, int64_t n) { SetCount(job, "failed", n); }
void SetJobReady(Json& job, int64_t n) { Status(job)["ready"] = n; }
void SetJobTerminating(Json& job, int64_t n) { Status(job)["terminating"] = n; }

void SetJobUncountedTerminatedPods(Json& job, const std::vector<std::string>& succeeded,
                                   const std::vector<std::string>& failed) {
  Json u = Json::object();
  if (!succeeded.empty()) u["succeeded"] = succeeded;
  if (!failed.empty()) u["failed"] = failed;
  Status(job)["uncountedTerminatedPods"] = std::move(u);
}

bool SetJobCompletedIndexes(Json& job, std::string_view indexes) {
  Json& status = Status(job);
  const bool changed = StringMember(status, "completedIndexes") != indexes;
  if (indexes.empty()) {
    status.erase("completedIndexes");
  } else {
    status["completedIndexes"] = std::string(indexes);
  }
  return changed;
}

bool SetJobFailedIndexes(Json& job, std::string_view indexes) {
  Json& status = Status(job);
  const Json& old = Member(status, "failedIndexes");
  const bool changed = !old.is_string() || AsString(old) != indexes;
  status["failedIndexes"] = std::string(indexes);
  return changed;
}

}  // namespace batchd::api::batch_v1
