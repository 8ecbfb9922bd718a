// The batch/v1 Job integration of Kueue-style queueing (Kueue's
// `batch/job` framework), built on the generic reconciler of adapter.h:
//
//  - `RegisterJobWebhooks`: Kueue's Job webhooks as a registry mutator on
//    "jobs.batch". On create, a Job with the `kueue.x-k8s.io/queue-name`
//    label (or annotation) — every Job outside kube-system when
//    `manage_jobs_without_queue_name` — is created `suspend: true`. Create and
//    update are validated as Kueue does: the queue name must be a DNS
//    subdomain and may not change while the Job runs; the
//    `kueue.x-k8s.io/priority-class` label is immutable;
//    `kueue.x-k8s.io/job-min-parallelism` must be an integer in
//    (0, min(parallelism, completions)) and pins parallelism while the Job
//    runs; `kueue.x-k8s.io/job-completions-equal-parallelism` needs an
//    Indexed Job with completions == parallelism.
//  - `AddJobIntegration`: the controller that creates each queued Job's
//    Workload, runs the Job when the Workload is admitted and stops it when
//    the Workload is evicted (see adapter.h and the contract in
//    docs/architecture.md).
//
// Thread-safety: call both once at start-up, before serving / starting the
// manager. The mutator is thread-safe.
#pragma once

#include <functional>

#include "absl/status/status.h"
#include "api/kind.h"
#include "reconcile/context.h"
#include "registry/registry.h"

namespace batchd::controllers {

namespace queueing {
struct QueueingConfig;
}  // namespace queueing

struct JobIntegrationOptions {
  bool manage_jobs_without_queue_name = false;
  // integrations.frameworks has `jobset.x-k8s.io/jobset`: a JobSet's child
  // Jobs belong to its Workload; without it they are queued as plain Jobs.
  bool jobset_integrated = true;
  // waitForPodsReady is enabled (workload::IntegrationOptions).
  bool wait_for_pods_ready = false;
};

// The options a Kueue Configuration gives the Job and JobSet integrations
// (manageJobsWithoutQueueName, the jobset framework, waitForPodsReady), as
// `batchd server` and `batchd simulate` both take them.
JobIntegrationOptions JobIntegrationOptionsFrom(const queueing::QueueingConfig& config);

// Registers the Job integration controller ("job-workload-integration").
// Logs a warning and registers nothing when the scheme does not serve
// kueue.x-k8s.io/v1beta2 Workloads and ResourceFlavors.
void AddJobIntegration(reconcile::ControllerContext& ctx, const JobIntegrationOptions& options);

// Adds the Job mutator/validator to `registry` (create and update of the main
// resource). Unimplemented when the registry has no mutation hook.
absl::Status RegisterJobWebhooks(registry::Registry& registry,
                                 const JobIntegrationOptions& options);

// The hook itself, for direct tests: mutates `job` on create (`old` null) and
// returns `Invalid` (422 with field causes) when a rule is broken.
using JobHook = std::function<absl::Status(api::Json& job, const api::Json* old)>;
JobHook MakeJobWebhook(const api::KindDef& jobs, const JobIntegrationOptions& options);

}  // namespace batchd::controllers
