// Server-side apply (PATCH with Content-Type application/apply-patch+yaml),
// as kube-apiserver does it: the configuration is merged into the live
// object, field ownership is kept in metadata.managedFields, a change to a
// field another manager owns is refused with 409 Conflict (Kubernetes'
// "Apply failed with N conflict(s)" message and FieldManagerConflict causes)
// unless `force` moves the ownership, and fields the manager applied before
// and dropped from its configuration are removed when nobody else owns them.
// An apply to a missing object creates it. The write goes through
// Registry::Create / Registry::Update (conditional on the revision the merge
// read; retried a few times when the object moved meanwhile), so defaults,
// admission and validation apply as to any write. Thread-safe.
#pragma once

#include <string_view>

#include "absl/status/statusor.h"
#include "common/clock.h"
#include "registry/registry.h"

namespace batchd::registry {

// `opts.field_manager` names the manager (required: BadRequest when empty);
// `status` applies to the status subresource.
absl::StatusOr<api::Json> ServerSideApply(Registry& registry, Clock& clock, const api::KindDef& k,
                                          std::string_view ns, std::string_view name,
                                          const api::Json& config, bool status, bool force,
                                          const WriteOptions& opts);

}  // namespace batchd::registry
