// Kueue's plain pod integration (the `pod` framework; KEP-976): pods that
// name a LocalQueue with the `kueue.x-k8s.io/queue-name` label are queued
// like Jobs, one by one or as pod groups.
//
//  - `RegisterPodWebhooks`: Kueue's pod webhook as a registry mutator on
//    "pods". At create, a pod with a queue name (any pod when
//    `manage_jobs_without_queue_name`) in a managed namespace, and not owned
//    by a Job or JobSet that Kueue queues already, gets the label
//    `kueue.x-k8s.io/managed: "true"`, the finalizer `kueue.x-k8s.io/managed`,
//    the scheduling gates `kueue.x-k8s.io/admission` and
//    `kueue.x-k8s.io/topology`, and its role hash. Every pod is validated as
//    Kueue does, with field paths: the managed label's value, the queue name,
//    the group name and total count (both or neither, a DNS subdomain and an
//    integer >= 1), the topology annotations; on update the queue name (once
//    ungated), the group name and `retriable-in-group: "false"` may not change.
//  - `AddPodIntegration`: the controller ("pod-workload-integration") that
//    gives a single pod a Workload `pod-<name>-<hash>` and a pod group
//    (`kueue.x-k8s.io/pod-group-name` + `pod-group-total-count`) one Workload
//    named after the group once that many pods exist, removes the admission
//    gate when the Workload is admitted (with the flavors' node selectors and
//    tolerations), stops the pods when it is evicted or loses its admission,
//    marks it Finished and removes the finalizers when the pods are done.
//
// The integration runs only when the queueing configuration lists the `pod`
// framework (Kueue's default list is `batch/job` alone).
//
// Thread-safety: call both once at start-up, before serving / starting the
// manager. The mutator is thread-safe.
#pragma once

#include <functional>
#include <vector>

#include "absl/status/status.h"
#include "api/labels/selector.h"
#include "reconcile/context.h"
#include "registry/registry.h"

namespace batchd::controllers {

namespace queueing {
struct QueueingConfig;
}  // namespace queueing

// Kueue's default for podOptions.namespaceSelector and
// managedJobsNamespaceSelector: kubernetes.io/metadata.name notin
// (kube-system, kueue-system).
api::labels::LabelSelector DefaultManagedNamespaceSelector();

struct PodIntegrationOptions {
  bool manage_jobs_without_queue_name = false;
  // Namespaces whose pods Kueue manages, matched against the namespace's
  // labels and its `kubernetes.io/metadata.name`: every selector must match
  // (managedJobsNamespaceSelector, and podOptions.namespaceSelector when set).
  std::vector<api::labels::LabelSelector> namespace_selectors = {
      DefaultManagedNamespaceSelector()};
  // podOptions.podSelector: only pods it selects are managed (empty: all).
  api::labels::LabelSelector pod_selector;
  // waitForPodsReady is enabled: the controller keeps the Workload's
  // PodsReady condition (workload::IntegrationOptions).
  bool wait_for_pods_ready = false;
};

// The options a Kueue Configuration gives the pod integration
// (manageJobsWithoutQueueName, managedJobsNamespaceSelector,
// integrations.podOptions, waitForPodsReady), as `batchd server` and `batchd
// simulate` both take them.
PodIntegrationOptions PodIntegrationOptionsFrom(const queueing::QueueingConfig& config);

// Registers the pod integration controller (it acts on the pods the webhook
// marked managed). Logs a warning and registers nothing when the scheme
// lacks Kueue's v1beta2 kinds.
void AddPodIntegration(reconcile::ControllerContext& ctx, const PodIntegrationOptions& options);

// Adds the pod mutator/validator to `registry` (create and update of the
// main resource). FailedPrecondition when pods are not served.
absl::Status RegisterPodWebhooks(registry::Registry& registry,
                                 const PodIntegrationOptions& options);

// The hook itself, for direct tests: defaults `pod` on create (`old` null)
// and returns `Invalid` (422 with field causes) when a rule is broken. It
// reads namespaces and owners through `registry`, which must outlive it.
using PodHook = std::function<absl::Status(api::Json& pod, const api::Json* old)>;
PodHook MakePodWebhook(registry::Registry& registry, const PodIntegrationOptions& options);

}  // namespace batchd::controllers
