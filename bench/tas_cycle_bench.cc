// One admission cycle with topology-aware scheduling (issue #10; Kueue
// issue #13148 reports cycles of up to 40 s in this shape):
//   BM_TasPreemptionCycle/<nodes>/<candidates>  a cluster of <nodes> 8-cpu
//       nodes in blocks of 10 racks of 20 hosts, 7 of every host's 8 cpus
//       taken by <candidates> admitted low-priority TAS workloads (the
//       preemption candidates, packed host after host), and one pending high-priority
//       workload that needs a whole rack (160 pods, podset-required-topology
//       rack) in a ClusterQueue with withinClusterQueue: LowerPriority. One
//       iteration = one RunCycle, which must find the victims that free a
//       rack (time per cycle; counter victims).
//   BM_TasAdmitCycle/<nodes>/<pending>  an empty cluster and <pending>
//       pending 8-pod workloads with podset-required-topology rack: one
//       cycle admits what fits (items_per_second = admissions per second).
// Setup (building the core, admitting the candidates) is not timed.
#include <benchmark/benchmark.h>

#include <memory>
#include <string>
#include <vector>

#include "queueing/admission.h"

namespace {

namespace q = batchd::queueing;

constexpr int64_t kCpu = 1000;
constexpr int kHostsPerRack = 20;
constexpr int kRacksPerBlock = 10;
constexpr int kCpusPerNode = 8;
constexpr char kBlock[] = "topology.batchd.io/block";
constexpr char kRack[] = "topology.batchd.io/rack";
constexpr char kHost[] = "kubernetes.io/hostname";

struct Cluster {
  std::unique_ptr<q::AdmissionCore> core;
  std::vector<q::TopologyNode> nodes;
};

Cluster MakeCluster(int nodes, bool preempt) {
  Cluster c;
  q::Options o;
  o.check_invariants = false;
  c.core = std::make_unique<q::AdmissionCore>(o);
  c.core->UpsertTopology({"default", {kBlock, kRack, kHost}});
  q::ResourceFlavor f;
  f.name = "tas";
  f.topology_name = "default";
  c.core->UpsertResourceFlavor(f);
  q::ClusterQueue cq;
  cq.name = "cq";
  q::ResourceGroup g;
  g.covered_resources = {"cpu"};
  g.flavors.push_back({"tas", {{"cpu", {int64_t{nodes} * kCpusPerNode * kCpu}}}});
  cq.resource_groups.push_back(std::move(g));
  if (preempt) cq.preemption.within_cluster_queue = q::PreemptionPolicy::kLowerPriority;
  c.core->UpsertClusterQueue(cq);
  for (int i = 0; i < nodes; ++i) {
    int rack = i / kHostsPerRack, block = rack / kRacksPerBlock;
    q::TopologyNode n;
    n.name = "n" + std::to_string(i);
    n.labels = {{kBlock, "b" + std::to_string(block)},
                {kRack, "b" + std::to_string(block) + "-r" + std::to_string(rack)},
                {kHost, n.name}};
    n.free = {{"cpu", kCpusPerNode * kCpu}, {"pods", 110 * kCpu}};
    c.nodes.push_back(n);
    c.core->UpsertTopologyNode(std::move(n));
  }
  return c;
}

q::Workload RequiredRack(const std::string& name, int32_t pods, int32_t priority) {
  q::Workload w;
  w.key = "ns/" + name;
  w.uid = name;
  w.namespace_ = "ns";
  w.local_queue = "lq";
  w.cluster_queue = "cq";
  w.priority = priority;
  q::PodSet ps;
  ps.count = pods;
  ps.requests = {{"cpu", kCpu}};
  ps.topology = q::TopologyRequest{q::TopologyMode::kRequired, kRack, {}};
  w.pod_sets.push_back(std::move(ps));
  return w;
}

// `candidates` admitted workloads packed host after host, leaving one cpu
// free on every host: no rack has room for a rack-sized workload.
void AdmitCandidates(Cluster& c, int candidates) {
  constexpr int kUsable = kCpusPerNode - 1;
  const int64_t slots = static_cast<int64_t>(c.nodes.size()) * kUsable;
  const int32_t pods = static_cast<int32_t>(slots / candidates);
  int64_t next = 0;  // next slot, host-major over the usable ones
  for (int i = 0; i < candidates; ++i) {
    q::Workload w = RequiredRack("low-" + std::to_string(i), pods, 0);
    w.pod_sets[0].topology->mode = q::TopologyMode::kUnconstrained;
    w.creation = w.queue_order_time = absl::FromUnixSeconds(i);
    q::TopologyAssignment ta;
    ta.levels = {kBlock, kRack, kHost};
    for (int32_t left = pods; left > 0;) {
      const q::TopologyNode& n = c.nodes[next / kUsable];
      int32_t here = std::min<int32_t>(left, kUsable - static_cast<int32_t>(next % kUsable));
      ta.domains.push_back({{n.labels.at(kBlock), n.labels.at(kRack), n.name}, here});
      left -= here;
      next += here;
    }
    q::Admission a;
    a.cluster_queue = "cq";
    a.pod_sets.push_back({"main", {{"cpu", "tas"}}, {{"cpu", pods * kCpu}}, pods, std::move(ta)});
    c.core->SetAdmitted(std::move(w), std::move(a));
  }
}

void BM_TasPreemptionCycle(benchmark::State& state) {
  const int nodes = static_cast<int>(state.range(0));
  const int candidates = static_cast<int>(state.range(1));
  int64_t victims = 0;
  for (auto _ : state) {
    state.PauseTiming();
    Cluster c = MakeCluster(nodes, /*preempt=*/true);
    AdmitCandidates(c, candidates);
    c.core->RunCycle(absl::FromUnixSeconds(1));  // builds the snapshots
    c.core->UpsertPending(RequiredRack("high", kHostsPerRack * kCpusPerNode, 100));
    state.ResumeTiming();
    std::vector<q::Decision> ds = c.core->RunCycle(absl::FromUnixSeconds(2));
    state.PauseTiming();
    victims = 0;
    for (const q::Decision& d : ds) victims += d.kind == q::Decision::Kind::kPreempt;
    if (victims == 0) state.SkipWithError("no victims found");
    c.core.reset();
    state.ResumeTiming();
  }
  state.counters["victims"] = static_cast<double>(victims);
}
BENCHMARK(BM_TasPreemptionCycle)->Args({2000, 700})->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_TasAdmitCycle(benchmark::State& state) {
  const int nodes = static_cast<int>(state.range(0));
  const int pending = static_cast<int>(state.range(1));
  int64_t admitted = 0;
  for (auto _ : state) {
    state.PauseTiming();
    Cluster c = MakeCluster(nodes, /*preempt=*/false);
    for (int i = 0; i < pending; ++i) {
      q::Workload w = RequiredRack("w-" + std::to_string(i), 8, 0);
      w.creation = w.queue_order_time = absl::FromUnixSeconds(i);
      c.core->UpsertPending(std::move(w));
    }
    state.ResumeTiming();
    std::vector<q::Decision> ds = c.core->RunCycle(absl::FromUnixSeconds(1));
    state.PauseTiming();
    admitted = 0;
    for (const q::Decision& d : ds) admitted += d.kind == q::Decision::Kind::kAdmit;
    state.SetItemsProcessed(state.items_processed() + admitted);
    c.core.reset();
    state.ResumeTiming();
  }
  state.counters["admitted"] = static_cast<double>(admitted);
}
BENCHMARK(BM_TasAdmitCycle)->Args({2000, 1000})->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
