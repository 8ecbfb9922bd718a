// Registry writes: create, update (main resource and status), patch.
#include <random>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/codec/codec.h"
#include "api/json_access.h"
#include "api/meta/compare.h"
#include "api/meta/object_meta.h"
#include "api/meta/time_util.h"
#include "api/patch/managed_fields.h"
#include "api/patch/patch.h"
#include "api/schema_ops/schema_ops.h"
#include "api/validation/names.h"
#include "api/validation/object_meta.h"
#include "registry/errors.h"
#include "registry/internal/conflict_retry.h"
#include "registry/registry.h"

namespace batchd::registry {

using api::Json;

namespace {

constexpr int kMaxGenerateNameAttempts = 8;

bool IsNamespaceKind(const api::KindDef& k) { return k.group.empty() && k.plural == "namespaces"; }
// RBAC objects are named like path segments (Kubernetes' ValidateRBACName),
// so the default roles can be "system:node" and the like.
bool IsRbacKind(const api::KindDef& k) { return k.group == "rbac.authorization.k8s.io"; }
api::validation::Messages RbacNameValidator(std::string_view name, bool /*prefix*/) {
  api::validation::Messages m;
  if (name.empty()) return m;  // Required is reported by ValidateObjectMeta.
  if (name == "." || name == "..") m.push_back("may not be '" + std::string(name) + "'");
  if (name.find('/') != std::string_view::npos) m.push_back("may not contain '/'");
  if (name.find('%') != std::string_view::npos) m.push_back("may not contain '%'");
  return m;
}

// Fields of metadata that only the server sets; clients' values are replaced
// by the old object's on update.
void CopySystemMeta(const Json& old_meta, Json& meta) {
  for (const char* f : {"uid", "creationTimestamp", "generation", "deletionTimestamp",
                        "deletionGracePeriodSeconds", "selfLink"}) {
    if (old_meta.contains(f)) {
      meta[f] = old_meta[f];
    } else {
      meta.erase(f);
    }
  }
}

// a == b, but for metadata.resourceVersion (which `a`, about to be written, lacks).
bool EqualIgnoringResourceVersion(const Json& a, const Json& b) {
  if (!a.is_object() || !b.is_object() || a.size() != b.size()) return a == b;
  for (auto ia = a.begin(), ib = b.begin(); ia != a.end(); ++ia, ++ib) {
    if (ia.key() != ib.key()) return false;
    if (ia.key() != "metadata") {
      if (*ia != *ib) return false;
      continue;
    }
    if (!api::meta::MetadataEqualButResourceVersion(*ia, *ib)) return false;
  }
  return true;
}

// Whether the two objects' status members are equal (both absent counts).
bool StatusEqual(const Json& obj, const Json& old) {
  if (!obj.is_object() || !old.is_object()) return obj == old;
  const Json* a = api::FindMember(obj, "status");
  const Json* b = api::FindMember(old, "status");
  return (a == nullptr) == (b == nullptr) && (a == nullptr || *a == *b);
}

// EqualIgnoringResourceVersion for a status write's `obj`, built from `old`
// with every member but status (and its metadata, whose resourceVersion was
// erased and managedFields perhaps rewritten): only those two are compared,
// not the rest (a Pod's spec), which is the same by construction.
bool StatusWriteChangesNothing(const Json& obj, const Json& old) {
  if (!obj.is_object() || !old.is_object()) return obj == old;
  return StatusEqual(obj, old) &&
         api::meta::MetadataEqualButResourceVersion(api::Member(obj, "metadata"),
                                                    api::Member(old, "metadata"));
}

// Whether `obj`, a status write's body, equals `old` in every member but
// status (metadata but for its resourceVersion): then `obj` with its own
// status is the object the write stores, and `old` need not be copied to
// build it (a controller writes back the object it read, status changed).
bool SameButStatus(const Json& obj, const Json& old) {
  if (!obj.is_object() || !old.is_object()) return false;
  if (obj.size() - obj.count("status") != old.size() - old.count("status")) return false;
  for (auto it = old.begin(); it != old.end(); ++it) {
    if (it.key() == "status") continue;
    const Json* mine = api::FindMember(obj, it.key());
    if (mine == nullptr) return false;
    if (it.key() == "metadata") {
      if (!mine->is_object() || !api::meta::MetadataEqualButResourceVersion(*mine, *it)) {
        return false;
      }
    } else if (*mine != *it) {
      return false;
    }
  }
  return true;
}

// metadata.managedFields after a write by `manager` (Update operation) that
// turns `old` (null on create) into `obj`: the entries `obj` carries (a body
// without them keeps the old object's; an empty list clears them), with the
// fields the write added or changed moved to `manager`. An empty manager
// (in-process writers name none) records nothing, and no entries at all
// leave no managedFields.
absl::Status TrackManagedFields(const api::KindDef& k, const Json* old, Json& obj, bool status,
                                const std::string& manager, absl::Time now) {
  Json& meta = obj["metadata"];
  if (!meta.contains("managedFields") && old != nullptr) {
    const Json& old_meta = api::MemberObject(*old, "metadata");
    if (auto it = old_meta.find("managedFields"); it != old_meta.end()) {
      meta["managedFields"] = *it;
    }
  }
  auto present = meta.find("managedFields");
  if (manager.empty() && present != meta.end() && !present->empty() && old != nullptr &&
      api::Member(api::MemberObject(*old, "metadata"), "managedFields") == *present) {
    return absl::OkStatus();  // Unchanged (the usual in-process write): nothing to check.
  }
  if (manager.empty() && present == meta.end()) return absl::OkStatus();
  absl::StatusOr<std::vector<api::fieldmanager::Entry>> entries =
      api::fieldmanager::ParseManagedFields(present == meta.end() ? Json() : *present);
  if (!entries.ok()) return BadRequest(std::string(entries.status().message()));
  if (!manager.empty()) {
    api::fieldmanager::Operation op;
    op.manager = manager;
    op.api_version = k.ApiVersion();
    op.subresource = status ? "status" : "";
    op.time = api::meta::FormatRfc3339(now);
    op.ignored = api::fieldmanager::IgnoredPaths(status, k.has_status_subresource);
    api::fieldmanager::RecordUpdate(*entries, old, obj, k.schema.get(), op);
  }
  if (entries->empty()) {
    meta.erase("managedFields");
  } else {
    meta["managedFields"] = api::fieldmanager::EncodeManagedFields(*entries);
  }
  return absl::OkStatus();
}

// The client's error for a failed store create of `name`.
// WriteOptions::kept_annotations: `meta` gets the values of `old_meta` (none
// on a create) for each kept annotation.
void KeepAnnotations(const Json* old_meta, Json& meta, const WriteOptions& opts) {
  for (const std::string& key : opts.kept_annotations) {
    const Json* old_annotations = old_meta ? api::FindMember(*old_meta, "annotations") : nullptr;
    const Json* old_value =
        old_annotations && old_annotations->is_object() ? api::FindMember(*old_annotations, key)
                                                        : nullptr;
    const Json* annotations = api::FindMember(meta, "annotations");
    const Json* value =
        annotations && annotations->is_object() ? api::FindMember(*annotations, key) : nullptr;
    if ((value == nullptr) == (old_value == nullptr) && (value == nullptr || *value == *old_value)) {
      continue;
    }
    if (opts.warnings) {
      opts.warnings->push_back(absl::StrCat("metadata.annotations[", key,
                                            "]: only the node itself may set it; kept as stored"));
    }
    if (old_value) {
      meta["annotations"][key] = *old_value;
    } else {
      meta["annotations"].erase(key);
      if (meta["annotations"].empty()) meta.erase("annotations");
    }
  }
}

absl::Status CreateError(const api::KindDef& k, const std::string& name, const absl::Status& st) {
  if (absl::IsAlreadyExists(st)) return AlreadyExists(k, name);
  return StoreUnavailable(st);
}

}  // namespace

absl::StatusOr<store::KeyValue> Registry::Put(const std::string& key, Json& obj,
                                              std::optional<int64_t> expected_revision,
                                              bool version_only) {
  std::string bytes = api::DumpCompact(obj);
  WatchCache::DecodedOffer offer = OfferWritten(key, bytes, obj, version_only);
  if (expected_revision) return store_.Update(key, std::move(bytes), *expected_revision);
  return store_.Create(key, std::move(bytes));
}

WatchCache::DecodedOffer Registry::OfferWritten(const std::string& key, const std::string& bytes,
                                                Json& obj, bool version_only) {
  if (!version_only) return cache_->OfferDecoded(key, bytes, obj);
  WatchCache::DecodedOffer offer = cache_->OfferDecoded(key, bytes, std::move(obj));
  obj = Json{{"metadata", Json::object()}};
  return offer;
}

std::string Registry::NewUid() {
  absl::MutexLock lock(&random_mu_);
  return api::meta::NewUid(random_);
}

std::string Registry::GenerateName(const Json& meta) {
  // Kubernetes' utilrand alphabet: no vowels or confusable characters.
  static constexpr char kAlphabet[] = "bcdfghjklmnpqrstvwxz2456789";
  std::string name = api::CopyStringMember(meta, "generateName");
  if (name.size() > 58) name.resize(58);
  absl::MutexLock lock(&random_mu_);
  for (int i = 0; i < 5; ++i) name += kAlphabet[absl::Uniform(random_, 0u, sizeof(kAlphabet) - 1)];
  return name;
}

absl::Status Registry::NormalizeBody(const api::KindDef& k, Json& obj, const WriteOptions& opts,
                                     bool status_write) {
  if (!obj.is_object()) return BadRequest("the body of the request was not a JSON object");
  std::string av = api::CopyStringMember(obj, "apiVersion"),
              kind = api::CopyStringMember(obj, "kind");
  if (!kind.empty() && kind != k.kind) {
    return BadRequest(absl::StrCat("the object provided is unrecognized (kind ", kind,
                                   " does not match ", k.kind, ")"));
  }
  if (!av.empty() && av != k.ApiVersion()) {
    return BadRequest(absl::StrCat("the API version in the data (", av,
                                   ") does not match the expected API version (",
                                   k.ApiVersion(), ")"));
  }
  std::vector<std::string> unknown;
  absl::Status st =
      status_write && opts.status_body_only
          ? api::schema_ops::NormalizeMembers(*k.schema, obj, {"metadata", "status"}, &unknown)
          : api::schema_ops::Normalize(*k.schema, obj, &unknown);
  if (!st.ok()) {
    return BadRequest(absl::StrCat(k.kind, " in version \"", k.version,
                                   "\" cannot be handled as a ", k.kind, ": ", st.message()));
  }
  obj["apiVersion"] = k.ApiVersion();
  obj["kind"] = k.kind;
  if (!obj.contains("metadata") || !obj["metadata"].is_object()) obj["metadata"] = Json::object();
  std::vector<std::string> problems;
  for (const auto& f : opts.duplicate_fields) problems.push_back("duplicate field \"" + f + "\"");
  for (const auto& f : unknown) problems.push_back("unknown field \"" + f + "\"");
  if (problems.empty() || opts.field_validation == FieldValidation::kIgnore) {
    return absl::OkStatus();
  }
  if (opts.field_validation == FieldValidation::kStrict) {
    return BadRequest(absl::StrCat(k.kind, " in version \"", k.version,
                                   "\" cannot be handled as a ", k.kind,
                                   ": strict decoding error: ", absl::StrJoin(problems, ", ")));
  }
  if (opts.warnings) {
    for (auto& p : problems) opts.warnings->push_back(p);
  }
  return absl::OkStatus();
}

absl::Status Registry::CheckNamespace(const api::KindDef& k, std::string_view ns,
                                      std::string_view name) {
  if (!k.namespaced) return absl::OkStatus();
  const api::KindDef* nsk = scheme_->ByResource("", "v1", "namespaces");
  ObjectPtr nso = cache_->Get(StoreKey(*nsk, "", ns));
  if (!nso) return NotFound(*nsk, ns);
  std::shared_ptr<const Json> nsj = nso->Shared();  // read, not copied
  if (api::MemberObject(*nsj, "metadata").contains("deletionTimestamp")) {
    return Forbidden(k, name,
                     absl::StrCat("unable to create new content in namespace ", std::string(ns),
                                  " because it is being terminated"));
  }
  return absl::OkStatus();
}

absl::StatusOr<Json> Registry::Create(const api::KindDef& k, std::string_view ns, Json obj,
                                      const WriteOptions& opts) {
  if (k.storage) return CreateConverted(k, ns, std::move(obj), opts);
  bool generated = false;
  absl::StatusOr<std::string> key = PrepareCreate(k, ns, obj, opts, &generated);
  if (!key.ok()) return key.status();
  if (opts.dry_run) return obj;
  return StoreCreate(k, *key, std::move(obj), generated);
}

std::vector<absl::StatusOr<Json>> Registry::CreateMany(
    const api::KindDef& k, std::vector<std::pair<std::string, Json>> objs,
    const WriteOptions& opts) {
  std::vector<absl::StatusOr<Json>> out(objs.size(), absl::UnknownError("not created"));
  // Objects that need more than one store call (converted kinds, generated
  // names that may collide) and dry runs go alone; the rest share one
  // store-level CreateMany.
  std::vector<size_t> batched;
  std::vector<std::pair<std::string, std::string>> kvs;
  std::vector<WatchCache::DecodedOffer> offers;
  for (size_t i = 0; i < objs.size(); ++i) {
    auto& [ns, obj] = objs[i];
    const bool generate = obj.contains("metadata") && obj["metadata"].is_object() &&
                          api::CopyStringMember(obj["metadata"], "name").empty();
    if (k.storage || generate || opts.dry_run) {
      out[i] = Create(k, ns, std::move(obj), opts);
      continue;
    }
    bool generated = false;
    absl::StatusOr<std::string> key = PrepareCreate(k, ns, obj, opts, &generated);
    if (!key.ok()) {
      out[i] = key.status();
      continue;
    }
    batched.push_back(i);
    std::string bytes = api::DumpCompact(obj);
    offers.push_back(cache_->OfferDecoded(*key, bytes, obj));
    kvs.emplace_back(*std::move(key), std::move(bytes));
  }
  std::vector<absl::StatusOr<store::KeyValue>> written = store_.CreateMany(std::move(kvs));
  offers.clear();
  for (size_t j = 0; j < batched.size(); ++j) {
    Json& obj = objs[batched[j]].second;
    if (written[j].ok()) {
      obj["metadata"]["resourceVersion"] = std::to_string(written[j]->mod_revision);
      out[batched[j]] = std::move(obj);
    } else {
      out[batched[j]] =
          CreateError(k, api::CopyStringMember(obj["metadata"], "name"), written[j].status());
    }
  }
  return out;
}

// Steps 1-4 of a create: decode, namespace, system metadata, kind hooks and
// validation, on `obj` in place. Returns the store key; `*generated` tells
// whether the name came from generateName (and may be drawn again).
absl::StatusOr<std::string> Registry::PrepareCreate(const api::KindDef& k, std::string_view ns,
                                                    Json& obj, const WriteOptions& opts,
                                                    bool* generated) {
  // 1. Decode: types, unknown fields, apiVersion/kind.
  if (auto st = NormalizeBody(k, obj, opts); !st.ok()) return st;
  Json& meta = obj["metadata"];
  KeepAnnotations(nullptr, meta, opts);
  // 2. Namespace from the URL wins; a different one in the body is an error.
  if (k.namespaced) {
    std::string body_ns = api::CopyStringMember(meta, "namespace");
    if (!body_ns.empty() && body_ns != ns) {
      return BadRequest(
          "the namespace of the provided object does not match the namespace sent on the request");
    }
    meta["namespace"] = ns;
  } else {
    meta.erase("namespace");
  }
  if (!api::CopyStringMember(meta, "resourceVersion").empty()) {
    return BadRequest("resourceVersion should not be set on objects to be created");
  }
  // 3. System metadata.
  meta.erase("resourceVersion");
  meta.erase("deletionTimestamp");
  meta.erase("deletionGracePeriodSeconds");
  meta.erase("selfLink");
  meta["uid"] = NewUid();
  meta["creationTimestamp"] = api::meta::FormatRfc3339(clock_.Now());
  meta["generation"] = 1;
  // 4. In Kubernetes' order: defaults, mutating admission (which, as there,
  //    sees the name as sent: empty under generateName), the generated
  //    name, the kind's PrepareForCreate (status reset; a Job's selector and
  //    labels need the name), then validation.
  if (k.has_status_subresource && !k.keep_status_on_create) obj.erase("status");
  if (k.set_defaults) k.set_defaults(obj);
  if (auto st = RunMutators(k, obj, nullptr); !st.ok()) return st;
  Json& final_meta = obj["metadata"];  // again: a mutator may have replaced the object
  const bool generate = api::CopyStringMember(final_meta, "name").empty() &&
                        !api::CopyStringMember(final_meta, "generateName").empty();
  *generated = generate;
  if (generate) {
    final_meta["name"] = GenerateName(final_meta);
  }
  if (k.prepare_for_create) k.prepare_for_create(obj);
  if (auto st = TrackManagedFields(k, nullptr, obj, /*status=*/false, opts.field_manager,
                                   clock_.Now());
      !st.ok()) {
    return st;
  }
  std::string name = api::CopyStringMember(obj["metadata"], "name");
  api::ErrorList errs = api::validation::ValidateObjectMeta(
      obj["metadata"], k.namespaced,
      IsRbacKind(k)        ? api::validation::NameValidator(RbacNameValidator)
      : IsNamespaceKind(k) ? api::validation::NameValidator(api::validation::NameIsDNSLabel)
                           : api::validation::NameValidator(api::validation::NameIsDNSSubdomain),
      api::Path("metadata"));
  if (k.validate_create) {
    auto more = k.validate_create(obj);
    errs.insert(errs.end(), more.begin(), more.end());
  }
  if (!errs.empty()) return Invalid(k, name, errs);
  if (opts.validate) {
    if (auto st = opts.validate(obj, nullptr); !st.ok()) return st;
  }
  if (k.warnings && opts.warnings) {
    for (std::string& w : k.warnings(obj)) opts.warnings->push_back(std::move(w));
  }
  if (auto st = CheckNamespace(k, ns, name); !st.ok()) return st;
  std::string key = StoreKey(k, ns, name);
  if (opts.dry_run && cache_->Get(key)) return AlreadyExists(k, name);
  return key;
}

// Step 5: store (retrying a generated name that collided).
absl::StatusOr<Json> Registry::StoreCreate(const api::KindDef& k, std::string key, Json obj,
                                           bool generate) {
  const std::string ns = api::CopyStringMember(obj["metadata"], "namespace");
  std::string name = api::CopyStringMember(obj["metadata"], "name");
  for (int attempt = 0;; ++attempt) {
    auto kv = Put(key, obj, std::nullopt);
    if (kv.ok()) {
      obj["metadata"]["resourceVersion"] = std::to_string(kv->mod_revision);
      return obj;
    }
    if (!absl::IsAlreadyExists(kv.status()) || !generate ||
        attempt + 1 >= kMaxGenerateNameAttempts) {
      return CreateError(k, name, kv.status());
    }
    name = GenerateName(obj["metadata"]);
    obj["metadata"]["name"] = name;
    key = StoreKey(k, ns, name);
  }
}

absl::StatusOr<Json> Registry::Update(const api::KindDef& k, std::string_view ns,
                                      std::string_view name, Json obj, bool status,
                                      const WriteOptions& opts) {
  if (k.storage) return UpdateConverted(k, ns, name, std::move(obj), status, opts);
  if (auto st = NormalizeBody(k, obj, opts, status); !st.ok()) return st;
  Json& meta = obj["metadata"];
  if (api::CopyStringMember(meta, "name") != name) {
    return BadRequest(absl::StrCat("the name of the object (", api::CopyStringMember(meta, "name"),
                                   ") does not match the name on the URL (", std::string(name),
                                   ")"));
  }
  if (k.namespaced) {
    std::string body_ns = api::CopyStringMember(meta, "namespace");
    if (!body_ns.empty() && body_ns != ns) {
      return BadRequest(
          "the namespace of the provided object does not match the namespace sent on the request");
    }
    meta["namespace"] = ns;
  }
  std::string rv = api::CopyStringMember(meta, "resourceVersion");
  // metadata.uid in the body is a precondition, as in kube-apiserver.
  const std::string uid = api::CopyStringMember(meta, "uid");
  return internal::RetryOnConflict<Json>(k, name, [&](bool last_try) -> internal::Attempt<Json> {
    ObjectPtr current = cache_->Get(StoreKey(k, ns, name));
    if (!current) return NotFound(k, name);
    if (!uid.empty()) {
      const std::string current_uid =
          api::CopyStringMember(api::MemberObject(*current->Shared(), "metadata"), "uid");
      if (uid != current_uid) {
        return Conflict(k, name,
                        absl::StrCat("Precondition failed: UID in precondition: ", uid,
                                     ", UID in object meta: ", current_uid));
      }
    }
    if (!rv.empty() && rv != std::to_string(current->revision)) return StaleConflict(k, name);
    // The attempt takes `obj` itself when no retry can follow (a conditional
    // update is never retried), else a copy; a status update reads only the
    // status, so only that is copied for an attempt that may be retried
    // (the last takes the whole body: see WriteUpdate).
    last_try = last_try || !rv.empty();
    Json attempt_obj;
    if (!status || last_try) {
      attempt_obj = last_try ? std::move(obj) : obj;
    } else if (obj.contains("status")) {
      attempt_obj = Json::object();
      attempt_obj["status"] = last_try ? std::move(obj["status"]) : obj["status"];
    } else {
      attempt_obj = Json::object();
    }
    auto res = WriteUpdate(k, current, std::move(attempt_obj), status,
                           /*conditional=*/!rv.empty(), opts);
    if (rv.empty() && internal::IsWriteConflict(res.status())) {
      return internal::Attempt<Json>::Retry();
    }
    return res;
  });
}

// Applies Kubernetes' update rules to `obj` against `current` and writes it
// with a revision precondition. For the status subresource only obj's status
// is read.
absl::StatusOr<Json> Registry::WriteUpdate(const api::KindDef& k, const ObjectPtr& current,
                                           Json obj, bool status, bool conditional,
                                           const WriteOptions& opts,
                                           std::vector<DeferredWrite>* deferred) {
  // The current object as every in-process reader shares it: read, not copied.
  const std::shared_ptr<const Json> shared_old = current->Shared();
  const Json& old = *shared_old;
  const Json& old_meta = api::MemberObject(old, "metadata");
  std::string name = api::CopyStringMember(old_meta, "name");
  if (status && SameButStatus(obj, old)) {
    // The body is the old object with a new status (as controllers write):
    // it is the next version as it is, no copy of the old one.
  } else if (status) {
    // The status subresource changes status only: the old object but its
    // status, which is not copied (it is replaced).
    Json next = Json::object();
    if (old.is_object()) {
      for (auto it = old.begin(); it != old.end(); ++it) {
        if (it.key() != "status") next.emplace(it.key(), *it);
      }
    } else {
      next = old;
    }
    if (obj.contains("status")) {
      next["status"] = std::move(obj["status"]);
    } else {
      next.erase("status");
    }
    obj = std::move(next);
  } else {
    if (k.has_status_subresource) {
      if (old.contains("status")) {
        obj["status"] = old["status"];
      } else {
        obj.erase("status");
      }
    }
    CopySystemMeta(old_meta, obj["metadata"]);
    KeepAnnotations(&old_meta, obj["metadata"], opts);
    // A deleting object may not gain finalizers' worth of new life, but may
    // drop them; metadata.deletionTimestamp is kept from the old object.
    if (k.set_defaults) k.set_defaults(obj);
    if (auto st = RunMutators(k, obj, &old); !st.ok()) return st;
    if (api::Member(obj, "spec") != api::Member(old, "spec")) {
      obj["metadata"]["generation"] = old_meta.value("generation", int64_t{1}) + 1;
    }
  }
  obj["metadata"].erase("resourceVersion");
  if (auto st = TrackManagedFields(k, &old, obj, status, opts.field_manager, clock_.Now());
      !st.ok()) {
    return st;
  }
  // The new metadata must be valid on its own (labels, annotations, owner
  // references, finalizers), and change only what may change. A status
  // write without a field manager keeps the stored metadata as it is (but
  // for the resourceVersion): validated when it was written, it is not
  // validated again.
  api::ErrorList errs;
  if (!status || !opts.field_manager.empty()) {
    errs = api::validation::ValidateObjectMeta(
        obj["metadata"], k.namespaced,
        IsRbacKind(k)        ? api::validation::NameValidator(RbacNameValidator)
        : IsNamespaceKind(k) ? api::validation::NameValidator(api::validation::NameIsDNSLabel)
                             : api::validation::NameValidator(api::validation::NameIsDNSSubdomain),
        api::Path("metadata"));
    api::ErrorList meta_update =
        api::validation::ValidateObjectMetaUpdate(obj["metadata"], old_meta, api::Path("metadata"));
    errs.insert(errs.end(), meta_update.begin(), meta_update.end());
  }
  auto more = status ? (k.validate_status_update ? k.validate_status_update(obj, old)
                                                 : api::ErrorList{})
                     : (k.validate_update ? k.validate_update(obj, old) : api::ErrorList{});
  errs.insert(errs.end(), more.begin(), more.end());
  if (!errs.empty()) return Invalid(k, name, errs);
  if (opts.validate) {
    if (auto st = opts.validate(obj, &old); !st.ok()) return st;
  }
  if (!status && k.warnings && opts.warnings) {
    for (std::string& w : k.warnings(obj)) opts.warnings->push_back(std::move(w));
  }
  // A status write without a field manager keeps the old metadata (checked
  // equal by SameButStatus or copied above; TrackManagedFields records
  // nothing): only its status can differ.
  bool changes_nothing =
      !status                      ? EqualIgnoringResourceVersion(obj, old)
      : opts.field_manager.empty() ? StatusEqual(obj, old)
                                   : StatusWriteChangesNothing(obj, old);
  if (changes_nothing) {
    // No-op update: nothing is written and the resourceVersion stays.
    obj["metadata"]["resourceVersion"] = std::to_string(current->revision);
    return obj;
  }
  if (opts.dry_run) {
    obj["metadata"]["resourceVersion"] = std::to_string(current->revision);
    return obj;
  }
  // Removing the last finalizer of a deleting object deletes it.
  const Json& m = obj["metadata"];
  bool deleting = m.contains("deletionTimestamp");
  bool no_finalizers = !m.contains("finalizers") || m["finalizers"].empty();
  bool graceful_pending = m.contains("deletionGracePeriodSeconds") &&
                          m["deletionGracePeriodSeconds"].is_number() &&
                          m["deletionGracePeriodSeconds"].get<int64_t>() > 0;
  if (deleting && no_finalizers && !graceful_pending) {
    // One commit: the delete's event carries the final state (without the
    // finalizer just removed), and a crash cannot leave it stored
    // finalizer-less and never deleted.
    std::string bytes = api::DumpCompact(obj);
    WatchCache::DecodedOffer offer = cache_->OfferDecoded(current->key, bytes, obj);
    auto kv = store_.DeleteWithFinalValue(current->key, current->revision, std::move(bytes));
    if (!kv.ok()) return StoreWriteError(k, name, kv.status());
    obj["metadata"]["resourceVersion"] = std::to_string(kv->mod_revision);
    return obj;
  }
  if (deferred != nullptr) {  // The caller writes it (UpdateStatusMany) and sets the version.
    std::string bytes = api::DumpCompact(obj);
    WatchCache::DecodedOffer offer = cache_->OfferDecoded(current->key, bytes, obj);
    deferred->push_back({{current->key, std::move(bytes), current->revision}, std::move(offer)});
    return obj;
  }
  auto kv = Put(current->key, obj, current->revision, opts.version_only);
  if (!kv.ok()) return StoreWriteError(k, name, kv.status());
  obj["metadata"]["resourceVersion"] = std::to_string(kv->mod_revision);
  (void)conditional;
  return obj;
}

absl::StatusOr<Json> Registry::Patch(const api::KindDef& k, std::string_view ns,
                                     std::string_view name, PatchType type, const Json& patch,
                                     bool status, const WriteOptions& opts) {
  return internal::RetryOnConflict<Json>(k, name, [&](bool) -> internal::Attempt<Json> {
    ObjectPtr current = cache_->Get(StoreKey(k, ns, name));
    if (!current) {
      if (type == PatchType::kApply && !status) {
        Json obj = patch;
        return Create(k, ns, std::move(obj), opts);
      }
      return NotFound(k, name);
    }
    Json live = current->Decode();
    if (k.storage) k.from_storage(live);  // Patches apply to the client's version.
    absl::StatusOr<Json> patched;
    switch (type) {
      case PatchType::kMerge:
        patched = api::ApplyMergePatch(live, patch);
        break;
      case PatchType::kJson:
        patched = api::ApplyJsonPatch(live, patch);
        break;
      case PatchType::kStrategic:
      case PatchType::kApply:
        patched = api::ApplyStrategicMergePatch(live, patch, k.schema.get());
        break;
    }
    if (!patched.ok()) {
      if (patched.status().code() == absl::StatusCode::kFailedPrecondition) {
        return Invalid(k, name, {api::Invalid(api::Path(""), nullptr,
                                              std::string(patched.status().message()))});
      }
      return BadRequest(std::string(patched.status().message()));
    }
    Json obj = std::move(*patched);
    if (!obj.is_object()) return BadRequest("the patch did not produce a JSON object");
    // A patch may carry a resourceVersion precondition.
    std::string rv = obj.contains("metadata") && obj["metadata"].is_object()
                         ? api::CopyStringMember(obj["metadata"], "resourceVersion")
                         : std::string();
    bool conditional = !rv.empty() && rv != std::to_string(current->revision);
    if (conditional) return StaleConflict(k, name);
    if (auto st = NormalizeBody(k, obj, opts); !st.ok()) return st;
    if (api::CopyStringMember(obj["metadata"], "name") != name) {
      return BadRequest("metadata.name: the name of a patched object may not change");
    }
    if (k.namespaced) obj["metadata"]["namespace"] = ns;
    if (k.storage) k.to_storage(obj);
    auto res = WriteUpdate(k.StorageKind(), current, std::move(obj), status, false, opts);
    // Lost a race with another writer: apply the patch again on the newer
    // object, as GuaranteedUpdate does. `rv` is no guide here: the patched
    // object carries the live object's resourceVersion whenever the patch
    // names none; one the patch names fails the check above next time.
    if (internal::IsWriteConflict(res.status())) return internal::Attempt<Json>::Retry();
    return Served(k, std::move(res));
  });
}

}  // namespace batchd::registry
