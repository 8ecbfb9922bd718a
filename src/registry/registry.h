// Registry: generic REST storage for every kind in the Scheme. It turns API
// verbs (create, get, list, update, patch, delete, watch, and the status
// subresource) into store operations with Kubernetes semantics: defaulting,
// validation with field paths, optimistic concurrency, generateName,
// generation bumps on spec changes, finalizers and graceful deletion,
// namespaces that must exist, dry runs, and unknown-field policies.
//
// The HTTP layer and in-process controllers both write through it, so no
// write bypasses validation. Reads are served from the WatchCache.
//
// Multi-version kinds (KindDef::storage set): every verb accepts and returns
// objects in the KindDef's own version; the registry converts requests to
// the storage version before defaulting, mutation, validation and writing,
// and converts results, list items and watch events back.
//
// Mutators (AddMutator) are admission hooks other components register, like
// Kubernetes' mutating/validating webhooks: run on create and on update of
// the main resource (never /status), after defaulting and before validation,
// for dry runs too, on the storage-version object.
//
// Thread-safety: all methods are thread-safe.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/random/bit_gen_ref.h"
#include "absl/random/random.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "api/kind.h"
#include "common/clock.h"
#include "registry/watch_cache.h"
#include "store/store.h"

namespace batchd::registry {

namespace internal {
class ObjectFilter;
}  // namespace internal

enum class FieldValidation { kIgnore, kWarn, kStrict };

struct WriteOptions {
  bool dry_run = false;
  FieldValidation field_validation = FieldValidation::kWarn;
  std::string field_manager;
  // Warnings for the client (Warning headers), appended by the registry.
  std::vector<std::string>* warnings = nullptr;
  // Duplicate JSON fields seen while decoding the body (for Strict/Warn).
  std::vector<std::string> duplicate_fields;
  // Annotations this writer may not set or change (a Node's authenticated
  // log endpoint, written by anyone but that node): a create drops them, an
  // update or patch keeps the stored values, with a Warning when the request
  // asked otherwise.
  std::vector<std::string> kept_annotations;
  // This request's validating admission (as kube-apiserver's validating
  // admission plugins, after the kind's own validation): `obj` is the object
  // as it would be stored, `old` the stored one (null on create). A non-OK
  // status refuses the write and is returned as it is.
  std::function<absl::Status(const api::Json& obj, const api::Json* old)> validate;
  // An update of the status subresource decodes (normalises) only the body's
  // metadata and status, the parts it reads, not the rest (a Pod's spec):
  // for in-process writers, whose bodies are the stored object with a new
  // status. Over HTTP the whole body is decoded, as kube-apiserver does (a
  // malformed spec there refuses the write).
  bool status_body_only = false;
  // The caller reads only the written resourceVersion (an in-process
  // controller's status write): an update returns
  // {"metadata": {"resourceVersion": ...}} and hands the object it wrote to
  // the watch cache instead of a copy. A no-op or dry-run update, and one of
  // a converted kind, still return the whole object.
  bool version_only = false;
};

// How long a read NotOlderThan a resourceVersion this server's watch cache
// has not reached waits for it: kube-apiserver's cacher's 3 s.
inline constexpr absl::Duration kCacheFreshWait = absl::Seconds(3);

struct ListOptions {
  std::string label_selector;
  std::string field_selector;
  int64_t limit = 0;
  std::string continue_token;
  std::string resource_version;
  // "", "Exact" or "NotOlderThan" (list only), as kube-apiserver.
  std::string resource_version_match;
  // A list NotOlderThan a resourceVersion this server's watch cache has not
  // reached waits for it this long at most, then answers 504 (Timeout,
  // cause ResourceVersionTooLarge), as kube-apiserver (3 s); the HTTP layer
  // shortens it to the request's own timeout.
  absl::Duration fresh_wait = kCacheFreshWait;
  // Watch only: the watcher reads objects decoded (CachedObject::Shared), as
  // in-process informers do; writes then hand it their decoding.
  bool decodes = false;
};

struct ListResult {
  std::vector<ObjectPtr> items;
  int64_t revision = 0;
  std::string continue_token;
  std::optional<int64_t> remaining;
};

struct DeleteOptions {
  std::optional<int64_t> grace_period_seconds;
  std::string propagation_policy;  // "", Orphan, Background, Foreground.
  std::optional<std::string> precondition_uid;
  std::optional<std::string> precondition_resource_version;
  bool dry_run = false;
};

struct DeleteResult {
  // True when the object is gone; false when finalizers or a grace period keep it.
  bool deleted = false;
  api::Json object;  // Its last state.
};

enum class PatchType { kMerge, kJson, kStrategic, kApply };

// A watch stream: events already filtered by selectors, transitions mapped
// to ADDED / MODIFIED / DELETED as Kubernetes does.
class Watcher {
 public:
  struct Event {
    std::string type;  // ADDED, MODIFIED, DELETED, ERROR.
    ObjectPtr object;
    api::Json error;   // Status object for ERROR.
  };
  virtual ~Watcher() = default;
  // Waits up to `timeout`; false on timeout or when the stream ended (`done()`).
  virtual bool Next(Event* ev, absl::Duration timeout) = 0;
  virtual bool done() const = 0;
  // The cache revision, for bookmarks.
  virtual int64_t Revision() const = 0;
};

// An admission hook: may change `obj` (the object about to be validated and
// written, in the storage version, defaults applied); `old` is the current
// object on update and null on create. A non-OK status rejects the request
// and is returned to the client as is, so a validating hook is a mutator that
// changes nothing; use registry/errors.h (e.g. Invalid, Forbidden) for
// Kubernetes-shaped errors.
using Mutator = std::function<absl::Status(api::Json& obj, const api::Json* old)>;

class Registry {
 public:
  // `random` draws UIDs and generateName suffixes (a seeded engine makes
  // them reproducible); it must outlive the registry and is used under the
  // registry's own lock.
  Registry(store::Store& store, std::shared_ptr<const api::Scheme> scheme, Clock& clock,
           absl::BitGenRef random);
  // The same with a generator of its own, seeded by the system.
  Registry(store::Store& store, std::shared_ptr<const api::Scheme> scheme, Clock& clock);
  ~Registry();

  // Loads the cache and makes sure the `default`, `kube-system` and
  // `kube-public` namespaces exist.
  absl::Status Start();

  const api::Scheme& scheme() const { return *scheme_; }

  // Registers `m` for the resource `group_resource` as KindDef::GroupResource()
  // names it ("jobs.batch", "pods", "workloads.kueue.x-k8s.io"). Mutators of a
  // resource run in registration order; the first error stops the write.
  // Thread-safe; usually called once at start-up, before serving.
  void AddMutator(std::string group_resource, Mutator m);
  WatchCache& cache() { return *cache_; }

  absl::StatusOr<api::Json> Create(const api::KindDef& k, std::string_view ns, api::Json obj,
                                   const WriteOptions& opts);
  // Creates each (namespace, object) as `Create` would; each succeeds or
  // fails on its own (one result per entry, in order). Objects with a given
  // name are written with one store CreateMany (SqliteStore: one commit):
  // what the event recorder uses to write Events in bulk.
  std::vector<absl::StatusOr<api::Json>> CreateMany(
      const api::KindDef& k, std::vector<std::pair<std::string, api::Json>> objs,
      const WriteOptions& opts);
  absl::StatusOr<ObjectPtr> Get(const api::KindDef& k, std::string_view ns, std::string_view name);
  // GET with a resourceVersion: the object as of that revision or later
  // ("" or "0": any), waiting for this server's cache as a NotOlderThan list
  // does (at most `fresh_wait`, then 504 Too large resource version).
  absl::StatusOr<ObjectPtr> Get(const api::KindDef& k, std::string_view ns, std::string_view name,
                                const std::string& resource_version,
                                absl::Duration fresh_wait = kCacheFreshWait);
  absl::StatusOr<ListResult> List(const api::KindDef& k, std::string_view ns,
                                  const ListOptions& opts);
  // PUT. `status` selects the status subresource.
  absl::StatusOr<api::Json> Update(const api::KindDef& k, std::string_view ns,
                                   std::string_view name, api::Json obj, bool status,
                                   const WriteOptions& opts);
  absl::StatusOr<api::Json> Patch(const api::KindDef& k, std::string_view ns,
                                  std::string_view name, PatchType type,
                                  const api::Json& patch, bool status, const WriteOptions& opts);
  struct ChainedWrite {
    const api::KindDef* kind = nullptr;
    // With metadata.namespace and name (or generateName, to create); to
    // update, its resourceVersion (the precondition).
    api::Json obj;
    bool status = false;  // Update the status subresource.
    bool create = false;  // Create instead of update.
    // An update whose result is only its resourceVersion (WriteOptions::version_only).
    bool version_only = false;
  };
  // Creates or updates each object as Create / Update (PUT) would, in
  // order, each only when every one before it was written (or changed
  // nothing); the first failure fails the rest with Conflict, nothing of
  // them written. Updates need their resourceVersion (a precondition; never
  // retried); a generated name that collides is not drawn again. The writes
  // go to the store in one chained UpdateMany (SqliteStore: one commit):
  // what the Job controller uses for new pods with the Job's status, and for
  // a finishing Job's status with its pods' finalizer releases. The objects
  // must be distinct.
  std::vector<absl::StatusOr<api::Json>> WriteChain(std::vector<ChainedWrite> writes,
                                                    const WriteOptions& opts);
  absl::StatusOr<DeleteResult> Delete(const api::KindDef& k, std::string_view ns,
                                      std::string_view name, const DeleteOptions& opts);
  // DELETE on a collection: deletes every object matching the selectors.
  absl::StatusOr<std::vector<api::Json>> DeleteCollection(const api::KindDef& k,
                                                          std::string_view ns,
                                                          const ListOptions& list,
                                                          const DeleteOptions& opts);
  absl::StatusOr<std::unique_ptr<Watcher>> Watch(const api::KindDef& k, std::string_view ns,
                                                 const ListOptions& opts);
  // POST pods/{name}/binding: assigns an unbound pod to `binding.target.name`
  // and marks it PodScheduled. Conflict when already assigned or deleting.
  absl::StatusOr<api::Json> Bind(std::string_view ns, std::string_view name,
                                 const api::Json& binding, const WriteOptions& opts);
  struct BindRequest {
    std::string ns, name;
    api::Json binding;
  };
  // Binds each pod as Bind does, each on its own (one result per request, in
  // order), with the writes in one store UpdateMany (SqliteStore: one
  // commit): what the scheduler uses for the binds of one pass.
  std::vector<absl::StatusOr<api::Json>> BindMany(const std::vector<BindRequest>& binds,
                                                  const WriteOptions& opts);
  // One entry of UpdateStatusMany: `edit` changes the status of a decoded
  // copy of the latest version of ns/name (only its status is kept); an
  // error from it leaves the object unwritten and is the entry's result.
  struct StatusEdit {
    std::string ns, name;
    std::function<absl::Status(api::Json& obj)> edit;
  };
  // Status writes computed on each object's latest version, as a status
  // PATCH without a resourceVersion (update validation and managed fields
  // as Update's), each on its own (one result per edit, in order), with the
  // writes in one store UpdateMany (SqliteStore: one commit): what the queue
  // manager uses for the admissions of one cycle. An object written
  // meanwhile (the store's Aborted) has its edit run again, alone, on the
  // newer version. Storage-version kinds only (else InvalidArgument).
  std::vector<absl::StatusOr<api::Json>> UpdateStatusMany(const api::KindDef& k,
                                                          std::vector<StatusEdit> edits,
                                                          const WriteOptions& opts);

 private:
  struct Prepared;
  // A write WriteUpdate leaves to its caller (UpdateStatusMany): the store
  // update and the decoding offered to the watch cache along with it.
  struct DeferredWrite {
    store::Store::UpdateOp op;
    WatchCache::DecodedOffer offer;
  };
  absl::StatusOr<api::Json> WriteUpdate(const api::KindDef& k, const ObjectPtr& current,
                                        api::Json obj, bool status, bool conditional,
                                        const WriteOptions& opts,
                                        std::vector<DeferredWrite>* deferred = nullptr);
  // `status_write`: the body of a status-subresource update (see
  // WriteOptions::status_body_only).
  absl::Status NormalizeBody(const api::KindDef& k, api::Json& obj, const WriteOptions& opts,
                             bool status_write = false);
  absl::Status CheckNamespace(const api::KindDef& k, std::string_view ns, std::string_view name);
  // The pages of a list read from the store as of `revision` (continue
  // tokens and resourceVersionMatch=Exact): one snapshot however long the
  // client pages.
  absl::StatusOr<ListResult> ListAtRevision(const api::KindDef& k, const std::string& prefix,
                                            const std::string& start, int64_t revision,
                                            bool continuing,
                                            const internal::ObjectFilter& filter, size_t limit);
  absl::StatusOr<DeleteResult> DeleteNow(const api::KindDef& k, const ObjectPtr& current);
  // Stores `obj` serialized under `key`: a create, or with `expected_revision`
  // an update of that revision. The watch cache gets `obj` decoded along
  // (OfferWritten; with `version_only` `obj` itself, leaving it
  // {"metadata": {}}), so in-process readers do not parse it.
  absl::StatusOr<store::KeyValue> Put(const std::string& key, api::Json& obj,
                                      std::optional<int64_t> expected_revision,
                                      bool version_only = false);
  // Offers `obj`, about to be stored under `key` as `bytes`, to the watch
  // cache: a copy, or with `version_only` the object itself, `obj` left as
  // {"metadata": {}} for the caller to set the written resourceVersion in.
  WatchCache::DecodedOffer OfferWritten(const std::string& key, const std::string& bytes,
                                        api::Json& obj, bool version_only);
  void FinishNamespace(std::string ns);
  std::string NewUid();
  // metadata.generateName cut to 58 characters and five random characters
  // from Kubernetes' alphabet.
  std::string GenerateName(const api::Json& meta);
  // Runs the mutators of `k`'s resource on `obj` (see AddMutator).
  absl::Status RunMutators(const api::KindDef& k, api::Json& obj, const api::Json* old);
  // Converts a storage-version result to `k`'s version (no-op for a storage kind).
  ObjectPtr Served(const api::KindDef& k, ObjectPtr o) const;
  absl::StatusOr<api::Json> Served(const api::KindDef& k, absl::StatusOr<api::Json> j) const;
  absl::StatusOr<std::string> PrepareCreate(const api::KindDef& k, std::string_view ns,
                                            api::Json& obj, const WriteOptions& opts,
                                            bool* generated);
  absl::StatusOr<api::Json> StoreCreate(const api::KindDef& k, std::string key, api::Json obj,
                                        bool generate);
  // Create / Update / Patch of a non-storage-version kind (KindDef::storage set).
  absl::StatusOr<api::Json> CreateConverted(const api::KindDef& k, std::string_view ns,
                                            api::Json obj, const WriteOptions& opts);
  absl::StatusOr<api::Json> UpdateConverted(const api::KindDef& k, std::string_view ns,
                                            std::string_view name, api::Json obj, bool status,
                                            const WriteOptions& opts);

  store::Store& store_;
  std::shared_ptr<const api::Scheme> scheme_;
  Clock& clock_;
  std::unique_ptr<WatchCache> cache_;
  std::unique_ptr<absl::BitGen> own_random_;  // Only when none was injected.
  absl::Mutex random_mu_;
  absl::BitGenRef random_ ABSL_GUARDED_BY(random_mu_);
  absl::Mutex mutators_mu_;
  // group resource -> hooks; replaced (copy on write) under mutators_mu_.
  std::shared_ptr<const std::map<std::string, std::vector<Mutator>>> mutators_ ABSL_GUARDED_BY(mutators_mu_);
  struct NamespaceWorker;
  std::shared_ptr<NamespaceWorker> ns_worker_;
};

// Parses a JSON/merge patch body type from a Content-Type; NotFound-free.
std::optional<PatchType> PatchTypeFromContentType(std::string_view content_type);

}  // namespace batchd::registry
