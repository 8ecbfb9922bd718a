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
// after the taint's timeAdded; tolerating it without seconds, never. Every
// pod gets such tolerations for 300 s at creation (DefaultTolerationSeconds,
// default_tolerations.h), so by default a lost node's pods are evicted 300 s
// after its NoExecute taint. On a node whose agent fences its pods
// (annotation batchd.io/fence-period-seconds, api/core/v1/node_fence.h), a pod
// is evicted no sooner than its fence time plus a margin after the node's
// heartbeat was last seen changing, so its copy there is dead before the
// replacement is created.
//
// As Kubernetes' controller, the NoSchedule taint comes at once and the
// NoExecute taint is rate-limited per zone (label topology.kubernetes.io/
// zone): a token bucket of `eviction_rate` nodes per second (burst 1). A
// zone where no node is Ready is fully disrupted; one with more than 2 and
// at least `unhealthy_zone_threshold` of its nodes not Ready is partially
// disrupted: tainted at `secondary_eviction_rate` when it has more than
// `large_cluster_size_threshold` nodes, else not at all. When every zone is
// fully disrupted (the server is cut off from all its agents, not they from
// it), nothing is tainted or evicted and existing NoExecute health taints are
// removed; when that ends, every node gets a fresh grace period.
//
// A node condition DiskPressure / MemoryPressure / PIDPressure = True gets the
// matching node.kubernetes.io/<x>-pressure:NoSchedule taint (Kubernetes'
// TaintNodesByCondition), removed when the condition is no longer True.
// Simulated nodes (`batchd.io/simulated: "true"`) are exempt from all of it
// and not counted in zones.
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

inline constexpr char kDiskPressureTaint[] = "node.kubernetes.io/disk-pressure";
inline constexpr char kMemoryPressureTaint[] = "node.kubernetes.io/memory-pressure";
inline constexpr char kPidPressureTaint[] = "node.kubernetes.io/pid-pressure";

struct NodeLifecycleOptions {
  // Kubernetes' node-monitor-grace-period.
  absl::Duration grace = absl::Seconds(40);
  std::string lease_namespace = "kube-node-lease";
  // kube-controller-manager's --node-eviction-rate, --secondary-node-eviction-rate,
  // --unhealthy-zone-threshold, --large-cluster-size-threshold.
  double eviction_rate = 0.1;
  double secondary_eviction_rate = 0.01;
  double unhealthy_zone_threshold = 0.55;
  int large_cluster_size_threshold = 50;
  // How often an unhealthy node that may not be tainted yet is looked at
  // again (Kubernetes' node-monitor-period).
  absl::Duration monitor_period = absl::Seconds(5);
};

void AddNodeLifecycleController(reconcile::ControllerContext& ctx, NodeLifecycleOptions opts = {});

}  // namespace batchd::controllers
