// core/v1 RegisterKinds, the QoS class, and the small public helpers.
#include "api/core/v1/core_v1.h"
#include "api/core/v1/internal/pods.h"
#include "api/core/v1/internal/schemas.h"
#include "api/core/v1/internal/service.h"
#include "api/core/v1/internal/service_account.h"
#include "api/json_access.h"

namespace batchd::api::core_v1 {
namespace {

std::string JoinContainerField(const Json& pod_spec, const char* field) {
  std::string out;
  for (const Json& c : MemberArray(pod_spec, "containers")) {
    if (!out.empty()) out += ",";
    out += std::string(StringMember(c, field));
  }
  return out;
}

}  // namespace

namespace internal {

// Kubernetes' GetPodQOS over cpu and memory: BestEffort when nothing is
// requested or limited, Guaranteed when every container limits both and
// requests (defaulting to limits) equal limits, Burstable otherwise.
// Quantities are compared in canonical form (Normalize has canonicalised them).
std::string PodQosClass(const Json& spec) {
  bool any = false;
  bool guaranteed = true;
  for (const char* list : {"initContainers", "containers"}) {
    for (const Json& c : MemberArray(spec, list)) {
      const Json& res = MemberObject(c, "resources");
      const Json& limits = MemberObject(res, "limits");
      const Json& requests = MemberObject(res, "requests");
      for (const char* r : {"cpu", "memory"}) {
        const Json* lim = FindMember(limits, r);
        const Json* req = FindMember(requests, r);
        if (req && req->is_string() && req->get<std::string>() != "0") any = true;
        if (lim && lim->is_string() && lim->get<std::string>() != "0") any = true;
        if (!lim || (req && *req != *lim)) guaranteed = false;
      }
    }
  }
  if (!any) return "BestEffort";
  return guaranteed ? "Guaranteed" : "Burstable";
}

}  // namespace internal

std::string ContainerNames(const Json& pod_spec) { return JoinContainerField(pod_spec, "name"); }
std::string ContainerImages(const Json& pod_spec) { return JoinContainerField(pod_spec, "image"); }

void RegisterKinds(Scheme& scheme) {
  scheme.Add(internal::NamespaceKind());
  scheme.Add(internal::PodKind());
  scheme.Add(internal::NodeKind());
  scheme.Add(internal::EventKind());
  scheme.Add(internal::ServiceKind());
  scheme.Add(internal::ServiceAccountKind());
}

}  // namespace batchd::api::core_v1
