// The pod scheduler: binds pending pods (no `spec.nodeName`, no scheduling
// gates, not being deleted, `schedulerName` "default-scheduler" or empty,
// phase Pending) to nodes through the `pods/binding` subresource, as
// kube-scheduler does: filters (resource fit against allocatable minus
// non-terminal pods' effective requests, Ready and unschedulable, taints vs
// tolerations, nodeSelector and required node affinity), least-allocated
// scoring with a node-name tie-break, and priority order (priority, then
// creation time, then namespace/name). Binds are assumed in the scheduler's
// cache before the informer confirms them, so bursts are not over-packed.
// Pods that fit nowhere get `PodScheduled=False`/`Unschedulable` with a
// kube-scheduler style message and are retried when nodes or pods change
// (and at least every `unschedulable_flush`).
//
// Gang scheduling: pods naming a scheduling.k8s.io PodGroup
// (`spec.schedulingGroup`) or a v1alpha1 Workload pod group
// (`spec.workloadRef`) are scheduled as a group by its policy. A gang binds
// nothing until at least minCount of its pods exist and at least minCount
// (bound members included) can be placed together in one pass; then every
// placeable member binds at once. Nothing is held while a gang waits. A
// group whose PodGroup / Workload is missing stays pending. PodGroups get
// the `PodGroupScheduled` condition. Pods of no group pay nothing for this.
//
// Preemption (internal/preemption.h): a pod that fits nowhere and outranks
// some placed pod (preemptionPolicy not Never) picks a node and the minimal
// set of lower-priority victims as kube-scheduler's DefaultPreemption does;
// it is nominated there (`status.nominatedNodeName`, whose room pods of
// equal or lower priority may not take), the victims get
// DisruptionTarget/PreemptionByScheduler and are deleted, and the pod binds
// when they are gone. Gang members are never victims.
//
// Ownership: `AddScheduler` registers informer handlers and one controller
// with the context's manager; the scheduler lives as long as the manager's
// informers. Thread-safety: Binder implementations are thread-safe.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "reconcile/context.h"
#include "registry/registry.h"

namespace batchd::scheduler {

// Assigns a pod to a node (POST pods/{name}/binding). Errors are
// registry-style: NotFound, Conflict (already bound / being deleted), ...
class Binder {
 public:
  struct Request {
    std::string ns, name, node;
  };
  virtual ~Binder() = default;
  virtual absl::Status Bind(const std::string& ns, const std::string& name,
                            const std::string& node) = 0;
  // Binds each as Bind does, each on its own, one status per request. A
  // binder may commit them together; this default binds one by one.
  virtual std::vector<absl::Status> BindMany(const std::vector<Request>& reqs) {
    std::vector<absl::Status> out;
    out.reserve(reqs.size());
    for (const Request& r : reqs) out.push_back(Bind(r.ns, r.name, r.node));
    return out;
  }
};

// Binds through the server's own Registry. Does not own `registry`.
class RegistryBinder : public Binder {
 public:
  explicit RegistryBinder(registry::Registry& registry) : registry_(registry) {}
  absl::Status Bind(const std::string& ns, const std::string& name,
                    const std::string& node) override;
  // One store commit for the lot (Registry::BindMany).
  std::vector<absl::Status> BindMany(const std::vector<Request>& reqs) override;

 private:
  registry::Registry& registry_;
};

struct SchedulerOptions {
  // REQUIRES: non-null. Shared so the caller may keep using it.
  std::shared_ptr<Binder> binder;
  std::string scheduler_name = "default-scheduler";
  // Emit `Scheduled` / `FailedScheduling` events (FailedScheduling only
  // when the pod's condition message changes).
  bool record_events = true;
  // Pods handled per reconcile before yielding to other controllers.
  int batch_size = 512;
  // Unschedulable pods are retried at least this often (kube-scheduler's
  // podMaxInUnschedulablePodsDuration).
  absl::Duration unschedulable_flush = absl::Minutes(5);
  // How long a gang waits for placement, from its first failed attempt,
  // before its pods are reported as timed out and a new wait begins
  // (Kubernetes' GangScheduling: 5 minutes). Nothing is held meanwhile.
  absl::Duration gang_timeout = absl::Minutes(5);
};

// Registers the scheduler (controller name "scheduler") with `ctx.manager`.
void AddScheduler(reconcile::ControllerContext& ctx, SchedulerOptions opts);

}  // namespace batchd::scheduler
