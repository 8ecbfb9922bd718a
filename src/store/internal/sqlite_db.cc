#include "store/internal/sqlite_db.h"

#include <sqlite3.h>

#include <string>

#include "absl/strings/str_cat.h"

namespace batchd::store::internal {

absl::Status SqliteError(sqlite3* db, int rc, std::string_view what) {
  std::string msg = absl::StrCat("sqlite: ", Sv(what), ": ", sqlite3_errstr(rc));
  if (db != nullptr && sqlite3_errcode(db) == rc) absl::StrAppend(&msg, " (", sqlite3_errmsg(db), ")");
  switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
    case SQLITE_FULL:
    case SQLITE_IOERR:
    case SQLITE_CANTOPEN:
    case SQLITE_READONLY:
      return absl::UnavailableError(msg);
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return absl::DataLossError(msg);
    default:
      return absl::InternalError(msg);
  }
}

SqliteStmt::~SqliteStmt() { sqlite3_finalize(stmt_); }

void SqliteStmt::BindText(int i, std::string_view v) {
  sqlite3_bind_text(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_STATIC);
}

void SqliteStmt::BindBlob(int i, std::string_view v) {
  // A zero-length blob with a null pointer would bind NULL; use "" instead.
  sqlite3_bind_blob(stmt_, i, v.empty() ? "" : v.data(), static_cast<int>(v.size()),
                    SQLITE_STATIC);
}

void SqliteStmt::BindInt64(int i, int64_t v) { sqlite3_bind_int64(stmt_, i, v); }

absl::StatusOr<bool> SqliteStmt::Step() {
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return SqliteError(db_, rc, sqlite3_sql(stmt_));
}

absl::Status SqliteStmt::Run() {
  for (;;) {
    absl::StatusOr<bool> row = Step();
    if (!row.ok()) return row.status();
    if (!*row) return absl::OkStatus();
  }
}

void SqliteStmt::Reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

int64_t SqliteStmt::ColumnInt64(int i) const { return sqlite3_column_int64(stmt_, i); }

std::string SqliteStmt::ColumnString(int i) const {
  const void* data = sqlite3_column_blob(stmt_, i);
  int n = sqlite3_column_bytes(stmt_, i);
  if (data == nullptr || n <= 0) return std::string();
  return std::string(static_cast<const char*>(data), static_cast<size_t>(n));
}

absl::Status RunOnce(SqliteStmt& stmt) {
  ScopedReset reset(stmt);
  return stmt.Run();
}

absl::StatusOr<std::unique_ptr<SqliteDb>> SqliteDb::Open(const std::string& path, bool create,
                                                         const std::string& vfs) {
  sqlite3* db = nullptr;
  int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | (create ? SQLITE_OPEN_CREATE : 0);
  int rc = sqlite3_open_v2(path.c_str(), &db, flags, vfs.empty() ? nullptr : vfs.c_str());
  if (rc != SQLITE_OK) {
    absl::Status st = SqliteError(db, rc, absl::StrCat("open ", path));
    sqlite3_close_v2(db);
    return st;
  }
  sqlite3_extended_result_codes(db, 0);
  return std::unique_ptr<SqliteDb>(new SqliteDb(db));
}

SqliteDb::~SqliteDb() { sqlite3_close_v2(db_); }

absl::Status SqliteDb::Exec(std::string_view sql) {
  std::string owned(sql);
  char* err = nullptr;
  int rc = sqlite3_exec(db_, owned.c_str(), nullptr, nullptr, &err);
  sqlite3_free(err);
  if (rc != SQLITE_OK) return SqliteError(db_, rc, owned);
  return absl::OkStatus();
}

absl::StatusOr<std::string> SqliteDb::QueryString(std::string_view sql) {
  auto stmt = Prepare(sql);
  if (!stmt.ok()) return stmt.status();
  absl::StatusOr<bool> row = (*stmt)->Step();
  if (!row.ok()) return row.status();
  if (!*row) return std::string();
  return (*stmt)->ColumnString(0);
}

absl::StatusOr<std::unique_ptr<SqliteStmt>> SqliteDb::Prepare(std::string_view sql) {
  sqlite3_stmt* stmt = nullptr;
  int rc = sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()),
                              SQLITE_PREPARE_PERSISTENT, &stmt, nullptr);
  if (rc != SQLITE_OK) return SqliteError(db_, rc, absl::StrCat("prepare ", Sv(sql)));
  return std::make_unique<SqliteStmt>(db_, stmt);
}

}  // namespace batchd::store::internal
