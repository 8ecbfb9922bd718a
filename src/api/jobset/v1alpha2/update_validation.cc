// ValidateJobSetUpdate (upstream's ValidateUpdate webhook and the CRD's
// `self == oldSelf` rules) and ValidateJobSetStatusUpdate.
#include <set>
#include <string>

#include "api/jobset/v1alpha2/jobset_v1alpha2.h"
#include "api/json_access.h"
#include "api/validation/object_meta.h"

namespace batchd::api::jobset_v1alpha2 {
namespace {

bool Present(const Json& obj, std::string_view key) {
  const Json* v = FindMember(obj, key);
  return v != nullptr && !v->is_null();
}

// Copies old[key] into now[key] (removing it when old has none).
void KeepOld(Json& now, const Json& old, std::string_view key) {
  if (!now.is_object()) return;
  if (const Json* v = FindMember(old, key); v != nullptr) {
    now[std::string(key)] = *v;
  } else {
    now.erase(std::string(key));
  }
}

// While the JobSet is suspended or being suspended, the pod templates'
// labels, annotations, nodeSelector, tolerations and schedulingGates may
// change (for Kueue): the returned replicatedJobs carry the old values of
// those fields, so only the rest is compared.
Json MaskSuspendedTemplateFields(const Json& rjobs, const Json& old_rjobs) {
  Json masked = rjobs;
  if (!masked.is_array() || !old_rjobs.is_array()) return masked;
  for (Json& rjob : masked) {
    const Json* old = nullptr;
    for (const Json& o : old_rjobs) {
      if (StringMember(o, "name") == StringMember(rjob, "name")) old = &o;
    }
    Json* pod_tmpl = FindMutableMemberAt(rjob, {"template", "spec", "template"});
    if (old == nullptr || pod_tmpl == nullptr || !pod_tmpl->is_object()) continue;
    const Json& old_tmpl = MemberAt(*old, {"template", "spec", "template"});
    Json& meta = (*pod_tmpl)["metadata"];
    if (meta.is_null()) meta = Json::object();
    KeepOld(meta, MemberObject(old_tmpl, "metadata"), "labels");
    KeepOld(meta, MemberObject(old_tmpl, "metadata"), "annotations");
    if (meta.empty() && !HasMember(old_tmpl, "metadata")) pod_tmpl->erase("metadata");
    Json& spec = (*pod_tmpl)["spec"];
    if (spec.is_null()) spec = Json::object();
    for (const char* f : {"nodeSelector", "tolerations", "schedulingGates"}) {
      KeepOld(spec, MemberObject(old_tmpl, "spec"), f);
    }
  }
  return masked;
}

void CheckNonNegative(const Json& obj, std::string_view key, const Path& p, ErrorList& errs) {
  const Json& v = Member(obj, key);
  if (v.is_number_integer() && v.get<int64_t>() < 0) {
    errs.push_back(Invalid(p.Child(key), v, "must be greater than or equal to 0"));
  }
}

void ValidateConditions(const Json& conditions, const Path& p, ErrorList& errs) {
  if (!conditions.is_array()) return;
  std::set<std::string> types;
  for (size_t i = 0; i < conditions.size(); ++i) {
    const Json& c = conditions[i];
    const Path cp = p.Index(i);
    const std::string type(StringMember(c, "type"));
    if (type.empty()) {
      errs.push_back(Required(cp.Child("type")));
    } else if (!types.insert(type).second) {
      errs.push_back(Duplicate(cp.Child("type"), type));
    }
    const std::string status(StringMember(c, "status"));
    if (status != "True" && status != "False" && status != "Unknown") {
      errs.push_back(NotSupported(cp.Child("status"), status, {"True", "False", "Unknown"}));
    }
  }
}

}  // namespace

ErrorList ValidateJobSetUpdate(const Json& js, const Json& old) {
  ErrorList errs = ValidateJobSet(js);
  const Json& spec = MemberObject(js, "spec");
  const Json& old_spec = MemberObject(old, "spec");
  const Path sp("spec");
  // The CRD's transition rules compare a field that both versions have.
  for (const char* f : {"network", "successPolicy", "failurePolicy", "startupPolicy",
                        "volumeClaimPolicies"}) {
    if (Present(spec, f) && Present(old_spec, f) && Member(spec, f) != Member(old_spec, f)) {
      errs.push_back(Invalid(sp.Child(f), "object", "Value is immutable"));
    }
  }
  const bool suspended = BoolMember(spec, "suspend") || BoolMember(old_spec, "suspend");
  const Json& rjobs = Member(spec, "replicatedJobs");
  const Json& old_rjobs = Member(old_spec, "replicatedJobs");
  AppendErrors(errs, validation::ValidateImmutableField(
                         suspended ? MaskSuspendedTemplateFields(rjobs, old_rjobs) : rjobs,
                         old_rjobs, sp.Child("replicatedJobs")));
  AppendErrors(errs, validation::ValidateImmutableField(Member(spec, "managedBy"),
                                                        Member(old_spec, "managedBy"),
                                                        sp.Child("managedBy")));
  return errs;
}

ErrorList ValidateJobSetStatusUpdate(const Json& js, const Json& old) {
  ErrorList errs;
  const Json& status = MemberObject(js, "status");
  const Path p("status");
  CheckNonNegative(status, "restarts", p, errs);
  CheckNonNegative(status, "restartsCountTowardsMax", p, errs);
  const std::string terminal(StringMember(status, "terminalState"));
  if (!terminal.empty() && terminal != kTerminalCompleted && terminal != kTerminalFailed) {
    errs.push_back(NotSupported(p.Child("terminalState"), terminal,
                                {kTerminalCompleted, kTerminalFailed}));
  }
  const Json& rjobs = MemberArray(status, "replicatedJobsStatus");
  std::set<std::string> names;
  for (size_t i = 0; i < rjobs.size(); ++i) {
    const Path rp = p.Child("replicatedJobsStatus").Index(i);
    const std::string name(StringMember(rjobs[i], "name"));
    if (name.empty()) {
      errs.push_back(Required(rp.Child("name")));
    } else if (!names.insert(name).second) {
      errs.push_back(Duplicate(rp.Child("name"), name));
    }
    for (const char* f : {"ready", "succeeded", "failed", "active", "suspended"}) {
      CheckNonNegative(rjobs[i], f, rp, errs);
    }
  }
  ValidateConditions(Member(status, "conditions"), p.Child("conditions"), errs);
  return errs;
}

}  // namespace batchd::api::jobset_v1alpha2
