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
extern "C" {
// NOLINTNEXTLINE(readability-identifier-naming): jemalloc's documented symbol.
const char* malloc_conf = "background_thread:true,dirty_decay_ms:1000,muzzy_decay_ms:0,narenas:2";
}
