// Helpers over Kueue v1beta2 Workloads shared by the generic reconciler and
// the adapters: label/annotation keys, Kueue's workload names, the podSet
// comparison that decides whether a Workload still matches its job, and the
// PodSetInfo taken from an admission. They read through the typed views
// (api/kueue/queue_views.h, api/core/v1/pod_view.h); the condition types
// are api/kueue's (kueue.h, workload_writers.h).
//
// Thread-safety: pure functions over JSON the caller owns.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/time/time.h"
#include "api/field_error.h"
#include "api/kueue/queue_views.h"
#include "client/client.h"
#include "controllers/workload/adapter.h"

namespace batchd::controllers::workload::internal {

inline constexpr char kQueueNameKey[] = "kueue.x-k8s.io/queue-name";
// The label of an Indexed Job's pods that carries their index (the pod
// index label of a topology request: ranks fill domains in index order).
inline constexpr char kJobCompletionIndexLabel[] = "batch.kubernetes.io/job-completion-index";
// The field paths of the webhooks' errors.
inline const api::Path kLabels = api::Path("metadata").Child("labels");
inline const api::Path kAnnotations = api::Path("metadata").Child("annotations");
inline constexpr char kPriorityClassLabel[] = "kueue.x-k8s.io/priority-class";
inline constexpr char kJobUidLabel[] = "kueue.x-k8s.io/job-uid";
// The job's execution time limit, copied to the Workload's
// spec.maximumExecutionTimeSeconds.
inline constexpr char kMaxExecTimeLabel[] = "kueue.x-k8s.io/max-exec-time-seconds";
// Kueue's elastic jobs (ElasticJobsViaWorkloadSlices): "true" marks a job
// whose parallelism may change while it runs; copied to its Workload.
inline constexpr char kElasticJobAnnotation[] = "kueue.x-k8s.io/elastic-job";
// A job that names an existing Workload to use (MultiKueue's copies).
inline constexpr char kPrebuiltWorkloadLabel[] = "kueue.x-k8s.io/prebuilt-workload-name";
inline constexpr char kStoppingAnnotation[] = "kueue.x-k8s.io/stopping";
// The pre-admission PodSetInfos of a running job (JSON array), written when
// the job starts and used to restore it when it stops.
inline constexpr char kOriginalPodSetsAnnotation[] = "batchd.io/original-podsets-info";

// Go's strconv.ParseBool, as Kueue reads its boolean annotations: 1 t T
// TRUE true True / 0 f F FALSE false False; nullopt for anything else.
std::optional<bool> ParseBool(std::string_view s);

// The queue-name label, else the annotation of the same key, else "".
std::string QueueName(const Json& obj);

// Kueue's MaximumExecutionTimeSecondsForObject: the max-exec-time label as a
// positive int32, else nullopt (absent or not a positive integer).
std::optional<int32_t> MaxExecutionTimeSeconds(const Json& obj);

// Whether `obj` (a job or its Workload) is elastic: the annotation is "true".
bool IsElastic(const Json& obj);

bool HasQuotaReservation(const Json& wl);
// QuotaReserved=True and Admitted=True.
bool IsAdmitted(const Json& wl);

// Kueue's name: "<lowercase kind>-<name>" cut to 247 characters, "-", and the
// first 5 hex digits of SHA-1("<Kind>\n<group>\n<name>\n<uid>").
std::string WorkloadName(const GroupVersionKind& gvk, const std::string& owner_name,
                         const std::string& owner_uid);

// True when the job's podSets and the Workload's describe the same pods:
// names, counts, minCounts and, per template, containers' names, images and
// resources, node selector, tolerations, node affinity and
// priorityClassName. The second form takes the Workload's `spec.podSets`
// array.
bool EquivalentPodSets(const std::vector<Json>& job_podsets,
                       const std::vector<api::kueue::PodSetView>& wl_podsets);
bool EquivalentPodSets(const std::vector<Json>& job_podsets, const Json& wl_podsets);

// One PodSetInfo per pod set, from each template's current directives (what
// Stop restores to when the job has no annotation): of a Workload's
// `spec.podSets`, or of the pod sets a JobAdapter makes of its job.
std::vector<PodSetInfo> PodSetsInfoFromSpec(const std::vector<api::kueue::PodSetView>& pod_sets);
std::vector<PodSetInfo> PodSetsInfoFromSpec(const Json& wl);
std::vector<PodSetInfo> PodSetsInfoFromPodSets(const std::vector<Json>& job_podsets);

// Flavor name -> ResourceFlavor object (nullptr when unknown).
using FlavorLookup = std::function<std::shared_ptr<const Json>(const std::string&)>;
// One PodSetInfo per podSet assignment of `status.admission`: the count
// (falling back to the spec count) and the union of the assigned flavors'
// `spec.nodeLabels` and `spec.tolerations`. NotFound when a flavor is missing.
absl::StatusOr<std::vector<PodSetInfo>> PodSetsInfoFromAdmission(const Json& wl,
                                                                 const FlavorLookup& flavors);

// Sets the Workload's priority as Kueue picks it for `job`: the
// WorkloadPriorityClass its kueue.x-k8s.io/priority-class label names, else
// the PriorityClass `priority_class` (when empty, the first pod set
// template's priorityClassName), else the global default PriorityClass,
// else priority 0. NotFound when a named class does not exist.
absl::Status SetWorkloadPriority(client::Client& client, const Json& job,
                                 std::string priority_class, const std::vector<Json>& podsets,
                                 Json& wl);

Json PodSetsInfoToJson(const std::vector<PodSetInfo>& infos);
std::optional<std::vector<PodSetInfo>> PodSetsInfoFromJson(const Json& j);

}  // namespace batchd::controllers::workload::internal
