// Conversions from the typed views of Kueue v1beta2 objects
// (api/kueue/queue_views.h) into the admission core's structs
// (queueing/types.h), and back from the core's Admission into the status
// writers' values (api/kueue/queue_writers.h). The views name every field;
// nothing here reads JSON by a field name. Tolerant of missing fields
// (defaults as Kueue's CRDs): the registry has already validated what it
// stored.
//
// Callers parse each view once per sync and pass it in: a conversion never
// re-parses the object.
//
// Thread-safety: pure functions.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "absl/time/time.h"
#include "api/field_error.h"
#include "api/kueue/queue_views.h"
#include "api/kueue/queue_writers.h"
#include "queueing/types.h"

namespace batchd::controllers::queueing::internal {

using api::Json;

batchd::queueing::ResourceFlavor ToResourceFlavor(const api::kueue::ResourceFlavorView& rf);
batchd::queueing::ClusterQueue ToClusterQueue(const api::kueue::ClusterQueueView& cq,
                                              const api::kueue::ResourceGroupsView& groups);
batchd::queueing::Cohort ToCohort(const api::kueue::CohortView& cohort,
                                  const api::kueue::ResourceGroupsView& groups);
batchd::queueing::LocalQueue ToLocalQueue(const api::kueue::LocalQueueView& lq);
batchd::queueing::Topology ToTopology(const api::kueue::TopologyView& topology);
// A pod set's topologyRequest; nullopt when it asks for no placement.
std::optional<batchd::queueing::TopologyRequest> ToTopologyRequest(
    const std::optional<api::kueue::PodSetTopologyRequestView>& request);
batchd::queueing::StopPolicy ToStopPolicy(api::kueue::StopPolicy p);

// Per-pod requests of a pod template as Kueue computes them: the sum over
// containers (limits stand in for missing requests) plus restartable init
// containers (sidecars), at least the largest init container (with the
// sidecars started before it), plus pod overhead. Zero amounts are dropped.
std::map<std::string, batchd::queueing::Amount> PodRequests(
    const api::kueue::PodSetTemplateView& pod_template);

// The resource Kueue counts one of per pod when a ClusterQueue covers it.
inline constexpr char kPodsResource[] = "pods";

struct WorkloadContext {
  std::string cluster_queue;                // resolved through the LocalQueue
  bool cq_covers_pods = false;              // add `pods: 1` per pod (kPodsResource)
  bool order_by_eviction_time = true;       // requeuingStrategy.timestamp = Eviction
  std::map<std::string, std::string> namespace_labels;
};
batchd::queueing::Workload ToWorkload(const api::kueue::WorkloadView& wl,
                                      const api::kueue::WorkloadPodSetsView& pod_sets,
                                      const WorkloadContext& ctx);

// status.admission -> core Admission; nullopt when the workload has none.
std::optional<batchd::queueing::Admission> ToAdmission(
    const api::kueue::WorkloadView& wl, const api::kueue::WorkloadPodSetsView& pod_sets);
// Core Admission -> the writer's value (views into `a`: it must outlive the result).
api::kueue::AdmissionStatus ToAdmissionStatus(const batchd::queueing::Admission& a);

// "ns/name".
std::string WorkloadKey(const Json& obj);
std::string WorkloadKey(const api::meta::ObjectMetaView& meta);

}  // namespace batchd::controllers::queueing::internal
