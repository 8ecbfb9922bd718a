// Admission core alone (DESIGN.md budget: >= 50,000 decisions/s, 100,000
// pending workloads in 1,000 ClusterQueues with per-decision cost growing no
// faster than log n; <= 2 KiB per pending workload).
//   BM_Decide/<pending>/<cqs>/<cohorts>/<fair>/<preempt>  RunCycle until every pending
//       workload is decided (admitted, or pending with a reason); about half
//       of the demand fits. items_per_second = decisions per second. <preempt>
//       = Kueue's perf-test policies (withinClusterQueue LowerPriority,
//       reclaimWithinCohort Any); 0 = no preemption.
//   BM_Enqueue/<pending>/<cqs>/<cohorts>        UpsertPending cost; counter
//       bytes_per_pending = heap growth (mallinfo2) per pending workload.
#include <benchmark/benchmark.h>
#include <malloc.h>

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "queueing/admission.h"

namespace {

namespace q = batchd::queueing;

constexpr int64_t kCpu = 1000;                  // 1 core in milli
constexpr int64_t kGi = 1073741824LL * 1000;    // 1Gi in milli

q::ClusterQueue MakeCq(int i, int cohorts, int64_t cpu_per_flavor, bool preempt) {
  q::ClusterQueue cq;
  cq.name = "cq-" + std::to_string(i);
  if (cohorts > 0) cq.cohort = "cohort-" + std::to_string(i % cohorts);
  q::ResourceGroup g;
  g.covered_resources = {"cpu", "memory"};
  for (const char* f : {"on-demand", "spot"}) {
    g.flavors.push_back({f, {{"cpu", {cpu_per_flavor * kCpu}}, {"memory", {cpu_per_flavor * 4 * kGi}}}});
  }
  cq.resource_groups.push_back(std::move(g));
  if (preempt) {  // Kueue's scheduler performance test policies
    cq.preemption.within_cluster_queue = q::PreemptionPolicy::kLowerPriority;
    cq.preemption.reclaim_within_cohort = q::PreemptionPolicy::kAny;
  }
  return cq;
}

std::vector<q::Workload> MakeWorkloads(int n, int cqs) {
  std::mt19937 rng(42);
  std::vector<q::Workload> out;
  out.reserve(n);
  for (int i = 0; i < n; ++i) {
    q::Workload w;
    w.namespace_ = "team-" + std::to_string(i % cqs);
    w.key = w.namespace_ + "/job-" + std::to_string(i);
    w.uid = "uid-" + std::to_string(i);
    w.local_queue = "lq";
    w.cluster_queue = "cq-" + std::to_string(i % cqs);
    w.priority = 0;
    w.creation = w.queue_order_time = absl::FromUnixSeconds(i);
    q::PodSet ps;
    int cores = 1 + static_cast<int>(rng() % 4);
    ps.count = 1;
    ps.requests = {{"cpu", cores * kCpu}, {"memory", cores * 2 * kGi}};
    w.pod_sets.push_back(std::move(ps));
    out.push_back(std::move(w));
  }
  return out;
}

std::unique_ptr<q::AdmissionCore> MakeCore(int cqs, int cohorts, int pending, bool fair,
                                           bool preempt) {
  q::Options o;
  o.fair_sharing = fair;
  o.check_invariants = false;
  auto core = std::make_unique<q::AdmissionCore>(o);
  core->UpsertResourceFlavor({"on-demand", {}, {}, {}});
  core->UpsertResourceFlavor({"spot", {}, {}, {}});
  // Mean demand is 2.5 cores per workload; two flavors hold about half of it.
  int64_t per_flavor = std::max<int64_t>(1, (pending * 5 / 4) / (2 * cqs) );
  for (int i = 0; i < cqs; ++i) core->UpsertClusterQueue(MakeCq(i, cohorts, per_flavor, preempt));
  return core;
}

void BM_Decide(benchmark::State& state) {
  const int pending = state.range(0), cqs = state.range(1), cohorts = state.range(2);
  const bool fair = state.range(3) != 0;
  const bool preempt = state.range(4) != 0;
  std::vector<q::Workload> wls = MakeWorkloads(pending, cqs);
  int64_t decisions = 0, admitted = 0, cycles = 0;
  for (auto _ : state) {
    state.PauseTiming();
    auto core = MakeCore(cqs, cohorts, pending, fair, preempt);
    for (const auto& w : wls) core->UpsertPending(w);
    core->ClusterQueueStatusOf("cq-0");  // builds the quota tree
    state.ResumeTiming();
    absl::Time now = absl::FromUnixSeconds(1);
    int64_t decided = 0;
    while (true) {
      std::vector<q::Decision> ds = core->RunCycle(now);
      ++cycles;
      if (ds.empty()) break;
      decided += static_cast<int64_t>(ds.size());
      for (const auto& d : ds) admitted += d.kind == q::Decision::Kind::kAdmit;
      now += absl::Seconds(1);
    }
    decisions += decided;
    state.PauseTiming();
    core.reset();
    state.ResumeTiming();
  }
  state.SetItemsProcessed(decisions);
  state.counters["admitted_per_iter"] =
      benchmark::Counter(static_cast<double>(admitted) / state.iterations());
  state.counters["cycles_per_iter"] =
      benchmark::Counter(static_cast<double>(cycles) / state.iterations());
}

void BM_Enqueue(benchmark::State& state) {
  const int pending = state.range(0), cqs = state.range(1), cohorts = state.range(2);
  std::vector<q::Workload> wls = MakeWorkloads(pending, cqs);
  double bytes = 0;
  for (auto _ : state) {
    state.PauseTiming();
    auto core = MakeCore(cqs, cohorts, pending, false, false);
    core->ClusterQueueStatusOf("cq-0");
    std::vector<q::Workload> copy = wls;  // moved in below: measure the core's own growth
    malloc_trim(0);
    size_t before = mallinfo2().uordblks;
    state.ResumeTiming();
    for (auto& w : copy) core->UpsertPending(std::move(w));
    state.PauseTiming();
    size_t after = mallinfo2().uordblks;
    bytes = static_cast<double>(after - before) / pending;
    copy.clear();
    core.reset();
    state.ResumeTiming();
  }
  state.SetItemsProcessed(state.iterations() * pending);
  state.counters["bytes_per_pending"] = bytes;
}

// Steady state: the cluster is full and the rest is pending; each step one
// admitted workload finishes (Remove) and a cycle runs, which requeues the
// cohort tree's inadmissible workloads and admits what now fits.
// items_per_second = finish+cycle steps per second.
void BM_SteadyState(benchmark::State& state) {
  const int pending = state.range(0), cqs = state.range(1), cohorts = state.range(2);
  std::vector<q::Workload> wls = MakeWorkloads(pending, cqs);
  auto core = MakeCore(cqs, cohorts, pending, false, false);
  for (const auto& w : wls) core->UpsertPending(w);
  std::vector<std::string> running;
  absl::Time now = absl::FromUnixSeconds(1);
  for (const auto& d : core->RunCycle(now)) {
    if (d.kind == q::Decision::Kind::kAdmit) running.push_back(d.key);
  }
  std::mt19937 rng(1);
  int64_t admitted = 0;
  for (auto _ : state) {
    if (running.empty()) break;
    size_t i = rng() % running.size();
    core->Remove(running[i]);
    running[i] = running.back();
    running.pop_back();
    now += absl::Seconds(1);
    for (const auto& d : core->RunCycle(now)) {
      if (d.kind == q::Decision::Kind::kAdmit) {
        running.push_back(d.key);
        ++admitted;
      }
    }
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["admitted_per_step"] =
      benchmark::Counter(static_cast<double>(admitted) / state.iterations());
}

}  // namespace

BENCHMARK(BM_SteadyState)
    ->Args({10000, 100, 10})
    ->Args({100000, 1000, 100})
    ->Args({100000, 10, 1})
    ->Iterations(2000)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Decide)
    ->Args({1000, 10, 1, 0, 0})
    ->Args({10000, 100, 10, 0, 0})
    ->Args({100000, 1000, 100, 0, 0})
    ->Args({100000, 10, 1, 0, 0})
    ->Args({1000, 10, 1, 0, 1})
    ->Args({10000, 100, 10, 0, 1})
    ->Args({100000, 1000, 100, 0, 1})
    ->Args({10000, 100, 10, 1, 0})
    ->Args({100000, 1000, 100, 1, 0})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_Enqueue)
    ->Args({1000, 10, 1})
    ->Args({10000, 100, 10})
    ->Args({100000, 1000, 100})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

BENCHMARK_MAIN();
