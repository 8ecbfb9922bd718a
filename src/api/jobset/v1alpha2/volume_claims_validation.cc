// spec.volumeClaimPolicies: upstream's webhook rules (unique claim names —
// DNS-1123 labels here, as they also name pod volumes — "<claim>-<jobset>" at most 63 characters, a volumeMount of that name
// in some container and no volume of that name in any template), the CRD's
// (at most 50 policies, no namespace on a template), and batchd's: a claim
// is a node-local directory, so the template fields that bind a claim to an
// existing volume or fill it from a source are refused.
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "api/jobset/v1alpha2/internal/validation.h"
#include "api/jobset/v1alpha2/jobset_v1alpha2.h"
#include "api/json_access.h"
#include "api/validation/names.h"
#include "common/string_view.h"

namespace batchd::api::jobset_v1alpha2::internal {
namespace {

constexpr size_t kMaxPolicies = 50;
constexpr size_t kMaxClaimName = 63;

bool MountsVolume(const Json& pod_spec, std::string_view name) {
  for (const char* list : {"initContainers", "containers"}) {
    for (const Json& c : MemberArray(pod_spec, list)) {
      for (const Json& m : MemberArray(c, "volumeMounts")) {
        if (StringMember(m, "name") == name) return true;
      }
    }
  }
  return false;
}

// Each claim is mounted somewhere and collides with no template volume.
void CheckReplicatedJobs(const Json& spec, std::string_view claim, ErrorList& errs) {
  const Json& rjobs = MemberArray(spec, "replicatedJobs");
  bool mounted = false;
  for (size_t i = 0; i < rjobs.size(); ++i) {
    const Json& pod_spec = MemberAt(rjobs[i], {"template", "spec", "template", "spec"});
    const Json& volumes = MemberArray(pod_spec, "volumes");
    for (size_t v = 0; v < volumes.size(); ++v) {
      if (StringMember(volumes[v], "name") != claim) continue;
      errs.push_back(Invalid(Path("spec").Child("replicatedJobs").Index(i).Child("template").Child(
                                 "spec").Child("template").Child("spec").Child("volumes").Index(v)
                                 .Child("name"),
                             std::string(claim),
                             absl::StrCat("volume name conflicts with VolumeClaimPolicy template "
                                          "name: ",
                                          Sv(claim))));
    }
    mounted = mounted || MountsVolume(pod_spec, claim);
  }
  if (!mounted) {
    errs.push_back(Invalid(Path("spec").Child("replicatedJobs"), "array",
                           absl::StrCat("replicatedJob containers don't have a matching "
                                        "volumeMount: ",
                                        Sv(claim), " from VolumeClaimPolicies")));
  }
}

// What a node-local directory cannot honour.
void CheckTemplateSpec(const Json& tmpl_spec, const Path& p, ErrorList& errs) {
  for (const char* f : {"dataSource", "dataSourceRef", "selector", "volumeName"}) {
    const Json* v = FindMember(tmpl_spec, f);
    if (v == nullptr || v->is_null()) continue;
    errs.push_back(Forbidden(p.Child(f), absl::StrCat(f, " is not supported by batchd: a claim is "
                                                         "a new, empty node-local directory")));
  }
  const std::string_view mode = StringMember(tmpl_spec, "volumeMode");
  if (!mode.empty() && mode != "Filesystem") {
    errs.push_back(NotSupported(p.Child("volumeMode"), std::string(mode), {"Filesystem"}));
  }
}

}  // namespace

void ValidateVolumeClaimPolicies(const Json& js, ErrorList& errs) {
  const Json& spec = MemberObject(js, "spec");
  const Json& policies = MemberArray(spec, "volumeClaimPolicies");
  const Path pp = Path("spec").Child("volumeClaimPolicies");
  if (policies.size() > kMaxPolicies) errs.push_back(TooMany(pp, policies.size(), kMaxPolicies));
  const std::string jobset(StringMember(MemberObject(js, "metadata"), "name"));
  std::set<std::string> names;
  for (size_t i = 0; i < policies.size(); ++i) {
    const Path p = pp.Index(i);
    CheckEnum(MemberObject(policies[i], "retentionPolicy"), "whenDeleted",
              {kRetentionDelete, kRetentionRetain}, false, p.Child("retentionPolicy"), errs);
    const Json& templates = MemberArray(policies[i], "templates");
    for (size_t t = 0; t < templates.size(); ++t) {
      const Path tp = p.Child("templates").Index(t);
      const Json& meta = MemberObject(templates[t], "metadata");
      if (!StringMember(meta, "namespace").empty()) {
        errs.push_back(Invalid(p, "object",
                               "namespace cannot be set for VolumeClaimPolicies templates"));
      }
      const std::string name(StringMember(meta, "name"));
      const Path np = tp.Child("metadata").Child("name");
      if (name.empty()) {
        errs.push_back(Required(np));
        continue;
      }
      if (!names.insert(name).second) {
        errs.push_back(Invalid(np, name, "names must be unique for VolumeClaimPolicies template"));
      }
      // Upstream checks a DNS-1123 subdomain; the name also becomes the pod
      // volume's, which must be a DNS-1123 label, so batchd checks that.
      for (const std::string& m : validation::IsDNS1123Label(name)) {
        errs.push_back(Invalid(np, name, m));
      }
      if (name.size() + 1 + jobset.size() > kMaxClaimName) {
        errs.push_back(Invalid(np, name, "VolumeClaimPolicies template name is too long"));
      }
      CheckReplicatedJobs(spec, name, errs);
      CheckTemplateSpec(MemberObject(templates[t], "spec"), tp.Child("spec"), errs);
    }
  }
}

}  // namespace batchd::api::jobset_v1alpha2::internal
