// Internal to api/core/v1: the Pod kind's pieces (table printer, QoS class,
// update validation), split out so they can be unit-tested. Stateless and
// thread-safe.
#pragma once

#include <string>
#include <vector>

#include "absl/time/time.h"
#include "api/field_error.h"
#include "api/kind.h"

namespace batchd::api::core_v1::internal {

std::vector<TableColumn> PodColumns();
// Cells after the name: Ready, Status, Restarts, Age, IP, Node, Nominated Node, Readiness Gates.
std::vector<Json> PodRowCells(const Json& pod, absl::Time now);
// "Guaranteed", "Burstable" or "BestEffort" from the containers' resources.
std::string PodQosClass(const Json& pod_spec);
// ValidatePodUpdate's spec rules (immutability, activeDeadlineSeconds,
// tolerations additions, scheduling gate removal).
ErrorList ValidatePodSpecUpdate(const Json& new_spec, const Json& old_spec, const Path& path);
KindDef PodKind();
KindDef NamespaceKind();
KindDef NodeKind();
KindDef EventKind();

// The value of a dotted field path ("spec.nodeName", "involvedObject.kind")
// rendered as a field-selector string: strings as is, booleans "true"/"false",
// numbers in decimal, "" when absent.
std::string FieldString(const Json& obj, const std::string& dotted);

}  // namespace batchd::api::core_v1::internal
