// Private pieces of SqliteStore shared by its source files: a queued write
// operation and the writer / reader connections with their cached
// statements.
//
// Thread-safety: a `SqliteWriteOp` is owned by the blocked caller and touched
// by the leading writer until `done`; each connection is used by one thread at
// a time (the current leader, or whoever took a reader from the pool).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "store/internal/sqlite_db.h"
#include "store/store.h"

namespace batchd::store::internal {

struct SqliteWriteOp {
  enum class Kind { kCreate, kUpdate, kDelete, kCompact };
  Kind kind = Kind::kCreate;
  std::string_view key;
  std::string value;
  int64_t expected = 0;  // Expected mod revision, or the compaction revision.
  bool final_value = false;  // kDelete: `value` is the key's last value.
  // Applied only when this earlier operation succeeded (UpdateOp::after_previous).
  const SqliteWriteOp* after = nullptr;
  absl::StatusOr<KeyValue> result = absl::UnknownError("write not executed");
  bool done = false;
};

struct SqliteWriteConn {
  std::unique_ptr<SqliteDb> db;
  std::unique_ptr<SqliteStmt> begin, commit, rollback, select, insert, compact, set_meta;
};

struct SqliteReadConn {
  std::unique_ptr<SqliteDb> db;
  std::unique_ptr<SqliteStmt> begin, commit, get, revision, compacted, range_bounded, range_open,
      history_bounded, history_open, prev;
};

}  // namespace batchd::store::internal
