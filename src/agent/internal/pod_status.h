// Computing a Pod's `status` from what the runtime reports, by the kubelet's
// rules: phase per restartPolicy (Pending → Running → Succeeded/Failed),
// the PodReadyToStartContainers / Initialized / ContainersReady / Ready /
// PodScheduled conditions (lastTransitionTime kept while unchanged), and
// container statuses (waiting/running/terminated, lastState, restartCount,
// ready, containerID `batchd://<uid>/<name>`). Pure; thread-compatible.
#pragma once

#include <optional>
#include <string>

#include "absl/time/time.h"
#include "agent/runtime/pod_runtime.h"
#include "api/field_error.h"

namespace batchd::agent::internal {

// The pod condition (status False, reason CgroupLimitsNotApplied) that says
// which of the pod's cpu/memory/pids limits the node could not apply.
inline constexpr char kResourceLimitsCondition[] = "batchd.io/ResourceLimitsApplied";

struct StatusInput {
  absl::Time now;
  std::string host_ip = "127.0.0.1";
  // Set when the agent ended the pod itself (reason DeadlineExceeded...):
  // the phase is Failed with this reason and message.
  std::optional<std::pair<std::string, std::string>> failed_reason;
  // A container config error (CreateContainerConfigError): every container
  // waits with this message and the pod stays Pending.
  std::optional<std::string> config_error;
};

// The pod phase from the runtime's container states (kubelet's getPhase).
// `terminal`: the pod will not run again (stopped), so Always/OnFailure
// containers are not expected to restart.
std::string ComputePhase(const api::Json& spec, const PodSandboxStatus& rt, bool terminal);

// The whole new `status`, starting from the pod's current one (unknown
// fields kept). A pod already Succeeded/Failed keeps its phase.
api::Json ComputePodStatus(const api::Json& pod, const PodSandboxStatus& rt,
                           const StatusInput& in);

}  // namespace batchd::agent::internal
