#include "store/sqlite/sqlite_store.h"

#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/testing/temp_dir.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "store/internal/sqlite_db.h"
#include "store/testing/store_conformance.h"

namespace batchd::store {
namespace {

template <bool kGroupCommit, SqliteSync kSync>
struct SqliteFactory {
  ScopedTempDir dir{"sqlite_store_test"};
  std::unique_ptr<Store> Make() {
    SqliteOptions options;
    options.path = dir.path() + "/data/state.db";
    options.group_commit = kGroupCommit;
    options.sync = kSync;
    absl::StatusOr<std::unique_ptr<SqliteStore>> store = SqliteStore::Open(options);
    EXPECT_TRUE(store.ok()) << store.status();
    return store.ok() ? std::move(*store) : nullptr;
  }
};

using GroupCommitFull = SqliteFactory<true, SqliteSync::kFull>;
using SingleCommitNormal = SqliteFactory<false, SqliteSync::kNormal>;

}  // namespace

namespace testing {
using SqliteFactories = ::testing::Types<GroupCommitFull, SingleCommitNormal>;
INSTANTIATE_TYPED_TEST_SUITE_P(Sqlite, StoreConformanceTest, SqliteFactories);
}  // namespace testing

namespace {

SqliteOptions OptionsIn(const ScopedTempDir& dir, SqliteSync sync = SqliteSync::kNormal) {
  SqliteOptions options;
  options.path = dir.path() + "/nested/dir/state.db";
  options.sync = sync;
  return options;
}

std::unique_ptr<SqliteStore> MustOpen(const SqliteOptions& options) {
  absl::StatusOr<std::unique_ptr<SqliteStore>> store = SqliteStore::Open(options);
  EXPECT_TRUE(store.ok()) << store.status();
  return store.ok() ? std::move(*store) : nullptr;
}

TEST(SqliteStoreTest, ReopenKeepsDataRevisionAndCompaction) {
  ScopedTempDir dir{"sqlite_store_test"};
  SqliteOptions options = OptionsIn(dir, SqliteSync::kFull);
  {
    auto store = MustOpen(options);
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(store->Create("/a", std::string("bin\0ary", 7)).ok());
    ASSERT_TRUE(store->Create("/b", "").ok());
    ASSERT_TRUE(store->Update("/a", std::string("new\0val", 7), 1).ok());
    ASSERT_TRUE(store->Create("/c", "gone").ok());
    ASSERT_TRUE(store->Delete("/c", 0).ok());
    ASSERT_TRUE(store->Compact(2).ok());
    EXPECT_EQ(store->CompactedRevision(), 2);
  }
  auto store = MustOpen(options);
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->Revision(), 5);
  EXPECT_EQ(store->CompactedRevision(), 2);
  // History survives the reopen from the compacted revision on.
  EXPECT_EQ(store->OldestWatchableRevision(), 2);
  EXPECT_EQ(store->Watch("/", 1, [](const Event&) {}).status().code(),
            absl::StatusCode::kOutOfRange);
  {
    testing::EventRecorder replay;
    auto h = store->Watch("/", 2, replay.Callback());
    ASSERT_TRUE(h.ok()) << h.status();
    ASSERT_TRUE(replay.WaitForCount(3));
    std::vector<Event> ev = replay.Events();
    EXPECT_THAT(replay.Revisions(), ::testing::ElementsAre(3, 4, 5));
    EXPECT_EQ(ev[0].kv.key, "/a");
    EXPECT_EQ(ev[0].prev.value, std::string("bin\0ary", 7));  // kept: newest at or below 2
    EXPECT_EQ(ev[2].type, Event::Type::kDelete);
    EXPECT_EQ(ev[2].kv.value, "gone");
    EXPECT_EQ(ev[2].prev.value, "gone");
  }
  absl::StatusOr<RangeResult> at3 = store->RangeAtRevision("/", "", 0, 3);
  ASSERT_TRUE(at3.ok()) << at3.status();
  ASSERT_EQ(at3->kvs.size(), 2u);
  EXPECT_EQ(at3->kvs[0].value, std::string("new\0val", 7));
  absl::StatusOr<KeyValue> a = store->Get("/a");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->value, std::string("new\0val", 7));
  EXPECT_EQ(a->create_revision, 1);
  EXPECT_EQ(a->mod_revision, 3);
  EXPECT_EQ(store->Get("/b")->value, "");
  EXPECT_EQ(store->Get("/c").status().code(), absl::StatusCode::kNotFound);
  // Revisions continue after the reopen.
  testing::EventRecorder rec;
  auto handle = store->Watch("/", -1, rec.Callback());
  ASSERT_TRUE(handle.ok());
  absl::StatusOr<KeyValue> d = store->Create("/d", "v");
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->mod_revision, 6);
  EXPECT_THAT(rec.Revisions(), ::testing::ElementsAre(6));
}

// The revision survives a reopen whether the newest write was a delete (kept
// in meta) or not (the newest row's mod_rev).
TEST(SqliteStoreTest, RevisionAfterReopenWithAndWithoutTrailingDelete) {
  ScopedTempDir dir{"sqlite_store_test"};
  SqliteOptions options = OptionsIn(dir);
  // Reopens the store and checks its revision as Revision() and Range see it.
  auto reopen = [&](int64_t want) {
    std::unique_ptr<SqliteStore> store = MustOpen(options);
    if (store == nullptr) return store;
    EXPECT_EQ(store->Revision(), want);
    absl::StatusOr<RangeResult> r = store->Range("/", "", 0);
    EXPECT_TRUE(r.ok());
    if (r.ok()) {
      EXPECT_EQ(r->revision, want);
    }
    return store;
  };
  {
    auto store = MustOpen(options);
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(store->Create("/a", "1").ok());      // 1
    ASSERT_TRUE(store->Delete("/a", 0).ok());        // 2
    ASSERT_TRUE(store->Create("/b", "1").ok());      // 3
    ASSERT_TRUE(store->Update("/b", "2", 0).ok());   // 4
  }
  {
    auto store = reopen(4);
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(store->Delete("/b", 0).ok());        // 5: no row has it
  }
  auto store = reopen(5);
  ASSERT_NE(store, nullptr);
  EXPECT_TRUE(store->Range("/", "", 0)->kvs.empty());
  absl::StatusOr<KeyValue> c = store->Create("/c", "1");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->mod_revision, 6);
}

// Writes a database in an older schema (`sql`) where `options` will open it.
void WriteOldDatabase(const SqliteOptions& options, const char* sql) {
  std::filesystem::create_directories(std::filesystem::path(options.path).parent_path());
  absl::StatusOr<std::unique_ptr<internal::SqliteDb>> db =
      internal::SqliteDb::Open(options.path, /*create=*/true);
  ASSERT_TRUE(db.ok()) << db.status();
  ASSERT_TRUE((*db)->Exec(sql).ok());
}

// A database from before kv became a rowid table opens with its data, and
// its revisions continue.
TEST(SqliteStoreTest, OpensAndMigratesWithoutRowidDatabase) {
  ScopedTempDir dir{"sqlite_store_test"};
  SqliteOptions options = OptionsIn(dir);
  ASSERT_NO_FATAL_FAILURE(WriteOldDatabase(options,
        "CREATE TABLE kv(key TEXT PRIMARY KEY, value BLOB NOT NULL,"
        " create_rev INTEGER NOT NULL, mod_rev INTEGER NOT NULL) WITHOUT ROWID;"
        "CREATE TABLE meta(name TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;"
        "INSERT INTO meta(name, value) VALUES('revision', 7), ('compacted', 0);"
        "INSERT INTO kv VALUES('/a', x'6f6c64', 3, 7), ('/b', x'', 5, 5);"));
  auto store = MustOpen(options);
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->Revision(), 7);
  absl::StatusOr<KeyValue> a = store->Get("/a");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->value, "old");
  EXPECT_EQ(a->create_revision, 3);
  EXPECT_EQ(a->mod_revision, 7);
  absl::StatusOr<KeyValue> u = store->Update("/a", "new", 7);
  ASSERT_TRUE(u.ok()) << u.status();
  EXPECT_EQ(u->mod_revision, 8);
  absl::StatusOr<RangeResult> all = store->Range("/", "", 0);
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->kvs.size(), 2u);
  EXPECT_EQ(all->kvs[0].value, "new");
  store.reset();
  absl::StatusOr<std::unique_ptr<internal::SqliteDb>> db =
      internal::SqliteDb::Open(options.path, /*create=*/false);
  ASSERT_TRUE(db.ok());
  absl::StatusOr<std::string> kv =
      (*db)->QueryString("SELECT count(*) FROM sqlite_master WHERE name='kv'");
  ASSERT_TRUE(kv.ok());
  EXPECT_EQ(*kv, "0");
}

// The migrated history starts compacted at the old database's revision.
TEST(SqliteStoreTest, MigratedDatabaseStartsCompacted) {
  ScopedTempDir dir{"sqlite_store_test"};
  SqliteOptions options = OptionsIn(dir);
  ASSERT_NO_FATAL_FAILURE(WriteOldDatabase(options,
        "CREATE TABLE kv(key TEXT PRIMARY KEY, value BLOB NOT NULL,"
        " create_rev INTEGER NOT NULL, mod_rev INTEGER NOT NULL);"
        "CREATE TABLE meta(name TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;"
        "INSERT INTO meta(name, value) VALUES('revision', 9), ('compacted', 0);"
        "INSERT INTO kv VALUES('/a', x'31', 3, 7);"));
  auto store = MustOpen(options);
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->Revision(), 9);
  EXPECT_EQ(store->CompactedRevision(), 9);
  EXPECT_EQ(store->RangeAtRevision("/", "", 0, 8).status().code(),
            absl::StatusCode::kOutOfRange);
  EXPECT_EQ(store->Get("/a")->value, "1");
}

// Compaction removes superseded versions and tombstones from the log, and
// keeps every key's newest version at or below the compacted revision.
TEST(SqliteStoreTest, CompactionShrinksTheLog) {
  ScopedTempDir dir{"sqlite_store_test"};
  SqliteOptions options = OptionsIn(dir);
  auto store = MustOpen(options);
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->Create("/a", "1").ok());     // 1
  for (int i = 2; i <= 10; ++i) ASSERT_TRUE(store->Update("/a", std::to_string(i), 0).ok());
  ASSERT_TRUE(store->Create("/b", "b").ok());     // 11
  ASSERT_TRUE(store->Delete("/b", 0).ok());       // 12: the newest row, a tombstone
  ASSERT_TRUE(store->Compact(12).ok());
  store.reset();
  {
    auto db = internal::SqliteDb::Open(options.path, /*create=*/false);
    ASSERT_TRUE(db.ok());
    EXPECT_EQ(*(*db)->QueryString("SELECT count(*) FROM log"), "1");
  }
  store = MustOpen(options);
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->Revision(), 12);  // kept in meta: its row is gone
  EXPECT_EQ(store->Get("/a")->value, "10");
  EXPECT_EQ(store->Get("/b").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(store->Create("/c", "c")->mod_revision, 13);
}

// CreateMany and UpdateMany commit their writes in one transaction, which
// Transactions() counts once (what batched binds and Events rely on).
TEST(SqliteStoreTest, ManyWritesShareOneTransaction) {
  ScopedTempDir dir{"sqlite_store_test"};
  auto store = MustOpen(OptionsIn(dir));
  ASSERT_NE(store, nullptr);
  const int64_t t0 = store->Transactions();
  ASSERT_TRUE(store->Create("/a", "1").ok());
  EXPECT_EQ(store->Transactions(), t0 + 1);
  auto created = store->CreateMany({{"/b", "1"}, {"/c", "1"}, {"/d", "1"}});
  for (const auto& r : created) ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(store->Transactions(), t0 + 2);
  auto updated = store->UpdateMany({{"/b", "2", 2}, {"/c", "2", 3}, {"/d", "2", 4}});
  for (const auto& r : updated) ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(store->Transactions(), t0 + 3);
  EXPECT_EQ(store->Revision(), 7);
}

TEST(SqliteStoreTest, GroupCommitFailsOnlyTheFailingOperations) {
  ScopedTempDir dir{"sqlite_store_test"};
  auto store = MustOpen(OptionsIn(dir));
  ASSERT_NE(store, nullptr);
  constexpr int kThreads = 16, kRounds = 20;
  std::vector<int> wins(kRounds, 0);
  std::vector<std::thread> threads;
  std::atomic<int> other_errors{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int r = 0; r < kRounds; ++r) {
        // Everyone races to create the same key; each also writes its own.
        absl::StatusOr<KeyValue> kv = store->Create(absl::StrCat("/race/", r), "v");
        if (kv.ok()) {
          __atomic_add_fetch(&wins[r], 1, __ATOMIC_RELAXED);
        } else if (kv.status().code() != absl::StatusCode::kAlreadyExists) {
          ++other_errors;
        }
        if (!store->Create(absl::StrCat("/own/", t, "/", r), "v").ok()) ++other_errors;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(other_errors.load(), 0);
  for (int r = 0; r < kRounds; ++r) EXPECT_EQ(wins[r], 1) << r;
  EXPECT_EQ(store->Revision(), kRounds + kThreads * kRounds);
  absl::StatusOr<RangeResult> own = store->Range("/own/", "", 0);
  ASSERT_TRUE(own.ok());
  EXPECT_EQ(own->kvs.size(), static_cast<size_t>(kThreads * kRounds));
}

TEST(SqliteStoreTest, OpenErrors) {
  ScopedTempDir dir{"sqlite_store_test"};
  struct Case {
    std::string name;
    std::string path;
    std::string contents;  // Written to `path` first when not empty.
  };
  std::vector<Case> cases = {
      {"empty path", "", ""},
      {"not a database", dir.path() + "/garbage.db", std::string(8192, 'x')},
      {"parent is a file", dir.path() + "/file/state.db", ""},
  };
  std::ofstream(dir.path() + "/file") << "x";
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    if (!c.contents.empty()) std::ofstream(c.path) << c.contents;
    SqliteOptions options;
    options.path = c.path;
    EXPECT_FALSE(SqliteStore::Open(options).ok());
  }
}

// The child process of the crash test: writes until killed, reporting each
// acknowledged key number on `fd`.
[[noreturn]] void CrashChild(const SqliteOptions& options, int fd, int round) {
  auto store = SqliteStore::Open(options);
  if (!store.ok()) _exit(2);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int32_t i = 0; i < 1000000; ++i) {
        int32_t id = (round * 8 + t) * 1000000 + i;
        if (!(*store)->Create(absl::StrCat("/crash/", id), std::string(200, 'v')).ok()) _exit(3);
        if (write(fd, &id, sizeof(id)) != sizeof(id)) _exit(4);
      }
    });
  }
  for (auto& t : threads) t.join();
  _exit(0);
}

// Runs one child until it has acknowledged `min_acked` writes, kills it with
// SIGKILL and returns every key number it acknowledged.
std::vector<int32_t> RunAndKill(const SqliteOptions& options, int round, size_t min_acked) {
  int fds[2];
  EXPECT_EQ(pipe(fds), 0);
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    CrashChild(options, fds[1], round);
  }
  close(fds[1]);
  std::vector<int32_t> acked;
  int32_t id;
  bool killed = false;
  while (read(fds[0], &id, sizeof(id)) == sizeof(id)) {
    acked.push_back(id);
    if (!killed && acked.size() >= min_acked) {
      kill(pid, SIGKILL);
      killed = true;
    }
  }
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "child status " << status;
  return acked;
}

TEST(SqliteStoreTest, AcknowledgedWritesSurviveKill9) {
  ScopedTempDir dir{"sqlite_store_test"};
  struct Case {
    std::string name;
    SqliteSync sync;
    bool group_commit;
  };
  std::vector<Case> cases = {
      {"normal, group commit", SqliteSync::kNormal, true},
      {"full, group commit", SqliteSync::kFull, true},
      {"normal, single commit", SqliteSync::kNormal, false},
  };
  std::set<int32_t> all_acked;
  for (size_t round = 0; round < cases.size(); ++round) {
    const Case& c = cases[round];
    SCOPED_TRACE(c.name);
    SqliteOptions options = OptionsIn(dir, c.sync);
    options.group_commit = c.group_commit;
    std::vector<int32_t> acked = RunAndKill(options, static_cast<int>(round), 300);
    ASSERT_GE(acked.size(), 300u);
    all_acked.insert(acked.begin(), acked.end());
    // The database left by kill -9 opens cleanly and holds every acked write.
    auto store = MustOpen(options);
    ASSERT_NE(store, nullptr);
    for (int32_t id : all_acked) {
      ASSERT_TRUE(store->Get(absl::StrCat("/crash/", id)).ok()) << id;
    }
    absl::StatusOr<RangeResult> all = store->Range("/crash/", "", 0);
    ASSERT_TRUE(all.ok());
    EXPECT_GE(all->kvs.size(), all_acked.size());
    // Each earlier round also wrote and deleted one `/after/` key.
    EXPECT_EQ(store->Revision(), static_cast<int64_t>(all->kvs.size() + 2 * round));
    // Revisions continue monotonically after recovery.
    absl::StatusOr<KeyValue> next = store->Create(absl::StrCat("/after/", round), "v");
    ASSERT_TRUE(next.ok());
    EXPECT_EQ(next->mod_revision, store->Revision());
    ASSERT_TRUE(store->Delete(absl::StrCat("/after/", round), 0).ok());
  }
}

}  // namespace
}  // namespace batchd::store
