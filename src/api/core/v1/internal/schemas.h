// Internal to api/core/v1: schema pieces and helpers shared between the
// core/v1 source files (and coordination/v1). Not a public API. Schemas are
// built once (function-local statics) and immutable; thread-safe.
#pragma once

#include <string>

#include "api/field_error.h"
#include "api/kind.h"
#include "api/schema.h"

namespace batchd::api::core_v1::internal {

// The OpenAPI name of a core/v1 definition: R("Pod") is "io.k8s.api.core.v1.Pod".
inline constexpr char kCore[] = "io.k8s.api.core.v1.";
inline std::string R(const char* name) { return std::string(kCore) + name; }

SchemaPtr ObjectReferenceSchema();
SchemaPtr LocalObjectReferenceSchema();
SchemaPtr ContainerSchema();
SchemaPtr ResourceRequirementsSchema();
SchemaPtr VolumeSchema();
SchemaPtr SeccompProfileSchema();
SchemaPtr SeLinuxOptionsSchema();
SchemaPtr AffinitySchema();
SchemaPtr TolerationSchema();
SchemaPtr TaintSchema();
SchemaPtr PodStatusSchema();
SchemaPtr PodSchema();
SchemaPtr NodeSelectorSchema();

// metav1.MicroTime: an RFC 3339 time kept with microseconds.
SchemaBuilder MicroTimeSchema(std::string doc);

// An object schema named `ref` that starts with apiVersion, kind and metadata.
SchemaBuilder TopLevel(const std::string& ref, const std::string& doc);

// Kubernetes' translateTimestampSince: "<unknown>" for empty, else "5m", "3d"...
std::string HumanAge(const Json& rfc3339, absl::Time now);
std::string HumanDuration(absl::Duration d);
// Parses an RFC 3339 time; false when it is not one.
bool ParseTime(const Json& v, absl::Time* out);

}  // namespace batchd::api::core_v1::internal
