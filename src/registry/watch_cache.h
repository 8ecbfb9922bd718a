// WatchCache: the server's in-memory view of the store — every object's
// stored bytes (labels and selectable fields extracted when first filtered
// on), plus a ring of recent events, bounded by count and bytes, that
// watchers replay from (older watches replay from the store's history). Lists, gets and
// watches are served from it; writes go to the store, whose synchronous watch
// callback updates the cache before the write is acknowledged, so a client
// always reads its own writes.
//
// Events (core/v1) are not kept, as kube-apiserver's default watch-cache
// sizes have none for them: they are many (several per Job, kept an hour)
// and rarely read. Their gets and lists read the store (a list at the
// cache's revision, so a watch from its resourceVersion misses nothing);
// their changes still go through the ring and to watchers like any other.
//
// Thread-safety: all methods are thread-safe. Objects are immutable and shared
// (`ObjectPtr`); a Subscription is used by one consumer thread.
#pragma once

#include <atomic>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "api/kind.h"
#include "common/clock.h"
#include "store/store.h"

namespace batchd::registry {

struct CachedObject {
  std::string key;
  // The object as served: the stored compact JSON with metadata.resourceVersion
  // spliced in once, so lists and every watcher reuse the same bytes.
  std::string json;
  int64_t revision = 0;  // mod_revision, served as metadata.resourceVersion.
  const api::KindDef* kind = nullptr;

  // Labels, and selectable fields (metadata.name, metadata.namespace, the
  // kind's fields), extracted from the object on first use: most versions are
  // never filtered on (nothing in the server decodes an Event it writes), so
  // storing a write does not parse it.
  const std::map<std::string, std::string>& labels() const;
  const std::map<std::string, std::string>& fields() const;

  const std::string& Serialized() const { return json; }
  // A mutable copy: copied from the shared decoding while one is alive, else parsed.
  api::Json Decode() const;
  // The object decoded (resourceVersion included), immutable and shared by
  // every in-process reader while any holds it: parsed once per version, and
  // not retained by the cache itself (its event ring would keep old versions).
  std::shared_ptr<const api::Json> Shared() const;

 private:
  friend class WatchCache;
  std::shared_ptr<const api::Json> SharedLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(decoded_mu_);
  void ExtractLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(decoded_mu_);
  // For a subscriber that decodes: the held decoding, if any; the cache
  // stops holding it once every such subscriber sent this version took it.
  std::shared_ptr<const api::Json> TakeHeld() const;

  mutable absl::Mutex decoded_mu_;
  mutable std::weak_ptr<const api::Json> decoded_ ABSL_GUARDED_BY(decoded_mu_);
  // The decoding the writer offered (WatchCache::OfferDecoded), held for the
  // `held_readers_` in-process subscribers this version was sent to: without
  // it a version superseded before its readers got to it would be parsed.
  mutable std::shared_ptr<const api::Json> held_ ABSL_GUARDED_BY(decoded_mu_);
  mutable int held_readers_ ABSL_GUARDED_BY(decoded_mu_) = 0;
  mutable bool extracted_ ABSL_GUARDED_BY(decoded_mu_) = false;  // labels_ and fields_ are final once set
  mutable std::map<std::string, std::string> labels_ ABSL_GUARDED_BY(decoded_mu_);
  mutable std::map<std::string, std::string> fields_ ABSL_GUARDED_BY(decoded_mu_);
};
using ObjectPtr = std::shared_ptr<const CachedObject>;

struct CacheEvent {
  enum class Type { kAdded, kModified, kDeleted };
  Type type = Type::kAdded;
  int64_t revision = 0;
  ObjectPtr object;  // New state; for kDeleted, the last state (revision = delete's).
  ObjectPtr prev;    // Previous state, null for kAdded.
};

class WatchCache {
 public:
  class Subscription {
   public:
    ~Subscription();
    // Waits up to `timeout` for the next event. Returns false on timeout or
    // when the subscription was closed (then `closed()` is true).
    bool Next(CacheEvent* ev, absl::Duration timeout);
    bool closed() const;
    const std::string& close_reason() const { return close_reason_; }
    // The newest revision a bookmark may carry now: never past an event not
    // yet returned by Next. Called by the consumer.
    int64_t BookmarkRevision() const;

   private:
    friend class WatchCache;
    WatchCache* cache_ = nullptr;
    std::string prefix_;
    mutable absl::Mutex mu_;
    absl::CondVar cv_;
    std::deque<CacheEvent> queue_ ABSL_GUARDED_BY(mu_);
    std::deque<CacheEvent> taken_;  // taken from queue_ by the consumer, not yet returned
    bool closed_ ABSL_GUARDED_BY(mu_) = false;
    // queue_ non-empty or closed_: set under mu_ by whoever queues or
    // closes, cleared by the consumer under mu_ when it takes the queue of
    // an open subscription. Read without the lock by a zero-timeout Next
    // and by closed(), so that pumping an idle watch (every informer after
    // every reconcile, in simulate mode) takes no lock.
    std::atomic<bool> ready_{false};
    std::string close_reason_ ABSL_GUARDED_BY(mu_);
    bool decodes_ = false;  // see Watch
    // The held decoding of the event last returned, kept alive while the
    // consumer works on it (until it calls Next again).
    std::shared_ptr<const api::Json> taken_decoded_;
    // The revision of the event last returned (or the start revision).
    int64_t last_rev_ = 0;
    // Fed by a store watch of its own (a resourceVersion older than the
    // ring, replayed from the store's history) instead of OnStoreEvent.
    bool store_fed_ = false;
    // A watch from a revision the cache had not reached when it started
    // (written through another server): events up to it are not sent.
    // Set before the subscription is published, then read under the cache's mu_.
    int64_t skip_through_ = 0;
    // Declared last: destroyed first, so its callbacks stop before the rest.
    std::unique_ptr<store::WatchHandle> store_watch_;
  };

  // A write's decoded object, offered to the cache before the store write
  // (OfferDecoded); withdrawn on destruction unless the cache took it.
  class DecodedOffer {
   public:
    DecodedOffer() = default;
    DecodedOffer(DecodedOffer&& o) noexcept;
    DecodedOffer& operator=(DecodedOffer&& o) noexcept;
    ~DecodedOffer();

   private:
    friend class WatchCache;
    struct Entry {
      std::string key;
      std::string bytes;
      api::Json decoded;
    };
    void Withdraw();
    WatchCache* cache_ = nullptr;
    std::unique_ptr<Entry> entry_;
  };

  // The ring keeps at most `ring_capacity` events and about `ring_bytes` of
  // their objects' bytes; a watch from before the ring replays from the
  // store's history instead.
  WatchCache(store::Store& store, std::shared_ptr<const api::Scheme> scheme,
             size_t ring_capacity = 100000, size_t max_queue = 100000,
             size_t ring_bytes = size_t{64} << 20);

  // Whether objects under `key` are kept (all but Events, see above).
  static bool Cached(std::string_view key);
  ~WatchCache();

  // Loads every object and subscribes to changes. Call once.
  absl::Status Start();

  int64_t Revision() const;
  // Waits until the cache reached `revision` (every change up to it
  // applied), as kube-apiserver's cache does for a read NotOlderThan a
  // revision it has not seen yet (written through another server). Gives up
  // after `max_wait` by `clock` (a timer on it; no thread of its own), or
  // after as long in real time where nothing advances `clock` (a virtual
  // one). True when reached. Waiters are the requests' own threads, bounded
  // by the server's in-flight request limit.
  bool WaitForRevision(int64_t revision, Clock& clock, absl::Duration max_wait);
  // Requests waiting in WaitForRevision now (tests, metrics).
  size_t RevisionWaiters() const;
  ObjectPtr Get(const std::string& key) const;
  // Objects whose key starts with `prefix` and sorts after `start_after`,
  // at most `limit` (0: all). Sets `*more` when cut short. `*revision` gets
  // the cache revision the snapshot reflects. A prefix of objects not kept
  // reads the store at that revision (`prefix` must not cover both kinds).
  std::vector<ObjectPtr> List(const std::string& prefix, const std::string& start_after,
                              size_t limit, bool* more, int64_t* revision) const;
  // How many List would return; nullopt for objects not kept (not counted).
  std::optional<size_t> Count(const std::string& prefix, const std::string& start_after) const;

  // Events for keys under `prefix` after `after_revision`; -1 means from now.
  // From the ring, or (older than the ring) from the store's history;
  // OutOfRange when the store has compacted it. `decodes`: the
  // consumer reads the objects decoded (an in-process informer), so writers'
  // decodings are kept for it (see OfferDecoded).
  absl::StatusOr<std::unique_ptr<Subscription>> Watch(const std::string& prefix,
                                                      int64_t after_revision,
                                                      bool decodes = false);
  size_t WatcherCount() const;
  // Events and object bytes in the ring (for tests and metrics).
  size_t RingSize() const;
  size_t RingBytes() const;

  // Offers `decoded`, the object whose serialization the caller is about to
  // write under `key` as `bytes`, so the version the store writes with
  // exactly those bytes needs no parse by in-process readers. Offers nothing
  // (an empty handle, no copy) when no in-process subscriber watches `key`.
  // Keep the handle until the store write returned.
  DecodedOffer OfferDecoded(const std::string& key, const std::string& bytes,
                            const api::Json& decoded);
  // The same, offering `decoded` itself rather than a copy (a writer that
  // returns only the new resourceVersion); `decoded` is moved from only when
  // something was offered.
  DecodedOffer OfferDecoded(const std::string& key, const std::string& bytes,
                            api::Json&& decoded);

  // Builds a CachedObject from stored bytes (used by the registry for
  // dry-run and write results too). Does not parse them.
  ObjectPtr MakeObject(const std::string& key, std::string json, int64_t revision) const;
  const api::KindDef* KindForKey(const std::string& key) const;

 private:
  void OnStoreEvent(const store::Event& e);
  // The ring's bytes for `ev`: its object's, and its own copy of the
  // previous state for objects not kept.
  static size_t RingCost(const CacheEvent& ev);
  // In-process (decoding) subscribers whose prefix covers `key`. mu_ held.
  int DecodingSubscribersLocked(const std::string& key) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Unsubscribe(Subscription* s);
  std::optional<api::Json> TakeOffer(const std::string& key, const std::string& bytes);
  // Whether a write under `key` has anyone to offer its decoding to.
  bool WantsDecoded(const std::string& key) const;
  DecodedOffer Offer(const std::string& key, const std::string& bytes, api::Json decoded);
  // Splices the resourceVersion into a copy of `json`: the one copy of
  // the stored bytes a version costs (not one more for the parameter).
  std::shared_ptr<CachedObject> NewObject(const std::string& key, const std::string& json,
                                          int64_t revision) const;

  store::Store& store_;
  std::shared_ptr<const api::Scheme> scheme_;
  const size_t ring_capacity_;
  const size_t max_queue_;
  const size_t ring_max_bytes_;
  std::unique_ptr<store::WatchHandle> handle_;

  mutable absl::Mutex mu_;
  std::map<std::string, ObjectPtr> objects_ ABSL_GUARDED_BY(mu_);
  std::deque<CacheEvent> ring_ ABSL_GUARDED_BY(mu_);
  size_t ring_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t revision_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t oldest_ ABSL_GUARDED_BY(mu_) = 0;  // Events after this revision are in the ring.
  std::vector<Subscription*> subs_ ABSL_GUARDED_BY(mu_);
  // WaitForRevision's waiters by the revision each waits for; woken by
  // OnStoreEvent once the cache reaches it, or by its timer.
  struct RevisionWaiter;
  std::multimap<int64_t, std::shared_ptr<RevisionWaiter>> revision_waiters_ ABSL_GUARDED_BY(mu_);

  absl::Mutex offers_mu_;
  std::multimap<std::string, DecodedOffer::Entry*> offers_ ABSL_GUARDED_BY(offers_mu_);  // by key
};

// "/registry/<group or core>/<plural>/[<namespace>/]<name>"; a namespace or
// name of "" gives the collection prefix (with trailing slash).
std::string StoreKey(const api::KindDef& k, std::string_view ns, std::string_view name);
std::string CollectionPrefix(const api::KindDef& k, std::string_view ns);

// Inserts `"resourceVersion":"<rv>"` into the top-level metadata object of a
// compact JSON document without parsing it.
std::string SpliceResourceVersion(const std::string& json, int64_t rv);

}  // namespace batchd::registry
