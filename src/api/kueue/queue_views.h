// Typed views of the Kueue objects the queue manager reads on every sync:
// Workload, LocalQueue and ClusterQueue (see api/meta/object_view.h for what
// a view is and its lifetime rule: it points into the JSON it was parsed
// from). Only the fields the controllers read outside the conversion into
// the admission core are here; add one when a component needs it.
//
// Thread-safety: immutable after Parse.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "absl/time/time.h"
#include "api/field_error.h"
#include "api/meta/object_view.h"

namespace batchd::api::kueue {

// spec.podSets[*].
struct PodSetView {
  std::string_view name;  // "main" when unset (Kueue's default name).
  int32_t count = 1;
  std::optional<int32_t> min_count;
  const Json* pod_template = nullptr;  // template, or nullptr.

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
  const Json* conditions = nullptr;  // status.conditions; read with api/meta/conditions.h.

  // REQUIRES: `workload` outlives the view.
  static WorkloadView Parse(const Json& workload);
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

struct LocalQueueView {
  meta::ObjectMetaView meta;
  std::string_view cluster_queue;  // spec.clusterQueue
  const Json* spec = nullptr;      // spec (an object; never nullptr after Parse).

  // REQUIRES: `local_queue` outlives the view.
  static LocalQueueView Parse(const Json& local_queue);
};

struct ClusterQueueView {
  struct ResourceGroup {
    std::vector<std::string_view> covered_resources;
    std::vector<std::string_view> flavors;  // flavors[*].name, in spec order.
  };
  meta::ObjectMetaView meta;
  std::vector<ResourceGroup> resource_groups;
  const Json* spec = nullptr;  // spec (an object; never nullptr after Parse).

  // REQUIRES: `cluster_queue` outlives the view.
  static ClusterQueueView Parse(const Json& cluster_queue);
};

// A ResourceFlavor's scheduling directives, which the job integrations add
// to the pod templates of a job admitted on it.
struct ResourceFlavorView {
  meta::ObjectMetaView meta;
  const Json* node_labels = nullptr;  // spec.nodeLabels (an object), or nullptr.
  const Json* tolerations = nullptr;  // spec.tolerations (an array), or nullptr.

  // REQUIRES: `resource_flavor` outlives the view.
  static ResourceFlavorView Parse(const Json& resource_flavor);
};

}  // namespace batchd::api::kueue
