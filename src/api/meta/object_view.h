// ObjectMetaView: a typed, read-only view of an object's `metadata`, the
// first member of every typed view (PodView, JobView, WorkloadView, ...).
//
// Typed views are how controllers read objects (docs/architecture.md, "Typed
// views"): parsed once per use from the shared decoded object, they name each
// field in C++ (a misspelt field is a compile error, not a silent null) and
// give exact types (enums for phases, `Amount` for quantities). A view does
// not copy: its strings are views into the JSON it was parsed from, so it
// must not outlive that JSON (hold the informer's `ObjectRef` while using it).
// Absent or mistyped fields read as empty / zero, as json_access.h does.
//
// Thread-safety: a view is immutable; it is as safe to share as the JSON it
// reads.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "absl/time/time.h"
#include "api/field_error.h"

namespace batchd::api::meta {

struct ObjectMetaView {
  std::string_view name;
  std::string_view namespace_;
  std::string_view generate_name;
  std::string_view uid;
  std::string_view resource_version;
  int64_t generation = 0;
  std::string_view creation_timestamp;  // RFC 3339 text; see CreationTime().
  std::string_view deletion_timestamp;  // "" unless the object is being deleted.
  std::optional<int64_t> deletion_grace_period_seconds;
  const Json* labels = nullptr;         // The `labels` object, or nullptr.
  const Json* annotations = nullptr;    // The `annotations` object, or nullptr.
  const Json* finalizers = nullptr;     // The `finalizers` array, or nullptr.
  const Json* owner_references = nullptr;  // The `ownerReferences` array, or nullptr.

  // REQUIRES: `obj` outlives the view.
  static ObjectMetaView Parse(const Json& obj);

  bool being_deleted() const { return !deletion_timestamp.empty(); }
  // "namespace/name", or "name" for cluster-scoped objects.
  std::string Key() const;
  std::optional<std::string_view> Label(std::string_view key) const;
  std::optional<std::string_view> Annotation(std::string_view key) const;
  bool HasFinalizer(std::string_view finalizer) const;
  // The uid of the owner reference with `controller: true`, or "".
  std::string_view ControllerUid() const;
  // Parsed timestamps; nullopt when absent or unparsable.
  std::optional<absl::Time> CreationTime() const;
  std::optional<absl::Time> DeletionTime() const;
};

}  // namespace batchd::api::meta
