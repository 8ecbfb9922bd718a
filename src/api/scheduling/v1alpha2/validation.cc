// Defaulting and validation of Workload and PodGroup, with Kubernetes field
// paths: at most 8 uniquely named (DNS label) templates, a scheduling policy
// that is exactly one of basic and gang, gang.minCount >= 1, disruptionMode
// Pod|PodGroup (PodGroup only with gang), and immutable specs. Fields batchd
// does not implement are Forbidden (accept only what is honoured).
#include <set>
#include <string>

#include "api/json_access.h"
#include "api/scheduling/v1alpha2/scheduling_v1alpha2.h"
#include "api/validation/names.h"
#include "api/validation/object_meta.h"

namespace batchd::api::scheduling_v1alpha2 {
namespace {

constexpr char kNotSupported[] = "is not supported by batchd";

void ValidateDnsLabel(const Json& obj, std::string_view field, const Path& p, ErrorList& errs) {
  const Json* v = FindMember(obj, field);
  if (v == nullptr || !v->is_string() || v->get<std::string>().empty()) {
    errs.push_back(Required(p.Child(field)));
    return;
  }
  for (const auto& m : validation::IsDNS1123Label(v->get<std::string>())) {
    errs.push_back(Invalid(p.Child(field), *v, m));
  }
}

// Returns whether the policy is basic (for the disruptionMode rule).
bool ValidatePolicy(const Json& policy, const Path& p, ErrorList& errs) {
  const Json* basic = FindMember(policy, "basic");
  const Json* gang = FindMember(policy, "gang");
  bool has_basic = basic != nullptr && !basic->is_null();
  bool has_gang = gang != nullptr && !gang->is_null();
  if (has_basic && has_gang) {
    errs.push_back(Invalid(p, policy, "exactly one of `basic`, `gang` is required, but multiple "
                                      "fields are set"));
  } else if (!has_basic && !has_gang) {
    errs.push_back(Invalid(p, policy, "exactly one of `basic`, `gang` is required"));
  }
  if (has_gang) {
    const Json* min = FindMember(*gang, "minCount");
    if (min == nullptr || !min->is_number_integer()) {
      errs.push_back(Required(p.Child("gang").Child("minCount")));
    } else if (min->get<int64_t>() < 1) {
      errs.push_back(Invalid(p.Child("gang").Child("minCount"), *min,
                             "must be greater than or equal to 1"));
    }
  }
  return has_basic && !has_gang;
}

// The options a template and a PodGroup spec share: refuse what batchd does
// not honour, check disruptionMode.
void ValidateGroupOptions(const Json& obj, bool basic, const Path& p, ErrorList& errs) {
  for (const char* f : {"schedulingConstraints", "resourceClaims", "priorityClassName",
                        "priority"}) {
    const Json* v = FindMember(obj, f);
    if (v != nullptr && !v->is_null() && !(v->is_array() && v->empty())) {
      errs.push_back(Forbidden(p.Child(f), kNotSupported));
    }
  }
  std::string mode(StringMember(obj, "disruptionMode"));
  if (mode.empty()) return;
  if (mode != kDisruptionModePod && mode != kDisruptionModePodGroup) {
    errs.push_back(NotSupported(p.Child("disruptionMode"), mode,
                                {kDisruptionModePod, kDisruptionModePodGroup}));
  } else if (mode == kDisruptionModePodGroup && basic) {
    errs.push_back(Invalid(p.Child("disruptionMode"), mode,
                           "PodGroup is not allowed for the basic scheduling policy"));
  }
}

void ValidateControllerRef(const Json& spec, const Path& p, ErrorList& errs) {
  const Json* ref = FindMember(spec, "controllerRef");
  if (ref == nullptr || ref->is_null()) return;
  Path rp = p.Child("controllerRef");
  for (const char* f : {"kind", "name"}) {
    if (StringMember(*ref, f).empty()) errs.push_back(Required(rp.Child(f)));
  }
  std::string group(StringMember(*ref, "apiGroup"));
  if (!group.empty()) {
    for (const auto& m : validation::IsDNS1123Subdomain(group)) {
      errs.push_back(Invalid(rp.Child("apiGroup"), group, m));
    }
  }
}

ErrorList ValidateMeta(const Json& obj) {
  return validation::ValidateObjectMeta(MemberObject(obj, "metadata"), true,
                                        validation::NameIsDNSSubdomain, Path("metadata"));
}

ErrorList ValidateMetaUpdate(const Json& obj, const Json& old) {
  return validation::ValidateObjectMetaUpdate(MemberObject(obj, "metadata"),
                                              MemberObject(old, "metadata"), Path("metadata"));
}

}  // namespace

GroupPolicy ParseSchedulingPolicy(const Json& policy) {
  GroupPolicy out;
  const Json* gang = FindMember(policy, "gang");
  if (gang != nullptr && gang->is_object()) {
    out.gang = true;
    out.min_count = static_cast<int32_t>(IntMember(*gang, "minCount", 1));
  }
  return out;
}

GroupPolicy ParseGroupPolicy(const Json& template_or_spec) {
  GroupPolicy out = ParseSchedulingPolicy(Member(template_or_spec, "schedulingPolicy"));
  out.disrupt_whole =
      out.gang && StringMember(template_or_spec, "disruptionMode") == kDisruptionModePodGroup;
  return out;
}

GroupPolicy PodGroupPolicy(const Json& pod_group) {
  return ParseGroupPolicy(MemberObject(pod_group, "spec"));
}

std::optional<GroupPolicy> WorkloadTemplatePolicy(const Json& workload, std::string_view name) {
  for (const Json& t : MemberArray(MemberObject(workload, "spec"), "podGroupTemplates")) {
    if (StringMember(t, "name") == name) return ParseGroupPolicy(t);
  }
  return std::nullopt;
}

void SetDefaultsWorkload(Json&) {}

void SetDefaultsPodGroup(Json& pg) {
  Json& spec = MutableObject(pg, "spec");
  if (!spec.contains("disruptionMode") || spec["disruptionMode"].is_null()) {
    spec["disruptionMode"] = kDisruptionModePod;
  }
}

ErrorList ValidateWorkload(const Json& wl) {
  ErrorList errs = ValidateMeta(wl);
  const Json& spec = MemberObject(wl, "spec");
  Path sp("spec");
  ValidateControllerRef(spec, sp, errs);
  const Json& templates = MemberArray(spec, "podGroupTemplates");
  Path tp = sp.Child("podGroupTemplates");
  if (templates.empty()) errs.push_back(Required(tp));
  if (templates.size() > kMaxPodGroupTemplates) {
    errs.push_back(TooMany(tp, templates.size(), kMaxPodGroupTemplates));
  }
  std::set<std::string> names;
  for (size_t i = 0; i < templates.size(); ++i) {
    const Json& t = templates[i];
    Path ip = tp.Index(i);
    ValidateDnsLabel(t, "name", ip, errs);
    std::string name(StringMember(t, "name"));
    if (!name.empty() && !names.insert(name).second) {
      errs.push_back(Duplicate(ip.Child("name"), name));
    }
    bool basic = ValidatePolicy(Member(t, "schedulingPolicy"), ip.Child("schedulingPolicy"), errs);
    ValidateGroupOptions(t, basic, ip, errs);
  }
  return errs;
}

ErrorList ValidateWorkloadUpdate(const Json& wl, const Json& old) {
  ErrorList errs = ValidateWorkload(wl);
  AppendErrors(errs, ValidateMetaUpdate(wl, old));
  const Json& spec = MemberObject(wl, "spec");
  const Json& old_spec = MemberObject(old, "spec");
  for (const char* f : {"controllerRef", "podGroupTemplates"}) {
    AppendErrors(errs, validation::ValidateImmutableField(spec.value(f, Json()),
                                                          old_spec.value(f, Json()),
                                                          Path("spec").Child(f)));
  }
  return errs;
}

ErrorList ValidatePodGroup(const Json& pg) {
  ErrorList errs = ValidateMeta(pg);
  const Json& spec = MemberObject(pg, "spec");
  Path sp("spec");
  const Json* ref = FindMember(spec, "podGroupTemplateRef");
  if (ref != nullptr && !ref->is_null()) {
    Path rp = sp.Child("podGroupTemplateRef");
    const Json* w = FindMember(*ref, "workload");
    if (w == nullptr || w->is_null()) {
      errs.push_back(Invalid(rp, *ref, "exactly one of `workload` is required"));
    } else {
      ValidateDnsLabel(*w, "workloadName", rp.Child("workload"), errs);
      ValidateDnsLabel(*w, "podGroupTemplateName", rp.Child("workload"), errs);
    }
  }
  bool basic = ValidatePolicy(Member(spec, "schedulingPolicy"), sp.Child("schedulingPolicy"), errs);
  ValidateGroupOptions(spec, basic, sp, errs);
  return errs;
}

ErrorList ValidatePodGroupUpdate(const Json& pg, const Json& old) {
  ErrorList errs = ValidatePodGroup(pg);
  AppendErrors(errs, ValidateMetaUpdate(pg, old));
  const Json& spec = MemberObject(pg, "spec");
  const Json& old_spec = MemberObject(old, "spec");
  for (const char* f : {"podGroupTemplateRef", "schedulingPolicy", "disruptionMode"}) {
    AppendErrors(errs, validation::ValidateImmutableField(spec.value(f, Json()),
                                                          old_spec.value(f, Json()),
                                                          Path("spec").Child(f)));
  }
  return errs;
}

ErrorList ValidatePodGroupStatusUpdate(const Json& pg, const Json& old) {
  ErrorList errs = ValidateMetaUpdate(pg, old);
  const Json& conds = MemberArray(MemberObject(pg, "status"), "conditions");
  Path cp = Path("status").Child("conditions");
  std::set<std::string> types;
  for (size_t i = 0; i < conds.size(); ++i) {
    std::string type(StringMember(conds[i], "type"));
    if (type.empty()) {
      errs.push_back(Required(cp.Index(i).Child("type")));
    } else if (!types.insert(type).second) {
      errs.push_back(Duplicate(cp.Index(i).Child("type"), type));
    }
    std::string status(StringMember(conds[i], "status"));
    if (status != "True" && status != "False" && status != "Unknown") {
      errs.push_back(NotSupported(cp.Index(i).Child("status"), status,
                                  {"False", "True", "Unknown"}));
    }
  }
  return errs;
}

}  // namespace batchd::api::scheduling_v1alpha2
