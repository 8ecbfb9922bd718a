// Topology-aware scheduling in the job integrations: the pod template
// annotations a user writes (kueue.x-k8s.io/podset-required-topology,
// -preferred-topology, -unconstrained-topology, -slice-required-topology
// with -slice-size, the multi-layer -slice-required-topology-constraints
// (a JSON array of {"topology", "size"}, outermost first, at most 3) and
// podset-group-name) become the Workload pod set's `topologyRequest`, and the
// marks admission puts on a TAS pod template (the kueue.x-k8s.io/topology
// scheduling gate, the tas and podset labels, the workload annotation) are
// what stripping takes off again.
//
// Bad annotations are refused when the job is created or updated
// (ValidateTopologyAnnotations), with Kueue's rules and field paths.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "api/field_error.h"
#include "api/kueue/workload_writers.h"

namespace batchd::controllers::workload::internal {

// The request the template's annotations ask for; nullopt when none. Only
// meaningful for templates that passed ValidateTopologyAnnotations.
std::optional<api::kueue::PodSetTopologyRequestValue> TopologyRequestFromTemplate(
    const api::Json& pod_template, std::string_view pod_index_label);

// Checks the topology annotations of `pod_template` (a pod set of
// `pod_count` pods; 0 when not known, as for a plain pod, which skips the
// checks of slice sizes against it) and appends errors at
// `annotations_path` (the template's metadata.annotations).
void ValidateTopologyAnnotations(const api::Json& pod_template, int32_t pod_count,
                                 const api::Path& annotations_path, api::ErrorList& errs);

// Removes admission's TAS marks from a pod template; returns whether any was there.
bool StripTopologyMarks(api::Json& pod_template);

}  // namespace batchd::controllers::workload::internal
