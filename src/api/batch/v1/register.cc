// KindDefs for batch/v1 Job and CronJob, and RegisterKinds.
#include "api/batch/v1/batch_v1.h"
#include "api/batch/v1/internal/util.h"
#include "api/core/v1/core_v1.h"
#include "api/json_access.h"

namespace batchd::api::batch_v1 {

KindDef JobKind() {
  KindDef d;
  d.group = "batch";
  d.version = "v1";
  d.kind = "Job";
  d.plural = "jobs";
  d.singular = "job";
  d.namespaced = true;
  d.categories = {"all"};
  d.subresources = {"status"};
  d.schema = JobSchema();
  d.has_status_subresource = true;
  d.set_defaults = SetDefaultsJob;
  d.prepare_for_create = PrepareJobForCreate;
  d.validate_create = ValidateJob;
  d.validate_update = ValidateJobUpdate;
  d.validate_status_update = ValidateJobStatusUpdate;
  d.columns = JobColumns();
  d.row_cells = JobRowCells;
  d.selectable_fields = {"status.successful"};
  d.field_value = [](const Json& job, const std::string& field) -> std::string {
    if (field == "status.successful") {
      return std::to_string(AsOptionalInt(MemberAt(job, {"status", "succeeded"})).value_or(0));
    }
    return "";
  };
  // batch/v1 keeps the legacy orphaning default for DELETE without a policy.
  d.default_propagation_policy = "Orphan";
  return d;
}

KindDef CronJobKind() {
  KindDef d;
  d.group = "batch";
  d.version = "v1";
  d.kind = "CronJob";
  d.plural = "cronjobs";
  d.singular = "cronjob";
  d.namespaced = true;
  d.short_names = {"cj"};
  d.categories = {"all"};
  d.subresources = {"status"};
  d.schema = CronJobSchema();
  d.has_status_subresource = true;
  d.set_defaults = SetDefaultsCronJob;
  d.prepare_for_create = [](Json& cronjob) {
    if (cronjob.is_object()) cronjob["status"] = Json::object();
  };
  d.validate_create = ValidateCronJobCreate;
  d.validate_update = ValidateCronJobUpdate;
  d.columns = CronJobColumns();
  d.row_cells = CronJobRowCells;
  return d;
}

void RegisterKinds(Scheme& scheme) {
  scheme.Add(JobKind());
  scheme.Add(CronJobKind());
}

}  // namespace batchd::api::batch_v1
