// The simulated kubelet (DESIGN.md "Simulated nodes", kwok's role): for every
// Node annotated `batchd.io/simulated: "true"` it keeps the node Ready (Ready
// and pressure conditions, nodeInfo, addresses, `pods: 110` when capacity
// omits it) and "runs" the pods bound to it in virtual time:
//   Pending -> Running (containers running, Ready, podIP, startTime) at once;
//   after the pod annotation `batchd.io/sim-duration` (Go duration, default
//   0s) the containers exit with `batchd.io/sim-exit-code` (default 0):
//   Succeeded (reason Completed) or Failed (reason Error) under
//   restartPolicy Never; under OnFailure (non-zero exit) and Always the
//   containers restart instead, restartCount+1, after kubelet's crash-loop
//   back-off (10s doubling to 5m);
//   a pod deleted gracefully is force-deleted at once (grace period 0).
// All timing is through the context's Clock (requeues), so it runs in virtual
// time under the simulator and in tests.
//
// Ownership: `AddSimulatedKubelet` registers informer handlers and two
// controllers ("sim-kubelet-nodes", "sim-kubelet-pods") with the manager; the
// state lives as long as the manager's informers. Thread-safe.
#pragma once

#include "api/field_error.h"
#include "reconcile/context.h"

namespace batchd::agent::sim {

inline constexpr char kSimulatedAnnotation[] = "batchd.io/simulated";
inline constexpr char kSimDurationAnnotation[] = "batchd.io/sim-duration";
inline constexpr char kSimExitCodeAnnotation[] = "batchd.io/sim-exit-code";

// True when `node` carries `batchd.io/simulated: "true"`.
bool IsSimulatedNode(const api::Json& node);

void AddSimulatedKubelet(reconcile::ControllerContext& ctx);

}  // namespace batchd::agent::sim
