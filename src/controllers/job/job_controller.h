// The Job controller (batch/v1 Job, batch-apis.md §1): creates a Job's pods
// from its template (owner reference, `batch.kubernetes.io/job-tracking`
// finalizer, completion indexes), counts them through
// `status.uncountedTerminatedPods` so no pod is lost or counted twice across
// restarts, applies backoffLimit / backoffLimitPerIndex / podFailurePolicy /
// successPolicy / activeDeadlineSeconds / suspend, and finishes the Job with
// Kubernetes' two-phase conditions, reasons and events.
//
// Thread-safety: `AddJobController` is called once per Manager, before the
// manager is started or synced. The controller's state is owned by the
// manager's informers and lives as long as the manager.
#pragma once

#include "reconcile/context.h"

namespace batchd::controllers {

struct JobControllerOptions {
  // Kubernetes' WorkloadWithJob gate (workload_with_job.h): Indexed Jobs
  // with parallelism == completions > 1 get a gang Workload and PodGroup.
  // Off here as in Kubernetes 1.36; `batchd server` turns it on by default
  // (--feature-gates).
  bool workload_with_job = false;
};

// Registers the Job controller ("job-controller") with `ctx.manager`,
// with handlers on the shared Job and Pod informers (pod events map to the
// owning Job through its controller ownerReference). Jobs whose
// `spec.managedBy` names another controller are skipped.
void AddJobController(reconcile::ControllerContext& ctx, JobControllerOptions opts = {});

}  // namespace batchd::controllers
