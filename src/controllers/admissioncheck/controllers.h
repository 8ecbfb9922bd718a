// Kueue's admission-check machinery (KEP-993 two-phase admission) and
// resource-in-use finalizers, as three controllers:
//
//  - "admission-checks" (Kueue's workload controller, check part): for a
//    Workload holding quota, keeps `status.admissionChecks` equal to the
//    checks its ClusterQueue applies to the assigned flavors (while not yet
//    admitted); writes Admitted=True once every check is Ready (and
//    Admitted=False UnsatisfiedChecks if one leaves Ready); a Retry evicts
//    (Evicted reason AdmissionCheck, requeueState.requeueAt = the latest
//    lastTransitionTime + requeueAfterSeconds of the Retry checks) so the job
//    integration releases the quota and the workload queues again; a
//    Rejected check marks it for deactivation (DeactivationTarget reason
//    AdmissionCheck), which the queue manager turns into spec.active=false
//    and an eviction. Once quota is released, non-Pending states go back to
//    Pending (Kueue's reset on eviction).
//  - "provisioning-request-admission-check": the built-in check of
//    controller `kueue.x-k8s.io/provisioning-request` (provisioner.h). It
//    marks its AdmissionChecks Active (or not, with the reason) and decides
//    their Pending states on workloads.
//  - "resource-in-use": the finalizer `kueue.k8s.io/resource-in-use` on
//    ClusterQueues (released once no workload holds quota in it),
//    ResourceFlavors and AdmissionChecks (released once no ClusterQueue
//    references them). The queue manager keeps a terminating ClusterQueue's
//    usage counted and admits nothing new into it.
//
// Ownership: registers informer handlers and controllers with ctx.manager;
// their state lives as long as the manager. Call once, before it starts.
#pragma once

#include <memory>

#include "controllers/admissioncheck/provisioner.h"
#include "reconcile/context.h"

namespace batchd::controllers::admissioncheck {

struct AdmissionCheckOptions {
  // nullptr: batchd's node-capacity provisioner.
  std::shared_ptr<Provisioner> provisioner;
};

void AddAdmissionCheckControllers(reconcile::ControllerContext& ctx,
                                  AdmissionCheckOptions options = {});

}  // namespace batchd::controllers::admissioncheck
