// Topology-aware placement alone (queueing/topology): one Place of a
// 1,000-pod request (1 cpu each) on 10,000 hosts in three levels, 10 blocks
// x 20 racks x 50 hosts of 8 cpu (a rack holds 400 pods, a block 8,000).
//   BM_Place/<algorithm>/<mode>/<fragmented>
//     algorithm: 0 BestFit, 1 LeastFreeCapacity, 2 Balanced (every mode of
//       the profile uses it; Balanced serves preferred only and hands the
//       other modes to BestFit)
//     mode: 0 required block, 1 preferred rack (no rack holds 1,000 pods,
//       so every strategy goes up to the block), 2 unconstrained
//     fragmented: 1 = every host already runs 0..8 one-cpu TAS pods
//       (uniform, fixed seed), so capacities differ from host to host
// The snapshot is built once; the timed loop is Place only.
#include <benchmark/benchmark.h>

#include <random>
#include <string>
#include <vector>

#include "queueing/topology/topology.h"

namespace {

namespace t = batchd::queueing::topology;

constexpr t::Amount kCore = 1000;

t::Snapshot MakeSnapshot(bool fragmented) {
  const std::vector<std::string> levels = {"block", "rack", "kubernetes.io/hostname"};
  std::vector<t::Node> nodes;
  nodes.reserve(10000);
  for (int b = 0; b < 10; ++b) {
    for (int r = 0; r < 20; ++r) {
      for (int h = 0; h < 50; ++h) {
        t::Node node;
        const std::string block = "b" + std::to_string(b), rack = block + "-r" + std::to_string(r);
        node.name = rack + "-h" + std::to_string(h);
        node.values = {block, rack, node.name};
        node.labels = {{levels[0], block}, {levels[1], rack}, {levels[2], node.name}};
        node.free = {{"cpu", 8 * kCore}, {t::kPodsResource, 110 * 1000}};
        nodes.push_back(std::move(node));
      }
    }
  }
  std::vector<std::vector<std::string>> leaves;
  for (const t::Node& n : nodes) leaves.push_back(n.values);
  t::Snapshot snapshot("bench", levels, std::move(nodes));
  if (fragmented) {
    std::mt19937 rng(1);
    t::Assignment used;
    for (const auto& values : leaves) {
      const int pods = static_cast<int>(rng() % 9);
      if (pods > 0) used.domains.push_back({values, pods});
    }
    snapshot.AddUsage(used, {{"cpu", kCore}}, +1);
  }
  return snapshot;
}

void BM_Place(benchmark::State& state) {
  const auto algorithm = static_cast<t::Algorithm>(state.range(0));
  const int mode = static_cast<int>(state.range(1));
  const t::Snapshot snapshot = MakeSnapshot(state.range(2) != 0);
  t::Request request;
  request.count = 1000;
  request.per_pod = {{"cpu", kCore}};
  request.mode = mode == 0   ? t::Mode::kRequired
                 : mode == 1 ? t::Mode::kPreferred
                             : t::Mode::kUnconstrained;
  request.level = mode == 0 ? 0 : 1;
  const t::Profile profile{algorithm, algorithm, algorithm};
  size_t leaves_used = 0;
  for (auto _ : state) {
    t::PlaceResult result = snapshot.Place(request, profile);
    if (!result.ok) state.SkipWithError(result.message.c_str());
    leaves_used = result.assignment.domains.size();
    benchmark::DoNotOptimize(result);
  }
  state.counters["leaves_used"] = static_cast<double>(leaves_used);
}

BENCHMARK(BM_Place)
    ->ArgsProduct({{0, 1, 2}, {0, 1, 2}, {0, 1}})
    ->ArgNames({"algorithm", "mode", "fragmented"})
    ->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
