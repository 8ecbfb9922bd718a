// The Node object an agent registers and the Lease it renews. Pure builders
// over JSON; thread-compatible.
#pragma once

#include <string>

#include "absl/time/time.h"
#include "agent/agent.h"
#include "agent/host_probe.h"

namespace batchd::agent::internal {

// Capacity (= allocatable): cpu, memory, ephemeral-storage, pods and
// nvidia.com/gpu when the probe finds GPUs.
api::Json NodeCapacity(const AgentOptions& opts, HostProbe& probe);

// metadata (name, labels), spec (taints) and status (capacity, allocatable,
// conditions with heartbeat `now`, addresses, daemonEndpoints, nodeInfo).
api::Json BuildNode(const AgentOptions& opts, const api::Json& capacity, const NodeFacts& facts,
                    absl::Time now);

// The node's `status` for an update of `existing`: conditions keep their
// lastTransitionTime while unchanged.
api::Json NodeStatus(const AgentOptions& opts, const api::Json& capacity, const NodeFacts& facts,
                     const api::Json& existing, absl::Time now);

// The value of the Node annotation auth::kKubeletEndpointAnnotation ("" when
// the agent serves no authenticated log port).
std::string KubeletEndpointAnnotation(const AgentOptions& opts);

api::Json BuildLease(const AgentOptions& opts, absl::Time now);

// The value of the node's batchd.io/fence-period-seconds annotation: the
// fence period in whole seconds (rounded up) as a string, or null when the
// agent does not fence.
api::Json FenceAnnotationValue(const AgentOptions& opts);

}  // namespace batchd::agent::internal
