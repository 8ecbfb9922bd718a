// ValidateJobSet: upstream's ValidateCreate webhook (messages as upstream
// words them, with the field path each one is about), the CRD's structural
// rules (required fields, enums, minimums, unique list keys) and CEL rules,
// each replicated job template validated as a batch/v1 JobTemplateSpec, and
// the refusals of ValidateUnsupported.
#include <cstdint>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "api/batch/v1/batch_v1.h"
#include "api/jobset/v1alpha2/internal/validation.h"
#include "api/jobset/v1alpha2/jobset_view.h"
#include "api/jobset/v1alpha2/jobset_v1alpha2.h"
#include "api/json_access.h"
#include "api/validation/names.h"
#include "api/validation/object_meta.h"
#include "common/string_view.h"

namespace batchd::api::jobset_v1alpha2 {
namespace internal {

FieldError InBodyMinimum(const Path& p, const Json& v, int64_t min) {
  return Invalid(p, v, absl::StrCat(p.String(), " in body should be greater than or equal to ",
                                    min));
}

void RequireString(const Json& obj, std::string_view key, const Path& p, ErrorList& errs) {
  if (StringMember(obj, key).empty()) errs.push_back(Required(p.Child(key)));
}

void CheckEnum(const Json& obj, std::string_view key, const std::vector<std::string>& allowed,
               bool required, const Path& p, ErrorList& errs) {
  std::string_view v = StringMember(obj, key);
  if (v.empty()) {
    if (required) errs.push_back(Required(p.Child(key)));
    return;
  }
  for (const std::string& a : allowed) {
    if (v == a) return;
  }
  errs.push_back(NotSupported(p.Child(key), std::string(v), allowed));
}

void CheckUniqueStrings(const Json& list, const Path& p, ErrorList& errs) {
  if (!list.is_array()) return;
  std::set<std::string> seen;
  for (size_t i = 0; i < list.size(); ++i) {
    const Json& v = list[i];
    if (!v.is_string()) continue;
    if (!seen.insert(v.get<std::string>()).second) errs.push_back(Duplicate(p.Index(i), v));
  }
}

}  // namespace internal

namespace {

using internal::CheckEnum;
using internal::CheckUniqueStrings;
using internal::InBodyMinimum;
using internal::RequireString;

constexpr char kDns1035MaxLength[] = "must be no more than 63 characters";
constexpr char kGroupNameTooLong[] =
    ".spec.replicatedJob[].groupName is too long, must be less than 63 characters";
constexpr char kJobNameTooLong[] =
    "JobSet name is too long, job names generated for this JobSet will exceed 63 characters";
constexpr char kPodNameTooLong[] =
    "JobSet name is too long, pod names generated for this JobSet will exceed 63 characters";
constexpr char kSubdomainTooLong[] =
    ".spec.network.subdomain is too long, must be less than 63 characters";
constexpr size_t kMaxManagedByLength = 63;
constexpr size_t kMaxDependsOn = 1;  // The API allows 5 items; one is supported (as upstream).

// DNS-1035 problems of `value`, the length one replaced by `too_long`.
void Dns1035(std::string_view value, const char* too_long, const Path& p, const Json& shown,
             ErrorList& errs) {
  for (std::string m : validation::IsDNS1035Label(value)) {
    if (m.find(kDns1035MaxLength) != std::string::npos) m = too_long;
    errs.push_back(Invalid(p, shown, m));
  }
}

// What the checks of one replicated job need to know about the JobSet.
struct JobSetNames {
  std::string jobset;              // metadata.name (generated already under generateName).
  std::vector<std::string> rjobs;  // Replicated job names, in spec order.
  std::vector<std::string> claims;  // volumeClaimPolicies template names.
  bool Has(std::string_view name) const {
    for (const std::string& r : rjobs) {
      if (r == name) return true;
    }
    return false;
  }
};

void ValidateDependsOn(const Json& rjob, size_t index, const std::vector<std::string>& earlier,
                       const Path& p, ErrorList& errs) {
  const Json* deps = FindMember(rjob, "dependsOn");
  if (deps == nullptr || deps->is_null()) return;
  const Path dp = p.Child("dependsOn");
  if (index == 0) {
    errs.push_back(Forbidden(dp, "DependsOn can't be set for the first ReplicatedJob"));
  }
  if (deps->size() > kMaxDependsOn) {
    errs.push_back(TooMany(dp, deps->size(), kMaxDependsOn));
  }
  const std::string rjob_name(StringMember(rjob, "name"));
  for (size_t j = 0; j < deps->size(); ++j) {
    const Json& dep = (*deps)[j];
    const Path ep = dp.Index(j);
    RequireString(dep, "name", ep, errs);
    CheckEnum(dep, "status", {kDependencyReady, kDependencyComplete}, true, ep, errs);
    const std::string name(StringMember(dep, "name"));
    bool found = false;
    for (const std::string& e : earlier) found |= e == name;
    if (!name.empty() && !found) {
      errs.push_back(Invalid(ep.Child("name"), name,
                             absl::StrCat("replicatedJob: ", rjob_name,
                                          " cannot depend on replicatedJob: ", name)));
    }
  }
}

// The generated Job and pod names of the largest indexes are DNS-1035 labels.
void ValidateGeneratedNames(const Json& rjob, const JobSetNames& names, const Path& p,
                            ErrorList& errs) {
  const std::string_view rjob_name = StringMember(rjob, "name");
  const int64_t replicas = IntMember(rjob, "replicas", 1);
  const std::string longest_job = ChildJobName(names.jobset, rjob_name, replicas - 1);
  Dns1035(longest_job, kJobNameTooLong, p.Child("name"), longest_job, errs);
  const Json& job_spec = MemberAt(rjob, {"template", "spec"});
  const Json& completions = Member(job_spec, "completions");
  if (StringMember(job_spec, "completionMode") == "Indexed" && completions.is_number_integer()) {
    // The pod name gets a 5-character random suffix.
    const std::string longest_pod =
        absl::StrCat(longest_job, "-", completions.get<int64_t>() - 1, "-abcde");
    Dns1035(longest_pod, kPodNameTooLong, p.Child("name"), longest_job, errs);
  }
}

// The template as a batch/v1 JobTemplateSpec, checked on a copy with the Job
// defaults the child Jobs will get (the stored template keeps what was
// written).
ErrorList ValidateTemplate(const Json& rjob, const JobSetNames& names, const Path& p) {
  const Json* tmpl = FindMember(rjob, "template");
  if (tmpl == nullptr || !tmpl->is_object()) return {Required(p.Child("template"))};
  Json copy = *tmpl;
  batch_v1::SetDefaultsJobSpec(copy["spec"]);
  // The claim volumes the child Jobs will get (volumeClaimPolicies), so that
  // mounts of them are not mounts of nothing.
  Json& pod_spec = copy["spec"]["template"]["spec"];
  for (const std::string& claim : names.claims) {
    if (!pod_spec.is_object()) break;
    // Bad names and conflicts are the claim policies' validation's to report.
    if (!validation::IsDNS1123Label(claim).empty()) continue;
    bool declared = false, mounted = false;
    for (const Json& v : MemberArray(pod_spec, "volumes")) {
      declared = declared || StringMember(v, "name") == claim;
    }
    for (const char* list : {"initContainers", "containers"}) {
      for (const Json& c : MemberArray(pod_spec, list)) {
        for (const Json& m : MemberArray(c, "volumeMounts")) {
          mounted = mounted || StringMember(m, "name") == claim;
        }
      }
    }
    if (declared || !mounted) continue;
    pod_spec["volumes"].push_back(
        {{"name", claim},
         {"persistentVolumeClaim", {{"claimName", ClaimName(claim, names.jobset)}}}});
  }
  return batch_v1::ValidateJobTemplateSpec(copy, p.Child("template"));
}

void ValidateReplicatedJob(const Json& rjob, size_t index, const JobSetNames& names,
                           ErrorList& errs) {
  const Path p = Path("spec").Child("replicatedJobs").Index(index);
  RequireString(rjob, "name", p, errs);
  const Json& replicas = Member(rjob, "replicas");
  if (replicas.is_number_integer() && replicas.get<int64_t>() < 0) {
    errs.push_back(InBodyMinimum(p.Child("replicas"), replicas, 0));
  }
  const int64_t parallelism = IntMember(MemberAt(rjob, {"template", "spec"}), "parallelism", 1);
  if (parallelism * IntMember(rjob, "replicas", 1) > std::numeric_limits<int32_t>::max()) {
    errs.push_back(Invalid(p.Child("replicas"), replicas,
                           absl::StrCat("the product of replicas and parallelism must not "
                                        "exceed ", std::numeric_limits<int32_t>::max(),
                                        " for replicatedJob '", Sv(StringMember(rjob, "name")),
                                        "'")));
  }
  const std::string_view group = StringMember(rjob, "groupName");
  Dns1035(group, kGroupNameTooLong, p.Child("groupName"), std::string(group), errs);
  ValidateGeneratedNames(rjob, names, p, errs);
  const std::vector<std::string> earlier(names.rjobs.begin(), names.rjobs.begin() + index);
  ValidateDependsOn(rjob, index, earlier, p, errs);
  AppendErrors(errs, ValidateTemplate(rjob, names, p));
}

void ValidateReplicatedJobs(const Json& spec, const JobSetNames& names, ErrorList& errs) {
  const Json& rjobs = MemberArray(spec, "replicatedJobs");
  std::set<std::string> seen;
  for (size_t i = 0; i < rjobs.size(); ++i) {
    const std::string name(StringMember(rjobs[i], "name"));
    if (!name.empty() && !seen.insert(name).second) {
      errs.push_back(Duplicate(Path("spec").Child("replicatedJobs").Index(i).Child("name"), name));
    }
    ValidateReplicatedJob(rjobs[i], i, names, errs);
  }
}

void ValidateNetwork(const Json& spec, ErrorList& errs) {
  const std::string subdomain(StringMember(MemberObject(spec, "network"), "subdomain"));
  if (subdomain.empty()) return;
  const Path p = Path("spec").Child("network").Child("subdomain");
  for (const std::string& m : validation::IsDNS1123Subdomain(subdomain)) {
    errs.push_back(Invalid(p, subdomain, m));
  }
  // The subdomain also names the headless Service: a DNS-1035 label.
  Dns1035(subdomain, kSubdomainTooLong, p, subdomain, errs);
}

void ValidateManagedBy(const Json& spec, ErrorList& errs) {
  const Json* v = FindMember(spec, "managedBy");
  if (v == nullptr || !v->is_string()) return;
  const Path p = Path("spec").Child("managedBy");
  const std::string manager = v->get<std::string>();
  AppendErrors(errs, validation::ValidateDomainPrefixedPath(p, manager));
  if (manager.size() > kMaxManagedByLength) {
    errs.push_back(TooLong(p, manager, kMaxManagedByLength));
  }
}

void ValidateSuccessPolicy(const Json& spec, const JobSetNames& names, ErrorList& errs) {
  const Json* policy = FindMember(spec, "successPolicy");
  if (policy == nullptr || !policy->is_object()) return;
  const Path p = Path("spec").Child("successPolicy");
  CheckEnum(*policy, "operator", {kOperatorAll, kOperatorAny}, true, p, errs);
  const Json& targets = MemberArray(*policy, "targetReplicatedJobs");
  for (size_t i = 0; i < targets.size(); ++i) {
    const std::string name(AsString(targets[i]));
    if (names.Has(name)) continue;
    errs.push_back(Invalid(p.Child("targetReplicatedJobs").Index(i), name,
                           absl::StrCat("invalid replicatedJob name '", name,
                                        "' does not appear in .spec.ReplicatedJobs")));
  }
}

void ValidateStartupPolicy(const Json& spec, ErrorList& errs) {
  const Json* policy = FindMember(spec, "startupPolicy");
  if (policy == nullptr || !policy->is_object()) return;
  CheckEnum(*policy, "startupPolicyOrder", {kAnyOrder, kInOrder}, true,
            Path("spec").Child("startupPolicy"), errs);
  if (StringMember(*policy, "startupPolicyOrder") != kInOrder) return;
  for (const Json& rjob : MemberArray(spec, "replicatedJobs")) {
    const Json* deps = FindMember(rjob, "dependsOn");
    if (deps != nullptr && !deps->is_null()) {
      // The CRD's CEL rule on spec.
      errs.push_back(Invalid(Path("spec"), "object",
                             "StartupPolicy and DependsOn APIs are mutually exclusive"));
      return;
    }
  }
}

void ValidateTtl(const Json& spec, ErrorList& errs) {
  const Json& ttl = Member(spec, "ttlSecondsAfterFinished");
  if (ttl.is_number_integer() && ttl.get<int64_t>() < 0) {
    errs.push_back(InBodyMinimum(Path("spec").Child("ttlSecondsAfterFinished"), ttl, 0));
  }
}

// InPlaceRestart restarts every pod of the JobSet together: each replicated
// job runs all its pods at once (upstream's controller requires the same).
void ValidateInPlaceRestart(const Json& spec, ErrorList& errs) {
  if (StringMember(MemberObject(spec, "failurePolicy"), "restartStrategy") != kInPlaceRestart) {
    return;
  }
  const Json& rjobs = MemberArray(spec, "replicatedJobs");
  for (size_t i = 0; i < rjobs.size(); ++i) {
    const Json& job_spec = MemberAt(rjobs[i], {"template", "spec"});
    const Json& completions = Member(job_spec, "completions");
    const Json& parallelism = Member(job_spec, "parallelism");
    if (completions.is_number_integer() && parallelism.is_number_integer() &&
        completions == parallelism) {
      continue;
    }
    errs.push_back(Invalid(
        Path("spec").Child("replicatedJobs").Index(i).Child("template").Child("spec").Child(
            "completions"),
        completions,
        "must be set and equal to parallelism with the InPlaceRestart restart strategy (all "
        "pods of the JobSet run, and restart, together)"));
  }
}

// Exclusive placement annotations, on the JobSet (`annotations`) or a
// replicated job template: the topology is a node label key (it becomes
// the pod affinity's topologyKey); the node-selector strategy only
// qualifies an exclusive-topology annotation at the same level (upstream
// ignores it elsewhere; batchd refuses what it would ignore).
void ValidatePlacementAnnotations(const Json& annotations, const Path& p, ErrorList& errs) {
  if (!annotations.is_object()) return;
  if (const Json* topology = FindMember(annotations, kExclusiveKey)) {
    const std::string value = topology->is_string() ? topology->get<std::string>() : "";
    for (const std::string& msg : validation::IsQualifiedName(value)) {
      errs.push_back(Invalid(p.Key(kExclusiveKey), value,
                             absl::StrCat("must be a node label key: ", msg)));
    }
  } else if (annotations.contains(kNodeSelectorStrategyKey)) {
    errs.push_back(Invalid(p.Key(kNodeSelectorStrategyKey),
                           std::string(StringMember(annotations, kNodeSelectorStrategyKey)),
                           absl::StrCat("has no effect without the ", kExclusiveKey,
                                        " annotation beside it")));
  }
}

void ValidateExclusivePlacement(const Json& js, ErrorList& errs) {
  ValidatePlacementAnnotations(MemberAt(js, {"metadata", "annotations"}),
                               Path("metadata").Child("annotations"), errs);
  const Json& rjobs = MemberAt(js, {"spec", "replicatedJobs"});
  for (size_t i = 0; rjobs.is_array() && i < rjobs.size(); ++i) {
    ValidatePlacementAnnotations(
        MemberAt(rjobs[i], {"template", "metadata", "annotations"}),
        Path("spec").Child("replicatedJobs").Index(i).Child("template").Child("metadata").Child(
            "annotations"),
        errs);
  }
}

}  // namespace

ErrorList ValidateJobSet(const Json& js) {
  ErrorList errs;
  const Json& spec = MemberObject(js, "spec");
  JobSetNames names{std::string(StringMember(MemberObject(js, "metadata"), "name")), {}};
  for (const Json& rjob : MemberArray(spec, "replicatedJobs")) {
    names.rjobs.emplace_back(StringMember(rjob, "name"));
  }
  for (const Json& policy : MemberArray(spec, "volumeClaimPolicies")) {
    for (const Json& t : MemberArray(policy, "templates")) {
      const std::string_view claim = StringMember(MemberObject(t, "metadata"), "name");
      if (!claim.empty()) names.claims.emplace_back(claim);
    }
  }
  ValidateNetwork(spec, errs);
  ValidateManagedBy(spec, errs);
  ValidateReplicatedJobs(spec, names, errs);
  ValidateSuccessPolicy(spec, names, errs);
  internal::ValidateFailurePolicy(spec, names.rjobs, errs);
  ValidateStartupPolicy(spec, errs);
  internal::ValidateCoordinator(js, errs);
  ValidateTtl(spec, errs);
  ValidateInPlaceRestart(spec, errs);
  internal::ValidateVolumeClaimPolicies(js, errs);
  ValidateExclusivePlacement(js, errs);
  AppendErrors(errs, ValidateUnsupported(js));
  return errs;
}

}  // namespace batchd::api::jobset_v1alpha2
