// Client: how controllers, the node agent and tests read and write API
// objects. One narrow interface with two implementations — InProcessClient
// (through the Registry, so validation and optimistic concurrency apply to
// controllers exactly as to kubectl) and HttpClient (over the REST API, for
// `batchd agent` on another machine).
//
// Objects are api::Json documents; errors are registry-style Status values
// (NotFound, Conflict, Invalid, ...) in both implementations.
//
// Thread-safety: implementations are thread-safe.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "api/kind.h"

namespace batchd::client {

struct ListResult {
  std::vector<api::Json> items;
  std::string resource_version;
};

struct WatchEvent {
  std::string type;  // ADDED, MODIFIED, DELETED, BOOKMARK, ERROR.
  api::Json object;  // Null when `shared` is set.
  // The in-process client hands out the watch cache's decoded object,
  // immutable and shared by every in-process watcher, instead of a copy.
  std::shared_ptr<const api::Json> shared;
  // The object's serialized bytes when the client has them at no cost (the
  // in-process client: the watch cache's own copy, shared, not copied); an
  // informer keeps these instead of the decoding for settled objects.
  std::shared_ptr<const std::string> bytes;
  const api::Json& Object() const { return shared ? *shared : object; }
};

class WatchStream {
 public:
  virtual ~WatchStream() = default;
  // Waits up to `timeout` for an event; false on timeout or end of stream
  // (then `done()` is true).
  virtual bool Next(WatchEvent* ev, absl::Duration timeout) = 0;
  virtual bool done() const = 0;
};

struct Selector {
  std::string labels;  // labelSelector syntax.
  std::string fields;  // fieldSelector syntax.
};

struct DeleteOptions {
  std::optional<int64_t> grace_period_seconds;
  std::string propagation_policy;   // "" = the kind's default.
  std::optional<std::string> precondition_uid;
};

class Client {
 public:
  virtual ~Client() = default;
  virtual const api::Scheme& scheme() const = 0;

  virtual absl::StatusOr<api::Json> Get(const api::KindDef& k, const std::string& ns,
                                        const std::string& name) = 0;
  virtual absl::StatusOr<ListResult> List(const api::KindDef& k, const std::string& ns,
                                          const Selector& sel = {}) = 0;
  virtual absl::StatusOr<api::Json> Create(const api::KindDef& k, const std::string& ns,
                                           api::Json obj) = 0;
  // Creates each (namespace, object); each succeeds or fails on its own, one
  // result per entry. The in-process client writes them in one store batch;
  // this default creates them one by one.
  virtual std::vector<absl::StatusOr<api::Json>> CreateMany(
      const api::KindDef& k, std::vector<std::pair<std::string, api::Json>> objs) {
    std::vector<absl::StatusOr<api::Json>> out;
    out.reserve(objs.size());
    for (auto& [ns, obj] : objs) out.push_back(Create(k, ns, std::move(obj)));
    return out;
  }
  // PUT with the object's resourceVersion as precondition (Conflict when stale).
  virtual absl::StatusOr<api::Json> Update(const api::KindDef& k, api::Json obj) = 0;
  virtual absl::StatusOr<api::Json> UpdateStatus(const api::KindDef& k, api::Json obj) = 0;
  // UpdateStatus for a caller that reads only the written object's
  // resourceVersion, which it returns: the in-process client then hands the
  // object to its watch cache instead of copying it for the caller.
  virtual absl::StatusOr<std::string> UpdateStatusForVersion(const api::KindDef& k,
                                                             api::Json obj);
  // One entry of UpdateStatusMany: `edit` changes the status of the latest
  // version of ns/name (a decoded copy; only its status is kept). An error
  // from `edit` leaves the object unwritten and is the entry's result.
  struct StatusEdit {
    std::string ns, name;
    std::function<absl::Status(api::Json& obj)> edit;
  };
  // Status writes computed on each object's latest version, as a status
  // PATCH without a resourceVersion is (a concurrent write elsewhere in the
  // object never conflicts: the edit runs again on the newer version). Each
  // succeeds or fails on its own, one result per entry, in order. The
  // in-process client writes them in one store batch (SqliteStore: one
  // transaction); this default reads and writes them one by one.
  virtual std::vector<absl::StatusOr<api::Json>> UpdateStatusMany(const api::KindDef& k,
                                                                  std::vector<StatusEdit> edits);
  // JSON merge patch.
  virtual absl::StatusOr<api::Json> MergePatch(const api::KindDef& k, const std::string& ns,
                                               const std::string& name, const api::Json& patch,
                                               bool status = false) = 0;
  virtual absl::Status Delete(const api::KindDef& k, const std::string& ns,
                              const std::string& name, const DeleteOptions& opts = {}) = 0;
  struct ChainedWrite {
    const api::KindDef* kind = nullptr;
    // With metadata.namespace; to update, its resourceVersion (a precondition).
    api::Json obj;
    bool status = false;  // UpdateStatus instead of Update.
    bool create = false;  // Create instead of Update.
    // An update whose caller reads only its resourceVersion: the result may
    // be {"metadata": {"resourceVersion": ...}} (see UpdateStatusForVersion).
    bool version_only = false;
  };
  // Each write in order, each only when every one before it succeeded (the
  // rest fail without writing): writes that may land only after others
  // (a Job's status after the pods it counts, a pod's finalizer released
  // after its Job counted it). The in-process client writes them in one
  // store commit; this default one by one.
  virtual std::vector<absl::StatusOr<api::Json>> WriteChain(std::vector<ChainedWrite> writes) {
    std::vector<absl::StatusOr<api::Json>> out;
    out.reserve(writes.size());
    bool failed = false;
    for (ChainedWrite& w : writes) {
      if (failed) {
        out.push_back(absl::AbortedError("not written: a write before it in its chain failed"));
        continue;
      }
      if (w.create) {
        std::string ns;
        if (w.obj.is_object()) {
          auto meta = w.obj.find("metadata");
          if (meta != w.obj.end() && meta->is_object()) ns = meta->value("namespace", "");
        }
        out.push_back(Create(*w.kind, ns, std::move(w.obj)));
      } else {
        out.push_back(w.status ? UpdateStatus(*w.kind, std::move(w.obj))
                               : Update(*w.kind, std::move(w.obj)));
      }
      failed = !out.back().ok();
    }
    return out;
  }
  // Watches from `resource_version` ("" = current state as ADDED events first).
  virtual absl::StatusOr<std::unique_ptr<WatchStream>> Watch(const api::KindDef& k,
                                                             const std::string& ns,
                                                             const Selector& sel,
                                                             const std::string& resource_version) = 0;

  // Convenience: the KindDef for group/version/plural; never null for built-in kinds.
  const api::KindDef& Kind(std::string_view group, std::string_view version,
                           std::string_view plural) const;
};

}  // namespace batchd::client
