// The node lifecycle controller (Kubernetes' node health monitor plus taint
// eviction, DESIGN.md "lost heartbeats -> pods failed with DisruptionTarget").
//
// A node's health signal is its Lease (`kube-node-lease/<node>`
// `spec.renewTime`) and its Ready condition's `lastHeartbeatTime`; like
// Kubernetes, the controller times the *observed change* of that signal on
// its own Clock (a node seen for the first time gets a full grace period).
// When the signal has not changed for `grace` (40 s), every node condition
// becomes `Unknown` (reason NodeStatusUnknown, "Kubelet stopped posting node
// status.") and the node gets the taints `node.kubernetes.io/unreachable`
// NoSchedule and NoExecute; a node whose agent reports Ready=False gets
// `node.kubernetes.io/not-ready` instead. When the lease is renewed again,
// Ready returns to True and the taints go.
//
// Eviction: pods on a node with such a NoExecute taint are marked Failed
// with condition DisruptionTarget (True, DeletionByTaintManager, "Taint
// manager: deleting pod") and deleted, so the Job controller replaces them.
// A pod tolerating the taint with `tolerationSeconds` is evicted that long
// after the taint's timeAdded; tolerating it without seconds, never.
// batchd adds no default tolerations (Kubernetes' DefaultTolerationSeconds
// admission adds 300 s): pods are evicted right when the lease grace ends.
// Simulated nodes (`batchd.io/simulated: "true"`) are exempt.
//
// Ownership: registers handlers and the controller "nodelifecycle" with the
// context's manager; its state lives as long as the manager's informers.
#pragma once

#include <string>

#include "absl/time/time.h"
#include "reconcile/context.h"

namespace batchd::controllers {

inline constexpr char kUnreachableTaint[] = "node.kubernetes.io/unreachable";
inline constexpr char kNotReadyTaint[] = "node.kubernetes.io/not-ready";

struct NodeLifecycleOptions {
  // Kubernetes' node-monitor-grace-period.
  absl::Duration grace = absl::Seconds(40);
  std::string lease_namespace = "kube-node-lease";
};

void AddNodeLifecycleController(reconcile::ControllerContext& ctx, NodeLifecycleOptions opts = {});

}  // namespace batchd::controllers
