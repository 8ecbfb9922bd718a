// Store: a revisioned key-value store with the etcd v3 contract, the only
// persistence seam in batchd. Every successful write bumps one global,
// monotonic revision; each key remembers the revision that created it and the
// one that last modified it. Watchers see every change after a revision, in
// revision order. Values are opaque bytes (the registry stores JSON).
//
// MVCC: past revisions stay readable (RangeAtRevision) and watchable until
// compacted (Compact), as in etcd.
//
// Backends: MemoryStore (tests, `simulate`), SqliteStore (`server`), and
// later etcd. All implement this interface and pass one conformance suite
// (store/testing/store_conformance.h).
//
// Thread-safety: every method may be called concurrently from any thread.
// Watch callbacks run one at a time, in revision order, after the write is
// durable and *before* the writer's call returns; so a reader that watches
// from revision 0 sees a write before its author does. They may run on a
// writer's own thread (SqliteStore's group-commit leader runs them for its
// batch), so a caller must not hold a lock a callback takes while it writes.
// Callbacks must be quick and must not call back into the store.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace batchd::store {

struct KeyValue {
  std::string key;
  std::string value;
  int64_t create_revision = 0;
  int64_t mod_revision = 0;
};

struct Event {
  enum class Type { kPut, kDelete };
  Type type = Type::kPut;
  // For kPut: the new value. For kDelete: the key with the last value it held
  // and `mod_revision` equal to the revision of the delete.
  KeyValue kv;
  // The value before this event; empty `key` when the event created the key.
  KeyValue prev;
  int64_t revision() const { return kv.mod_revision; }
};

struct RangeResult {
  std::vector<KeyValue> kvs;  // Sorted by key.
  int64_t revision = 0;       // The store revision the range was read at.
  bool more = false;          // True when `limit` cut the range short.
};

// A live watch. Destroying it stops the callbacks; after the destructor returns
// no callback for it is running or will run.
class WatchHandle {
 public:
  virtual ~WatchHandle() = default;
};

using WatchCallback = std::function<void(const Event&)>;

class Store {
 public:
  virtual ~Store() = default;

  // Returns NotFound when the key does not exist.
  virtual absl::StatusOr<KeyValue> Get(std::string_view key) = 0;

  // Keys with `prefix`, strictly greater than `start_after` (empty: from the
  // start), at most `limit` of them (0: no limit), sorted by key.
  virtual absl::StatusOr<RangeResult> Range(std::string_view prefix,
                                            std::string_view start_after,
                                            int64_t limit) = 0;

  // The range as `Range` reads it, but as of the past `revision` (MVCC: a
  // backend keeps every revision after its compacted revision). 0 reads the
  // current revision. OutOfRange when `revision` is compacted (older than
  // `CompactedRevision()`) or in the future; the result's `revision` is
  // `revision`. The default serves the current revision only.
  virtual absl::StatusOr<RangeResult> RangeAtRevision(std::string_view prefix,
                                                      std::string_view start_after, int64_t limit,
                                                      int64_t revision) {
    absl::StatusOr<RangeResult> r = Range(prefix, start_after, limit);
    if (!r.ok() || revision == 0 || r->revision == revision) return r;
    return absl::OutOfRangeError("this store keeps no past revisions");
  }

  // Creates `key`. AlreadyExists when it exists. Returns the stored entry.
  virtual absl::StatusOr<KeyValue> Create(std::string_view key, std::string value) = 0;

  // Creates each (key, value) as `Create` would, in order: each succeeds or
  // fails on its own, one result per entry. A backend may commit them
  // together (SqliteStore: one transaction); this default creates one by one.
  virtual std::vector<absl::StatusOr<KeyValue>> CreateMany(
      std::vector<std::pair<std::string, std::string>> kvs) {
    std::vector<absl::StatusOr<KeyValue>> out;
    out.reserve(kvs.size());
    for (auto& [key, value] : kvs) out.push_back(Create(key, std::move(value)));
    return out;
  }

  // One write of UpdateMany: an update, or with `create` a create (as
  // Create: AlreadyExists when the key exists; no expected revision).
  struct UpdateOp {
    std::string key;
    std::string value;
    int64_t expected_mod_revision = 0;
    // Written only when the entry before it was (else Aborted, nothing
    // written): a chain of such entries is applied in order and stops at its
    // first failure, so a write that depends on an earlier one (a pod's
    // finalizer released after its Job counted it) never lands without it.
    bool after_previous = false;
    bool create = false;
  };
  // Updates each entry as `Update` would, in order: each succeeds or fails on
  // its own (not atomic) unless chained (`after_previous`), one result per
  // entry. A backend may commit them together (SqliteStore: one transaction,
  // what batched pod binds use); this default updates one by one.
  virtual std::vector<absl::StatusOr<KeyValue>> UpdateMany(std::vector<UpdateOp> ops) {
    std::vector<absl::StatusOr<KeyValue>> out;
    out.reserve(ops.size());
    for (UpdateOp& op : ops) {
      if (op.after_previous && !out.empty() && !out.back().ok()) {
        out.push_back(ChainBrokenError(op.key));
        continue;
      }
      out.push_back(op.create ? Create(op.key, std::move(op.value))
                              : Update(op.key, std::move(op.value), op.expected_mod_revision));
    }
    return out;
  }
  // The result of a chained UpdateOp whose predecessor failed.
  static absl::Status ChainBrokenError(std::string_view key) {
    return absl::AbortedError("not written: the update before \"" + std::string(key) +
                              "\" in its chain failed");
  }

  // Replaces `key`'s value when its mod_revision equals `expected_mod_revision`
  // (0: unconditionally). NotFound when absent; Aborted when the revision is
  // stale.
  virtual absl::StatusOr<KeyValue> Update(std::string_view key, std::string value,
                                          int64_t expected_mod_revision) = 0;

  // Deletes `key` when its mod_revision equals `expected_mod_revision`
  // (0: unconditionally). Returns the deleted entry with `mod_revision` set to
  // the delete's revision. NotFound / Aborted as for Update.
  virtual absl::StatusOr<KeyValue> Delete(std::string_view key,
                                          int64_t expected_mod_revision) = 0;

  // Deletes `key` as Delete does, in one revision, but its delete event (and
  // the returned entry) carries `final_value` as the key's last value: what a
  // write that empties a deleting object's finalizers stored, had it been
  // stored. The default is not atomic (an Update, then a Delete); backends
  // override it.
  virtual absl::StatusOr<KeyValue> DeleteWithFinalValue(std::string_view key,
                                                        int64_t expected_mod_revision,
                                                        std::string final_value) {
    absl::StatusOr<KeyValue> u = Update(key, std::move(final_value), expected_mod_revision);
    if (!u.ok()) return u.status();
    return Delete(key, u->mod_revision);
  }

  // Calls `cb` for every change to a key with `prefix` whose revision is
  // > `after_revision`, first replaying retained history. `after_revision` of
  // -1 means "from now on". OutOfRange when history after `after_revision` is
  // no longer retained (compacted, or before this process's first retained
  // event).
  virtual absl::StatusOr<std::unique_ptr<WatchHandle>> Watch(std::string_view prefix,
                                                             int64_t after_revision,
                                                             WatchCallback cb) = 0;

  // Discards history up to and including `revision`; watching from before it
  // then fails with OutOfRange.
  virtual absl::Status Compact(int64_t revision) = 0;

  // The revision history is compacted up to: reads (RangeAtRevision) and
  // watches may start at it or later.
  virtual int64_t CompactedRevision() { return OldestWatchableRevision(); }

  // The revision of the latest write.
  virtual int64_t Revision() = 0;
  // Write transactions committed since the store was opened (one commit may
  // hold many writes: group commit, CreateMany, UpdateMany); -1 when the
  // backend does not count them.
  virtual int64_t Transactions() { return -1; }
  // The oldest revision a watch may start after.
  virtual int64_t OldestWatchableRevision() = 0;
};

}  // namespace batchd::store
