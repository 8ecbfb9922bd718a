// Conversions from Kueue v1beta2 API objects (JSON) into the admission core's
// typed structs (queueing/types.h), and the Workload helpers the queue manager
// shares: conditions, admission records, per-pod requests as Kueue computes
// them. Tolerant of missing fields (defaults as Kueue's CRDs): the registry
// has already validated what it stored.
//
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "absl/time/time.h"
#include "api/field_error.h"
#include "queueing/types.h"

namespace batchd::controllers::queueing::internal {

using api::Json;

batchd::queueing::ResourceFlavor ToResourceFlavor(const Json& rf);
batchd::queueing::ClusterQueue ToClusterQueue(const Json& cq);
batchd::queueing::Cohort ToCohort(const Json& cohort);
batchd::queueing::LocalQueue ToLocalQueue(const Json& lq);
batchd::queueing::StopPolicy ParseStopPolicy(const Json& spec);

// Flavor names a ClusterQueue references, in order; and covered resources.
std::set<std::string> FlavorNames(const Json& cq);
std::set<std::string> CoveredResources(const Json& cq);

// Per-pod requests of a PodTemplateSpec as Kueue computes them: the sum over
// containers (limits stand in for missing requests) plus restartable init
// containers (sidecars), at least the largest init container (with the
// sidecars started before it), plus pod overhead. Zero amounts are dropped.
std::map<std::string, batchd::queueing::Amount> PodRequests(const Json& pod_template);

struct WorkloadContext {
  std::string cluster_queue;                // resolved through the LocalQueue
  bool cq_covers_pods = false;              // add `pods: 1` per pod
  bool order_by_eviction_time = true;       // requeuingStrategy.timestamp = Eviction
  std::map<std::string, std::string> namespace_labels;
};
batchd::queueing::Workload ToWorkload(const Json& wl, const WorkloadContext& ctx);

// status.admission <-> core Admission.
std::optional<batchd::queueing::Admission> AdmissionFromJson(const Json& wl);
Json AdmissionToJson(const batchd::queueing::Admission& a);

// Kueue's quantity rendering for status: cpu as milli DecimalSI, memory /
// ephemeral-storage / hugepages-* as BinarySI, others DecimalSI.
Json QuantityJson(std::string_view resource, batchd::queueing::Amount milli);

// "ns/name".
std::string WorkloadKey(const Json& obj);

}  // namespace batchd::controllers::queueing::internal
