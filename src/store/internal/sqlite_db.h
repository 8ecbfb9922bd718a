// Thin RAII wrappers over the SQLite C API used by SqliteStore: a connection
// (`SqliteDb`) and a cached prepared statement (`SqliteStmt`), with SQLite
// result codes mapped to absl::Status (busy/locked/full/I-O → Unavailable,
// corruption → DataLoss, the rest → Internal; the message carries SQLite's).
//
// Thread-safety: none. Connections are opened with SQLITE_OPEN_NOMUTEX, so
// each connection and its statements must be used by one thread at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/string_view.h"

struct sqlite3;
struct sqlite3_stmt;

namespace batchd::store::internal {

// Maps an SQLite result code to a Status, naming what was being done.
absl::Status SqliteError(sqlite3* db, int rc, std::string_view what);

class SqliteStmt {
 public:
  SqliteStmt(sqlite3* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}
  ~SqliteStmt();
  SqliteStmt(const SqliteStmt&) = delete;
  SqliteStmt& operator=(const SqliteStmt&) = delete;

  // Binders take 1-based indexes; text and blobs are NOT copied: they must
  // outlive the next `Reset`.
  void BindText(int i, std::string_view v);
  void BindBlob(int i, std::string_view v);
  void BindInt64(int i, int64_t v);
  // Steps once; true while a row is available, false when done.
  absl::StatusOr<bool> Step();
  // Steps to completion, ignoring rows.
  absl::Status Run();
  // Resets and clears bindings so the statement can be reused.
  void Reset();

  int64_t ColumnInt64(int i) const;
  std::string ColumnString(int i) const;

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_;
};

// Resets a statement when leaving a scope, so a cached statement never keeps
// a transaction's read snapshot open or holds bound pointers.
class ScopedReset {
 public:
  explicit ScopedReset(SqliteStmt& stmt) : stmt_(stmt) {}
  ~ScopedReset() { stmt_.Reset(); }
  ScopedReset(const ScopedReset&) = delete;
  ScopedReset& operator=(const ScopedReset&) = delete;

 private:
  SqliteStmt& stmt_;
};

// Runs a statement to completion, then resets it.
absl::Status RunOnce(SqliteStmt& stmt);

class SqliteDb {
 public:
  // Opens (creating when `create`) the database file at `path`.
  // `vfs`: an SQLite VFS name, empty for the default (tests use others).
  static absl::StatusOr<std::unique_ptr<SqliteDb>> Open(const std::string& path, bool create,
                                                        const std::string& vfs = "");
  ~SqliteDb();
  SqliteDb(const SqliteDb&) = delete;
  SqliteDb& operator=(const SqliteDb&) = delete;

  // Runs one or more statements without results.
  absl::Status Exec(std::string_view sql);
  // Runs a query returning one text/integer cell, as a string.
  absl::StatusOr<std::string> QueryString(std::string_view sql);
  absl::StatusOr<std::unique_ptr<SqliteStmt>> Prepare(std::string_view sql);

  sqlite3* raw() const { return db_; }

 private:
  explicit SqliteDb(sqlite3* db) : db_(db) {}
  sqlite3* db_;
};

}  // namespace batchd::store::internal
