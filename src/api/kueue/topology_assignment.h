// The topology assignment of a Workload's pod set
// (`status.admission.podSetAssignments[].topologyAssignment`) as plain
// values, and its v1beta2 wire form: `levels` plus `slices`, each slice a
// run of `domainCount` lowest-level domains whose values per level are
// either one `universalValue` or `prefix` + `roots[i]` + `suffix`, and whose
// pod counts are one `universalPodCount` or `podCounts[i]`. The v1beta1
// form (`domains[{values, count}]`) is produced by conversion.cc.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "api/field_error.h"

namespace batchd::api::kueue {

// Topology-aware scheduling on pods and pod templates (Kueue's names).
inline constexpr char kTopologySchedulingGate[] = "kueue.x-k8s.io/topology";
inline constexpr char kTasLabel[] = "kueue.x-k8s.io/tas";           // "true": placed by TAS
inline constexpr char kPodSetLabel[] = "kueue.x-k8s.io/podset";     // the pod set's name
inline constexpr char kWorkloadAnnotation[] = "kueue.x-k8s.io/workload";  // the Workload's name
inline constexpr char kPodSetRequiredTopology[] = "kueue.x-k8s.io/podset-required-topology";
inline constexpr char kPodSetPreferredTopology[] = "kueue.x-k8s.io/podset-preferred-topology";
inline constexpr char kPodSetUnconstrainedTopology[] =
    "kueue.x-k8s.io/podset-unconstrained-topology";
inline constexpr char kPodSetSliceRequiredTopology[] =
    "kueue.x-k8s.io/podset-slice-required-topology";
inline constexpr char kPodSetSliceSize[] = "kueue.x-k8s.io/podset-slice-size";
inline constexpr char kPodSetGroupName[] = "kueue.x-k8s.io/podset-group-name";
inline constexpr char kPodSetSliceRequiredTopologyConstraints[] =
    "kueue.x-k8s.io/podset-slice-required-topology-constraints";

struct TopologyDomainValue {
  std::vector<std::string> values;  // one per level, top first
  int32_t count = 0;
  friend bool operator==(const TopologyDomainValue&, const TopologyDomainValue&) = default;
};

struct TopologyAssignmentValue {
  std::vector<std::string> levels;
  std::vector<TopologyDomainValue> domains;
  friend bool operator==(const TopologyAssignmentValue&, const TopologyAssignmentValue&) = default;
};

// One slice holding every domain, each level compressed to a universal
// value when all domains share it, else to roots with their common prefix
// and suffix taken out.
Json EncodeTopologyAssignment(const TopologyAssignmentValue& ta);
// The v1beta2 form back into domains; nullopt when `ta` is not an object.
std::optional<TopologyAssignmentValue> DecodeTopologyAssignment(const Json& ta);

}  // namespace batchd::api::kueue
