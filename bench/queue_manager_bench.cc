// The queue manager's cost per cycle when (almost) nothing changes, against
// the number of pending workloads (issue #14: "work per cycle proportional
// to what changed, not to what is pending"; target: flat).
//
// Setup (outside the timed loop): an in-memory registry on a fake clock,
// <cqs> ClusterQueues of 10 cpu each (one LocalQueue each, one namespace),
// and <pending> Workloads of 1 cpu spread over them round-robin (priority
// falling with the index), created in store batches; the manager converges (10 admitted per ClusterQueue, the rest
// pending with a QuotaReserved=False message).
//
//   BM_QuietCycle/<pending>/<cqs>   one iteration = an annotation added to
//       one pending Workload (nothing the core reads changes) and the
//       manager run until idle: the informer event, the Workload's sync and
//       one scheduling cycle. Time per iteration = the per-cycle cost.
//   BM_AdmitOne/<pending>/<cqs>/<distinct>  one iteration = one admitted
//       Workload finishes and the next pending one is admitted in its place
//       (the smallest real change: a release, an admission, a status write).
//       <distinct> = 1: every workload has its own priority, so each is its
//       own equivalence group and a finish requeues every inadmissible one
//       (Kueue's requeue on a cluster event); 0: one priority, one group per
//       ClusterQueue.
//   BM_AdmitBurst/<burst>   on a SQLite store (synchronous=FULL, a fresh
//       temporary file): one iteration = the one ClusterQueue's quota is
//       raised by <burst> cpu while <burst> 1-cpu Workloads wait, and the
//       manager runs until idle (one cycle admits them all). Counters: store
//       transactions per admission in the timed part (the quota write, the
//       admissions, the queue statuses; SqliteStore::Transactions) and
//       admissions per second of wall time.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <filesystem>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "client/in_process_client.h"
#include "common/testing/fake_clock.h"
#include "controllers/queueing/queue_manager.h"
#include "reconcile/context.h"
#include "registry/registry.h"
#include "store/memory/memory_store.h"
#include "store/sqlite/sqlite_store.h"

namespace {

using batchd::api::Json;
namespace qm = batchd::controllers::queueing;

constexpr char kGroup[] = "kueue.x-k8s.io";
constexpr char kVersion[] = "v1beta2";

class Env {
 public:
  // `distinct_priorities`: priority falls with the index (every workload its
  // own equivalence group); otherwise one priority and creation times one
  // second apart. Either way queue order is index order.
  Env(int pending, int cqs, bool distinct_priorities = true)
      : mgr_(clock_), inf_(client_, mgr_), ctx_{client_, inf_, mgr_, clock_, ev_} {
    if (!reg_.Start().ok()) std::abort();
    Create("", client_.Kind("", "v1", "namespaces"),
           {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", "ns"}}}});
    Create("", Kind("resourceflavors"),
           Obj("ResourceFlavor", {{"name", "default"}}, {{"spec", Json::object()}}));
    for (int i = 0; i < cqs; ++i) {
      std::string cq = "cq-" + std::to_string(i);
      Json spec = {{"namespaceSelector", Json::object()},
                   {"resourceGroups",
                    {{{"coveredResources", {"cpu"}},
                      {"flavors",
                       {{{"name", "default"},
                         {"resources", {{{"name", "cpu"}, {"nominalQuota", "10"}}}}}}}}}}};
      Create("", Kind("clusterqueues"), Obj("ClusterQueue", {{"name", cq}}, {{"spec", spec}}));
      Create("ns", Kind("localqueues"),
             Obj("LocalQueue", {{"name", "lq-" + std::to_string(i)}},
                 {{"spec", {{"clusterQueue", cq}}}}));
    }
    std::vector<std::pair<std::string, Json>> batch;
    for (int i = 0; i < pending && !distinct_priorities; ++i) {
      clock_.Advance(absl::Seconds(1));
      Create("ns", Kind("workloads"), WorkloadObj("wl-" + std::to_string(i), i % cqs, 0));
    }
    for (int i = 0; i < pending && distinct_priorities; ++i) {
      batch.emplace_back("ns", WorkloadObj("wl-" + std::to_string(i), i % cqs, pending - i));
      if (batch.size() == 5000 || i + 1 == pending) {
        for (const auto& r : client_.CreateMany(Kind("workloads"), std::move(batch))) {
          if (!r.ok()) std::abort();
        }
        batch.clear();
      }
    }
    qm_ = qm::AddQueueManager(ctx_, qm::QueueingConfig{});
    if (!mgr_.SyncAll().ok()) std::abort();
    mgr_.RunUntilIdle(100000000);
  }

  const batchd::api::KindDef& Kind(const char* plural) {
    return client_.Kind(kGroup, kVersion, plural);
  }
  static Json Obj(const char* kind, Json meta, Json rest) {
    Json o = {{"apiVersion", std::string(kGroup) + "/" + kVersion}, {"kind", kind}, {"metadata", meta}};
    o.update(rest);
    return o;
  }
  // Priority falls with the index, so queue order is index order.
  static Json WorkloadObj(const std::string& name, int cq, int priority) {
    Json container = {{"name", "c"}, {"image", "busybox"},
                      {"resources", {{"requests", {{"cpu", "1"}}}}}};
    return Obj("Workload", {{"name", name}},
               {{"spec",
                 {{"queueName", "lq-" + std::to_string(cq)},
                  {"priority", priority},
                  {"podSets",
                   {{{"name", "main"},
                     {"count", 1},
                     {"template", {{"spec", {{"containers", {container}}}}}}}}}}}});
  }
  void Create(const std::string& ns, const batchd::api::KindDef& k, Json obj) {
    if (!client_.Create(k, ns, std::move(obj)).ok()) std::abort();
  }
  void Annotate(const std::string& name, int64_t n) {
    Json patch = {{"metadata", {{"annotations", {{"bench", std::to_string(n)}}}}}};
    if (!client_.MergePatch(Kind("workloads"), "ns", name, patch).ok()) std::abort();
  }
  void Finish(const std::string& name) {
    auto wl = client_.Get(Kind("workloads"), "ns", name);
    if (!wl.ok()) std::abort();
    Json w = *wl;
    w["status"]["conditions"].push_back({{"type", "Finished"},
                                         {"status", "True"},
                                         {"reason", "Succeeded"},
                                         {"message", "done"},
                                         {"lastTransitionTime", "2026-01-01T00:00:00Z"}});
    if (!client_.UpdateStatus(Kind("workloads"), w).ok()) std::abort();
  }
  bool Admitted(const std::string& name) {
    auto wl = client_.Get(Kind("workloads"), "ns", name);
    return wl.ok() && (*wl)["status"].contains("admission");
  }
  int Run() { return mgr_.RunUntilIdle(100000000); }
  int64_t cycles() const { return qm_->cycles(); }

 private:
  batchd::FakeClock clock_;
  batchd::store::MemoryStore store_;
  batchd::registry::Registry reg_{store_, batchd::api::BuiltinScheme(), clock_};
  batchd::client::InProcessClient client_{reg_};
  batchd::reconcile::Manager mgr_;
  batchd::reconcile::InformerFactory inf_;
  batchd::reconcile::FakeEventRecorder ev_;
  batchd::reconcile::ControllerContext ctx_;
  std::shared_ptr<qm::QueueManager> qm_;
};

void BM_QuietCycle(benchmark::State& state) {
  const int pending = static_cast<int>(state.range(0));
  const int cqs = static_cast<int>(state.range(1));
  Env env(pending, cqs);
  // The last workload is pending (the first 10 per ClusterQueue are admitted).
  const std::string name = "wl-" + std::to_string(pending - 1);
  if (env.Admitted(name)) std::abort();
  int64_t n = 0, steps = 0, cycles0 = env.cycles();
  for (auto _ : state) {
    env.Annotate(name, ++n);
    steps += env.Run();
  }
  state.counters["reconciles_per_iter"] = static_cast<double>(steps) / static_cast<double>(n);
  state.counters["cycles_per_iter"] =
      static_cast<double>(env.cycles() - cycles0) / static_cast<double>(n);
}

void BM_AdmitOne(benchmark::State& state) {
  const int pending = static_cast<int>(state.range(0));
  const int cqs = static_cast<int>(state.range(1));
  Env env(pending, cqs, /*distinct_priorities=*/state.range(2) != 0);
  // Workloads are spread round-robin; wl-i is in cq i % cqs and the first
  // 10 of each ClusterQueue run. Finishing wl-i admits wl-(i + 10*cqs).
  int64_t next = 0, n = 0;
  for (auto _ : state) {
    if (next + 10 * cqs >= pending) {
      state.SkipWithError("ran out of pending workloads");
      break;
    }
    env.Finish("wl-" + std::to_string(next));
    env.Run();
    ++next;
    ++n;
  }
  if (n > 0 && !env.Admitted("wl-" + std::to_string(next - 1 + 10 * cqs))) {
    state.SkipWithError("the next workload was not admitted");
  }
}

// The admissions of one cycle written to a real SQLite store.
class SqliteEnv {
 public:
  SqliteEnv() : mgr_(clock_), inf_(*client_, mgr_), ctx_{*client_, inf_, mgr_, clock_, ev_} {
    if (!reg_->Start().ok()) std::abort();
    Create("", client_->Kind("", "v1", "namespaces"),
           {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", "ns"}}}});
    Create("", Kind("resourceflavors"),
           Env::Obj("ResourceFlavor", {{"name", "default"}}, {{"spec", Json::object()}}));
    Create("", Kind("clusterqueues"), Env::Obj("ClusterQueue", {{"name", "cq-0"}}, {{"spec", Spec(0)}}));
    Create("ns", Kind("localqueues"),
           Env::Obj("LocalQueue", {{"name", "lq-0"}}, {{"spec", {{"clusterQueue", "cq-0"}}}}));
    qm_ = qm::AddQueueManager(ctx_, qm::QueueingConfig{});
    if (!mgr_.SyncAll().ok()) std::abort();
    mgr_.RunUntilIdle(100000000);
  }
  ~SqliteEnv() {
    qm_.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  static Json Spec(int64_t cpu) {
    return {{"namespaceSelector", Json::object()},
            {"resourceGroups",
             {{{"coveredResources", {"cpu"}},
               {"flavors",
                {{{"name", "default"},
                  {"resources", {{{"name", "cpu"}, {"nominalQuota", std::to_string(cpu)}}}}}}}}}}};
  }
  const batchd::api::KindDef& Kind(const char* plural) {
    return client_->Kind(kGroup, kVersion, plural);
  }
  void Create(const std::string& ns, const batchd::api::KindDef& k, Json obj) {
    if (!client_->Create(k, ns, std::move(obj)).ok()) std::abort();
  }
  // `n` more pending Workloads (one store batch), synced by the manager.
  void AddPending(int n) {
    std::vector<std::pair<std::string, Json>> batch;
    for (int i = 0; i < n; ++i) {
      batch.emplace_back("ns", Env::WorkloadObj("wl-" + std::to_string(next_++), 0, 0));
    }
    for (const auto& r : client_->CreateMany(Kind("workloads"), std::move(batch))) {
      if (!r.ok()) std::abort();
    }
    mgr_.RunUntilIdle(100000000);
  }
  void SetQuota(int64_t cpu) {
    Json patch = {{"spec", Spec(cpu)}};
    if (!client_->MergePatch(Kind("clusterqueues"), "", "cq-0", patch).ok()) std::abort();
  }
  int Run() { return mgr_.RunUntilIdle(100000000); }
  int64_t Transactions() { return store_->Transactions(); }
  bool Admitted(int i) {
    auto wl = client_->Get(Kind("workloads"), "ns", "wl-" + std::to_string(i));
    return wl.ok() && (*wl)["status"].contains("admission");
  }

 private:
  static std::string TempDir() {
    std::string t = (std::filesystem::temp_directory_path() / "qm-bench-XXXXXX").string();
    if (mkdtemp(t.data()) == nullptr) std::abort();
    return t;
  }
  static std::unique_ptr<batchd::store::SqliteStore> OpenStore(const std::string& dir) {
    batchd::store::SqliteOptions o;
    o.path = dir + "/state.db";
    auto s = batchd::store::SqliteStore::Open(o);
    if (!s.ok()) std::abort();
    return *std::move(s);
  }
  std::string dir_ = TempDir();
  std::unique_ptr<batchd::store::SqliteStore> store_ = OpenStore(dir_);
  batchd::FakeClock clock_;
  std::unique_ptr<batchd::registry::Registry> reg_ =
      std::make_unique<batchd::registry::Registry>(*store_, batchd::api::BuiltinScheme(), clock_);
  std::unique_ptr<batchd::client::InProcessClient> client_ =
      std::make_unique<batchd::client::InProcessClient>(*reg_);
  batchd::reconcile::Manager mgr_;
  batchd::reconcile::InformerFactory inf_;
  batchd::reconcile::FakeEventRecorder ev_;
  batchd::reconcile::ControllerContext ctx_;
  std::shared_ptr<qm::QueueManager> qm_;
  int next_ = 0;
};

void BM_AdmitBurst(benchmark::State& state) {
  const int burst = static_cast<int>(state.range(0));
  SqliteEnv env;
  int64_t quota = 0, admitted = 0, txns = 0;
  for (auto _ : state) {
    state.PauseTiming();
    env.AddPending(burst);
    const int64_t t0 = env.Transactions();
    state.ResumeTiming();
    quota += burst;
    env.SetQuota(quota);
    env.Run();
    state.PauseTiming();
    txns += env.Transactions() - t0;
    admitted += burst;
    if (!env.Admitted(static_cast<int>(admitted - 1))) state.SkipWithError("not admitted");
    state.ResumeTiming();
  }
  state.counters["txns_per_admission"] = static_cast<double>(txns) / static_cast<double>(admitted);
  state.counters["admissions_per_s"] =
      benchmark::Counter(static_cast<double>(admitted), benchmark::Counter::kIsRate);
}

}  // namespace

BENCHMARK(BM_QuietCycle)
    ->ArgsProduct({{1000, 10000, 100000}, {10}})
    ->Unit(benchmark::kMicrosecond)
    ->Iterations(200);
BENCHMARK(BM_AdmitOne)
    ->ArgsProduct({{1000, 10000, 100000}, {10}, {1, 0}})
    ->Unit(benchmark::kMicrosecond)
    ->Iterations(200);

BENCHMARK(BM_AdmitBurst)
    ->Arg(100)
    ->Arg(1000)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(5);

BENCHMARK_MAIN();
