#include "store/sqlite/sqlite_store.h"

#include <sqlite3.h>

#include <filesystem>
#include <functional>
#include <limits>
#include <system_error>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "store/internal/sqlite_db.h"
#include "store/internal/sqlite_conns.h"

namespace batchd::store {

namespace {

using internal::RunOnce;
using internal::ScopedReset;
using internal::SqliteDb;
using internal::SqliteReadConn;
using internal::SqliteStmt;
using internal::SqliteWriteConn;
using internal::SqliteWriteOp;

// MVCC as etcd keeps it: `log` holds one row per revision (rowid = the
// revision), the key's value as of that write (empty for a delete's
// tombstone, deleted=1) and its create revision. The current state of a key
// is its newest row; the state as of revision R, its newest row at or below
// R. Compaction to C deletes every row at or below C that a later row at or
// below C supersedes, and tombstones at or below C, so every revision from
// C on stays readable and watchable.
//
// A write appends one row (at the rowid b-tree's end) and one (key, rev)
// index entry: what the former update-in-place of a `kv` row also cost, and
// the row holds a 1-4 KB object inside its leaf page (see the commit that
// made `kv` a rowid table). `meta` keeps the revision as of the last
// compaction (which may delete the newest row, a tombstone) and the
// compacted revision.
constexpr std::string_view kSchema =
    "CREATE TABLE IF NOT EXISTS log(rev INTEGER PRIMARY KEY, key TEXT NOT NULL,"
    " value BLOB NOT NULL, create_rev INTEGER NOT NULL, deleted INTEGER NOT NULL);"
    "CREATE INDEX IF NOT EXISTS log_key ON log(key, rev);"
    "CREATE TABLE IF NOT EXISTS meta(name TEXT PRIMARY KEY, value INTEGER NOT NULL)"
    " WITHOUT ROWID;"
    "INSERT OR IGNORE INTO meta(name, value) VALUES('revision', 0), ('compacted', 0);";

// Databases written before MVCC keep one `kv(key, value, create_rev,
// mod_rev)` row per key: each becomes its log row, and the history starts
// compacted at the database's revision (as a freshly compacted etcd). One
// transaction: a crash midway leaves the old layout.
absl::Status MigrateKvToLog(SqliteDb& db) {
  BATCHD_ASSIGN_OR_RETURN(
      std::string n,
      db.QueryString("SELECT count(*) FROM sqlite_master WHERE type='table' AND name='kv'"));
  if (n == "0") return absl::OkStatus();
  std::string sql = absl::StrCat(
      "BEGIN IMMEDIATE;", Sv(kSchema),
      "INSERT INTO log(rev, key, value, create_rev, deleted)"
      " SELECT mod_rev, key, value, create_rev, 0 FROM kv;"
      "UPDATE meta SET value=max(value, (SELECT coalesce(max(mod_rev), 0) FROM kv))"
      " WHERE name='revision';"
      "UPDATE meta SET value=(SELECT value FROM meta WHERE name='revision')"
      " WHERE name='compacted';"
      "DROP TABLE kv;"
      "COMMIT;");
  absl::Status st = db.Exec(sql);
  if (!st.ok()) {
    db.Exec("ROLLBACK").IgnoreError();
    return absl::InternalError(
        absl::StrCat("sqlite: migrating the kv table to the revision log failed: ",
                     st.message()));
  }
  return absl::OkStatus();
}

// The smallest string greater than every string starting with `prefix`;
// empty when there is none (a prefix of only 0xff bytes, or empty).
std::string PrefixEnd(std::string_view prefix) {
  std::string end(prefix);
  while (!end.empty() && static_cast<unsigned char>(end.back()) == 0xff) end.pop_back();
  if (!end.empty()) end.back() = static_cast<char>(static_cast<unsigned char>(end.back()) + 1);
  return end;
}

absl::Status ConfigureConnection(SqliteDb& db, SqliteSync sync) {
  sqlite3_busy_timeout(db.raw(), 10000);
  BATCHD_ASSIGN_OR_RETURN(std::string mode, db.QueryString("PRAGMA journal_mode=WAL"));
  if (mode != "wal") return absl::InternalError("sqlite: cannot enable WAL journal mode: " + mode);
  BATCHD_RETURN_IF_ERROR(db.Exec(sync == SqliteSync::kFull ? "PRAGMA synchronous=FULL"
                                                           : "PRAGMA synchronous=NORMAL"));
  // A 16 MiB page cache holds the hot B-tree pages (the newest revisions and
  // the key index); reads are few (the watch cache serves them) and go
  // through pread() and the kernel's page cache, not mmap: mapped pages count
  // in the server's RSS (256 MiB of them in Kueue's 15,000-workload run).
  // Checkpoints every ~16 MiB of WAL amortise their fsyncs.
  return db.Exec("PRAGMA cache_size=-16384; PRAGMA mmap_size=0; PRAGMA wal_autocheckpoint=4096;");
}

// The store's revision: the newest log row's, or meta's as of the last
// compaction (which may have removed the newest row, a tombstone).
constexpr char kRevisionQuery[] =
    "SELECT max((SELECT value FROM meta WHERE name='revision'),"
    " (SELECT coalesce(max(rev), 0) FROM log))";

// The newest version of key ?1 (a tombstone when deleted=1).
constexpr char kLatestQuery[] =
    "SELECT value, create_rev, rev, deleted FROM log WHERE key=?1 ORDER BY rev DESC LIMIT 1";

// The integer a one-value query returns; DataLoss names `what` otherwise.
absl::StatusOr<int64_t> QueryInt64(SqliteDb& db, std::string_view sql, std::string_view what) {
  BATCHD_ASSIGN_OR_RETURN(std::string v, db.QueryString(sql));
  int64_t out = 0;
  if (!absl::SimpleAtoi(v, &out)) {
    return absl::DataLossError(absl::StrCat("sqlite: bad ", Sv(what), ": '", v, "'"));
  }
  return out;
}

absl::StatusOr<int64_t> ReadMeta(SqliteDb& db, std::string_view name) {
  return QueryInt64(db, absl::StrCat("SELECT value FROM meta WHERE name='", Sv(name), "'"),
                    absl::StrCat("meta ", Sv(name)));
}

absl::StatusOr<std::unique_ptr<SqliteWriteConn>> OpenWriter(const SqliteOptions& options) {
  auto w = std::make_unique<SqliteWriteConn>();
  BATCHD_ASSIGN_OR_RETURN(w->db, SqliteDb::Open(options.path, /*create=*/true, options.vfs));
  BATCHD_RETURN_IF_ERROR(ConfigureConnection(*w->db, options.sync));
  if (options.quick_check_on_open) {
    BATCHD_ASSIGN_OR_RETURN(std::string check, w->db->QueryString("PRAGMA quick_check"));
    if (check != "ok") {
      return absl::DataLossError(absl::StrCat("sqlite: ", options.path, " failed quick_check: ",
                                              check));
    }
  }
  BATCHD_RETURN_IF_ERROR(MigrateKvToLog(*w->db));
  BATCHD_RETURN_IF_ERROR(w->db->Exec(kSchema));
  SqliteDb& db = *w->db;
  BATCHD_ASSIGN_OR_RETURN(w->begin, db.Prepare("BEGIN IMMEDIATE"));
  BATCHD_ASSIGN_OR_RETURN(w->commit, db.Prepare("COMMIT"));
  BATCHD_ASSIGN_OR_RETURN(w->rollback, db.Prepare("ROLLBACK"));
  BATCHD_ASSIGN_OR_RETURN(w->select, db.Prepare(kLatestQuery));
  BATCHD_ASSIGN_OR_RETURN(
      w->insert, db.Prepare("INSERT INTO log(rev, key, value, create_rev, deleted)"
                            " VALUES(?1, ?2, ?3, ?4, ?5)"));
  BATCHD_ASSIGN_OR_RETURN(
      w->compact,
      db.Prepare("DELETE FROM log WHERE rev <= ?1 AND (deleted = 1 OR EXISTS("
                 "SELECT 1 FROM log AS n WHERE n.key = log.key AND n.rev > log.rev"
                 " AND n.rev <= ?1))"));
  BATCHD_ASSIGN_OR_RETURN(w->set_meta, db.Prepare("UPDATE meta SET value=?2 WHERE name=?1"));
  return w;
}

absl::StatusOr<std::unique_ptr<SqliteReadConn>> OpenReader(const SqliteOptions& options) {
  auto r = std::make_unique<SqliteReadConn>();
  BATCHD_ASSIGN_OR_RETURN(r->db, SqliteDb::Open(options.path, /*create=*/false, options.vfs));
  sqlite3_busy_timeout(r->db->raw(), 10000);
  SqliteDb& db = *r->db;
  BATCHD_ASSIGN_OR_RETURN(r->begin, db.Prepare("BEGIN"));
  BATCHD_ASSIGN_OR_RETURN(r->commit, db.Prepare("COMMIT"));
  BATCHD_ASSIGN_OR_RETURN(r->get, db.Prepare(kLatestQuery));
  BATCHD_ASSIGN_OR_RETURN(r->revision, db.Prepare(kRevisionQuery));
  BATCHD_ASSIGN_OR_RETURN(r->compacted,
                          db.Prepare("SELECT value FROM meta WHERE name='compacted'"));
  // Each key's newest row at or below ?4 (SQLite takes the bare columns from
  // the row max() picks), in key order; tombstones are skipped by the caller.
  constexpr std::string_view kRange =
      "SELECT key, value, create_rev, max(rev), deleted FROM log"
      " WHERE key >= ?1 AND key > ?2 AND rev <= ?4";
  BATCHD_ASSIGN_OR_RETURN(
      r->range_bounded,
      db.Prepare(absl::StrCat(Sv(kRange), " AND key < ?3 GROUP BY key ORDER BY key")));
  BATCHD_ASSIGN_OR_RETURN(r->range_open,
                          db.Prepare(absl::StrCat(Sv(kRange), " GROUP BY key ORDER BY key")));
  constexpr std::string_view kHistory =
      "SELECT rev, key, value, create_rev, deleted FROM log"
      " WHERE rev > ?1 AND rev <= ?2 AND +key >= ?3";  // unary +: scan by rev, never the key index
  BATCHD_ASSIGN_OR_RETURN(
      r->history_bounded,
      db.Prepare(absl::StrCat(Sv(kHistory), " AND +key < ?4 ORDER BY rev")));
  BATCHD_ASSIGN_OR_RETURN(r->history_open,
                          db.Prepare(absl::StrCat(Sv(kHistory), " ORDER BY rev")));
  BATCHD_ASSIGN_OR_RETURN(
      r->prev, db.Prepare("SELECT value, create_rev, rev, deleted FROM log"
                          " WHERE key=?1 AND rev < ?2 ORDER BY rev DESC LIMIT 1"));
  return r;
}

absl::Status KeyNotFound(std::string_view key) {
  return absl::NotFoundError(absl::StrCat("key \"", Sv(key), "\" not found"));
}

}  // namespace

absl::StatusOr<std::unique_ptr<SqliteStore>> SqliteStore::Open(const SqliteOptions& options) {
  if (options.path.empty()) return absl::InvalidArgumentError("sqlite store path is empty");
  if (options.max_batch < 1) return absl::InvalidArgumentError("max_batch must be >= 1");
  std::filesystem::path parent = std::filesystem::path(options.path).parent_path();
  if (!parent.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(parent, ec);
    if (ec) {
      return absl::UnavailableError(
          absl::StrCat("cannot create data directory ", parent.string(), ": ", ec.message()));
    }
  }
  BATCHD_ASSIGN_OR_RETURN(std::unique_ptr<SqliteWriteConn> writer, OpenWriter(options));
  BATCHD_ASSIGN_OR_RETURN(int64_t revision, QueryInt64(*writer->db, kRevisionQuery, "revision"));
  BATCHD_ASSIGN_OR_RETURN(int64_t compacted, ReadMeta(*writer->db, "compacted"));
  std::unique_ptr<SqliteStore> store(
      new SqliteStore(options, std::move(writer), revision, compacted));
  // Open one reader now so a broken file fails here rather than on first read.
  BATCHD_ASSIGN_OR_RETURN(auto reader, store->AcquireReader());
  store->ReleaseReader(std::move(reader));
  return store;
}

SqliteStore::SqliteStore(const SqliteOptions& options,
                         std::unique_ptr<internal::SqliteWriteConn> writer, int64_t revision,
                         int64_t compacted)
    : options_(options),
      writer_(std::move(writer)),
      writer_revision_(revision),
      revision_(revision),
      compacted_(compacted),
      hub_(revision, options.history, this, compacted) {}

SqliteStore::~SqliteStore() {
  absl::MutexLock lock(&queue_mu_);
  stopping_ = true;
  auto idle = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(queue_mu_) {
    return queue_.empty() && !leader_active_;
  };
  queue_mu_.Await(absl::Condition(&idle));  // queued writes finish first
}

absl::StatusOr<std::unique_ptr<SqliteReadConn>> SqliteStore::AcquireReader() {
  {
    absl::MutexLock lock(&readers_mu_);
    if (!readers_.empty()) {
      auto conn = std::move(readers_.back());
      readers_.pop_back();
      return conn;
    }
  }
  return OpenReader(options_);
}

void SqliteStore::ReleaseReader(std::unique_ptr<SqliteReadConn> conn) {
  absl::MutexLock lock(&readers_mu_);
  if (static_cast<int>(readers_.size()) < options_.read_pool_size) {
    readers_.push_back(std::move(conn));
  }
}

absl::StatusOr<KeyValue> SqliteStore::Get(std::string_view key) {
  BATCHD_ASSIGN_OR_RETURN(auto conn, AcquireReader());
  absl::StatusOr<KeyValue> out = KeyNotFound(key);
  {
    SqliteStmt& get = *conn->get;
    ScopedReset reset(get);
    get.BindText(1, key);
    absl::StatusOr<bool> row = get.Step();
    if (!row.ok()) {
      out = row.status();
    } else if (*row && get.ColumnInt64(3) == 0) {
      out = KeyValue{std::string(key), get.ColumnString(0), get.ColumnInt64(1),
                     get.ColumnInt64(2)};
    }
  }
  ReleaseReader(std::move(conn));
  return out;
}

absl::StatusOr<RangeResult> SqliteStore::Range(std::string_view prefix,
                                               std::string_view start_after, int64_t limit) {
  return RangeAtRevision(prefix, start_after, limit, 0);
}

absl::StatusOr<RangeResult> SqliteStore::RangeAtRevision(std::string_view prefix,
                                                         std::string_view start_after,
                                                         int64_t limit, int64_t revision) {
  if (limit < 0) return absl::InvalidArgumentError("range limit must be >= 0");
  if (revision < 0) return absl::InvalidArgumentError("range revision must be >= 0");
  BATCHD_ASSIGN_OR_RETURN(auto conn, AcquireReader());
  RangeResult result;
  absl::Status st = [&]() -> absl::Status {
    // One read transaction, so the revision and the rows are one snapshot.
    BATCHD_RETURN_IF_ERROR(RunOnce(*conn->begin));
    absl::Status inner = [&]() -> absl::Status {
      int64_t current = 0, compacted = 0;
      {
        SqliteStmt& rev = *conn->revision;
        ScopedReset reset(rev);
        BATCHD_ASSIGN_OR_RETURN(bool row, rev.Step());
        if (!row) return absl::DataLossError("sqlite: meta revision row is missing");
        current = rev.ColumnInt64(0);
      }
      {
        SqliteStmt& c = *conn->compacted;
        ScopedReset reset(c);
        BATCHD_ASSIGN_OR_RETURN(bool row, c.Step());
        if (!row) return absl::DataLossError("sqlite: meta compacted row is missing");
        compacted = c.ColumnInt64(0);
      }
      if (revision == 0) revision = current;
      if (revision > current) {
        return absl::OutOfRangeError(absl::StrCat(
            "required revision ", revision, " is a future revision (current ", current, ")"));
      }
      if (revision < compacted) {
        return absl::OutOfRangeError(absl::StrCat(
            "required revision has been compacted: revision ", revision,
            ", compacted revision ", compacted));
      }
      result.revision = revision;
      std::string end = PrefixEnd(prefix);
      SqliteStmt& q = end.empty() ? *conn->range_open : *conn->range_bounded;
      ScopedReset reset(q);
      q.BindText(1, prefix);
      q.BindText(2, start_after);
      if (!end.empty()) q.BindText(3, end);
      q.BindInt64(4, revision);
      for (;;) {
        BATCHD_ASSIGN_OR_RETURN(bool row, q.Step());
        if (!row) break;
        if (q.ColumnInt64(4) != 0) continue;  // deleted as of `revision`
        if (limit > 0 && static_cast<int64_t>(result.kvs.size()) == limit) {
          result.more = true;
          break;
        }
        result.kvs.push_back(KeyValue{q.ColumnString(0), q.ColumnString(1), q.ColumnInt64(2),
                                      q.ColumnInt64(3)});
      }
      return absl::OkStatus();
    }();
    absl::Status end_st = RunOnce(*conn->commit);
    return inner.ok() ? end_st : inner;
  }();
  if (!st.ok()) {
    // Keep the connection after a refusal; drop it after an SQLite error
    // (its state is unknown).
    if (st.code() == absl::StatusCode::kOutOfRange) ReleaseReader(std::move(conn));
    return st;
  }
  ReleaseReader(std::move(conn));
  return result;
}

absl::Status SqliteStore::ReadHistory(std::string_view prefix, int64_t after, int64_t upto,
                                      const std::function<bool(const Event&)>& emit) {
  BATCHD_ASSIGN_OR_RETURN(auto conn, AcquireReader());
  absl::Status st = [&]() -> absl::Status {
    BATCHD_RETURN_IF_ERROR(RunOnce(*conn->begin));
    absl::Status inner = [&]() -> absl::Status {
      std::string end = PrefixEnd(prefix);
      SqliteStmt& q = end.empty() ? *conn->history_open : *conn->history_bounded;
      ScopedReset reset(q);
      q.BindInt64(1, after);
      q.BindInt64(2, upto);
      q.BindText(3, prefix);
      if (!end.empty()) q.BindText(4, end);
      for (;;) {
        BATCHD_ASSIGN_OR_RETURN(bool row, q.Step());
        if (!row) break;
        Event e;
        const int64_t rev = q.ColumnInt64(0);
        e.kv = KeyValue{q.ColumnString(1), q.ColumnString(2), q.ColumnInt64(3), rev};
        const bool deleted = q.ColumnInt64(4) != 0;
        {
          SqliteStmt& p = *conn->prev;
          ScopedReset reset_prev(p);
          p.BindText(1, e.kv.key);
          p.BindInt64(2, rev);
          BATCHD_ASSIGN_OR_RETURN(bool found, p.Step());
          if (found && p.ColumnInt64(3) == 0) {
            e.prev = KeyValue{e.kv.key, p.ColumnString(0), p.ColumnInt64(1), p.ColumnInt64(2)};
          }
        }
        if (deleted) {
          // A tombstone keeps the last value its event carried.
          e.type = Event::Type::kDelete;
        }
        if (!emit(e)) break;
      }
      return absl::OkStatus();
    }();
    absl::Status end_st = RunOnce(*conn->commit);
    return inner.ok() ? end_st : inner;
  }();
  if (!st.ok()) return st;
  ReleaseReader(std::move(conn));
  return absl::OkStatus();
}

absl::StatusOr<KeyValue> SqliteStore::Create(std::string_view key, std::string value) {
  if (key.empty()) return absl::InvalidArgumentError("key must not be empty");
  SqliteWriteOp op;
  op.kind = SqliteWriteOp::Kind::kCreate;
  op.key = key;
  op.value = std::move(value);
  return Submit(op);
}

std::vector<absl::StatusOr<KeyValue>> SqliteStore::CreateMany(
    std::vector<std::pair<std::string, std::string>> kvs) {
  std::vector<SqliteWriteOp> ops(kvs.size());
  std::vector<SqliteWriteOp*> queued;
  for (size_t i = 0; i < kvs.size(); ++i) {
    if (kvs[i].first.empty()) {
      ops[i].result = absl::InvalidArgumentError("key must not be empty");
      continue;
    }
    ops[i].kind = SqliteWriteOp::Kind::kCreate;
    ops[i].key = kvs[i].first;
    ops[i].value = std::move(kvs[i].second);
    queued.push_back(&ops[i]);
  }
  SubmitAll(queued);
  std::vector<absl::StatusOr<KeyValue>> out;
  out.reserve(ops.size());
  for (SqliteWriteOp& op : ops) out.push_back(std::move(op.result));
  return out;
}

std::vector<absl::StatusOr<KeyValue>> SqliteStore::UpdateMany(std::vector<UpdateOp> updates) {
  std::vector<SqliteWriteOp> ops(updates.size());
  std::vector<SqliteWriteOp*> queued;
  for (size_t i = 0; i < updates.size(); ++i) {
    if (updates[i].key.empty()) {
      ops[i].result = absl::InvalidArgumentError("key must not be empty");
      continue;
    }
    ops[i].kind = updates[i].create ? SqliteWriteOp::Kind::kCreate : SqliteWriteOp::Kind::kUpdate;
    ops[i].key = updates[i].key;
    ops[i].value = std::move(updates[i].value);
    ops[i].expected = updates[i].create ? 0 : updates[i].expected_mod_revision;
    if (updates[i].after_previous && i > 0) ops[i].after = &ops[i - 1];
    queued.push_back(&ops[i]);
  }
  SubmitAll(queued);
  std::vector<absl::StatusOr<KeyValue>> out;
  out.reserve(ops.size());
  for (SqliteWriteOp& op : ops) out.push_back(std::move(op.result));
  return out;
}

absl::StatusOr<KeyValue> SqliteStore::Update(std::string_view key, std::string value,
                                             int64_t expected_mod_revision) {
  SqliteWriteOp op;
  op.kind = SqliteWriteOp::Kind::kUpdate;
  op.key = key;
  op.value = std::move(value);
  op.expected = expected_mod_revision;
  return Submit(op);
}

absl::StatusOr<KeyValue> SqliteStore::Delete(std::string_view key,
                                             int64_t expected_mod_revision) {
  SqliteWriteOp op;
  op.kind = SqliteWriteOp::Kind::kDelete;
  op.key = key;
  op.expected = expected_mod_revision;
  return Submit(op);
}

absl::StatusOr<KeyValue> SqliteStore::DeleteWithFinalValue(std::string_view key,
                                                           int64_t expected_mod_revision,
                                                           std::string final_value) {
  SqliteWriteOp op;
  op.kind = SqliteWriteOp::Kind::kDelete;
  op.key = key;
  op.expected = expected_mod_revision;
  op.value = std::move(final_value);
  op.final_value = true;
  return Submit(op);
}

absl::StatusOr<std::unique_ptr<WatchHandle>> SqliteStore::Watch(std::string_view prefix,
                                                                int64_t after_revision,
                                                                WatchCallback cb) {
  return hub_.Watch(prefix, after_revision, std::move(cb));
}

absl::Status SqliteStore::Compact(int64_t revision) {
  if (revision > revision_.load()) {
    return absl::OutOfRangeError(absl::StrCat("required revision ", revision,
                                              " is a future revision (current ",
                                              revision_.load(), ")"));
  }
  if (revision <= compacted_.load()) return absl::OkStatus();
  // Never past a running replay's start; no new watch or read starts before
  // the reserved revision from now on.
  const int64_t target = hub_.ReserveCompaction(revision);
  if (target <= compacted_.load()) return absl::OkStatus();
  SqliteWriteOp op;
  op.kind = SqliteWriteOp::Kind::kCompact;
  op.expected = target;
  return Submit(op).status();
}

int64_t SqliteStore::Revision() { return revision_.load(); }

int64_t SqliteStore::OldestWatchableRevision() { return hub_.OldestWatchableRevision(); }

int64_t SqliteStore::CompactedRevision() { return compacted_.load(); }

}  // namespace batchd::store
