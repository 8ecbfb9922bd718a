// sort-verify: checks that the runs, read in order, are sorted and hold
// exactly the generated numbers: their count and order-independent checksum
// equal the sum of the generator's shard checksums. Prints the verdict;
// exits 1 when the output is wrong.
#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <cstdio>
#include <vector>

#include "dsort.h"

namespace {

constexpr char kUsage[] = "--dir DIR --shards G --reducers R";

void Verify(const dsort::Flags& flags) {
  const std::string dir = flags.Str("dir");
  if (dir.empty()) throw std::runtime_error("missing --dir");
  const uint64_t shards = flags.U64Required("shards");
  const uint64_t reducers = flags.U64Required("reducers");
  const double start = dsort::NowSeconds();
  dsort::Checksum want;
  for (uint64_t s = 0; s < shards; ++s) want.Merge(dsort::ReadChecksum(dsort::ShardMetaPath(dir, s)));
  dsort::Checksum got;
  uint64_t prev = 0, disorder = 0, first_bad = 0;
  bool any = false;
  std::vector<uint64_t> run;
  for (uint64_t j = 0; j < reducers; ++j) {
    run.clear();
    dsort::ReadValues(dsort::RunPath(dir, j), run);
    dsort::Checksum run_sum;
    run_sum.AddAll(run.data(), run.size());
    if (!(run_sum == dsort::ReadChecksum(dsort::RunMetaPath(dir, j)))) {
      throw std::runtime_error("run " + std::to_string(j) + " does not match its own checksum");
    }
    for (uint64_t v : run) {
      if (any && v < prev) {
        if (disorder++ == 0) first_bad = got.count;
      }
      prev = v;
      any = true;
      got.count++;
    }
    got.sum += run_sum.sum;
    got.xored ^= run_sum.xored;
  }
  const double secs = dsort::NowSeconds() - start;
  std::printf("generated: %s\nsorted:    %s\n", want.ToString().c_str(), got.ToString().c_str());
  if (disorder > 0) {
    std::printf("FAILED: %llu numbers out of order (first at position %llu)\n",
                (unsigned long long)disorder, (unsigned long long)first_bad);
    std::exit(1);
  }
  if (!(got == want)) {
    std::printf("FAILED: the sorted runs do not hold the generated numbers\n");
    std::exit(1);
  }
  std::printf("OK: %llu numbers sorted in %llu runs, count and checksum match (verified in %.2f s)\n",
              (unsigned long long)got.count, (unsigned long long)reducers, secs);
}

}  // namespace

int main(int argc, char** argv) { return dsort::RunProgram(argc, argv, kUsage, Verify); }
