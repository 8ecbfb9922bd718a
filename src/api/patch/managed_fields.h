// Field ownership for server-side apply (`metadata.managedFields`), with the
// semantics of Kubernetes' structured-merge-diff:
//
//  - a field set is a set of paths; a path is a list of elements written as
//    in FieldsV1: "f:<field or map key>", "k:<JSON object of an associative
//    list item's keys>", "v:<JSON of a set item>", "i:<index>";
//  - lists are associative when the schema names merge keys (list-type map
//    or a patch merge key), sets when list-type is "set" (or a merge-strategy
//    list of scalars), atomic otherwise (the list is one field); objects and
//    maps are granular (each key is a field; an empty one sets nothing);
//  - an Update (create, PUT, non-apply PATCH) gives its manager the fields it
//    added or changed and takes them from every other manager;
//  - an Apply merges the configuration into the live object, conflicts when
//    it changes a field another manager owns (unless forced, which moves the
//    ownership), owns exactly the fields of its configuration, and removes
//    the fields it applied before, no longer applies, and nobody else owns.
//
// Pure functions on JSON; thread-safe. Recursion is bounded by the nesting
// depth of the inputs (the codec caps bodies at 400 levels).
#pragma once

#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "api/field_error.h"
#include "api/schema.h"

namespace batchd::api::fieldmanager {

using FieldPath = std::vector<std::string>;
using FieldSet = std::set<FieldPath>;

// FieldsV1 (a trie as JSON: "." marks a member that also has children).
Json ToFieldsV1(const FieldSet& set);
// InvalidArgument when `fields` is not FieldsV1 (not an object, a key that is
// no path element, a "." that is not empty).
absl::StatusOr<FieldSet> FromFieldsV1(const Json& fields);

// A path as Kubernetes prints it in conflicts: `.spec.containers[name="c"].image`,
// `.metadata.finalizers[="x"]`, `.spec.items[2]`.
std::string PathString(const FieldPath& path);

// The fields `obj` sets (structured-merge-diff's ToFieldSet), `schema`
// describing it (null: untyped, maps granular and lists atomic).
FieldSet FieldsOf(const Json& obj, const Schema* schema);

struct Comparison {
  FieldSet added, modified, removed;
  bool Empty() const { return added.empty() && modified.empty() && removed.empty(); }
};
Comparison Compare(const Json& old_obj, const Json& new_obj, const Schema* schema);

// `config` merged into `live`: objects and maps key by key, associative
// lists item by item (matching keys), sets as unions, anything else replaced.
Json MergeApplied(const Json& live, const Json& config, const Schema* schema);

// Removes each member of `paths` (a field, map key or list item) from `obj`.
void RemoveFields(Json& obj, const FieldSet& paths, const Schema* schema);

// One metadata.managedFields entry.
struct Entry {
  std::string manager;
  std::string operation;    // "Apply" or "Update".
  std::string api_version;
  std::string subresource;  // "" or "status".
  std::string time;         // RFC 3339, may be empty.
  FieldSet fields;
};

// metadata.managedFields (absent or null: none) as entries; InvalidArgument
// naming the entry when one is malformed.
absl::StatusOr<std::vector<Entry>> ParseManagedFields(const Json& managed_fields);
Json EncodeManagedFields(const std::vector<Entry>& entries);

// What a write is and who makes it.
struct Operation {
  std::string manager;
  std::string api_version;
  std::string subresource;
  std::string time;
  // Paths nobody owns, as Kubernetes strips them: apiVersion, kind, the
  // server-set metadata, and `status` of the main resource or `spec` of
  // the status subresource (the fields the endpoint resets).
  std::vector<FieldPath> ignored;
};

// The ignored paths for a write to the main resource (`status` false) or the
// status subresource of a kind (`has_status` tells whether it has one).
std::vector<FieldPath> IgnoredPaths(bool status, bool has_status);

// At most this many Update entries are kept, as kube-apiserver keeps them:
// past it, the oldest (by time) merge into one "ancient-changes" entry, so
// managedFields stay bounded however many writers update an object (Apply
// entries are one per applier, each a manager that chose its name).
inline constexpr size_t kMaxUpdateManagers = 10;

// Records an Update by `op.manager` that turned `old_obj` (null on create)
// into `new_obj`.
void RecordUpdate(std::vector<Entry>& entries, const Json* old_obj, const Json& new_obj,
                  const Schema* schema, const Operation& op);

struct Conflict {
  std::string manager;  // As Kubernetes prints it: "\"a\"" or "\"b\" using batch/v1".
  FieldPath path;
};

struct ApplyResult {
  Json object;                  // live + config, with dropped fields removed.
  std::vector<Entry> entries;   // The new managedFields.
  std::vector<Conflict> conflicts;  // Non-empty: refused (nothing else is set).
};

// Server-side apply of `config` by `op.manager` onto `live` (null: the object
// does not exist) whose managedFields are `entries`. With `force`, conflicting
// fields change owner instead of failing the apply.
ApplyResult Apply(const std::vector<Entry>& entries, const Json* live, const Json& config,
                  const Schema* schema, const Operation& op, bool force);

// Kubernetes' message for a refused apply: "Apply failed with 1 conflict:
// conflict with \"a\": .spec.x", or for several, grouped by manager.
std::string ConflictMessage(const std::vector<Conflict>& conflicts);

}  // namespace batchd::api::fieldmanager
