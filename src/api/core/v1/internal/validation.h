// Internal to api/core/v1: pieces of pod validation shared between
// pod_validation.cc and container_validation.cc. Stateless; thread-safe.
#pragma once

#include <set>
#include <string>

#include "api/core/v1/internal/schemas.h"

namespace batchd::api::core_v1::internal {

// State carried across the containers of one pod spec.
struct ContainerContext {
  bool init = false;            // Validating initContainers.
  bool require_image = true;
  std::set<std::string> names;  // Container names seen (init + regular).
  std::set<std::string> port_names;
  std::set<std::string> volumes;  // Declared volume names.
};

void ValidateContainer(ErrorList& errs, const Json& c, const Path& p, ContainerContext& ctx);
// A pod's securityContext: ids in range, supplementalGroupsPolicy.
void ValidatePodSecurityContext(ErrorList& errs, const Json& sc, const Path& p);
void ValidateProbe(ErrorList& errs, const Json& probe, const Path& p, bool success_must_be_one);
void ValidateVolumeMounts(ErrorList& errs, const Json& mounts, const Path& path,
                          const std::set<std::string>& volumes);
// Container `resources`: names, non-negative quantities, requests <= limits,
// extended resources integral with requests == limits.
void ValidateResources(ErrorList& errs, const Json& resources, const Path& path);

}  // namespace batchd::api::core_v1::internal
