// core/v1 RegisterKinds, the QoS class, and the small public helpers.
#include "api/core/v1/core_v1.h"
#include "api/core/v1/internal/pods.h"
#include "api/core/v1/internal/schemas.h"

namespace batchd::api::core_v1 {
namespace {

std::string JoinContainerField(const Json& pod_spec, const char* field) {
  std::string out;
  for (const Json& c : internal::GetArray(pod_spec, "containers")) {
    if (!out.empty()) out += ",";
    out += internal::GetString(c, field);
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
    for (const Json& c : GetArray(spec, list)) {
      const Json& res = GetObject(c, "resources");
      const Json& limits = GetObject(res, "limits");
      const Json& requests = GetObject(res, "requests");
      for (const char* r : {"cpu", "memory"}) {
        const Json* lim = Get(limits, r);
        const Json* req = Get(requests, r);
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
}

}  // namespace batchd::api::core_v1
