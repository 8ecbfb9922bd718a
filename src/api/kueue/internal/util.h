// Internal to api/kueue: helpers shared by the defaulting, validation,
// printing and conversion files. Stateless; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "api/field_error.h"
#include "api/json_access.h"
#include "api/resource/quantity.h"
#include "api/schema.h"

namespace batchd::api::kueue::internal {

// Sets obj[key] = value when the key is absent.
void SetIfAbsent(Json& obj, std::string_view key, const Json& value);

// The quantity in obj[key], if present and parseable.
std::optional<Quantity> QuantityAt(const Json& obj, std::string_view key);

// What a CRD's structural schema enforces beyond types: `required`
// properties (Required value) and `enum` values (Unsupported value), walked
// along `schema` from `value` at `path`.
ErrorList ValidateSchemaConstraints(const Schema& schema, const Json& value, const Path& path);

// Name references (cohort, flavor, ClusterQueue...): DNS-1123 subdomains.
void ValidateDNSSubdomain(const std::string& value, const Path& path, ErrorList& errs);
// Resource names and label keys: qualified names.
void ValidateQualifiedName(const std::string& value, const Path& path, ErrorList& errs);
// Toleration lists as Kueue's CEL rules on ResourceFlavor / PodSetUpdate check them.
void ValidateTolerations(const Json& tolerations, const Path& path, ErrorList& errs);
// max items.
void ValidateMaxItems(const Json& list, size_t max, const Path& path, ErrorList& errs);
// A quantity that must not be negative.
void ValidateNonNegative(const Json& obj, std::string_view key, const Path& path,
                         ErrorList& errs);
// `metadata` of a cluster-scoped (namespaced=false) or namespaced object, and
// the metadata part of an update.
ErrorList ValidateMeta(const Json& obj, bool namespaced);
ErrorList ValidateMetaUpdate(const Json& obj, const Json& old, bool namespaced);

}  // namespace batchd::api::kueue::internal
