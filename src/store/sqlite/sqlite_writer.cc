// The write path of SqliteStore: the queue and group commit (see
// sqlite_store.h).
#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "store/internal/sqlite_conns.h"
#include "store/internal/sqlite_db.h"
#include "store/sqlite/sqlite_store.h"

namespace batchd::store {

using internal::RunOnce;
using internal::ScopedReset;
using internal::SqliteStmt;
using internal::SqliteWriteOp;

// Group commit with a leader, as LevelDB's writers do: every writer queues its
// operation; the one at the front (while no other leads) takes the queued
// operations, commits them in one transaction, delivers their watch events
// and wakes their authors. An uncontended write is thus committed on its own
// thread (no hand-off to a writer thread and back, which cost two context
// switches per write), and under contention one leader still commits a
// whole batch at once.
namespace {

bool IsCompaction(const std::vector<SqliteWriteOp*>& batch) {
  return std::any_of(batch.begin(), batch.end(), [](const SqliteWriteOp* op) {
    return op->kind == SqliteWriteOp::Kind::kCompact;
  });
}

}  // namespace

absl::StatusOr<KeyValue> SqliteStore::Submit(SqliteWriteOp& op) {
  SubmitAll({&op});
  return std::move(op.result);
}

void SqliteStore::SubmitAll(const std::vector<SqliteWriteOp*>& ops) {
  if (ops.empty()) return;
  const size_t max_batch = options_.group_commit ? static_cast<size_t>(options_.max_batch) : 1;
  absl::MutexLock lock(&queue_mu_);
  if (stopping_) {
    for (SqliteWriteOp* op : ops) op->result = absl::UnavailableError("sqlite store is closing");
    return;
  }
  for (SqliteWriteOp* op : ops) queue_.push_back(op);
  // Batches take operations from the front in queue order, so ours finish in
  // order: the first not done is the only one that can be at the front.
  size_t next = 0;
  for (;;) {
    auto done_or_leads = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(queue_mu_) {
      while (next < ops.size() && ops[next]->done) ++next;
      return next == ops.size() || (!leader_active_ && queue_.front() == ops[next]);
    };
    queue_mu_.Await(absl::Condition(&done_or_leads));
    if (next == ops.size()) return;
    leader_active_ = true;
    std::vector<SqliteWriteOp*> batch;
    while (!queue_.empty() && batch.size() < max_batch) {
      batch.push_back(queue_.front());
      queue_.pop_front();
    }
    queue_mu_.Unlock();
    std::vector<Event> events = ExecuteBatch(batch);
    for (const SqliteWriteOp* o : batch) {
      if (o->kind == SqliteWriteOp::Kind::kCompact && o->result.ok()) {
        compacted_.store(std::max(compacted_.load(), o->expected));
      }
    }
    if (options_.failpoint) {
      // Committed, not yet delivered or answered.
      absl::Status lost =
          options_.failpoint(IsCompaction(batch) ? "compactAfterCommit" : "afterCommit");
      if (!lost.ok()) {
        for (SqliteWriteOp* o : batch) {
          if (o->result.ok()) o->result = lost;
        }
      }
    }
    // Deliver before acknowledging: watchers see a write before its author.
    hub_.Publish(std::move(events));
    revision_.store(writer_revision_);
    queue_mu_.Lock();
    for (SqliteWriteOp* o : batch) o->done = true;
    leader_active_ = false;  // the next queued writer (if any) leads now
  }
}

std::vector<Event> SqliteStore::ExecuteBatch(const std::vector<SqliteWriteOp*>& batch) {
  std::vector<Event> events;
  absl::Status st = TryBatch(batch, &events);
  if (st.ok()) return events;
  events.clear();
  if (batch.size() == 1) {
    batch[0]->result = st;
    return events;
  }
  // An SQLite error rolled the whole batch back: retry each operation alone
  // so only the one that fails reports the error.
  for (SqliteWriteOp* op : batch) {
    std::vector<Event> one = ExecuteBatch({op});
    for (Event& e : one) events.push_back(std::move(e));
  }
  return events;
}

absl::Status SqliteStore::TryBatch(const std::vector<SqliteWriteOp*>& batch,
                                   std::vector<Event>* events) {
  internal::SqliteWriteConn& w = *writer_;
  BATCHD_RETURN_IF_ERROR(RunOnce(*w.begin));
  int64_t rev = writer_revision_;
  absl::Status st;
  for (SqliteWriteOp* op : batch) {
    st = ApplyOp(*op, &rev, events);
    if (!st.ok()) break;
  }
  if (st.ok() && options_.failpoint) {
    st = options_.failpoint(IsCompaction(batch) ? "compactBeforeCommit" : "beforeCommit");
  }
  if (st.ok()) st = RunOnce(*w.commit);
  if (!st.ok()) {
    RunOnce(*w.rollback).IgnoreError();  // Fails harmlessly when already rolled back.
    return st;
  }
  writer_revision_ = rev;
  transactions_.fetch_add(1, std::memory_order_relaxed);
  return absl::OkStatus();
}

namespace {

// Reads `key`'s newest version into `kv`; false when absent or deleted.
absl::StatusOr<bool> SelectKey(SqliteStmt& select, std::string_view key, KeyValue* kv) {
  ScopedReset reset(select);
  select.BindText(1, key);
  BATCHD_ASSIGN_OR_RETURN(bool row, select.Step());
  if (!row || select.ColumnInt64(3) != 0) return false;
  *kv = KeyValue{std::string(key), select.ColumnString(0), select.ColumnInt64(1),
                 select.ColumnInt64(2)};
  return true;
}

absl::Status SetMeta(SqliteStmt& set_meta, std::string_view name, int64_t value) {
  ScopedReset reset(set_meta);
  set_meta.BindText(1, name);
  set_meta.BindInt64(2, value);
  return set_meta.Run();
}

absl::Status CheckExpected(const SqliteWriteOp& op, const KeyValue& current) {
  if (op.expected == 0 || op.expected == current.mod_revision) return absl::OkStatus();
  return absl::AbortedError(absl::StrCat("revision mismatch for key \"", Sv(op.key),
                                         "\": expected ", op.expected, ", current ",
                                         current.mod_revision));
}

}  // namespace

// Applies one operation inside the open transaction. A failed precondition
// becomes the operation's result and writes nothing; an SQLite error is
// returned and aborts the batch.
absl::Status SqliteStore::ApplyOp(SqliteWriteOp& op, int64_t* rev, std::vector<Event>* events) {
  internal::SqliteWriteConn& w = *writer_;
  if (op.kind == SqliteWriteOp::Kind::kCompact) {
    {
      ScopedReset reset(*w.compact);
      w.compact->BindInt64(1, op.expected);
      BATCHD_RETURN_IF_ERROR(w.compact->Run());
    }
    // The newest row may have been a tombstone it removed.
    BATCHD_RETURN_IF_ERROR(SetMeta(*w.set_meta, "revision", *rev));
    BATCHD_RETURN_IF_ERROR(SetMeta(*w.set_meta, "compacted", op.expected));
    op.result = KeyValue{};  // compacted_ moves once this commits (SubmitAll)
    return absl::OkStatus();
  }
  if (op.after != nullptr && !op.after->result.ok()) {
    // Its chain broke (the predecessor was applied first: same batch in
    // queue order, or an earlier batch).
    op.result = ChainBrokenError(op.key);
    return absl::OkStatus();
  }
  Event event;
  BATCHD_ASSIGN_OR_RETURN(bool exists, SelectKey(*w.select, op.key, &event.prev));
  const int64_t next = *rev + 1;
  if (op.kind == SqliteWriteOp::Kind::kCreate) {
    if (exists) {
      op.result =
          absl::AlreadyExistsError(absl::StrCat("key \"", Sv(op.key), "\" already exists"));
      return absl::OkStatus();
    }
    event.prev = KeyValue{};
  } else if (!exists) {
    op.result = absl::NotFoundError(absl::StrCat("key \"", Sv(op.key), "\" not found"));
    return absl::OkStatus();
  } else if (absl::Status st = CheckExpected(op, event.prev); !st.ok()) {
    op.result = st;
    return absl::OkStatus();
  }
  {
    // Every write appends the key's version at `next`; a delete's is a
    // tombstone with the create revision and the last value (what its
    // event carries, also when replayed).
    const bool del = op.kind == SqliteWriteOp::Kind::kDelete;
    SqliteStmt& stmt = *w.insert;
    ScopedReset reset(stmt);
    stmt.BindInt64(1, next);
    stmt.BindText(2, op.key);
    stmt.BindBlob(3, del && !op.final_value ? std::string_view(event.prev.value)
                                            : std::string_view(op.value));
    stmt.BindInt64(4, exists ? event.prev.create_revision : next);
    stmt.BindInt64(5, del ? 1 : 0);
    BATCHD_RETURN_IF_ERROR(stmt.Run());
  }
  *rev = next;
  if (op.kind == SqliteWriteOp::Kind::kDelete) {
    event.type = Event::Type::kDelete;
    event.kv = event.prev;
    // Copied: a batch that fails later is retried from `op`.
    if (op.final_value) event.kv.value = op.value;
  } else {
    // Copy the value: a batch that fails later is retried from `op`.
    event.kv = KeyValue{std::string(op.key), op.value,
                        exists ? event.prev.create_revision : next, next};
  }
  event.kv.mod_revision = next;
  op.result = event.kv;
  events->push_back(std::move(event));
  return absl::OkStatus();
}

}  // namespace batchd::store
