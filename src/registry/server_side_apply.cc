// Server-side apply over the registry (see server_side_apply.h).
#include "registry/server_side_apply.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/json_access.h"
#include "api/meta/time_util.h"
#include "api/patch/managed_fields.h"
#include "api/schema_ops/schema_ops.h"
#include "registry/errors.h"

namespace batchd::registry {

using api::Json;
namespace fm = api::fieldmanager;

namespace {

// Attempts when the object changes between the read and the conditional write.
constexpr int kMaxApplyAttempts = 5;

bool IsStale(const absl::Status& st) {
  return absl::IsAborted(st) && absl::StrContains(st.message(), "the object has been modified");
}

absl::Status ApplyConflict(const std::vector<fm::Conflict>& conflicts) {
  Json causes = Json::array();
  for (const fm::Conflict& c : conflicts) {
    causes.push_back({{"reason", "FieldManagerConflict"},
                      {"message", "conflict with " + c.manager},
                      {"field", fm::PathString(c.path)}});
  }
  return ApiError(absl::StatusCode::kAborted, "Conflict", fm::ConflictMessage(conflicts),
                  {{"causes", std::move(causes)}});
}

// The configuration typed as the kind's schema (quantities canonical, nulls
// dropped), unknown fields refused, warned about or dropped per
// fieldValidation as for any write.
absl::StatusOr<Json> TypedConfig(const api::KindDef& k, const Json& config,
                                 const WriteOptions& opts) {
  Json typed = config;
  std::vector<std::string> unknown;
  if (k.schema) {
    absl::Status st = api::schema_ops::Normalize(*k.schema, typed, &unknown);
    if (!st.ok()) {
      return BadRequest(absl::StrCat(k.kind, " in version \"", k.version,
                                     "\" cannot be handled as a ", k.kind, ": ", st.message()));
    }
  }
  std::vector<std::string> problems;
  for (const auto& f : opts.duplicate_fields) problems.push_back("duplicate field \"" + f + "\"");
  for (const auto& f : unknown) problems.push_back("unknown field \"" + f + "\"");
  if (!problems.empty() && opts.field_validation == FieldValidation::kStrict) {
    return BadRequest(absl::StrCat(k.kind, " in version \"", k.version,
                                   "\" cannot be handled as a ", k.kind,
                                   ": strict decoding error: ", absl::StrJoin(problems, ", ")));
  }
  if (!problems.empty() && opts.field_validation == FieldValidation::kWarn && opts.warnings) {
    for (auto& p : problems) opts.warnings->push_back(std::move(p));
  }
  return typed;
}

}  // namespace

absl::StatusOr<Json> ServerSideApply(Registry& registry, Clock& clock, const api::KindDef& k,
                                     std::string_view ns, std::string_view name,
                                     const Json& config, bool status, bool force,
                                     const WriteOptions& opts) {
  if (opts.field_manager.empty()) {
    return BadRequest("PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: "
                      "is required for apply patch");
  }
  if (!config.is_object()) return BadRequest("the body of an apply patch must be an object");
  const std::string body_name =
      api::CopyStringMember(api::MemberObject(config, "metadata"), "name");
  if (!body_name.empty() && body_name != name) {
    return BadRequest(absl::StrCat("the name of the object (", body_name,
                                   ") does not match the name on the URL (", std::string(name),
                                   ")"));
  }
  absl::StatusOr<Json> typed = TypedConfig(k, config, opts);
  if (!typed.ok()) return typed.status();
  fm::Operation op;
  op.manager = opts.field_manager;
  op.api_version = k.ApiVersion();
  op.subresource = status ? "status" : "";
  op.time = api::meta::FormatRfc3339(clock.Now());
  op.ignored = fm::IgnoredPaths(status, k.has_status_subresource);
  const api::Schema* schema = k.schema.get();
  // The write records no Update of its own: the entries computed here are it.
  WriteOptions write = opts;
  write.field_manager.clear();
  write.duplicate_fields.clear();
  write.field_validation = FieldValidation::kIgnore;
  for (int attempt = 1;; ++attempt) {
    absl::StatusOr<ObjectPtr> current = registry.Get(k, ns, name);
    if (!current.ok() && !absl::IsNotFound(current.status())) return current.status();
    if (!current.ok()) {
      if (status) return current.status();
      fm::ApplyResult res = fm::Apply({}, nullptr, *typed, schema, op, force);
      Json obj = std::move(res.object);
      if (!obj["metadata"].is_object()) obj["metadata"] = Json::object();
      obj["metadata"]["name"] = std::string(name);
      obj["metadata"]["managedFields"] = fm::EncodeManagedFields(res.entries);
      absl::StatusOr<Json> created = registry.Create(k, ns, std::move(obj), write);
      if (absl::IsAlreadyExists(created.status()) && attempt < kMaxApplyAttempts) continue;
      return created;
    }
    Json live = (*current)->Decode();
    Json& live_meta = live["metadata"];
    absl::StatusOr<std::vector<fm::Entry>> entries =
        fm::ParseManagedFields(api::Member(live_meta, "managedFields"));
    // Stored entries are the server's own; unreadable ones start over.
    std::vector<fm::Entry> have = entries.ok() ? *std::move(entries) : std::vector<fm::Entry>{};
    fm::ApplyResult res = fm::Apply(have, &live, *typed, schema, op, force);
    if (!res.conflicts.empty()) return ApplyConflict(res.conflicts);
    Json obj = std::move(res.object);
    obj["metadata"]["managedFields"] = fm::EncodeManagedFields(res.entries);
    obj["metadata"]["resourceVersion"] = std::to_string((*current)->revision);
    absl::StatusOr<Json> updated = registry.Update(k, ns, name, std::move(obj), status, write);
    if (!updated.ok() && IsStale(updated.status()) && attempt < kMaxApplyAttempts) continue;
    return updated;
  }
}

}  // namespace batchd::registry
