// sort-reduce: reducer --index (default $JOB_COMPLETION_INDEX) reads what
// every mapper wrote for it, sorts it (radix sort) and writes its sorted run
// and the run's checksum.
#include <cstdio>
#include <stdexcept>
#include <vector>

#include "dsort.h"

namespace {

constexpr char kUsage[] = "--dir DIR --mappers M [--index I]";

void Reduce(const dsort::Flags& flags) {
  const std::string dir = flags.Str("dir");
  if (dir.empty()) throw std::runtime_error("missing --dir");
  const uint64_t mappers = flags.U64Required("mappers");
  const uint64_t index = flags.Index();
  const double start = dsort::NowSeconds();
  uint64_t total = 0;
  for (uint64_t m = 0; m < mappers; ++m) total += dsort::CountValues(dsort::PartPath(dir, m, index));
  std::vector<uint64_t> v;
  v.reserve(total);
  for (uint64_t m = 0; m < mappers; ++m) dsort::ReadValues(dsort::PartPath(dir, m, index), v);
  const double read = dsort::NowSeconds();
  dsort::RadixSort(v);
  const double sorted = dsort::NowSeconds();
  dsort::Checksum sum;
  sum.AddAll(v.data(), v.size());
  dsort::MakeDirs(dir + "/runs");
  dsort::WriteValues(dsort::RunPath(dir, index), v.data(), v.size());
  dsort::WriteChecksum(dsort::RunMetaPath(dir, index), sum);
  std::printf("sort-reduce: reducer %llu: %llu numbers (read %.2f s, sort %.2f s, write %.2f s)\n",
              (unsigned long long)index, (unsigned long long)v.size(), read - start,
              sorted - read, dsort::NowSeconds() - sorted);
}

}  // namespace

int main(int argc, char** argv) { return dsort::RunProgram(argc, argv, kUsage, Reduce); }
