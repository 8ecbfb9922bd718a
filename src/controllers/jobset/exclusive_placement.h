// JobSet's exclusive placement (`alpha.jobset.sigs.k8s.io/exclusive-topology:
// <node label key>` on a JobSet or a replicated job template: one child Job
// per topology domain, no two Jobs in one domain), done as upstream JobSet
// does it (pod_webhook.go, pod_controller.go), with batchd's scheduler
// honouring the required inter-pod affinity it relies on:
//
//  - The pod webhook (`AddJobSetPodWebhook`), on pod create: every JobSet
//    pod that does not use the node-selector strategy gets the label
//    `jobset.sigs.k8s.io/priority` = its spec.priority (so exclusivity is
//    among pods of one priority); with exclusive placement, the leader pod
//    (completion index 0) gets a required pod affinity to its own Job's pods
//    (job-key In [own]) and a required anti-affinity to other Jobs' pods of
//    its priority (job-key Exists, NotIn [own]; priority In [own]), both on
//    the topology key and across namespaces; a follower gets a nodeSelector
//    for its leader's domain, and is refused (Forbidden, "an expected,
//    transient error": the Job controller retries) until the leader is
//    scheduled.
//  - The placement controller (`AddExclusivePlacementController`): when a
//    scheduled leader's domain differs from a follower's nodeSelector (the
//    leader was replaced and landed elsewhere), the followers get
//    DisruptionTarget=True (ExclusivePlacementViolation) and are deleted;
//    the Job controller recreates them behind the leader.
//
// With `alpha.jobset.sigs.k8s.io/node-selector` the user has labelled and
// tainted each domain's nodes for one Job beforehand; the JobSet controller
// then gives the pods a nodeSelector and toleration (child_job_writer.h) and
// neither of the above acts.
//
// Thread-safety: the webhook runs on the registry's request threads and
// reads through the registry; the controller is a reconciler.
#pragma once

#include "absl/status/status.h"
#include "reconcile/context.h"
#include "registry/registry.h"

namespace batchd::controllers {

// Registers the JobSet pod webhook on `registry` (pods, create). Register
// after the Priority admission plugin, whose spec.priority it reads.
absl::Status AddJobSetPodWebhook(registry::Registry& registry);

// Registers the placement controller ("jobset-exclusive-placement").
void AddExclusivePlacementController(reconcile::ControllerContext& ctx);

}  // namespace batchd::controllers
