// WatchHub: the in-memory change history and watcher fan-out shared by the
// store backends. It keeps a bounded ring of recent events (by count and by
// bytes); dropping the oldest event advances `OldestWatchableRevision()` just
// as compaction does. A backend with durable history (HistorySource) keeps
// no ring (max_events 0) and replays older watches from its own storage.
//
// Thread-safety: all methods are thread-safe. `Publish` calls must be
// serialised by the caller (the backend's single writer) and carry strictly
// increasing revisions; each `Publish` runs the matching callbacks on the
// calling thread before it returns. Replayed history is delivered on a
// hub-owned thread per watch; live events for that watch are queued (not
// waited for) until its replay is done, so every watcher sees its events in
// revision order exactly once and a slow replay never stalls the writer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "store/store.h"

namespace batchd::store::internal {

struct WatchHubOptions {
  // The ring keeps at most this many events...
  size_t max_events = 100000;
  // ...and at most about this many bytes of keys and values.
  size_t max_bytes = size_t{256} << 20;
};

struct Subscriber;

// Where a backend that keeps its revisions durably (SqliteStore) replays
// history from, instead of an in-memory ring.
class HistorySource {
 public:
  virtual ~HistorySource() = default;
  // Calls `emit` for every change to a key with `prefix` whose revision is in
  // (after, upto], in revision order, with `prev` filled in; stops early when
  // `emit` returns false. The hub guarantees no compaction passes `after`
  // while this runs.
  virtual absl::Status ReadHistory(std::string_view prefix, int64_t after, int64_t upto,
                                   const std::function<bool(const Event&)>& emit) = 0;
};

class WatchHub {
 public:
  // `start_revision`: the store revision at open; history starts empty, so it
  // is also the oldest watchable revision.
  explicit WatchHub(int64_t start_revision, WatchHubOptions options = {});
  // A hub whose history before the ring comes from `source` (which must
  // outlive it), kept from `compacted` on.
  WatchHub(int64_t start_revision, WatchHubOptions options, HistorySource* source,
           int64_t compacted);
  ~WatchHub();
  WatchHub(const WatchHub&) = delete;
  WatchHub& operator=(const WatchHub&) = delete;

  // Appends `events` to the history and delivers them to matching watchers.
  // REQUIRES: calls are serialised; revisions strictly increase across calls.
  void Publish(std::vector<Event> events);

  // See `Store::Watch`. -1 means "after the latest published revision".
  absl::StatusOr<std::unique_ptr<WatchHandle>> Watch(std::string_view prefix,
                                                     int64_t after_revision,
                                                     WatchCallback cb);

  // Drops history up to and including `revision`. OutOfRange when `revision`
  // is in the future; a revision already compacted is a no-op.
  absl::Status Compact(int64_t revision);

  // The ring's events after `revision`, oldest first (for a backend that
  // reads past revisions by undoing them). OutOfRange when the ring no longer
  // holds them all.
  absl::StatusOr<std::vector<std::shared_ptr<const Event>>> EventsAfter(int64_t revision) const;

  // For a hub with a source: the revision a compaction to `revision` may
  // go to now (never past the start of a running replay); recorded at once
  // as compacted, so no new watch starts before it.
  int64_t ReserveCompaction(int64_t revision);

  // The revision of the latest published event (or the start revision).
  int64_t Revision() const;
  int64_t OldestWatchableRevision() const;

 private:
  using EventPtr = std::shared_ptr<const Event>;
  void TrimLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void DropFrontLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const WatchHubOptions options_;
  absl::Mutex publish_mu_;  // Serialises delivery across `Publish` calls.
  mutable absl::Mutex mu_;
  std::deque<EventPtr> history_ ABSL_GUARDED_BY(mu_);
  size_t history_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t revision_ ABSL_GUARDED_BY(mu_);
  int64_t oldest_ ABSL_GUARDED_BY(mu_);
  std::vector<std::shared_ptr<Subscriber>> subs_ ABSL_GUARDED_BY(mu_);
  HistorySource* const source_ = nullptr;
  int64_t source_compacted_ ABSL_GUARDED_BY(mu_) = 0;
  // The `after` of every replay reading from source_ now.
  std::multiset<int64_t> replay_floors_ ABSL_GUARDED_BY(mu_);
};

}  // namespace batchd::store::internal
