// Resource metrics (metrics.k8s.io/v1beta1: NodeMetrics and PodMetrics, what
// `kubectl top` reads), served by the ApiServer from a ResourceMetricsSource:
// each node's usage as its agent measures it (agent/internal/resource_stats.h),
// or for simulated nodes the requests of the pods bound to them.
//
// The agent answers GET /stats/summary on its endpoint with a subset of the
// kubelet's Summary API (node and pods, cpu and memory), plus the window
// each cpu rate was measured over; SummaryToJson / SummaryFromJson are that
// wire format.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "api/json_access.h"

namespace batchd::apiserver {

struct ResourceUsage {
  int64_t cpu_nanocores = 0;  // rate over the window
  int64_t memory_bytes = 0;   // working set
  absl::Time time = absl::UnixEpoch();  // when it was measured
  absl::Duration window = absl::ZeroDuration();
};

struct ContainerUsageSummary {
  std::string name;
  ResourceUsage usage;
};

struct PodUsageSummary {
  std::string ns, name, uid;
  std::vector<ContainerUsageSummary> containers;
};

struct NodeUsageSummary {
  std::string node_name;
  ResourceUsage usage;
  std::vector<PodUsageSummary> pods;
};

api::Json SummaryToJson(const NodeUsageSummary& s);
// InvalidArgument when `j` is not a summary.
absl::StatusOr<NodeUsageSummary> SummaryFromJson(const api::Json& j);

// Where usage comes from. Thread-safe.
class ResourceMetricsSource {
 public:
  virtual ~ResourceMetricsSource() = default;
  // The usage of `node` (a Node object) and of its running pods; an error
  // when the node reports none (it is then left out, as metrics-server
  // leaves out nodes it cannot scrape).
  virtual absl::StatusOr<NodeUsageSummary> NodeUsage(const api::Json& node) = 0;
};

}  // namespace batchd::apiserver
