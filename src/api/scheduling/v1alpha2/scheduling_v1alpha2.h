// scheduling.k8s.io Workload and PodGroup: Kubernetes' workload-aware
// scheduling API. v1alpha2 (1.36) is stored: a Workload lists
// `podGroupTemplates` and a standalone PodGroup (with a /status subresource)
// is the runtime unit pods name in `spec.schedulingGroup.podGroupName`.
// v1alpha1 (1.35) Workload (`spec.podGroups[]{name, policy}`) is served by
// conversion to and from v1alpha2; its pods use `spec.workloadRef`.
//
// batchd honours the scheduling policy (basic, or gang with minCount) and
// `disruptionMode: Pod`; the fields it does not implement
// (schedulingConstraints, resourceClaims, priorityClassName, priority,
// disruptionMode PodGroup) are refused with a Forbidden error naming them.
//
// Also here: reading a group's policy for the pod scheduler. Stateless and
// thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "api/field_error.h"
#include "api/kind.h"

namespace batchd::api::scheduling_v1alpha2 {

inline constexpr char kGroup[] = "scheduling.k8s.io";
inline constexpr char kVersion[] = "v1alpha2";
inline constexpr char kV1alpha1[] = "v1alpha1";
inline constexpr char kWorkloads[] = "workloads";
inline constexpr char kPodGroups[] = "podgroups";
inline constexpr size_t kMaxPodGroupTemplates = 8;

// PodGroup status conditions (types and reasons as in the 1.36 API constants).
inline constexpr char kPodGroupScheduled[] = "PodGroupScheduled";
inline constexpr char kReasonScheduled[] = "Scheduled";
inline constexpr char kReasonUnschedulable[] = "Unschedulable";
inline constexpr char kDisruptionTarget[] = "DisruptionTarget";
inline constexpr char kReasonPreemptionByScheduler[] = "PreemptionByScheduler";

inline constexpr char kDisruptionModePod[] = "Pod";
inline constexpr char kDisruptionModePodGroup[] = "PodGroup";

// A group's scheduling policy: basic (per-pod scheduling) or gang, and its
// disruption mode.
struct GroupPolicy {
  bool gang = false;
  int32_t min_count = 1;  // Meaningful for gang only.
  // disruptionMode PodGroup: when one member is disrupted, all are.
  bool disrupt_whole = false;
};

// The policy of a `schedulingPolicy` object ({basic: {}} | {gang: {minCount}}).
GroupPolicy ParseSchedulingPolicy(const Json& policy);
// The policy of a Workload pod group template or a PodGroup spec: its
// `schedulingPolicy` and `disruptionMode`.
GroupPolicy ParseGroupPolicy(const Json& template_or_spec);
// The policy of a stored (v1alpha2) PodGroup.
GroupPolicy PodGroupPolicy(const Json& pod_group);
// The policy of the template `name` of a stored (v1alpha2) Workload, or
// nullopt when the Workload has no such template.
std::optional<GroupPolicy> WorkloadTemplatePolicy(const Json& workload, std::string_view name);

// Validation (exposed for tests; the KindDefs call them).
ErrorList ValidateWorkload(const Json& wl);
ErrorList ValidateWorkloadUpdate(const Json& wl, const Json& old);
ErrorList ValidatePodGroup(const Json& pg);
ErrorList ValidatePodGroupUpdate(const Json& pg, const Json& old);
ErrorList ValidatePodGroupStatusUpdate(const Json& pg, const Json& old);
void SetDefaultsPodGroup(Json& pg);
void SetDefaultsWorkload(Json& wl);

// v1alpha1 <-> v1alpha2 Workload conversion (apiVersion included).
void WorkloadToV1alpha2(Json& wl);
void WorkloadToV1alpha1(Json& wl);

// Adds Workload and PodGroup (v1alpha2, stored) and Workload v1alpha1.
void RegisterKinds(Scheme& scheme);

}  // namespace batchd::api::scheduling_v1alpha2
