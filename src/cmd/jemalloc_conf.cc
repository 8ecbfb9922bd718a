// jemalloc's options for the batchd binary, read by jemalloc when it starts
// (compiled in only when batchd links jemalloc; the MALLOC_CONF environment
// variable still overrides each of them):
//   - background_thread: a jemalloc thread returns freed pages to the kernel
//     on time, not only when an allocating thread happens to pass by;
//   - dirty_decay_ms 1000 (default 10000), muzzy_decay_ms 0: freed pages go
//     back after about a second instead of ten, so bursts of short-lived
//     JSON (a list, a batch of writes) do not stay in the RSS;
//   - narenas 2 (default four per CPU): fewer arenas, less memory stranded
//     half-used in each; the per-thread caches keep contention low.
// Kueue's 3,000-workload run: peak RSS 290 -> 278 MiB, same server CPU
// (docs/benchmarks.md).
//
// `batchd simulate` adds transparent huge pages for its heap (thp) and
// jemalloc's metadata: one thread walks a heap of hundreds of MiB of JSON
// trees, and fewer TLB misses take ~4 % off its CPU time at 10,000 nodes x
// 10,000 Jobs for ~4 % more RSS (docs/benchmarks.md). The server keeps 4 KiB
// pages: with huge pages its CPU per Job rose 4-10 % and its RSS 13 % (a
// small heap shared by many threads; same document).
//
// The choice is made before jemalloc reads `malloc_conf`: jemalloc starts on
// the first allocation, in a shared library's initializer, and the
// functions of an executable's .preinit_array run before any of those, with
// main's arguments (glibc passes argc, argv and envp).
#include <cstring>

namespace {

// The server's options; the simulator's are the same and huge pages.
#define BATCHD_SERVER_MALLOC_CONF \
  "background_thread:true,dirty_decay_ms:1000,muzzy_decay_ms:0,narenas:2"
constexpr char kServerConf[] = BATCHD_SERVER_MALLOC_CONF;
constexpr char kSimulatorConf[] = BATCHD_SERVER_MALLOC_CONF ",thp:always,metadata_thp:always";
#undef BATCHD_SERVER_MALLOC_CONF

}  // namespace

extern "C" {
// NOLINTNEXTLINE(readability-identifier-naming): jemalloc's documented symbol.
const char* malloc_conf = kServerConf;
}

namespace {

// The subcommand is the first argument that is not an option (batchd has
// no global option that takes a value).
void ChooseMallocConf(int argc, char** argv, char** /*envp*/) {
  for (int i = 1; i < argc && argv[i] != nullptr; ++i) {
    if (argv[i][0] == '-') continue;
    if (std::strcmp(argv[i], "simulate") == 0) malloc_conf = kSimulatorConf;
    return;
  }
}

// NOLINTNEXTLINE(cppcoreguidelines-avoid-non-const-global-variables): the loader's table.
[[gnu::used, gnu::section(".preinit_array")]] void (*choose_malloc_conf)(int, char**,
                                                                                 char**) =
    ChooseMallocConf;

}  // namespace
