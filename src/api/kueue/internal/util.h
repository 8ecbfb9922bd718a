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

// Tolerant accessors (missing or wrongly typed members read as empty).
const Json& GetObj(const Json& obj, std::string_view key);
const Json& GetArr(const Json& obj, std::string_view key);
bool Has(const Json& obj, std::string_view key);
// obj[key] as a JSON object, created (replacing a non-object) when needed.
Json& MutableObj(Json& obj, std::string_view key);
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
// Appends `more` to `errs`.
void Append(ErrorList& errs, const ErrorList& more);

}  // namespace batchd::api::kueue::internal
