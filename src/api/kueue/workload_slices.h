// Kueue's elastic Jobs via workload slices (ElasticJobsViaWorkloadSlices,
// keps/77-dynamically-sized-jobs): the names both the job integration and
// the queue manager use.
#pragma once

namespace batchd::api::kueue {

// On a job (and its Workloads): the job may change its parallelism while it
// runs; a scale-up is admitted as a new Workload slice.
inline constexpr char kElasticJobAnnotation[] = "kueue.x-k8s.io/elastic-job";
// On a Workload slice: "namespace/name" of the admitted slice it replaces.
inline constexpr char kWorkloadSliceReplacementFor[] =
    "kueue.x-k8s.io/workload-slice-replacement-for";
// Held by the pods of an elastic job until a slice covering them is admitted.
inline constexpr char kElasticJobSchedulingGate[] = "kueue.x-k8s.io/elastic-job";
// The Finished reason of a slice its replacement took over.
inline constexpr char kWorkloadSliceReplaced[] = "WorkloadSliceReplaced";

}  // namespace batchd::api::kueue
