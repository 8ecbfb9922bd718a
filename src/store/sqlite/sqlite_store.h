// SqliteStore: the durable `Store` backend of `batchd server`, one SQLite file
// in WAL mode, multi-version as etcd: `log(rev, key, value, create_rev,
// deleted)` keeps one row per revision (see sqlite_store.cc), so a range can
// be read as of any revision after the compacted one and a watch replays from
// any such revision, after a restart too; `meta(name, value)` holds the
// compacted revision and the revision as of the last compaction, each
// updated in the same transaction as the data it describes.
//
// Writes are serialized through a queue with a leader. With group commit,
// writers enqueue and block; the writer at the front becomes the leader: it
// applies every queued operation (up to `max_batch`) in one transaction, in
// order, each checked on its own (a failed precondition fails only that
// operation), commits once, delivers watch events in revision order on its
// own thread, and then wakes the other writers of the batch. Without group
// commit each operation is its own transaction. Reads use a pool of separate read
// connections; a read started after a write was acknowledged sees it.
//
// Thread-safety: all methods are thread-safe. Watch callbacks run on the
// leading writer's thread (live events; one leader at a time) or a replay
// thread (history); see store.h.
// Watch history is read back from `log` (no in-memory copy of it): the
// oldest watchable revision is the compacted revision, across reopens.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "store/internal/watch_hub.h"
#include "store/store.h"

namespace batchd::store {

namespace internal {
class SqliteDb;
struct SqliteWriteOp;
struct SqliteReadConn;
struct SqliteWriteConn;
}  // namespace internal

enum class SqliteSync {
  // PRAGMA synchronous=FULL: every commit fsyncs the WAL. An acknowledged
  // write survives process crash, kill -9 and power loss / OS crash.
  kFull,
  // PRAGMA synchronous=NORMAL (WAL): commits are written to the WAL but only
  // fsynced at checkpoints. An acknowledged write survives process crash and
  // kill -9 (the OS keeps the page cache), but the last commits may be lost
  // on power loss or OS crash; the database stays consistent either way.
  kNormal,
};

struct SqliteOptions {
  // Database file; its parent directory is created when missing.
  std::string path;
  SqliteSync sync = SqliteSync::kFull;
  // Batch concurrent writes into one transaction (see above).
  bool group_commit = true;
  // The most operations one group-commit transaction applies.
  int max_batch = 1024;
  // Read connections kept open for reuse (more are opened under load).
  int read_pool_size = 4;
  // Run `PRAGMA quick_check` on open (linear in database size).
  bool quick_check_on_open = true;
  // Tests only: the SQLite VFS to open the files with (store/testing/
  // lazy_vfs.h), and a failpoint called at named points of every commit —
  // "beforeCommit" (changes applied in the open transaction), "afterCommit"
  // (committed; events not yet delivered, writers not yet answered), and
  // "compactBeforeCommit" / "compactAfterCommit" for a compaction's. A non-OK
  // status before a commit rolls the batch back (its writes fail with it);
  // after, the batch stays committed and delivered but its writers get the
  // status (a lost acknowledgement). It may also end the process (a crash).
  std::string vfs;
  std::function<absl::Status(std::string_view point)> failpoint;
  // The hub's in-memory ring: none, replays read `log`.
  internal::WatchHubOptions history{/*max_events=*/0, /*max_bytes=*/0};
};

class SqliteStore : public Store, private internal::HistorySource {
 public:
  // Opens or creates the database. A database left behind by a crash (even
  // mid-transaction) is recovered from its WAL.
  static absl::StatusOr<std::unique_ptr<SqliteStore>> Open(const SqliteOptions& options);
  // Finishes queued writes, then closes the database.
  ~SqliteStore() override;

  absl::StatusOr<KeyValue> Get(std::string_view key) override;
  absl::StatusOr<RangeResult> Range(std::string_view prefix, std::string_view start_after,
                                    int64_t limit) override;
  absl::StatusOr<RangeResult> RangeAtRevision(std::string_view prefix,
                                              std::string_view start_after, int64_t limit,
                                              int64_t revision) override;
  absl::StatusOr<KeyValue> Create(std::string_view key, std::string value) override;
  // Queues every create at once, so they commit in one transaction (or in the
  // batches of whoever leads), each checked on its own.
  std::vector<absl::StatusOr<KeyValue>> CreateMany(
      std::vector<std::pair<std::string, std::string>> kvs) override;
  absl::StatusOr<KeyValue> Update(std::string_view key, std::string value,
                                  int64_t expected_mod_revision) override;
  // Queues every update at once, as CreateMany does.
  std::vector<absl::StatusOr<KeyValue>> UpdateMany(std::vector<UpdateOp> ops) override;
  absl::StatusOr<KeyValue> Delete(std::string_view key, int64_t expected_mod_revision) override;
  absl::StatusOr<KeyValue> DeleteWithFinalValue(std::string_view key, int64_t expected_mod_revision,
                                                std::string final_value) override;
  absl::StatusOr<std::unique_ptr<WatchHandle>> Watch(std::string_view prefix,
                                                     int64_t after_revision,
                                                     WatchCallback cb) override;
  absl::Status Compact(int64_t revision) override;
  int64_t Revision() override;
  int64_t OldestWatchableRevision() override;
  int64_t Transactions() override { return transactions_.load(std::memory_order_relaxed); }

  // The compacted revision recorded in `meta`.
  int64_t CompactedRevision() override;

 private:
  SqliteStore(const SqliteOptions& options, std::unique_ptr<internal::SqliteWriteConn> writer,
              int64_t revision, int64_t compacted);

  absl::Status ReadHistory(std::string_view prefix, int64_t after, int64_t upto,
                           const std::function<bool(const Event&)>& emit) override;
  absl::StatusOr<KeyValue> Submit(internal::SqliteWriteOp& op);
  // Queues `ops` (in order) and returns when all are done, leading batches
  // while the first of them not yet done is at the front of the queue.
  void SubmitAll(const std::vector<internal::SqliteWriteOp*>& ops);
  std::vector<Event> ExecuteBatch(const std::vector<internal::SqliteWriteOp*>& batch);
  absl::Status TryBatch(const std::vector<internal::SqliteWriteOp*>& batch,
                        std::vector<Event>* events);
  absl::Status ApplyOp(internal::SqliteWriteOp& op, int64_t* rev, std::vector<Event>* events);

  absl::StatusOr<std::unique_ptr<internal::SqliteReadConn>> AcquireReader();
  void ReleaseReader(std::unique_ptr<internal::SqliteReadConn> conn);

  const SqliteOptions options_;
  std::unique_ptr<internal::SqliteWriteConn> writer_;  // The leader only.
  int64_t writer_revision_;                            // The leader only.
  std::atomic<int64_t> revision_;   // Latest committed and delivered revision.
  std::atomic<int64_t> compacted_;  // Persisted compacted revision.
  std::atomic<int64_t> transactions_{0};  // Committed write transactions.
  internal::WatchHub hub_;

  absl::Mutex queue_mu_;
  std::deque<internal::SqliteWriteOp*> queue_ ABSL_GUARDED_BY(queue_mu_);
  bool stopping_ ABSL_GUARDED_BY(queue_mu_) = false;
  bool leader_active_ ABSL_GUARDED_BY(queue_mu_) = false;  // a batch is being committed

  absl::Mutex readers_mu_;
  std::vector<std::unique_ptr<internal::SqliteReadConn>> readers_ ABSL_GUARDED_BY(readers_mu_);
};

}  // namespace batchd::store
