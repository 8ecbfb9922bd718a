// `kubectl get` columns, as Kueue's printer columns declare them. Cells read
// the stored (v1beta2) shape; the ClusterQueue cohort cell also accepts the
// v1beta1 `cohort` field so a converted object prints the same.
#include "api/core/v1/kind_helpers.h"
#include "api/json_access.h"
#include "api/kueue/internal/printers.h"
#include "api/kueue/internal/util.h"
#include "api/kueue/kueue.h"
#include "api/meta/conditions.h"

namespace batchd::api::kueue::internal {
namespace {

Json ConditionStatus(const Json& obj, std::string_view type) {
  const Json* c = meta::FindCondition(obj, type);
  return c == nullptr ? Json() : Member(*c, "status");
}

Json Age(const Json& obj, absl::Time now) {
  return core_v1::HumanAge(MemberObject(obj, "metadata").value("creationTimestamp", Json()), now);
}

TableColumn AgeColumn() {
  return {"Age", "date", "", "CreationTimestamp of the object.", 0};
}

}  // namespace

void SetPrinter(KindDef& k) {
  const std::string& kind = k.kind;
  if (kind == "ClusterQueue") {
    k.columns = {{"Cohort", "string", "", "Cohort that this ClusterQueue belongs to", 0},
                 {"Strategy", "string", "", "The queueing strategy used to prioritize "
                                            "workloads", 1},
                 {"Pending Workloads", "integer", "", "Number of pending workloads", 0},
                 {"Admitted Workloads", "integer", "", "Number of admitted workloads that "
                                                      "haven't finished yet", 1}};
    k.row_cells = [](const Json& obj, absl::Time) {
      const Json& spec = MemberObject(obj, "spec");
      Json cohort = HasMember(spec, "cohortName") ? Member(spec, "cohortName") : Member(spec, "cohort");
      const Json& status = MemberObject(obj, "status");
      return std::vector<Json>{cohort, Member(spec, "queueingStrategy"),
                               Member(status, "pendingWorkloads"),
                               Member(status, "admittedWorkloads")};
    };
  } else if (kind == "LocalQueue") {
    k.columns = {{"ClusterQueue", "string", "", "Backing ClusterQueue", 0},
                 {"Pending Workloads", "integer", "", "Number of pending workloads", 0},
                 {"Admitted Workloads", "integer", "", "Number of admitted workloads that "
                                                      "haven't finished yet.", 0}};
    k.row_cells = [](const Json& obj, absl::Time) {
      const Json& status = MemberObject(obj, "status");
      return std::vector<Json>{Member(MemberObject(obj, "spec"), "clusterQueue"),
                               Member(status, "pendingWorkloads"),
                               Member(status, "admittedWorkloads")};
    };
  } else if (kind == "Workload") {
    k.columns = {{"Queue", "string", "", "Name of the queue this workload was submitted to", 0},
                 {"Reserved in", "string", "", "Name of the ClusterQueue where the workload "
                                               "is reserving quota", 0},
                 {"Admitted", "string", "", "Admission status", 0},
                 {"Finished", "string", "", "Workload finished", 0},
                 AgeColumn()};
    k.row_cells = [](const Json& obj, absl::Time now) {
      return std::vector<Json>{Member(MemberObject(obj, "spec"), "queueName"),
                               Member(MemberObject(MemberObject(obj, "status"), "admission"), "clusterQueue"),
                               ConditionStatus(obj, kAdmitted), ConditionStatus(obj, kFinished),
                               Age(obj, now)};
    };
  } else if (kind == "WorkloadPriorityClass") {
    k.columns = {{"Value", "integer", "", "Value of workloadPriorityClass's Priority", 0}};
    k.row_cells = [](const Json& obj, absl::Time) {
      return std::vector<Json>{Member(obj, "value")};
    };
  } else if (kind == "MultiKueueCluster") {
    k.columns = {{"Connected", "string", "", "MultiKueueCluster is connected", 0}, AgeColumn()};
    k.row_cells = [](const Json& obj, absl::Time now) {
      return std::vector<Json>{ConditionStatus(obj, "Active"), Age(obj, now)};
    };
  } else {
    k.columns = {AgeColumn()};
    k.row_cells = [](const Json& obj, absl::Time now) { return std::vector<Json>{Age(obj, now)}; };
  }
}

}  // namespace batchd::api::kueue::internal
