// KindDef: everything batchd knows about one served kind, in one place —
// names for discovery, the schema, defaulting, validation, table columns and
// selectable fields. The registry and the API server are generic over
// `KindDef`; adding a kind means writing one and listing it in `scheme.cc`.
//
// Objects are JSON documents (`api::Json`) shaped by `schema`; the registry
// has already pruned unknown fields and checked types before calling the
// hooks, so hooks may assume well-typed input.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "api/field_error.h"
#include "api/schema.h"

namespace batchd::api {

struct TableColumn {
  std::string name;         // "Name", "Status", ...
  std::string type;         // "string", "integer", "date", ...
  std::string format;       // "name" for the Name column, else "".
  std::string description;
  int priority = 0;         // 1: shown only with `-o wide`.
};

struct KindDef {
  // Identity and discovery.
  std::string group;        // "" for core.
  std::string version;      // "v1".
  std::string kind;         // "Job".
  std::string plural;       // "jobs".
  std::string singular;     // "job".
  bool namespaced = true;
  std::vector<std::string> short_names;
  std::vector<std::string> categories;      // e.g. {"all"}.
  std::vector<std::string> subresources;    // e.g. {"status"}; "log", "binding" for pods.
  // Verbs served on the main resource (discovery); the registry serves them all.
  std::vector<std::string> verbs = {"create", "delete", "deletecollection", "get",
                                    "list", "patch", "update", "watch"};

  // The whole object, including apiVersion, kind, metadata, spec and status.
  SchemaPtr schema;
  // True when `status` is a separate subresource: writes to the main resource
  // keep the old status, writes to /status keep the old spec and metadata
  // (except labels/annotations/finalizers per Kubernetes rules), and
  // `metadata.generation` is bumped only on spec changes.
  bool has_status_subresource = false;
  // Kinds with a status subresource drop a client's `status` on create,
  // except those whose creator reports status (a Node registered by its
  // agent, or a simulated node created with its capacity).
  bool keep_status_on_create = false;

  // Fills defaults in place (SetDefaults_*). May be null.
  std::function<void(Json& obj)> set_defaults;
  // Validation on create. May be null.
  std::function<ErrorList(const Json& obj)> validate_create;
  // Validation on update of the main resource (immutability rules etc.). May be null.
  std::function<ErrorList(const Json& obj, const Json& old)> validate_update;
  // Validation on update of the status subresource. May be null.
  std::function<ErrorList(const Json& obj, const Json& old)> validate_status_update;
  // Warnings for the client (`Warning: 299` headers) about a valid object
  // being created or updated, such as fields accepted but not applied
  // (Kubernetes' WarningsOnCreate/WarningsOnUpdate). May be null.
  std::function<std::vector<std::string>(const Json& obj)> warnings;
  // Mutation applied to a new object before validation (e.g. reset status,
  // set pod phase Pending). May be null.
  std::function<void(Json& obj)> prepare_for_create;

  // Table output for `kubectl get`: columns after Name, and the cells of one
  // row (same length as `columns`, not including the name cell).
  std::vector<TableColumn> columns;
  // True when `columns` already contains a name column (format "name") at the
  // position the kind wants it (Events); otherwise the registry prepends Name.
  bool columns_include_name = false;
  std::function<std::vector<Json>(const Json& obj, absl::Time now)> row_cells;

  // Field selectors beyond metadata.name / metadata.namespace, e.g.
  // {"spec.nodeName", "status.phase"} for pods; `field_value` returns the
  // value of one of them ("" when absent).
  std::vector<std::string> selectable_fields;
  std::function<std::string(const Json& obj, const std::string& field)> field_value;

  // Propagation when a DELETE names none: "Background" for most kinds;
  // batch/v1 Jobs keep Kubernetes' legacy "Orphan".
  std::string default_propagation_policy = "Background";

  // Objects the system keeps: a DELETE of one of these names is Forbidden
  // with `undeletable_reason` (the default namespaces, the system
  // PriorityClasses).
  std::vector<std::string> undeletable_names;
  std::string undeletable_reason;

  // Multi-version serving. Null for a kind's storage version. A KindDef for
  // another served version of the same resource points at the storage
  // version's KindDef (same group and plural, owned by the same Scheme, which
  // must list the storage version first) and the registry converts at the
  // API boundary: requests are decoded against this KindDef's schema, then
  // `to_storage` rewrites the object (apiVersion included) before defaults,
  // validation and persistence, which use `*storage`'s hooks; responses,
  // list items and watch events go through `from_storage`. Table columns
  // and cells of this KindDef are applied to converted objects.
  const KindDef* storage = nullptr;
  std::function<void(Json& obj)> to_storage;
  std::function<void(Json& obj)> from_storage;
  // The KindDef objects of this resource are stored as.
  const KindDef& StorageKind() const { return storage ? *storage : *this; }

  std::string ApiVersion() const { return group.empty() ? version : group + "/" + version; }
  // "jobs.batch" / "pods": how Kubernetes names the resource in messages.
  std::string GroupResource() const { return group.empty() ? plural : plural + "." + group; }
  // "Job.batch" / "Pod": the qualified kind in Invalid messages.
  std::string GroupKind() const { return group.empty() ? kind : kind + "." + group; }
};

// The set of served kinds. Built explicitly at start-up (no static
// registration); immutable afterwards, so it may be shared across threads.
class Scheme {
 public:
  void Add(KindDef def) { kinds_.push_back(std::make_shared<const KindDef>(std::move(def))); }
  const KindDef* ByResource(std::string_view group, std::string_view version,
                            std::string_view plural) const {
    for (const auto& k : kinds_) {
      if (k->group == group && k->version == version && k->plural == plural) return k.get();
    }
    return nullptr;
  }
  const KindDef* ByKind(std::string_view group, std::string_view version, std::string_view kind) const {
    for (const auto& k : kinds_) {
      if (k->group == group && k->version == version && k->kind == kind) return k.get();
    }
    return nullptr;
  }
  const std::vector<std::shared_ptr<const KindDef>>& All() const { return kinds_; }

 private:
  std::vector<std::shared_ptr<const KindDef>> kinds_;
};

// The kinds batchd serves (api/scheme.cc lists them).
std::shared_ptr<const Scheme> BuiltinScheme();

}  // namespace batchd::api
