// `kubectl get` tables for Jobs and CronJobs, cell for cell as Kubernetes'
// printJob / printCronJob (1.32): Status, Completions, Duration, Age; and
// Schedule, Timezone, Suspend, Active, Last Schedule, Age; wide adds
// Containers, Images, Selector.
#include "absl/strings/string_view.h"
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "api/batch/v1/batch_v1.h"
#include "api/batch/v1/internal/util.h"
#include "api/core/v1/core_v1.h"
#include "api/json_access.h"

namespace batchd::api::batch_v1 {
namespace {

std::string JobStatusCell(const Json& job) {
  if (JobConditionTrue(job, "Complete")) return "Complete";
  if (JobConditionTrue(job, "Failed")) return "Failed";
  if (!MemberAt(job, {"metadata", "deletionTimestamp"}).is_null()) return "Terminating";
  if (JobConditionTrue(job, "Suspended")) return "Suspended";
  if (JobConditionTrue(job, "FailureTarget")) return "FailureTarget";
  if (JobConditionTrue(job, "SuccessCriteriaMet")) return "SuccessCriteriaMet";
  return "Running";
}

std::string CompletionsCell(const Json& job) {
  const int64_t succeeded = AsOptionalInt(MemberAt(job, {"status", "succeeded"})).value_or(0);
  if (auto completions = AsOptionalInt(MemberAt(job, {"spec", "completions"}))) {
    return absl::StrCat(succeeded, "/", *completions);
  }
  const int64_t parallelism = AsOptionalInt(MemberAt(job, {"spec", "parallelism"})).value_or(0);
  if (parallelism > 1) return absl::StrCat(succeeded, "/1 of ", parallelism);
  return absl::StrCat(succeeded, "/1");
}

std::string DurationCell(const Json& job, absl::Time now) {
  const Json& start_json = MemberAt(job, {"status", "startTime"});
  if (!start_json.is_string()) return "";
  auto start = internal::ParseRfc3339(start_json.get<std::string>());
  if (!start) return "";
  const Json& end_json = MemberAt(job, {"status", "completionTime"});
  if (!end_json.is_string()) return internal::HumanDuration(now - *start);
  auto end = internal::ParseRfc3339(end_json.get<std::string>());
  return end ? internal::HumanDuration(*end - *start) : "";
}

std::vector<TableColumn> WideColumns() {
  return {
      {"Containers", "string", "", "Names of each container in the template.", 1},
      {"Images", "string", "", "Images referenced by each container in the template.", 1},
      {"Selector", "string", "", "A label query over pods that should match the pod count.", 1},
  };
}

void AppendWide(std::vector<Json>& cells, const Json& pod_spec, const Json& selector) {
  const Json& spec = pod_spec.is_object() ? pod_spec : EmptyObject();  // No copy.
  cells.emplace_back(core_v1::ContainerNames(spec));
  cells.emplace_back(core_v1::ContainerImages(spec));
  cells.emplace_back(internal::FormatLabelSelector(selector));
}

constexpr char kAgeDoc[] =
    "CreationTimestamp is a timestamp representing the server time when this object was created.";

}  // namespace

std::vector<TableColumn> JobColumns() {
  std::vector<TableColumn> cols = {
      {"Status", "string", "", "Status of the job.", 0},
      {"Completions", "string", "", "The number of pods which reached phase Succeeded.", 0},
      {"Duration", "string", "", "Time required to complete the job.", 0},
      {"Age", "string", "", kAgeDoc, 0},
  };
  for (TableColumn& c : WideColumns()) cols.push_back(std::move(c));
  return cols;
}

std::vector<Json> JobRowCells(const Json& job, absl::Time now) {
  std::vector<Json> cells;
  cells.emplace_back(JobStatusCell(job));
  cells.emplace_back(CompletionsCell(job));
  cells.emplace_back(DurationCell(job, now));
  cells.emplace_back(internal::TimestampSince(FindMemberAt(job, {"metadata", "creationTimestamp"}), now));
  AppendWide(cells, MemberAt(job, {"spec", "template", "spec"}), MemberAt(job, {"spec", "selector"}));
  return cells;
}

std::vector<TableColumn> CronJobColumns() {
  std::vector<TableColumn> cols = {
      {"Schedule", "string", "", "The schedule in Cron format.", 0},
      {"Timezone", "string", "", "The time zone name for the given schedule.", 0},
      {"Suspend", "boolean", "", "Whether subsequent executions are suspended.", 0},
      {"Active", "integer", "", "A list of pointers to currently running jobs.", 0},
      {"Last Schedule", "string", "", "Information when was the last time the job was "
                                      "successfully scheduled.", 0},
      {"Age", "string", "", kAgeDoc, 0},
  };
  for (TableColumn& c : WideColumns()) cols.push_back(std::move(c));
  return cols;
}

std::vector<Json> CronJobRowCells(const Json& cronjob, absl::Time now) {
  std::vector<Json> cells;
  cells.emplace_back(std::string(AsString(MemberAt(cronjob, {"spec", "schedule"}))));
  const Json& tz = MemberAt(cronjob, {"spec", "timeZone"});
  cells.emplace_back(tz.is_string() ? tz.get<std::string>() : "<none>");
  const Json& suspend = MemberAt(cronjob, {"spec", "suspend"});
  cells.emplace_back(!suspend.is_boolean() ? "<unset>" : suspend.get<bool>() ? "True" : "False");
  const Json& active = MemberAt(cronjob, {"status", "active"});
  cells.emplace_back(static_cast<int64_t>(active.is_array() ? active.size() : 0));
  const Json* last = FindMemberAt(cronjob, {"status", "lastScheduleTime"});
  cells.emplace_back(last == nullptr || last->is_null() ? "<none>" : internal::TimestampSince(last, now));
  cells.emplace_back(internal::TimestampSince(FindMemberAt(cronjob, {"metadata", "creationTimestamp"}), now));
  AppendWide(cells, MemberAt(cronjob, {"spec", "jobTemplate", "spec", "template", "spec"}),
             MemberAt(cronjob, {"spec", "jobTemplate", "spec", "selector"}));
  return cells;
}

}  // namespace batchd::api::batch_v1
