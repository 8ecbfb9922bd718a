// Pod scheduler throughput on 1,000 nodes (DESIGN.md performance budget):
//   BM_ScheduleCore/N    the filter/score algorithm alone (no I/O), N nodes;
//   BM_SchedulerBind     the whole path: informer events, decisions, binds
//                        through the Registry on the in-memory store.
// items_per_second is pods bound per second.
#include <benchmark/benchmark.h>

#include "client/in_process_client.h"
#include "common/testing/fake_clock.h"
#include "scheduler/internal/cache.h"
#include "scheduler/scheduler.h"
#include "store/memory/memory_store.h"

namespace {

using batchd::api::Json;
namespace sched = batchd::scheduler;

constexpr int kNodes = 1000;

Json NodeJson(int i) {
  return {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"metadata",
           {{"name", "node-" + std::to_string(i)},
            {"labels", {{"zone", i % 2 ? "a" : "b"}}}}},
          {"status",
           {{"allocatable", {{"cpu", "64"}, {"memory", "256Gi"}, {"pods", "110"}}},
            {"capacity", {{"cpu", "64"}, {"memory", "256Gi"}, {"pods", "110"}}},
            {"conditions", Json::array({{{"type", "Ready"}, {"status", "True"}}})}}}};
}

Json PodJson(const std::string& name) {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", name}, {"namespace", "default"}}},
          {"spec",
           {{"restartPolicy", "Never"},
            {"tolerations", Json::array({{{"key", "x"}, {"operator", "Exists"}}})},
            {"containers",
             Json::array({{{"name", "c"},
                           {"image", "busybox"},
                           {"resources", {{"requests", {{"cpu", "100m"}, {"memory", "64Mi"}}}}}}})}}}};
}

void BM_ScheduleCore(benchmark::State& state) {
  const int kPods = 1000;
  int64_t bound = 0;
  for (auto _ : state) {
    state.PauseTiming();
    sched::internal::Cache cache;
    for (int i = 0; i < state.range(0); ++i) cache.UpsertNode(NodeJson(i));
    std::vector<std::shared_ptr<const sched::internal::PodInfo>> pods;
    for (int i = 0; i < kPods; ++i) {
      pods.push_back(sched::internal::ParsePod(PodJson("p" + std::to_string(i)), cache.resources()));
    }
    state.ResumeTiming();
    for (const auto& p : pods) {
      auto r = cache.Schedule(*p);
      if (!r.node.empty()) {
        cache.AddPod(*p, r.node, true);
        ++bound;
      }
    }
  }
  state.SetItemsProcessed(bound);
}
BENCHMARK(BM_ScheduleCore)->Arg(1000)->Arg(10000)->Unit(benchmark::kMillisecond);

void BM_SchedulerBind(benchmark::State& state) {
  batchd::FakeClock clock;
  batchd::store::MemoryStore store;
  batchd::registry::Registry reg(store, batchd::api::BuiltinScheme(), clock);
  if (!reg.Start().ok()) return state.SkipWithError("registry start");
  batchd::client::InProcessClient c(reg);
  batchd::reconcile::Manager mgr(clock);
  batchd::reconcile::InformerFactory inf(c, mgr);
  batchd::reconcile::FakeEventRecorder ev;
  batchd::reconcile::ControllerContext ctx{c, inf, mgr, clock, ev};
  sched::SchedulerOptions opts;
  opts.binder = std::make_shared<sched::RegistryBinder>(reg);
  opts.record_events = false;
  sched::AddScheduler(ctx, opts);
  const auto& nodes = c.Kind("", "v1", "nodes");
  const auto& pods = c.Kind("", "v1", "pods");
  for (int i = 0; i < kNodes; ++i) {
    Json n = NodeJson(i);
    (void)c.Create(nodes, "", n);
    (void)c.MergePatch(nodes, "", n["metadata"]["name"], {{"status", n["status"]}}, true);
  }
  if (!mgr.SyncAll().ok()) return state.SkipWithError("sync");
  mgr.RunUntilIdle();
  const int kBatch = static_cast<int>(state.range(0));
  int seq = 0;
  for (auto _ : state) {
    state.PauseTiming();
    for (int i = 0; i < kBatch; ++i) (void)c.Create(pods, "default", PodJson("p" + std::to_string(seq++)));
    state.ResumeTiming();
    mgr.RunUntilIdle();
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * kBatch);
}
BENCHMARK(BM_SchedulerBind)->Arg(1000)->Iterations(20)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
