#include "registry/pod_security_admission.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/core/v1/pod_security.h"
#include "api/json_access.h"
#include "api/meta/object_meta.h"
#include "registry/errors.h"

namespace batchd::registry {
namespace {

using api::Json;

absl::Status AdmitPod(Registry& reg, const api::KindDef& pods, const api::KindDef& namespaces,
                      const Json& pod) {
  const std::vector<std::string> root = api::core_v1::RootViolations(pod);
  if (root.empty()) return absl::OkStatus();
  const std::string ns = api::meta::GetNamespace(pod);
  std::string level = "baseline";
  absl::StatusOr<ObjectPtr> nso = reg.Get(namespaces, "", ns);
  if (nso.ok()) {
    std::shared_ptr<const Json> nsj = (*nso)->Shared();
    const std::string label = api::CopyStringMember(
        api::MemberObject(api::MemberObject(*nsj, "metadata"), "labels"),
        api::core_v1::kPodSecurityEnforceLabel);
    if (label == api::core_v1::kPodSecurityPrivileged) return absl::OkStatus();
    if (!label.empty()) level = label;
  }
  // A missing namespace is the registry's NotFound later; refusing here first is fine.
  std::string name = api::meta::GetName(pod);
  if (name.empty()) {
    name = api::CopyStringMember(api::MemberObject(pod, "metadata"), "generateName");
  }
  return Forbidden(pods, name,
                   absl::StrCat("violates PodSecurity \"", level, ":latest\": runAsUser=0 (",
                                absl::StrJoin(root, ", "), ")"));
}

}  // namespace

void AddPodSecurityAdmission(Registry& reg) {
  const api::KindDef* pods = reg.scheme().ByResource("", "v1", "pods");
  const api::KindDef* namespaces = reg.scheme().ByResource("", "v1", "namespaces");
  if (pods == nullptr || namespaces == nullptr) return;
  reg.AddMutator(pods->GroupResource(), [&reg, pods, namespaces](Json& pod, const Json* old) {
    if (old != nullptr) return absl::OkStatus();  // securityContext cannot change
    return AdmitPod(reg, *pods, *namespaces, pod);
  });
}

}  // namespace batchd::registry
