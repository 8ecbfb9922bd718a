// Helpers over the `metadata` of objects held as JSON (`api::Json`): getters
// that tolerate missing or mistyped fields (returning "" / empty), setters
// that create `metadata` (and `labels` / `annotations`) when missing,
// finalizer and owner-reference helpers, and RFC 4122 v4 UID generation.
//
// Thread-safety: free functions; callers synchronize access to the JSON they
// pass. Randomness comes only from the injected `absl::BitGenRef`.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/random/bit_gen_ref.h"
#include "absl/time/time.h"
#include "api/field_error.h"

namespace batchd::api::meta {

// `obj["metadata"]` or nullptr when absent / not an object.
const Json* Metadata(const Json& obj);
// `obj["metadata"]`, created as `{}` when absent or null.
// REQUIRES: `obj` is an object or null (null becomes an object).
Json* MutableMetadata(Json& obj);

std::string GetName(const Json& obj);
std::string GetNamespace(const Json& obj);
std::string GetUid(const Json& obj);
std::string GetResourceVersion(const Json& obj);
int64_t GetGeneration(const Json& obj);  // 0 when absent.
// Parsed `creationTimestamp` / `deletionTimestamp`; nullopt when absent or bad.
std::optional<absl::Time> GetCreationTimestamp(const Json& obj);
std::optional<absl::Time> GetDeletionTimestamp(const Json& obj);
// True when `metadata.deletionTimestamp` is set.
bool IsBeingDeleted(const Json& obj);

void SetName(Json& obj, std::string_view name);

// String-valued entries of `metadata.labels` / `metadata.annotations`.
std::map<std::string, std::string> Labels(const Json& obj);
std::map<std::string, std::string> Annotations(const Json& obj);
std::optional<std::string> GetLabel(const Json& obj, std::string_view key);
std::optional<std::string> GetAnnotation(const Json& obj, std::string_view key);
void SetLabel(Json& obj, std::string_view key, std::string_view value);
void SetAnnotation(Json& obj, std::string_view key, std::string_view value);
// Return whether something was removed; an emptied map is removed too.
bool RemoveLabel(Json& obj, std::string_view key);
bool RemoveAnnotation(Json& obj, std::string_view key);

std::vector<std::string> Finalizers(const Json& obj);
bool HasFinalizer(const Json& obj, std::string_view finalizer);
// Appends `finalizer` unless present; returns whether it was added.
bool AddFinalizer(Json& obj, std::string_view finalizer);
// Removes every occurrence; returns whether any was removed. An emptied list
// is removed from `metadata`.
bool RemoveFinalizer(Json& obj, std::string_view finalizer);

struct OwnerReference {
  std::string api_version;
  std::string kind;
  std::string name;
  std::string uid;
  bool controller = false;
  bool block_owner_deletion = false;

  // `{apiVersion, kind, name, uid, controller?, blockOwnerDeletion?}`; the
  // booleans are written only when true.
  Json ToJson() const;
  static std::optional<OwnerReference> FromJson(const Json& ref);
  friend bool operator==(const OwnerReference&, const OwnerReference&) = default;
};

std::vector<OwnerReference> GetOwnerReferences(const Json& obj);
// The owner reference with `controller: true`, if any (the first of several).
std::optional<OwnerReference> GetControllerRef(const Json& obj);
// The same reference's fields, viewed in `obj` without a copy: valid while
// `obj` is neither changed nor destroyed. A field that is not a string is "".
struct OwnerRefView {
  std::string_view api_version;
  std::string_view kind;
  std::string_view name;
  std::string_view uid;
};
std::optional<OwnerRefView> ControllerRefView(const Json& obj);
// "namespace/name" of the owner that controls `obj` when it is a `kind` of
// `api_version` (e.g. "batch/v1", "Job"), else "": the work-queue key of a
// controller's parent.
std::string ControllerKey(const Json& obj, std::string_view api_version, std::string_view kind);
// True when the controller reference has uid `owner_uid`.
bool IsControlledBy(const Json& obj, std::string_view owner_uid);
// Adds `ref` to `metadata.ownerReferences`, replacing one with the same uid.
void SetOwnerReference(Json& obj, const OwnerReference& ref);
// A controller reference to `owner` (apiVersion/kind from the owner object),
// with blockOwnerDeletion set, as controllers create for their children.
OwnerReference NewControllerRef(const Json& owner);

// A random RFC 4122 version-4 UUID, e.g. "3b241101-e2bb-4255-8caf-4136c566a962".
std::string NewUid(absl::BitGenRef gen);

}  // namespace batchd::api::meta
