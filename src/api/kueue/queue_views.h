// Typed views of the Kueue objects the controllers read: Workload (its queue
// fields, pod sets and admission), LocalQueue, ClusterQueue, Cohort and
// ResourceFlavor, and the parts of a pod set's template that admission reads
// (see api/meta/object_view.h for what a view is and its lifetime rule: it
// points into the JSON it was parsed from). Every field the queue manager
// converts into the admission core is named here, parsed in a Parse
// function, never read as a string literal at the call site; add one when a
// component needs it. The status writers are in queue_writers.h.
//
// Views are split by cost, so that a frequent read does not pay for what it
// does not use: WorkloadView (a workload's queue and state, read several
// times a sync) apart from WorkloadPodSetsView (pod sets and assignments)
// and PodSetTemplateView (requests, selectors, affinity of one template);
// ClusterQueueView (policies) apart from ResourceGroupsView (quotas, parsed
// into amounts).
//
// Thread-safety: immutable after Parse.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/time/time.h"
#include "api/field_error.h"
#include "api/meta/object_view.h"
#include "api/resource/amount.h"

namespace batchd::api::kueue {

// --- Shared pieces ---------------------------------------------------------

// spec.stopPolicy of a ClusterQueue or LocalQueue; unset or unknown: kNone.
enum class StopPolicy { kNone, kHold, kHoldAndDrain };
// The stopPolicy of `queue` (a ClusterQueue or LocalQueue) alone, for a
// reader that needs nothing else of it: the queue manager checks the queues
// of every admitted workload it syncs.
StopPolicy StopPolicyOf(const Json& queue);

// One entry of a ResourceList (resource name -> quantity).
struct ResourceAmount {
  std::string_view name;
  Amount amount;

  friend bool operator==(const ResourceAmount&, const ResourceAmount&) = default;
};

// The entries of a ResourceList object (`requests`, `overhead`,
// `resourceUsage`), in resource-name order; entries whose quantity does not
// parse are skipped, and a non-object reads as empty.
// REQUIRES: `list` outlives the result.
std::vector<ResourceAmount> ParseResourceList(const Json& list);

// One metav1.Condition of `status.conditions`.
struct ConditionView {
  std::string_view type;
  std::string_view status;  // "True", "False", "Unknown"
  std::string_view reason;
  std::string_view message;
  std::optional<absl::Time> last_transition_time;  // nullopt: unset or unparsable.

  bool is_true() const { return status == "True"; }
  // The entry of `type` in `conditions` (an array, or nullptr), or nullopt.
  // REQUIRES: `conditions` outlives the view.
  static std::optional<ConditionView> Find(const Json* conditions, std::string_view type);
};

// The `spec` of a Kueue object as it is (null when absent): the queue
// manager compares queue objects' specs to tell a spec change from a status
// write. No copy.
const Json& SpecOf(const Json& obj);

// --- Workload --------------------------------------------------------------

// spec.podSets[*].topologyRequest (Kueue's PodSetTopologyRequest).
struct PodSetTopologyRequestView {
  std::string_view required;   // level label key, "" when unset
  std::string_view preferred;  // level label key, "" when unset
  bool unconstrained = false;
  std::string_view slice_required_topology;  // podSetSliceRequiredTopology
  std::optional<int32_t> slice_size;         // podSetSliceSize
  std::string_view pod_set_group_name;       // podSetGroupName
  std::string_view pod_index_label;          // podIndexLabel: the label holding a pod's rank
  std::string_view sub_group_index_label;    // subGroupIndexLabel: the replicated job's index
  std::optional<int32_t> sub_group_count;    // subGroupCount: replicated jobs in the pod set
  // podsetSliceRequiredTopologyConstraints, outermost first (topology, size).
  std::vector<std::pair<std::string_view, int32_t>> slice_constraints;
};

// spec.podSets[*].
struct PodSetView {
  std::string_view name;  // "main" when unset (Kueue's default name).
  int32_t count = 1;
  std::optional<int32_t> min_count;
  const Json* pod_template = nullptr;  // template, or nullptr; see PodSetTemplateView.
  std::optional<PodSetTopologyRequestView> topology_request;  // nullopt when unset

  // One entry of spec.podSets (or a pod set a job integration built).
  // REQUIRES: `pod_set` outlives the view.
  static PodSetView Parse(const Json& pod_set);
};

// status.admission.podSetAssignments[*].
struct PodSetAssignmentView {
  std::string_view name;  // "main" when unset.
  std::optional<int32_t> count;  // nullopt: the pod set's count.
  // The distinct flavors of `flavors` (resource -> flavor), sorted.
  std::vector<std::string_view> flavors;
  // `flavors` itself: (resource, flavor), in resource order.
  std::vector<std::pair<std::string_view, std::string_view>> resource_flavors;
  // resourceUsage (the ResourceList object), or nullptr; read with
  // ParseResourceList (not parsed here: most readers need only the flavors).
  const Json* resource_usage = nullptr;
  // topologyAssignment (v1beta2 levels + slices), or nullptr; read with
  // DecodeTopologyAssignment (api/kueue/topology_assignment.h).
  const Json* topology_assignment = nullptr;
};

struct WorkloadView {
  meta::ObjectMetaView meta;
  // spec
  std::string_view queue_name;
  bool active = true;  // spec.active; unset (or not a boolean) means active.
  // status
  bool has_admission = false;  // status.admission is an object (quota reserved).
  std::string_view admission_cluster_queue;
  int32_t requeue_count = 0;   // status.requeueState.count
  // status.requeueState.requeueAt; nullopt when unset or unparsable.
  std::optional<absl::Time> requeue_at;
  // status.conditions, or nullptr; read with Condition() or api/meta/conditions.h.
  const Json* conditions = nullptr;
  // spec
  std::optional<int32_t> priority;  // spec.priority when an integer.

  // REQUIRES: `workload` outlives the view.
  static WorkloadView Parse(const Json& workload);

  // The condition of `type` in status.conditions, or nullopt.
  std::optional<ConditionView> Condition(std::string_view type) const {
    return ConditionView::Find(conditions, type);
  }
  bool IsConditionTrue(std::string_view type) const {
    const std::optional<ConditionView> c = Condition(type);
    return c && c->is_true();
  }
};

// The pod sets of a Workload and their assignments, parsed apart from
// WorkloadView: the queue manager reads a workload's queue and state several
// times a sync, and those reads should not pay for the pod sets.
struct WorkloadPodSetsView {
  std::vector<PodSetView> pod_sets;                   // spec.podSets
  std::vector<PodSetAssignmentView> assignments;      // status.admission.podSetAssignments

  // REQUIRES: `workload` outlives the view.
  static WorkloadPodSetsView Parse(const Json& workload);
};

// A container of a pod template as Kueue's admission reads it.
struct ContainerResourcesView {
  std::vector<ResourceAmount> requests;  // resources.requests
  std::vector<ResourceAmount> limits;    // resources.limits (stand in for missing requests)
  bool restart_always = false;           // restartPolicy: Always (an init container is a sidecar)
};

// nodeSelectorTerms[*].matchExpressions[*].operator; kUnknown for any other text.
enum class NodeSelectorOperator { kUnknown, kIn, kNotIn, kExists, kDoesNotExist, kGt, kLt };

struct NodeSelectorRequirementView {
  std::string_view key;
  NodeSelectorOperator op = NodeSelectorOperator::kUnknown;
  std::vector<std::string_view> values;  // String entries, in spec order.
};

// What admission reads of a pod set's template (a core/v1 PodTemplateSpec):
// per-container resources, pod overhead, node selector, required node
// affinity and tolerations. Parsed only when a workload is converted.
struct PodSetTemplateView {
  std::vector<ContainerResourcesView> containers;       // spec.containers
  std::vector<ContainerResourcesView> init_containers;  // spec.initContainers
  std::vector<ResourceAmount> overhead;                 // spec.overhead
  // spec.nodeSelector object, or nullptr; read with api::StringMap.
  const Json* node_selector = nullptr;
  // spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution
  // .nodeSelectorTerms: the terms (ORed), each its matchExpressions (ANDed).
  std::vector<std::vector<NodeSelectorRequirementView>> required_node_affinity;
  // spec.tolerations array, or nullptr; read with api/core/v1/taint.h.
  const Json* tolerations = nullptr;

  // REQUIRES: `pod_template` outlives the view.
  static PodSetTemplateView Parse(const Json& pod_template);
};

// --- LocalQueue ------------------------------------------------------------

struct LocalQueueView {
  meta::ObjectMetaView meta;
  std::string_view cluster_queue;  // spec.clusterQueue
  StopPolicy stop_policy = StopPolicy::kNone;  // spec.stopPolicy

  // REQUIRES: `local_queue` outlives the view.
  static LocalQueueView Parse(const Json& local_queue);
};

// --- ClusterQueue and Cohort quotas ----------------------------------------

// resourceGroups[*].flavors[*].resources[*].
struct ResourceQuotaView {
  std::string_view name;
  Amount nominal_quota;                   // 0 when unset or unparsable.
  std::optional<Amount> borrowing_limit;  // nullopt: unset (unlimited within the cohort).
  std::optional<Amount> lending_limit;    // nullopt: unset (all of nominal lendable).
};

// resourceGroups[*].flavors[*].
struct FlavorQuotasView {
  std::string_view name;
  std::vector<ResourceQuotaView> resources;  // In spec order.
};

// resourceGroups[*].
struct ResourceGroupView {
  std::vector<std::string_view> covered_resources;  // String entries, in spec order.
  std::vector<FlavorQuotasView> flavors;            // In spec order (order of preference).
};

// spec.resourceGroups of a ClusterQueue or a Cohort, quotas parsed into
// amounts; parsed apart from ClusterQueueView, whose policies are read on
// every sync of an admitted workload.
struct ResourceGroupsView {
  std::vector<ResourceGroupView> groups;

  // REQUIRES: `queue` (a ClusterQueue or Cohort) outlives the view.
  static ResourceGroupsView Parse(const Json& queue);

  // Whether some group covers `resource`.
  bool Covers(std::string_view resource) const;
};

// --- ClusterQueue ----------------------------------------------------------

enum class QueueingStrategy { kBestEffortFIFO, kStrictFIFO };  // Unset or unknown: BestEffortFIFO.
// Preemption policies; unset or unknown: kNever.
enum class PreemptionPolicy { kNever, kLowerPriority, kLowerOrNewerEqualPriority, kAny };
// flavorFungibility.whenCanBorrow / whenCanPreempt; any text but TryNextFlavor
// reads as kMayStopSearch.
enum class FungibilityPolicy { kMayStopSearch, kTryNextFlavor };
enum class FungibilityPreference { kBorrowingOverPreemption, kPreemptionOverBorrowing };

struct ClusterQueueView {
  meta::ObjectMetaView meta;
  std::string_view cohort_name;  // spec.cohortName (spec.cohort when unset); "" = none.
  QueueingStrategy queueing_strategy = QueueingStrategy::kBestEffortFIFO;
  // spec.namespaceSelector, or nullptr when unset or null (Kueue's nil: no
  // namespace); read with api/labels/selector.h.
  const Json* namespace_selector = nullptr;
  // spec.flavorFungibility
  FungibilityPolicy when_can_borrow = FungibilityPolicy::kMayStopSearch;
  FungibilityPolicy when_can_preempt = FungibilityPolicy::kTryNextFlavor;
  FungibilityPreference fungibility_preference = FungibilityPreference::kBorrowingOverPreemption;
  // spec.preemption
  PreemptionPolicy within_cluster_queue = PreemptionPolicy::kNever;
  PreemptionPolicy reclaim_within_cohort = PreemptionPolicy::kNever;
  PreemptionPolicy borrow_within_cohort = PreemptionPolicy::kNever;  // borrowWithinCohort.policy
  std::optional<int32_t> borrow_max_priority_threshold;  // borrowWithinCohort.maxPriorityThreshold
  StopPolicy stop_policy = StopPolicy::kNone;  // spec.stopPolicy
  double fair_sharing_weight = 1;  // spec.fairSharing.weight; 1 when unset or unparsable.

  // REQUIRES: `cluster_queue` outlives the view.
  static ClusterQueueView Parse(const Json& cluster_queue);
};

// --- Cohort ----------------------------------------------------------------

struct CohortView {
  meta::ObjectMetaView meta;
  std::string_view parent_name;  // spec.parentName (spec.parent when unset); "" = a root.
  double fair_sharing_weight = 1;  // spec.fairSharing.weight; 1 when unset or unparsable.

  // REQUIRES: `cohort` outlives the view.
  static CohortView Parse(const Json& cohort);
};

// --- ResourceFlavor --------------------------------------------------------

struct ResourceFlavorView {
  meta::ObjectMetaView meta;
  // spec.nodeLabels object, or nullptr; read with api::StringMap.
  const Json* node_labels = nullptr;
  // spec.nodeTaints and spec.tolerations arrays, or nullptr; read with
  // api/core/v1/taint.h (ParseTaintList, ParseTolerationList).
  const Json* node_taints = nullptr;
  const Json* tolerations = nullptr;
  std::string_view topology_name;  // spec.topologyName, "" for a flavor without topology

  // REQUIRES: `resource_flavor` outlives the view.
  static ResourceFlavorView Parse(const Json& resource_flavor);
};

// A Topology: spec.levels[*].nodeLabel, top first.
struct TopologyView {
  meta::ObjectMetaView meta;
  std::vector<std::string_view> levels;

  // REQUIRES: `topology` outlives the view.
  static TopologyView Parse(const Json& topology);
};

}  // namespace batchd::api::kueue
