// Informer: a local, decoded copy of one kind's objects (optionally one
// namespace / selector), kept current by list + watch through a Client, with
// add/update/delete handlers — the lister and event source controllers read.
//
// Two ways to drive it: `Start()` runs a thread that watches and re-lists on
// errors (server mode); `Pump()` processes whatever events are ready without
// blocking (single-threaded simulate mode and deterministic tests).
//
// Settled objects (SetCompactWhen: a finished Job, a terminated Pod...) are
// kept as their serialized bytes instead of a decoded tree, which costs
// 4-6 times their size: Get and List decode them again when asked (sharing
// one decoding while any reader holds it), so readers and handlers see the
// same objects either way. In process the bytes are the watch cache's own
// (shared, not copied).
//
// Thread-safety: the lister methods are thread-safe. Handlers run on the
// thread that drives the informer, one event at a time, after the local copy
// is updated; they must not block.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "client/client.h"

namespace batchd::client {

using ObjectRef = std::shared_ptr<const api::Json>;

struct EventHandlers {
  std::function<void(const ObjectRef&)> on_add;
  std::function<void(const ObjectRef& old_obj, const ObjectRef& new_obj)> on_update;
  std::function<void(const ObjectRef&)> on_delete;
};

class Informer {
 public:
  Informer(Client& client, const api::KindDef& kind, std::string ns = "", Selector sel = {});
  ~Informer();

  void AddHandlers(EventHandlers h);
  // Objects for which `settled` returns true are kept compact (see above).
  // Call before Sync/Start. `settled` must be cheap and must not block.
  void SetCompactWhen(std::function<bool(const api::Json&)> settled);

  // Lists and opens the watch; handlers see every listed object as an add.
  absl::Status Sync();
  // Processes ready events; returns how many. Re-syncs when the watch ends.
  int Pump();
  // Sync, then a thread that pumps until Stop.
  absl::Status Start();
  // Asks the thread to end without waiting for it: it notices within one
  // wait for the next event (200 ms). A caller stopping many informers asks
  // each first, then Stops each, so they end together.
  void RequestStop() { stop_ = true; }
  // Ends the thread and waits for it.
  void Stop();

  ObjectRef Get(const std::string& ns, const std::string& name) const;
  // Get, but nullptr for an object kept compact (SetCompactWhen's predicate
  // held when it was stored): for readers that settled objects never concern,
  // which need not decode them.
  ObjectRef GetUnlessCompact(const std::string& ns, const std::string& name) const;
  std::vector<ObjectRef> List(const std::string& ns = "") const;
  // Objects whose labels match a label-selector string.
  std::vector<ObjectRef> ListMatching(const std::string& ns, const std::string& selector) const;
  const api::KindDef& kind() const { return kind_; }
  std::string ResourceVersion() const;
  // How many objects are kept compact now (tests, metrics).
  size_t CompactCount() const;
  // True once a list (Sync) succeeded; false again while a re-list after a
  // lost watch has not.
  bool HasSynced() const { return synced_.load(); }

  // "ns/name" or "name".
  static std::string KeyOf(const api::Json& obj);

 private:
  // One object: decoded (`obj`), or compact (`bytes`, with the decoding a
  // reader may still hold).
  struct Entry {
    ObjectRef obj;
    std::shared_ptr<const std::string> bytes;
    mutable std::weak_ptr<const api::Json> decoded;  // guarded by mu_ in objects_
  };
  void Apply(WatchEvent&& ev);  // takes the decoded object (no deep copy)
  // `ref` as kept: compact when settled (its bytes: `bytes`, or serialized).
  Entry MakeEntry(const ObjectRef& ref, std::shared_ptr<const std::string> bytes) const;
  // The decoded object of a copy of an entry, parsing a compact one whose
  // decoding nobody holds; remembers that decoding in the entry under `key`
  // while it is unchanged.
  ObjectRef Resolve(const std::string& key, const Entry& e) const;

  std::function<bool(const api::Json&)> settled_;

  Client& client_;
  const api::KindDef& kind_;
  const std::string ns_;
  const Selector sel_;
  std::vector<EventHandlers> handlers_;
  std::unique_ptr<WatchStream> watch_;
  mutable absl::Mutex mu_;
  std::map<std::string, Entry> objects_ ABSL_GUARDED_BY(mu_);
  std::string resource_version_ ABSL_GUARDED_BY(mu_);
  std::atomic<bool> stop_{false};
  std::atomic<bool> synced_{false};
  std::thread thread_;
};

}  // namespace batchd::client
