// Patch: the three PATCH formats of the Kubernetes API applied to JSON
// documents — JSON merge patch (RFC 7386), JSON patch (RFC 6902) and
// strategic merge patch (apimachinery `strategicpatch` semantics, driven by
// the patch strategy / merge key metadata of `api::Schema`).
//
// All functions are pure (inputs are never modified) and thread-safe; they
// never throw or crash. Work is bounded: documents nested deeper than
// `kMaxPatchDepth`, JSON patches of more than `kMaxJsonPatchOperations`
// operations, or results grown past `kMaxPatchResultNodes` values are errors.
//
// Error codes (the API server maps them to HTTP):
//   kInvalidArgument    malformed patch (not an object/array, unknown op or
//                       directive, bad JSON pointer, missing merge key), or a
//                       patch that cannot apply (path not found, index out of
//                       range, type mismatch)                     -> 422/400
//   kFailedPrecondition a JSON patch `test` operation failed     -> 422
//   kResourceExhausted  a size/operation bound above was exceeded -> 413/422
#pragma once

#include <cstddef>

#include "absl/status/statusor.h"
#include "api/field_error.h"
#include "api/schema.h"

namespace batchd::api {

// Matches the codec's `kMaxNestingDepth`: no patch result nests deeper than
// a body the server would accept.
inline constexpr int kMaxPatchDepth = 400;
inline constexpr size_t kMaxJsonPatchOperations = 10'000;
inline constexpr size_t kMaxPatchResultNodes = 5'000'000;

// RFC 7386: objects merge recursively, `null` deletes a member, anything else
// (arrays included) replaces. A non-object patch replaces the document.
absl::StatusOr<Json> ApplyMergePatch(const Json& original, const Json& patch);

// RFC 6902: `ops` is an array of {op, path, value|from} with op one of add,
// remove, replace, move, copy, test; paths are JSON pointers (`~0` = `~`,
// `~1` = `/`, `-` = past the end of an array). All-or-nothing.
absl::StatusOr<Json> ApplyJsonPatch(const Json& original, const Json& ops);

// Strategic merge patch. Maps merge recursively and `null` deletes. A list
// whose schema has patch strategy "merge" and a merge key merges elements by
// that key (new ones appended in patch order); a "merge" list of primitives
// is a union; any other list is replaced. Directives:
//   {"$patch": "replace"|"delete"} in a map, or as a list element
//   ({"$patch":"replace"} replaces the list, {"$patch":"delete", key: v}
//   removes one element, {"$patch":"merge"} is the default and ignored);
//   "$deleteFromPrimitiveList/<field>": [values];
//   "$setElementOrder/<field>": [elements or {key: v}] (final order);
//   "$retainKeys": [names] (drop the original's other fields).
// Directives never appear in the result. `schema` may be null or not describe
// a field; that subtree is then merged as JSON merge patch does.
// REQUIRES: `patch` is an object.
absl::StatusOr<Json> ApplyStrategicMergePatch(const Json& original, const Json& patch,
                                              const Schema* schema);

}  // namespace batchd::api
