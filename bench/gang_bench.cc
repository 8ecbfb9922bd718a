// Gang binding latency (DESIGN.md: a 256-pod gang bound within 1 s of its
// capacity existing). Each iteration builds the scheduler's whole in-process
// path — registry on a store, informers, the scheduler with its real
// RegistryBinder — fills the nodes' 1-cpu slots but one with nothing but a
// blocker pod, creates a PodGroup (gang, minCount 256) and its 256 pods and
// lets the gang wait (nothing binds). The timed part starts once the
// blocker's deletion has returned (the 256th slot exists) and ends when the
// scheduler is idle with all 256 members bound: the group's one-pass
// decision, 256 binds through the registry (store commits, watch events back
// to the informers) and the PodGroupScheduled status.
//
//   BM_GangBind/<store>/<nodes>: store 0 = memory, 1 = SQLite (synchronous
//   NORMAL, as `batchd server`); 32 nodes of 8 cpu or 256 nodes of 1 cpu.
// The real time per iteration is the latency; iterations are few because
// each builds a cluster.
#include <benchmark/benchmark.h>

#include <filesystem>
#include <memory>

#include "client/in_process_client.h"
#include "common/testing/fake_clock.h"
#include "scheduler/scheduler.h"
#include "store/memory/memory_store.h"
#include "store/sqlite/sqlite_store.h"

namespace {

using batchd::api::Json;
namespace sched = batchd::scheduler;

constexpr int kGang = 256;

Json NodeJson(int i, int cpu) {
  const std::string c = std::to_string(cpu);
  return {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"metadata", {{"name", "node-" + std::to_string(i)}}},
          {"status",
           {{"allocatable", {{"cpu", c}, {"memory", "256Gi"}, {"pods", "110"}}},
            {"capacity", {{"cpu", c}, {"memory", "256Gi"}, {"pods", "110"}}},
            {"conditions", Json::array({{{"type", "Ready"}, {"status", "True"}}})}}}};
}

Json PodJson(const std::string& name, const std::string& group) {
  Json pod = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", {{"name", name}, {"namespace", "default"}}},
              {"spec",
               {{"restartPolicy", "Never"},
                {"containers", Json::array({{{"name", "c"},
                                             {"image", "busybox"},
                                             {"resources", {{"requests", {{"cpu", "1"}}}}}}})}}}};
  if (!group.empty()) pod["spec"]["schedulingGroup"] = {{"podGroupName", group}};
  return pod;
}

// One cluster: store, registry, informers, scheduler.
struct Cluster {
  explicit Cluster(std::unique_ptr<batchd::store::Store> s)
      : store(std::move(s)), reg(*store, batchd::api::BuiltinScheme(), clock) {}
  batchd::FakeClock clock;
  std::unique_ptr<batchd::store::Store> store;
  batchd::registry::Registry reg;
  std::unique_ptr<batchd::client::InProcessClient> c;
  std::unique_ptr<batchd::reconcile::Manager> mgr;
  std::unique_ptr<batchd::reconcile::InformerFactory> inf;
  batchd::reconcile::FakeEventRecorder ev;
  std::unique_ptr<batchd::reconcile::ControllerContext> ctx;
};

std::unique_ptr<batchd::store::Store> NewStore(int kind, const std::string& dir) {
  if (kind == 0) return std::make_unique<batchd::store::MemoryStore>();
  std::filesystem::remove_all(dir);
  batchd::store::SqliteOptions o;
  o.path = dir + "/state.db";
  o.sync = batchd::store::SqliteSync::kNormal;
  auto s = batchd::store::SqliteStore::Open(o);
  return s.ok() ? std::move(*s) : nullptr;
}

int BoundCount(batchd::client::InProcessClient& c) {
  auto list = c.List(c.Kind("", "v1", "pods"), "default", {});
  int n = 0;
  if (!list.ok()) return -1;
  for (const Json& p : list->items) {
    n += p["metadata"]["name"].get<std::string>().rfind("g", 0) == 0 &&
                 !p["spec"].value("nodeName", "").empty()
             ? 1
             : 0;
  }
  return n;
}

void BM_GangBind(benchmark::State& state) {
  const int store_kind = static_cast<int>(state.range(0));
  const int nodes = static_cast<int>(state.range(1));
  const int cpu = kGang / nodes;
  const std::string dir = std::filesystem::temp_directory_path() / "batchd_gang_bench";
  for (auto _ : state) {
    state.PauseTiming();
    auto store = NewStore(store_kind, dir);
    if (store == nullptr) return state.SkipWithError("store");
    auto cl = std::make_unique<Cluster>(std::move(store));
    if (!cl->reg.Start().ok()) return state.SkipWithError("registry start");
    cl->c = std::make_unique<batchd::client::InProcessClient>(cl->reg);
    cl->mgr = std::make_unique<batchd::reconcile::Manager>(cl->clock);
    cl->inf = std::make_unique<batchd::reconcile::InformerFactory>(*cl->c, *cl->mgr);
    cl->ctx.reset(new batchd::reconcile::ControllerContext{*cl->c, *cl->inf, *cl->mgr, cl->clock,
                                                           cl->ev});
    sched::SchedulerOptions opts;
    opts.binder = std::make_shared<sched::RegistryBinder>(cl->reg);
    opts.record_events = false;
    sched::AddScheduler(*cl->ctx, opts);
    auto& c = *cl->c;
    const auto& node_kind = c.Kind("", "v1", "nodes");
    const auto& pod_kind = c.Kind("", "v1", "pods");
    for (int i = 0; i < nodes; ++i) {
      Json n = NodeJson(i, cpu);
      (void)c.Create(node_kind, "", n);
      (void)c.MergePatch(node_kind, "", n["metadata"]["name"], {{"status", n["status"]}}, true);
    }
    if (!cl->mgr->SyncAll().ok()) return state.SkipWithError("sync");
    (void)c.Create(pod_kind, "default", PodJson("blocker", ""));
    cl->mgr->RunUntilIdle();
    Json pg = {{"apiVersion", "scheduling.k8s.io/v1alpha2"},
               {"kind", "PodGroup"},
               {"metadata", {{"name", "pg"}, {"namespace", "default"}}},
               {"spec", {{"schedulingPolicy", {{"gang", {{"minCount", kGang}}}}}}}};
    (void)c.Create(c.Kind("scheduling.k8s.io", "v1alpha2", "podgroups"), "default", pg);
    for (int i = 0; i < kGang; ++i) {
      (void)c.Create(pod_kind, "default", PodJson("g" + std::to_string(i), "pg"));
    }
    cl->mgr->RunUntilIdle();
    if (BoundCount(c) != 0) return state.SkipWithError("the gang bound without its capacity");
    batchd::client::DeleteOptions now;
    now.grace_period_seconds = 0;
    if (!c.Delete(pod_kind, "default", "blocker", now).ok()) return state.SkipWithError("delete");
    state.ResumeTiming();
    // The 256th slot exists: the gang binds.
    cl->mgr->RunUntilIdle();
    state.PauseTiming();
    if (BoundCount(c) != kGang) return state.SkipWithError("the gang did not bind whole");
    cl.reset();
    state.ResumeTiming();
  }
  std::filesystem::remove_all(dir);
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * kGang);
}
BENCHMARK(BM_GangBind)
    ->ArgNames({"store", "nodes"})
    ->Args({0, 32})
    ->Args({0, 256})
    ->Args({1, 32})
    ->Args({1, 256})
    ->Iterations(10)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
