#include "store/sqlite/sqlite_store.h"

#include <sqlite3.h>

#include <filesystem>
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

// `kv` is an ordinary (rowid) table with an index on key: objects are 1-4 KB,
// and a rowid table keeps a row of up to ~4 KB inside its 4 KiB leaf page,
// where a WITHOUT ROWID table (an index b-tree) keeps only ~1 KB in the page
// and spills the rest to overflow pages: every write then rewrote the leaf
// plus 2-3 overflow pages (and churned the freelist) in the WAL. Updates —
// most writes — touch the table leaf only; the key index changes on create
// and delete. `meta` rows are tiny, so it stays WITHOUT ROWID.
constexpr std::string_view kSchema =
    "CREATE TABLE IF NOT EXISTS kv(key TEXT PRIMARY KEY, value BLOB NOT NULL,"
    " create_rev INTEGER NOT NULL, mod_rev INTEGER NOT NULL);"
    "CREATE TABLE IF NOT EXISTS meta(name TEXT PRIMARY KEY, value INTEGER NOT NULL)"
    " WITHOUT ROWID;"
    "INSERT OR IGNORE INTO meta(name, value) VALUES('revision', 0), ('compacted', 0);";

// Databases written before the schema above have `kv` WITHOUT ROWID: copy it
// into the new layout in one transaction (a crash midway leaves the old one).
absl::Status MigrateKvToRowid(SqliteDb& db) {
  BATCHD_ASSIGN_OR_RETURN(
      std::string sql,
      db.QueryString("SELECT coalesce((SELECT sql FROM sqlite_master"
                     " WHERE type='table' AND name='kv'), '')"));
  if (absl::AsciiStrToUpper(sql).find("WITHOUT ROWID") == std::string::npos) {
    return absl::OkStatus();
  }
  absl::Status st = db.Exec(
      "BEGIN IMMEDIATE;"
      "CREATE TABLE kv_rowid(key TEXT PRIMARY KEY, value BLOB NOT NULL,"
      " create_rev INTEGER NOT NULL, mod_rev INTEGER NOT NULL);"
      "INSERT INTO kv_rowid(key, value, create_rev, mod_rev)"
      " SELECT key, value, create_rev, mod_rev FROM kv ORDER BY key;"
      "DROP TABLE kv;"
      "ALTER TABLE kv_rowid RENAME TO kv;"
      "COMMIT;");
  if (!st.ok()) {
    db.Exec("ROLLBACK").IgnoreError();
    return absl::InternalError(
        absl::StrCat("sqlite: migrating the kv table failed: ", st.message()));
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
  // A 64 MiB page cache and memory-mapped reads keep hot B-tree pages out of
  // pread(); checkpoints every ~16 MiB of WAL amortise their fsyncs.
  return db.Exec(
      "PRAGMA cache_size=-65536; PRAGMA mmap_size=268435456; PRAGMA wal_autocheckpoint=4096;");
}

// The store's revision: meta keeps it only as of the last commit that
// deleted a key; every other write's revision is its row's mod_rev. (A scan
// of kv: read once at open, and by Range, which only the watch cache's
// start-up calls.)
constexpr char kRevisionQuery[] =
    "SELECT max((SELECT value FROM meta WHERE name='revision'),"
    " (SELECT coalesce(max(mod_rev), 0) FROM kv))";

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
  BATCHD_ASSIGN_OR_RETURN(w->db, SqliteDb::Open(options.path, /*create=*/true));
  BATCHD_RETURN_IF_ERROR(ConfigureConnection(*w->db, options.sync));
  if (options.quick_check_on_open) {
    BATCHD_ASSIGN_OR_RETURN(std::string check, w->db->QueryString("PRAGMA quick_check"));
    if (check != "ok") {
      return absl::DataLossError(absl::StrCat("sqlite: ", options.path, " failed quick_check: ",
                                              check));
    }
  }
  BATCHD_RETURN_IF_ERROR(MigrateKvToRowid(*w->db));
  BATCHD_RETURN_IF_ERROR(w->db->Exec(kSchema));
  SqliteDb& db = *w->db;
  BATCHD_ASSIGN_OR_RETURN(w->begin, db.Prepare("BEGIN IMMEDIATE"));
  BATCHD_ASSIGN_OR_RETURN(w->commit, db.Prepare("COMMIT"));
  BATCHD_ASSIGN_OR_RETURN(w->rollback, db.Prepare("ROLLBACK"));
  BATCHD_ASSIGN_OR_RETURN(w->select,
                          db.Prepare("SELECT value, create_rev, mod_rev FROM kv WHERE key=?1"));
  BATCHD_ASSIGN_OR_RETURN(
      w->insert,
      db.Prepare("INSERT INTO kv(key, value, create_rev, mod_rev) VALUES(?1, ?2, ?3, ?3)"));
  BATCHD_ASSIGN_OR_RETURN(w->update,
                          db.Prepare("UPDATE kv SET value=?2, mod_rev=?3 WHERE key=?1"));
  BATCHD_ASSIGN_OR_RETURN(w->erase, db.Prepare("DELETE FROM kv WHERE key=?1"));
  BATCHD_ASSIGN_OR_RETURN(w->set_meta, db.Prepare("UPDATE meta SET value=?2 WHERE name=?1"));
  return w;
}

absl::StatusOr<std::unique_ptr<SqliteReadConn>> OpenReader(const SqliteOptions& options) {
  auto r = std::make_unique<SqliteReadConn>();
  BATCHD_ASSIGN_OR_RETURN(r->db, SqliteDb::Open(options.path, /*create=*/false));
  sqlite3_busy_timeout(r->db->raw(), 10000);
  SqliteDb& db = *r->db;
  BATCHD_ASSIGN_OR_RETURN(r->begin, db.Prepare("BEGIN"));
  BATCHD_ASSIGN_OR_RETURN(r->commit, db.Prepare("COMMIT"));
  BATCHD_ASSIGN_OR_RETURN(r->get,
                          db.Prepare("SELECT value, create_rev, mod_rev FROM kv WHERE key=?1"));
  BATCHD_ASSIGN_OR_RETURN(r->revision, db.Prepare(kRevisionQuery));
  constexpr std::string_view kRange =
      "SELECT key, value, create_rev, mod_rev FROM kv WHERE key >= ?1 AND key > ?2";
  BATCHD_ASSIGN_OR_RETURN(r->range_bounded,
                          db.Prepare(absl::StrCat(Sv(kRange), " AND key < ?3 ORDER BY key LIMIT ?4")));
  BATCHD_ASSIGN_OR_RETURN(r->range_open,
                          db.Prepare(absl::StrCat(Sv(kRange), " ORDER BY key LIMIT ?4")));
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
      hub_(revision, options.history) {}

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
    } else if (*row) {
      out = KeyValue{std::string(key), get.ColumnString(0), get.ColumnInt64(1),
                     get.ColumnInt64(2)};
    }
  }
  ReleaseReader(std::move(conn));
  return out;
}

absl::StatusOr<RangeResult> SqliteStore::Range(std::string_view prefix,
                                               std::string_view start_after, int64_t limit) {
  if (limit < 0) return absl::InvalidArgumentError("range limit must be >= 0");
  BATCHD_ASSIGN_OR_RETURN(auto conn, AcquireReader());
  RangeResult result;
  absl::Status st = [&]() -> absl::Status {
    // One read transaction, so the revision and the rows are one snapshot.
    BATCHD_RETURN_IF_ERROR(RunOnce(*conn->begin));
    absl::Status inner = [&]() -> absl::Status {
      {
        SqliteStmt& rev = *conn->revision;
        ScopedReset reset(rev);
        BATCHD_ASSIGN_OR_RETURN(bool row, rev.Step());
        if (!row) return absl::DataLossError("sqlite: meta revision row is missing");
        result.revision = rev.ColumnInt64(0);
      }
      std::string end = PrefixEnd(prefix);
      SqliteStmt& q = end.empty() ? *conn->range_open : *conn->range_bounded;
      ScopedReset reset(q);
      q.BindText(1, prefix);
      q.BindText(2, start_after);
      if (!end.empty()) q.BindText(3, end);
      // One extra row tells whether there are `more`; -1 means no limit.
      const bool limited = limit > 0 && limit < std::numeric_limits<int64_t>::max();
      q.BindInt64(4, limited ? limit + 1 : -1);
      for (;;) {
        BATCHD_ASSIGN_OR_RETURN(bool row, q.Step());
        if (!row) break;
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
  if (!st.ok()) return st;  // Drop the connection: its state is unknown.
  ReleaseReader(std::move(conn));
  return result;
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

absl::StatusOr<std::unique_ptr<WatchHandle>> SqliteStore::Watch(std::string_view prefix,
                                                                int64_t after_revision,
                                                                WatchCallback cb) {
  return hub_.Watch(prefix, after_revision, std::move(cb));
}

absl::Status SqliteStore::Compact(int64_t revision) {
  BATCHD_RETURN_IF_ERROR(hub_.Compact(revision));
  if (revision <= compacted_.load()) return absl::OkStatus();
  SqliteWriteOp op;
  op.kind = SqliteWriteOp::Kind::kCompact;
  op.expected = revision;
  return Submit(op).status();
}

int64_t SqliteStore::Revision() { return revision_.load(); }

int64_t SqliteStore::OldestWatchableRevision() { return hub_.OldestWatchableRevision(); }

}  // namespace batchd::store
