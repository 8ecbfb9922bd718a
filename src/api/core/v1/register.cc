// core/v1 RegisterKinds and the small public helpers.
#include "api/core/v1/core_v1.h"
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

std::string ContainerNames(const Json& pod_spec) { return JoinContainerField(pod_spec, "name"); }
std::string ContainerImages(const Json& pod_spec) { return JoinContainerField(pod_spec, "image"); }

void RegisterKinds(Scheme& scheme) {}

}  // namespace batchd::api::core_v1
