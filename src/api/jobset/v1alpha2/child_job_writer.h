// The objects a JobSet creates — its child Jobs and its headless Service:
// the one place where what the JobSet controller writes into them is spelt
// (upstream's constructJob, labelAndAnnotateObject and
// createHeadlessSvcIfNecessary; shared/reference/batch-apis.md §3.2-3.3).
//
// Thread-safety: free functions over JSON the caller owns.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "api/field_error.h"
#include "api/jobset/v1alpha2/jobset_view.h"

namespace batchd::api::jobset_v1alpha2 {

// Child Job `index` of `rjob`, named "<jobset>-<rjob>-<index>":
//  - the template's labels, annotations and spec;
//  - on the Job and on its pod template, each both as a label and as an
//    annotation: jobset-name, jobset-uid, replicatedjob-name,
//    restart-attempt (= status.restarts), replicatedjob-replicas,
//    global-replicas, job-index, job-key, job-global-index, group-name,
//    group-replicas, job-group-index, and coordinator when set;
//  - spec.template.spec.subdomain = the JobSet's subdomain when DNS
//    hostnames are enabled (the Job controller gives each pod of an Indexed
//    Job the hostname "<job>-<completion index>");
//  - with the InPlaceRestart restart strategy, the pod template annotations
//    batchd.io/restart-generation and jobset.sigs.k8s.io/in-place-restart-attempt
//    = status.currentInPlaceRestartAttempt (0 when unset);
//  - exclusive placement annotations, and the node-selector strategy's
//    nodeSelector and toleration (exclusive_placement.h of controllers/jobset);
//  - spec.suspend = the JobSet's spec.suspend;
//  - a controller owner reference to the JobSet (blockOwnerDeletion).
// REQUIRES: `js` was parsed from `jobset`, which has apiVersion and kind;
// `rjob` is one of js.spec.replicated_jobs.
Json NewChildJob(const Json& jobset, const JobSetView& js, const ReplicatedJobView& rjob,
                 int64_t index);

// The JobSet's headless core/v1 Service, named after its subdomain:
// clusterIP None, selector {jobset-name: <jobset>}, publishNotReadyAddresses
// from spec.network, and a controller owner reference to the JobSet.
// REQUIRES: as NewChildJob.
Json NewHeadlessService(const Json& jobset, const JobSetView& js);

// The job-key value: the SHA-1 (40 hex digits) of "<namespace>/<jobName>"
// (upstream's comment says SHA256; its code uses SHA-1).
std::string JobKeyHash(std::string_view ns, std::string_view job_name);

}  // namespace batchd::api::jobset_v1alpha2
