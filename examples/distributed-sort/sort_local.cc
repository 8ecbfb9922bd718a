// sort-local: the benchmark's single-process baseline — the same
// partition-and-sort as the mappers and reducers, in one process and in
// memory: reads every input shard, picks the same sampled splitters,
// partitions into --reducers ranges, radix-sorts each and writes the same
// runs (so sort-verify checks it too). Prints the time of each phase.
#include <cstdio>
#include <stdexcept>
#include <vector>

#include "dsort.h"

namespace {

constexpr char kUsage[] = "--dir DIR --shards G --reducers R [--samples PER_SHARD]";

void Local(const dsort::Flags& flags) {
  const std::string dir = flags.Str("dir");
  if (dir.empty()) throw std::runtime_error("missing --dir");
  const uint64_t shards = flags.U64Required("shards");
  const uint64_t reducers = flags.U64Required("reducers");
  if (reducers == 0) throw std::runtime_error("--reducers must be > 0");
  const double t0 = dsort::NowSeconds();
  const std::vector<uint64_t> splitters =
      dsort::SampleSplitters(dir, shards, reducers, flags.U64("samples", 4096));
  std::vector<uint64_t> all;
  uint64_t total = 0;
  for (uint64_t s = 0; s < shards; ++s) total += dsort::CountValues(dsort::ShardPath(dir, s));
  all.reserve(total);
  for (uint64_t s = 0; s < shards; ++s) dsort::ReadValues(dsort::ShardPath(dir, s), all);
  const double t1 = dsort::NowSeconds();
  std::vector<std::vector<uint64_t>> parts(reducers);
  for (auto& p : parts) p.reserve(total / reducers + total / (8 * reducers) + 16);
  for (uint64_t v : all) parts[dsort::ReducerOf(splitters, v)].push_back(v);
  std::vector<uint64_t>().swap(all);
  const double t2 = dsort::NowSeconds();
  for (auto& p : parts) dsort::RadixSort(p);
  const double t3 = dsort::NowSeconds();
  dsort::MakeDirs(dir + "/runs");
  for (uint64_t j = 0; j < reducers; ++j) {
    dsort::Checksum sum;
    sum.AddAll(parts[j].data(), parts[j].size());
    dsort::WriteValues(dsort::RunPath(dir, j), parts[j].data(), parts[j].size());
    dsort::WriteChecksum(dsort::RunMetaPath(dir, j), sum);
  }
  const double t4 = dsort::NowSeconds();
  std::printf("sort-local: %llu numbers, %llu ranges: read %.2f s, partition %.2f s, "
              "sort %.2f s, write %.2f s, total %.2f s\n",
              (unsigned long long)total, (unsigned long long)reducers, t1 - t0, t2 - t1,
              t3 - t2, t4 - t3, t4 - t0);
}

}  // namespace

int main(int argc, char** argv) { return dsort::RunProgram(argc, argv, kUsage, Local); }
