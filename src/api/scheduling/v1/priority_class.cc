#include "api/core/v1/kind_helpers.h"
#include "api/json_access.h"
#include "api/scheduling/v1/scheduling_v1.h"
#include "api/validation/object_meta.h"

namespace batchd::api::scheduling_v1 {
namespace {


SchemaPtr PriorityClassSchema() {
  static const SchemaPtr s =
      core_v1::TopLevel("io.k8s.api.scheduling.v1.PriorityClass",
                        "PriorityClass maps a priority class name to an integer priority.")
          .Field("value", Int32("The priority pods (and workloads) of this class get."))
          .Field("globalDefault", Bool("Whether this is the default for pods without a "
                                       "priority class; at most one may be true."))
          .Field("description", Str("When to use this class."))
          .Field("preemptionPolicy", Str("Never or PreemptLowerPriority (default).")
                                         .Enum({"Never", "PreemptLowerPriority"}))
          .Require("value")
          .Build();
  return s;
}

bool IsSystemClass(const std::string& name) {
  return name == kSystemNodeCritical || name == kSystemClusterCritical;
}

}  // namespace

bool IsGlobalDefault(const Json& pc) {
  auto it = pc.find("globalDefault");
  return it != pc.end() && it->is_boolean() && it->get<bool>();
}

const Json* GlobalDefault(const std::vector<const Json*>& classes) {
  auto value = [](const Json& pc) { return pc.value("value", int64_t{0}); };
  const Json* best = nullptr;
  for (const Json* pc : classes) {
    if (IsGlobalDefault(*pc) && (best == nullptr || value(*pc) < value(*best))) best = pc;
  }
  return best;
}

void SetDefaultsPriorityClass(Json& pc) {
  if (!pc.contains("preemptionPolicy") || pc["preemptionPolicy"].is_null()) {
    pc["preemptionPolicy"] = kPreemptLowerPriority;
  }
}

ErrorList ValidatePriorityClass(const Json& pc) {
  ErrorList errs = validation::ValidateObjectMeta(MemberObject(pc, "metadata"), false,
                                                  validation::NameIsDNSSubdomain,
                                                  Path("metadata"));
  std::string name = std::string(StringMember(MemberObject(pc, "metadata"), "name"));
  if (!pc.contains("value") || !pc["value"].is_number_integer()) {
    errs.push_back(Required(Path("value")));
  } else if (!IsSystemClass(name)) {
    if (name.rfind("system-", 0) == 0) {
      errs.push_back(Forbidden(Path("metadata").Child("name"),
                               "priority class names with 'system-' prefix are reserved"));
    }
    int64_t v = pc["value"].get<int64_t>();
    if (v > kHighestUserDefinablePriority) {
      errs.push_back(Forbidden(Path("value"), "maximum allowed value of a user defined priority "
                                              "is 1000000000"));
    }
  }
  std::string policy(StringMember(pc, "preemptionPolicy"));
  if (!policy.empty() && policy != "Never" && policy != "PreemptLowerPriority") {
    errs.push_back(NotSupported(Path("preemptionPolicy"), policy, {"Never",
                                                                   "PreemptLowerPriority"}));
  }
  return errs;
}

ErrorList ValidatePriorityClassUpdate(const Json& pc, const Json& old) {
  ErrorList errs = ValidatePriorityClass(pc);
  ErrorList m = validation::ValidateObjectMetaUpdate(MemberObject(pc, "metadata"),
                                                     MemberObject(old, "metadata"), Path("metadata"));
  errs.insert(errs.end(), m.begin(), m.end());
  if (pc.value("value", Json()) != old.value("value", Json())) {
    errs.push_back(Forbidden(Path("value"), "may not be changed in an update."));
  }
  m = validation::ValidateImmutableField(pc.value("preemptionPolicy", Json()),
                                         old.value("preemptionPolicy", Json()),
                                         Path("preemptionPolicy"));
  errs.insert(errs.end(), m.begin(), m.end());
  return errs;
}

KindDef PriorityClassKind() {
  KindDef k;
  k.group = kGroup;
  k.version = "v1";
  k.kind = "PriorityClass";
  k.plural = "priorityclasses";
  k.singular = "priorityclass";
  k.namespaced = false;
  k.short_names = {"pc"};
  k.schema = PriorityClassSchema();
  k.set_defaults = SetDefaultsPriorityClass;
  k.validate_create = ValidatePriorityClass;
  k.validate_update = ValidatePriorityClassUpdate;
  k.undeletable_names = {kSystemNodeCritical, kSystemClusterCritical};
  k.undeletable_reason = "this is a system priority class and cannot be deleted";
  k.columns = {{"Value", "integer", "", "Value of the priority class.", 0},
               {"Global-Default", "boolean", "", "Whether this is the global default.", 0},
               {"Age", "string", "", "CreationTimestamp of the object.", 0},
               {"PreemptionPolicy", "string", "", "Preemption policy of the class.", 0}};
  k.row_cells = [](const Json& pc, absl::Time now) {
    return std::vector<Json>{pc.value("value", Json()), pc.value("globalDefault", false),
                             core_v1::HumanAge(MemberObject(pc, "metadata")
                                                   .value("creationTimestamp", Json()), now),
                             pc.value("preemptionPolicy", Json())};
  };
  return k;
}

void RegisterKinds(Scheme& scheme) { scheme.Add(PriorityClassKind()); }

}  // namespace batchd::api::scheduling_v1
