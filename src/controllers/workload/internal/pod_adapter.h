// Kueue's plain pod integration (pkg/controller/jobs/pod), the part that is
// about one pod: the labels, annotations, finalizer and scheduling gates
// Kueue puts on a queued pod, the pod group metadata
// (`kueue.x-k8s.io/pod-group-name` + `kueue.x-k8s.io/pod-group-total-count`),
// the role hash that sorts a group's pods into pod sets, and `PodAdapter`,
// the JobAdapter of one pod.
//
// A pod cannot be suspended: a queued pod is created behind the scheduling
// gate `kueue.x-k8s.io/admission` (and `kueue.x-k8s.io/topology`, which
// topology-aware admission keeps and the topology ungater lifts), "runs"
// when the gate is removed, and is stopped by ending it. The reconciler that
// drives pods (pod_reconciler.h) handles a single pod as a group of one.
//
// Thread-safety: stateless; pure functions and const methods.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "controllers/workload/adapter.h"

namespace batchd::controllers::workload::internal {

inline constexpr char kManagedLabel[] = "kueue.x-k8s.io/managed";  // value "true"
inline constexpr char kManagedValue[] = "true";
inline constexpr char kPodFinalizer[] = "kueue.x-k8s.io/managed";
inline constexpr char kAdmissionGate[] = "kueue.x-k8s.io/admission";
inline constexpr char kGroupNameLabel[] = "kueue.x-k8s.io/pod-group-name";
inline constexpr char kGroupTotalCountAnnotation[] = "kueue.x-k8s.io/pod-group-total-count";
inline constexpr char kRoleHashAnnotation[] = "kueue.x-k8s.io/role-hash";
inline constexpr char kRetriableInGroupAnnotation[] = "kueue.x-k8s.io/retriable-in-group";
inline constexpr char kIsGroupWorkloadAnnotation[] = "kueue.x-k8s.io/is-group-workload";
// The label a group's pods are ranked by (topology-aware placement), copied
// at create from the label the annotation names.
inline constexpr char kPodGroupPodIndexLabel[] = "kueue.x-k8s.io/pod-group-pod-index";
inline constexpr char kPodGroupPodIndexLabelAnnotation[] =
    "kueue.x-k8s.io/pod-group-pod-index-label";
// The pod condition Kueue sets on a pod it stops (evicted, not admitted).
inline constexpr char kTerminationTargetCondition[] = "TerminationTarget";

// The pod's group (label kueue.x-k8s.io/pod-group-name), "" for a single pod.
std::string GroupName(const api::Json& pod);
// The group total count annotation: an integer >= 1, else an error whose
// message is what the webhook and the events report.
absl::StatusOr<int32_t> GroupTotalCount(const api::Json& pod);
bool IsManaged(const api::Json& pod);
// Gated by kueue.x-k8s.io/admission: not admitted yet ("suspended").
bool IsGated(const api::Json& pod);
// Marked kueue.x-k8s.io/retriable-in-group: "false".
bool IsUnretriable(const api::Json& pod);
// Not Failed, and not being deleted before it was ever bound (Kueue's
// isPodRunnableOrSucceeded): the pods a group counts.
bool RunnableOrSucceeded(const api::Json& pod);

// The role of a pod in its group: 8 hex digits of a hash of what admission
// looks at (containers' and init containers' requests and ports, node
// selector, affinity, tolerations, runtime class, priority, topology spread,
// overhead, resource claims, pod-level requests), as Kueue's role hash. Pods
// of one role are one pod set, named by it.
std::string ComputeRoleHash(const api::Json& pod_spec);
// The role-hash annotation (set at create, before admission adds node
// selectors), else ComputeRoleHash.
std::string RoleHash(const api::Json& pod);

// Kueue's pod webhook defaulting of a pod it manages: label managed=true,
// the finalizer, the admission and topology gates, the role-hash
// annotation, and the pod-group-pod-index label when the annotation names
// its source. Idempotent.
void MarkManaged(api::Json& pod);

// The pod set of `count` pods shaped like `pod` (its spec as the template,
// requests defaulted from limits, its topology annotations as the request,
// ranked by kueue.x-k8s.io/pod-group-pod-index).
api::Json PodSetOf(const api::Json& pod, const std::string& name, int32_t count);

class PodAdapter : public JobAdapter {
 public:
  GroupVersionKind Gvk() const override { return {"", "v1", "Pod", "pods"}; }
  bool Skip(const api::Json& pod) const override { return !IsManaged(pod); }
  // Gated or terminated.
  bool IsSuspended(const api::Json& pod) const override;
  // Running.
  bool IsActive(const api::Json& pod) const override;
  std::optional<FinishedState> Finished(const api::Json& pod) const override;
  // Ready=True.
  bool PodsReady(const api::Json& pod) const override;
  // One pod set "main" of one pod.
  absl::StatusOr<std::vector<api::Json>> PodSets(const api::Json& pod) const override;
  // Pods cannot be suspended; a pod is stopped by ending it (the reconciler's).
  void Suspend(api::Json& pod) const override { (void)pod; }
  // Removes the admission gate and merges the flavors' node selector and
  // tolerations, and topology-aware admission's labels and annotation; the
  // topology gate stays only when `infos[0]` asks for it.
  absl::Status RunWithPodSetsInfo(api::Json& pod,
                                  const std::vector<PodSetInfo>& infos) const override;
  // Nothing to restore: a stopped pod is gone.
  bool RestorePodSetsInfo(api::Json& pod, const std::vector<PodSetInfo>& originals) const override {
    (void)pod;
    (void)originals;
    return false;
  }
};

}  // namespace batchd::controllers::workload::internal
