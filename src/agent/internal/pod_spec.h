// Turning a Pod object into the PodSandboxSpec the runtime starts: the
// kubelet's environment rules (env `value` with $(VAR) expansion,
// `valueFrom.fieldRef`, `valueFrom.resourceFieldRef`, the default HOSTNAME),
// command/args expansion, working dir, cpu/memory limits and the exec
// readiness probe. Pure functions over JSON; thread-compatible.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/internal/security.h"
#include "agent/runtime/pod_runtime.h"
#include "api/field_error.h"

namespace batchd::agent::internal {

using EnvList = std::vector<std::pair<std::string, std::string>>;

// Kubernetes' $(VAR) expansion: `$(NAME)` becomes lookup(NAME) when it
// returns a value and stays as written otherwise; `$$` is a literal `$`;
// any other `$` (and an unterminated `$(`) is kept as is.
std::string ExpandVars(std::string_view in,
                       const std::function<std::optional<std::string>(std::string_view)>& lookup);

// The value of a downward-API field path (metadata.name, metadata.labels['k'],
// spec.nodeName, status.hostIP, ...). InvalidArgument for unsupported paths.
absl::StatusOr<std::string> ResolveFieldRef(const api::Json& pod, std::string_view path);

// The value of a resourceFieldRef ({containerName?, resource, divisor?}) for
// `container`; unset limits fall back to the node's `allocatable`, as the
// kubelet does.
absl::StatusOr<std::string> ResolveResourceFieldRef(const api::Json& pod,
                                                    const api::Json& container,
                                                    const api::Json& ref,
                                                    const api::Json& allocatable);

// Reads a Secret or ConfigMap for env (`resource` "secrets" or "configmaps"):
// nullopt when it does not exist.
using ObjectLookup = std::function<absl::StatusOr<std::optional<api::Json>>(
    std::string_view resource, const std::string& ns, const std::string& name)>;

// The container's environment in Kubernetes order: HOSTNAME first (unless the
// container sets it), then `envFrom` sources (ConfigMap data, Secret data
// decoded; `prefix` prepended; later sources overwrite), then `env` entries,
// each expanded against those before (`valueFrom.configMapKeyRef` /
// `secretKeyRef` read through `lookup`; null: every such reference is "not
// found"). Errors (a missing ConfigMap/Secret or key that is not optional, a
// bad fieldRef) are what the kubelet reports as CreateContainerConfigError,
// with its messages (`secret "db" not found`, `couldn't find key password in
// Secret team-b/db`); they never hold a value. envFrom keys that are no valid
// variable names are skipped and reported in `warnings` (the kubelet's
// InvalidEnvironmentVariableNames event text).
absl::StatusOr<EnvList> ResolveEnv(const api::Json& pod, const api::Json& container,
                                   const api::Json& allocatable,
                                   const ObjectLookup& lookup = nullptr,
                                   std::vector<std::string>* warnings = nullptr);

// Controller-driven restarts (api/core/v1/restart_generation.h): the
// generation the pod's annotations ask its containers to run (-1: none, or
// not a non-negative integer) and whether they are held.
struct RestartRequest {
  int64_t generation = -1;
  bool hold = false;
};
RestartRequest RestartRequestOf(const api::Json& pod);

// What the node contributes to a sandbox spec.
struct SandboxInputs {
  api::Json allocatable;  // for resourceFieldRef defaults
  NodeIdentity identity;  // who containers run as (security.h)
  int64_t pids_limit = 0;  // the node's podPidsLimit (0 = none)
  ObjectLookup lookup;    // Secrets and ConfigMaps for env
};

// The whole sandbox spec for `pod` (whose status.hostIP/podIP are filled).
// Without `in.identity` (agent_is_root false, agent_uid -1) containers run
// as the shim's own user.
absl::StatusOr<PodSandboxSpec> BuildSandboxSpec(const api::Json& pod,
                                                const api::Json& allocatable);
absl::StatusOr<PodSandboxSpec> BuildSandboxSpec(const api::Json& pod, const SandboxInputs& in,
                                                std::vector<std::string>* warnings = nullptr);

}  // namespace batchd::agent::internal
