// ValidatePodSpec / ValidatePodTemplateSpec (first cut; deepened below).
#include "api/core/v1/core_v1.h"
#include "api/core/v1/internal/schemas.h"

namespace batchd::api::core_v1 {

ErrorList ValidatePodSpec(const Json& spec, const Path& path) {
  ErrorList errs;
  const Json& containers = internal::GetArray(spec, "containers");
  if (containers.empty()) errs.push_back(Required(path.Child("containers"), ""));
  for (size_t i = 0; i < containers.size(); ++i) {
    Path p = path.Child("containers").Index(i);
    if (internal::GetString(containers[i], "name").empty()) errs.push_back(Required(p.Child("name")));
    if (internal::GetString(containers[i], "image").empty()) errs.push_back(Required(p.Child("image")));
  }
  return errs;
}

ErrorList ValidatePodTemplateSpec(const Json& tmpl, const Path& path) {
  return ValidatePodSpec(internal::GetObject(tmpl, "spec"), path.Child("spec"));
}

}  // namespace batchd::api::core_v1
