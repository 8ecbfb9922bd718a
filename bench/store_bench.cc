// Store write throughput: SqliteStore with and without group commit, sync
// FULL and NORMAL, 1 and 16 writer threads; MemoryStore for reference.
// Each iteration creates one key with a 1 KiB value (about a Job's JSON);
// SqliteUpdate rewrites existing keys.
//
//   build/bin/store_bench [--benchmark_filter=...]
// The database lives under $TMPDIR (default /tmp), on a real disk there.
#include <stdlib.h>

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "store/memory/memory_store.h"
#include "store/sqlite/sqlite_store.h"

namespace batchd::store {
namespace {

std::unique_ptr<Store> g_store;
std::string g_dir;
std::atomic<int64_t> g_failures{0};

void SetupSqlite(const benchmark::State& state) {
  const char* tmp = getenv("TMPDIR");
  std::string tmpl = absl::StrCat(tmp != nullptr ? tmp : "/tmp", "/store_bench.XXXXXX");
  if (mkdtemp(tmpl.data()) == nullptr) abort();
  g_dir = tmpl;
  SqliteOptions options;
  options.path = g_dir + "/state.db";
  options.group_commit = state.range(0) != 0;
  options.sync = state.range(1) != 0 ? SqliteSync::kNormal : SqliteSync::kFull;
  auto store = SqliteStore::Open(options);
  if (!store.ok()) abort();
  g_store = std::move(*store);
}

void SetupMemory(const benchmark::State&) { g_store = std::make_unique<MemoryStore>(); }

void Teardown(const benchmark::State&) {
  g_store.reset();
  if (!g_dir.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(g_dir, ec);
    g_dir.clear();
  }
}

void BM_Create(benchmark::State& state) {
  const std::string value(1024, 'x');
  const std::string prefix = absl::StrCat("/registry/jobs/ns/t", state.thread_index(), "-");
  int64_t i = 0;
  for (auto _ : state) {
    if (!g_store->Create(absl::StrCat(prefix, i++), value).ok()) ++g_failures;
  }
  state.SetItemsProcessed(state.iterations());
  if (state.thread_index() == 0) state.counters["failures"] = static_cast<double>(g_failures);
}

// Updates of 1,000 keys per thread, round robin (what most writes are: status
// and metadata changes of existing objects).
void BM_Update(benchmark::State& state) {
  const std::string value(1024, 'y');
  const std::string prefix = absl::StrCat("/registry/jobs/ns/u", state.thread_index(), "-");
  constexpr int kKeys = 1000;
  for (int k = 0; k < kKeys; ++k) {
    if (!g_store->Create(absl::StrCat(prefix, k), value).ok()) ++g_failures;
  }
  int64_t i = 0;
  for (auto _ : state) {
    if (!g_store->Update(absl::StrCat(prefix, i++ % kKeys), value, 0).ok()) ++g_failures;
  }
  state.SetItemsProcessed(state.iterations());
  if (state.thread_index() == 0) state.counters["failures"] = static_cast<double>(g_failures);
}

BENCHMARK(BM_Update)
    ->Name("SqliteUpdate")
    ->Setup(SetupSqlite)
    ->Teardown(Teardown)
    ->ArgNames({"group_commit", "normal_sync"})
    ->Args({1, 1})
    ->Threads(1)
    ->Threads(16)
    ->UseRealTime()
    ->MinTime(1.0);

// Args: {group_commit (0/1), sync (0 = FULL, 1 = NORMAL)}.
BENCHMARK(BM_Create)
    ->Name("SqliteCreate")
    ->Setup(SetupSqlite)
    ->Teardown(Teardown)
    ->ArgNames({"group_commit", "normal_sync"})
    ->ArgsProduct({{1, 0}, {0, 1}})
    ->Threads(1)
    ->Threads(16)
    ->UseRealTime()
    ->MinTime(1.0);

BENCHMARK(BM_Create)
    ->Name("MemoryCreate")
    ->Setup(SetupMemory)
    ->Teardown(Teardown)
    ->Threads(1)
    ->Threads(16)
    ->UseRealTime();

}  // namespace
}  // namespace batchd::store

BENCHMARK_MAIN();
