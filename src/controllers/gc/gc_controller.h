// Lifecycle controllers over ownerReferences and finished Jobs.
//
// AddGarbageCollector: Kubernetes' garbage collector, generic over every
// listable kind in the client's scheme except Events. It keeps an index of
// owner uid -> dependents from shared informers and
//  - Background: deletes a dependent once every owner it references is gone
//    (verified with a live Get, so a dependent racing ahead of its owner in
//    the caches is safe); dependents with some live owner only lose the
//    dangling references;
//  - Foreground: for an owner being deleted with the `foregroundDeletion`
//    finalizer, deletes its dependents (foreground again when they have
//    dependents themselves) and removes the finalizer once no dependent with
//    `blockOwnerDeletion: true` is left;
//  - Orphan: for an owner with the `orphan` finalizer, removes its references
//    from its dependents, then the finalizer.
// Deletes carry a uid precondition.
//
// AddTtlAfterFinishedController: deletes (Background) Jobs with
// `spec.ttlSecondsAfterFinished` that many seconds after the
// lastTransitionTime of their Complete/Failed condition, requeueing itself
// for that instant through the injected Clock.
//
// Ownership: controllers and reconcilers belong to ctx.manager; call each
// function at most once per manager, before the manager starts.
#pragma once

#include "reconcile/context.h"

namespace batchd::controllers {

void AddGarbageCollector(reconcile::ControllerContext& ctx);
void AddTtlAfterFinishedController(reconcile::ControllerContext& ctx);

}  // namespace batchd::controllers
