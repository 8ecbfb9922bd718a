// The KindDefs of scheduling.k8s.io Workload and PodGroup: v1alpha2 stored,
// Workload v1alpha1 served through conversion (podGroups[].policy <->
// podGroupTemplates[].schedulingPolicy; the fields only v1alpha2 has do not
// survive a v1alpha1 round trip, and batchd refuses all of them except
// disruptionMode Pod, the default). Printer columns follow
// `kubectl get`'s usual shape.
#include <string>

#include "absl/strings/str_join.h"
#include "api/core/v1/kind_helpers.h"
#include "api/json_access.h"
#include "api/meta/conditions.h"
#include "api/scheduling/v1alpha2/internal/schemas.h"
#include "api/scheduling/v1alpha2/scheduling_v1alpha2.h"

namespace batchd::api::scheduling_v1alpha2 {
namespace {

void RenameIn(Json& obj, const char* from, const char* to) {
  if (!obj.is_object()) return;
  auto it = obj.find(from);
  if (it == obj.end()) return;
  Json v = std::move(*it);
  obj.erase(it);
  obj[to] = std::move(v);
}

void ConvertGroups(Json& wl, const char* list_from, const char* list_to, const char* policy_from,
                   const char* policy_to, const char* version) {
  wl["apiVersion"] = std::string(kGroup) + "/" + version;
  auto spec = wl.find("spec");
  if (spec == wl.end() || !spec->is_object()) return;
  RenameIn(*spec, list_from, list_to);
  auto list = spec->find(list_to);
  if (list == spec->end() || !list->is_array()) return;
  for (Json& g : *list) RenameIn(g, policy_from, policy_to);
}

std::string PolicyName(const Json& policy) {
  return ParseSchedulingPolicy(policy).gang ? "Gang" : "Basic";
}

Json MinCountCell(const Json& policy) {
  GroupPolicy p = ParseSchedulingPolicy(policy);
  return p.gang ? Json(p.min_count) : Json("<none>");
}

std::string Age(const Json& obj, absl::Time now) {
  return core_v1::HumanAge(MemberObject(obj, "metadata").value("creationTimestamp", Json()), now);
}

KindDef Base(const char* version, const char* kind, const char* plural, const char* singular) {
  KindDef k;
  k.group = kGroup;
  k.version = version;
  k.kind = kind;
  k.plural = plural;
  k.singular = singular;
  k.namespaced = true;
  return k;
}

std::string TemplateNames(const Json& spec, const char* list) {
  std::vector<std::string> names;
  for (const Json& t : MemberArray(spec, list)) names.emplace_back(StringMember(t, "name"));
  return names.empty() ? "<none>" : absl::StrJoin(names, ",");
}

KindDef WorkloadKind() {
  KindDef k = Base(kVersion, "Workload", kWorkloads, "workload");
  k.schema = internal::WorkloadSchema();
  k.set_defaults = SetDefaultsWorkload;
  k.validate_create = ValidateWorkload;
  k.validate_update = ValidateWorkloadUpdate;
  k.columns = {{"Templates", "string", "", "The pod group templates of the Workload.", 0},
               {"Age", "string", "", "CreationTimestamp of the object.", 0}};
  k.row_cells = [](const Json& wl, absl::Time now) {
    return std::vector<Json>{TemplateNames(MemberObject(wl, "spec"), "podGroupTemplates"),
                             Age(wl, now)};
  };
  return k;
}

KindDef WorkloadV1alpha1Kind(const KindDef* storage) {
  KindDef k = Base(kV1alpha1, "Workload", kWorkloads, "workload");
  k.schema = internal::WorkloadV1alpha1Schema();
  k.storage = storage;
  k.to_storage = WorkloadToV1alpha2;
  k.from_storage = WorkloadToV1alpha1;
  k.columns = {{"PodGroups", "string", "", "The pod groups of the Workload.", 0},
               {"Age", "string", "", "CreationTimestamp of the object.", 0}};
  k.row_cells = [](const Json& wl, absl::Time now) {
    return std::vector<Json>{TemplateNames(MemberObject(wl, "spec"), "podGroups"), Age(wl, now)};
  };
  return k;
}

KindDef PodGroupKind() {
  KindDef k = Base(kVersion, "PodGroup", kPodGroups, "podgroup");
  k.subresources = {"status"};
  k.has_status_subresource = true;
  k.schema = internal::PodGroupSchema();
  k.set_defaults = SetDefaultsPodGroup;
  k.validate_create = ValidatePodGroup;
  k.validate_update = ValidatePodGroupUpdate;
  k.validate_status_update = ValidatePodGroupStatusUpdate;
  k.columns = {{"Policy", "string", "", "The scheduling policy: Basic or Gang.", 0},
               {"MinCount", "integer", "", "The gang's minimum pod count.", 0},
               {"Scheduled", "string", "", "Status of the PodGroupScheduled condition.", 0},
               {"Age", "string", "", "CreationTimestamp of the object.", 0},
               {"Workload", "string", "", "The Workload the group was made from.", 1},
               {"Template", "string", "", "The Workload template the group was made from.", 1}};
  k.row_cells = [](const Json& pg, absl::Time now) {
    const Json& policy = MemberAt(pg, {"spec", "schedulingPolicy"});
    std::string_view scheduled = meta::ConditionStatus(pg, kPodGroupScheduled);
    const Json& ref = MemberAt(pg, {"spec", "podGroupTemplateRef", "workload"});
    auto or_none = [](std::string_view s) { return s.empty() ? std::string("<none>")
                                                             : std::string(s); };
    return std::vector<Json>{PolicyName(policy), MinCountCell(policy), or_none(scheduled),
                             Age(pg, now), or_none(StringMember(ref, "workloadName")),
                             or_none(StringMember(ref, "podGroupTemplateName"))};
  };
  return k;
}

}  // namespace

void WorkloadToV1alpha2(Json& wl) {
  ConvertGroups(wl, "podGroups", "podGroupTemplates", "policy", "schedulingPolicy", kVersion);
}

void WorkloadToV1alpha1(Json& wl) {
  ConvertGroups(wl, "podGroupTemplates", "podGroups", "schedulingPolicy", "policy", kV1alpha1);
  // Fields v1alpha1 lacks (all refused by batchd but disruptionMode Pod).
  Json* groups = FindMutableMemberAt(wl, {"spec", "podGroups"});
  if (groups == nullptr || !groups->is_array()) return;
  for (Json& g : *groups) {
    if (!g.is_object()) continue;
    for (const char* f : {"schedulingConstraints", "resourceClaims", "disruptionMode",
                          "priorityClassName", "priority"}) {
      g.erase(f);
    }
  }
}

void RegisterKinds(Scheme& scheme) {
  scheme.Add(WorkloadKind());
  scheme.Add(PodGroupKind());
  scheme.Add(WorkloadV1alpha1Kind(scheme.ByResource(kGroup, kVersion, kWorkloads)));
}

}  // namespace batchd::api::scheduling_v1alpha2
