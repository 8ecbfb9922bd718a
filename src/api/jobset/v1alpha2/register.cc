// The JobSet KindDef (names, scope and subresources as upstream's CRD:
// no short name, namespaced, /status) and its `kubectl get` columns.
#include "api/core/v1/kind_helpers.h"
#include "api/jobset/v1alpha2/jobset_v1alpha2.h"
#include "api/json_access.h"
#include "api/meta/conditions.h"

namespace batchd::api::jobset_v1alpha2 {

std::vector<TableColumn> JobSetColumns() {
  return {{"TerminalState", "string", "", "Final state of JobSet", 0},
          {"Restarts", "string", "", "Number of restarts", 0},
          {"Completed", "string", "", "", 0},
          {"Suspended", "string", "", "JobSet suspended", 0},
          {"Age", "date", "", "Time this JobSet was created", 0}};
}

std::vector<Json> JobSetRowCells(const Json& js, absl::Time now) {
  const Json& status = MemberObject(js, "status");
  const Json* completed = meta::FindCondition(js, kConditionCompleted);
  return {Member(status, "terminalState"), Member(status, "restarts"),
          completed == nullptr ? Json() : Member(*completed, "status"),
          Member(MemberObject(js, "spec"), "suspend"),
          core_v1::HumanAge(MemberObject(js, "metadata").value("creationTimestamp", Json()), now)};
}

KindDef JobSetKind() {
  KindDef d;
  d.group = kGroup;
  d.version = kVersion;
  d.kind = kKind;
  d.plural = kPlural;
  d.singular = "jobset";
  d.namespaced = true;
  d.subresources = {"status"};
  d.schema = JobSetSchema();
  d.has_status_subresource = true;
  d.set_defaults = SetDefaultsJobSet;
  d.validate_create = ValidateJobSet;
  d.validate_update = ValidateJobSetUpdate;
  d.validate_status_update = ValidateJobSetStatusUpdate;
  d.columns = JobSetColumns();
  d.row_cells = JobSetRowCells;
  return d;
}

void RegisterKinds(Scheme& scheme) { scheme.Add(JobSetKind()); }

}  // namespace batchd::api::jobset_v1alpha2
