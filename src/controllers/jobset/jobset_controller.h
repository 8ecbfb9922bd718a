// The JobSet controller (jobset.x-k8s.io/v1alpha2, upstream JobSet's
// semantics; shared/reference/batch-apis.md §3): creates each replicated
// job's child Jobs `<jobset>-<rjob>-<index>` with JobSet's labels and
// annotations, starts them in order (startupPolicy InOrder, dependsOn Ready /
// Complete), suspends and resumes them with the JobSet, applies the success
// policy (All / Any over target replicated jobs) and the failure policy
// (rules matched on the failed Job's reason, message and replicated job;
// FailJobSet, RestartJobSet with maxRestarts, RestartJobSetAndIgnoreMaxRestarts;
// Recreate or BlockingRecreate), deletes a finished JobSet's active Jobs and
// the JobSet itself after ttlSecondsAfterFinished, and keeps status
// (restarts, replicatedJobsStatus, terminalState, conditions) with
// upstream's reasons, messages and Events. JobSets whose spec.managedBy names
// another controller are skipped.
//
// Restarts are crash-safe: a restart is one status write (restarts + 1,
// compare-and-swap on the JobSet's resourceVersion); every Job carries the
// attempt it belongs to in its `jobset.sigs.k8s.io/restart-attempt` label,
// Jobs of earlier attempts are deleted and missing ones created by name, so a
// controller restarted at any point finishes the restart without duplicates
// or a second count.
//
// Thread-safety: `AddJobSetController` is called once per Manager, before
// the manager starts. The controller's state lives as long as the manager's
// informers.
#pragma once

#include "reconcile/context.h"

namespace batchd::controllers {

// Registers the JobSet controller ("jobset") with `ctx.manager`, with
// handlers on the shared JobSet and Job informers (Job events map to the
// JobSet that controls the Job).
void AddJobSetController(reconcile::ControllerContext& ctx);

}  // namespace batchd::controllers
