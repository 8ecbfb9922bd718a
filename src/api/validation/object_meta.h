// Validation of `metadata` (ObjectMeta) on create and update, in the shape of
// apimachinery's `ValidateObjectMeta` / `ValidateObjectMetaUpdate`: field
// paths and messages match kube-apiserver's, e.g.
//   metadata.name: Required value: name or generateName is required
//   metadata.name: Invalid value: "b": field is immutable
// Inputs are decoded JSON (`api::Json`); wrong JSON types are reported as
// invalid values rather than thrown.
//
// Thread-safety: stateless pure functions, safe from any thread.
#pragma once

#include "api/field_error.h"
#include "api/validation/names.h"

namespace batchd::api::validation {

// Total bytes (keys + values) allowed in `metadata.annotations`.
inline constexpr size_t kTotalAnnotationSizeLimitBytes = 256 * 1024;

// Validates `metadata` of an object being created. `namespaced` says whether
// the kind lives in a namespace (namespace required) or not (forbidden).
// `name_fn` validates `name` (prefix=false) and `generateName` (prefix=true);
// most kinds use `NameIsDNSSubdomain`. `path` is usually Path("metadata").
// A `generateName` without `name` is accepted (Kubernetes fills the name in
// before validating; either order works here).
ErrorList ValidateObjectMeta(const Json& metadata, bool namespaced, const NameValidator& name_fn,
                             const Path& path);

// apimachinery's ValidateImmutableField: one error at `path`
// ("Invalid value: <now>: field is immutable") when `now` differs from `old`.
ErrorList ValidateImmutableField(const Json& now, const Json& old, const Path& path);

// Validates an update of `metadata`: name, namespace, uid, creationTimestamp,
// deletionTimestamp and deletionGracePeriodSeconds are immutable; generation
// may not decrease; no new finalizers once the old object is being deleted.
// Call it in addition to `ValidateObjectMeta(new_meta, ...)`. It does not
// check resourceVersion (the registry owns optimistic concurrency).
ErrorList ValidateObjectMetaUpdate(const Json& new_meta, const Json& old_meta, const Path& path);

// `labels` map: keys are qualified names, values valid label values. Errors
// carry `path` itself (Kubernetes does not index label errors by key).
ErrorList ValidateLabels(const Json& labels, const Path& path);
// `annotations` map: keys are qualified names (checked lower-cased), total
// size at most `kTotalAnnotationSizeLimitBytes`.
ErrorList ValidateAnnotations(const Json& annotations, const Path& path);
// apimachinery's IsDomainPrefixedPath ("acme.io/foo"): a DNS-1123
// subdomain, a slash, and an HTTP path (the `managedBy` fields of Job and
// JobSet).
ErrorList ValidateDomainPrefixedPath(const Path& path, std::string_view value);
// `ownerReferences` list: apiVersion/kind/name/uid present, at most one
// controller, Events cannot be owners.
ErrorList ValidateOwnerReferences(const Json& refs, const Path& path);
// `finalizers` list: qualified names, no duplicates, not both `orphan` and
// `foregroundDeletion`.
ErrorList ValidateFinalizers(const Json& finalizers, const Path& path);

}  // namespace batchd::api::validation
