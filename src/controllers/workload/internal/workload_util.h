// Helpers over Kueue v1beta2 Workload JSON shared by the generic reconciler
// and the adapters: label/annotation keys, the condition types (read and
// written through api/meta/conditions.h, metav1 shape), Kueue's workload
// names, the podSet comparison that decides whether a Workload still matches
// its job, and the PodSetInfo taken from an admission.
//
// Thread-safety: pure functions over JSON the caller owns.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "controllers/workload/adapter.h"

namespace batchd::controllers::workload::internal {

inline constexpr char kKueueGroup[] = "kueue.x-k8s.io";
inline constexpr char kKueueVersion[] = "v1beta2";
inline constexpr char kQueueNameKey[] = "kueue.x-k8s.io/queue-name";
inline constexpr char kPriorityClassLabel[] = "kueue.x-k8s.io/priority-class";
inline constexpr char kJobUidLabel[] = "kueue.x-k8s.io/job-uid";
inline constexpr char kStoppingAnnotation[] = "kueue.x-k8s.io/stopping";
// The pre-admission PodSetInfos of a running job (JSON array), written when
// the job starts and used to restore it when it stops.
inline constexpr char kOriginalPodSetsAnnotation[] = "batchd.io/original-podsets-info";

inline constexpr char kCondQuotaReserved[] = "QuotaReserved";
inline constexpr char kCondAdmitted[] = "Admitted";
inline constexpr char kCondEvicted[] = "Evicted";
inline constexpr char kCondFinished[] = "Finished";
inline constexpr char kCondPodsReady[] = "PodsReady";
inline constexpr char kCondRequeued[] = "Requeued";

// The queue-name label, else the annotation of the same key, else "".
std::string QueueName(const Json& obj);

bool HasQuotaReservation(const Json& wl);
// QuotaReserved=True and Admitted=True.
bool IsAdmitted(const Json& wl);

// Kueue's name: "<lowercase kind>-<name>" cut to 247 characters, "-", and the
// first 5 hex digits of SHA-1("<Kind>\n<group>\n<name>\n<uid>").
std::string WorkloadName(const GroupVersionKind& gvk, const std::string& owner_name,
                         const std::string& owner_uid);

// Copies limits into requests for resources without a request, in every
// container and init container of a pod template.
void DefaultRequestsFromLimits(Json& pod_template);

// True when the job's podSets and the Workload's describe the same pods:
// names, counts, minCounts and, per template, containers' names, images and
// resources, node selector, tolerations, affinity and priorityClassName.
bool EquivalentPodSets(const std::vector<Json>& job_podsets, const Json& wl_podsets);

// One PodSetInfo per `spec.podSets` entry, from each template's current
// directives (what Stop restores to when the job has no annotation).
std::vector<PodSetInfo> PodSetsInfoFromSpec(const Json& wl);

// Flavor name -> ResourceFlavor object (nullptr when unknown).
using FlavorLookup = std::function<std::shared_ptr<const Json>(const std::string&)>;
// One PodSetInfo per podSet assignment of `status.admission`: the count
// (falling back to the spec count) and the union of the assigned flavors'
// `spec.nodeLabels` and `spec.tolerations`. NotFound when a flavor is missing.
absl::StatusOr<std::vector<PodSetInfo>> PodSetsInfoFromAdmission(const Json& wl,
                                                                 const FlavorLookup& flavors);

Json PodSetsInfoToJson(const std::vector<PodSetInfo>& infos);
std::optional<std::vector<PodSetInfo>> PodSetsInfoFromJson(const Json& j);

}  // namespace batchd::controllers::workload::internal
