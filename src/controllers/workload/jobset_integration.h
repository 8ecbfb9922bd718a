// The JobSet integration of Kueue-style queueing (Kueue's `jobset`
// framework), on the generic reconciler of adapter.h with the JobSet
// adapter (internal/jobset_adapter.h):
//
//  - `RegisterJobSetWebhooks`: Kueue's JobSet webhook as a registry mutator
//    on "jobsets.jobset.x-k8s.io". On create, a JobSet with the
//    `kueue.x-k8s.io/queue-name` label (or annotation) — every JobSet outside
//    kube-system when `manage_jobs_without_queue_name` — is created
//    `suspend: true`; the queue name must be a DNS subdomain and may not
//    change while the JobSet runs; the `kueue.x-k8s.io/priority-class` label
//    is immutable; each replicated job's topology annotations are checked as
//    for a Job's template (pod count: replicas × pods per Job).
//  - `AddJobSetIntegration`: the controller that creates a queued JobSet's
//    one Workload (a pod set per replicated job), runs the JobSet when it is
//    admitted (the admitted flavors' node selectors and tolerations, and
//    topology marks, in each replicated job's pod template) and stops it on
//    eviction. Child Jobs of a JobSet are never queued on their own (the Job
//    integration skips them).
//
// Thread-safety: call both once at start-up; the mutator is thread-safe.
#pragma once

#include "absl/status/status.h"
#include "controllers/workload/workload_controller.h"
#include "reconcile/context.h"
#include "registry/registry.h"

namespace batchd::controllers {

// Registers the JobSet integration controller ("jobset-workload-integration").
// Logs a warning and registers nothing when the scheme lacks JobSets or
// kueue.x-k8s.io Workloads.
void AddJobSetIntegration(reconcile::ControllerContext& ctx, const JobIntegrationOptions& options);

// Adds the JobSet mutator/validator to `registry`. With the integration
// disabled (the `jobset.x-k8s.io/jobset` framework not in the queueing
// configuration) it refuses the queue-name label and annotation instead
// (Forbidden): Kueue would ignore them, and the JobSet would run unqueued.
inline constexpr char kJobSetFramework[] = "jobset.x-k8s.io/jobset";
absl::Status RegisterJobSetWebhooks(registry::Registry& registry,
                                    const JobIntegrationOptions& options, bool enabled = true);

}  // namespace batchd::controllers
