// sort-map: mapper --index (default $JOB_COMPLETION_INDEX) of --mappers reads
// the input shards i with i % mappers == index, and writes one file per
// reducer: the values of reducer j's key range (range partitioning by
// splitters sampled from every shard, the same in every mapper).
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <vector>

#include "dsort.h"

namespace {

constexpr char kUsage[] =
    "--dir DIR --shards G --mappers M --reducers R [--index I] [--samples PER_SHARD]";

// Streams shard `path` through `fn(values, n)` in chunks of 1 Mi values.
template <typename Fn>
void ForEachChunk(const std::string& path, Fn fn) {
  std::vector<uint64_t> buf(1 << 20);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error("cannot open " + path);
  size_t carry = 0;  // Bytes of a partial value at the end of the last read.
  while (true) {
    char* base = reinterpret_cast<char*>(buf.data());
    const ssize_t r = ::read(fd, base + carry, buf.size() * 8 - carry);
    if (r < 0) {
      ::close(fd);
      throw std::runtime_error("cannot read " + path);
    }
    const size_t bytes = carry + static_cast<size_t>(r);
    if (r == 0) break;
    fn(buf.data(), bytes / 8);
    carry = bytes % 8;
    if (carry != 0) std::copy(base + bytes - carry, base + bytes, base);
  }
  ::close(fd);
  if (carry != 0) throw std::runtime_error(path + ": size is not a multiple of 8 bytes");
}

void Map(const dsort::Flags& flags) {
  const std::string dir = flags.Str("dir");
  if (dir.empty()) throw std::runtime_error("missing --dir");
  const uint64_t shards = flags.U64Required("shards");
  const uint64_t mappers = flags.U64Required("mappers");
  const uint64_t reducers = flags.U64Required("reducers");
  const uint64_t index = flags.Index();
  if (mappers == 0 || index >= mappers) throw std::runtime_error("--index must be < --mappers");
  if (reducers == 0) throw std::runtime_error("--reducers must be > 0");
  const double start = dsort::NowSeconds();
  const std::vector<uint64_t> splitters =
      dsort::SampleSplitters(dir, shards, reducers, flags.U64("samples", 4096));
  dsort::MakeDirs(dir + "/parts");
  std::vector<dsort::ValueWriter> out;
  for (uint64_t j = 0; j < reducers; ++j) out.emplace_back(dsort::PartPath(dir, index, j));
  uint64_t n = 0;
  for (uint64_t s = index; s < shards; s += mappers) {
    ForEachChunk(dsort::ShardPath(dir, s), [&](const uint64_t* v, size_t count) {
      for (size_t i = 0; i < count; ++i) out[dsort::ReducerOf(splitters, v[i])].Put(v[i]);
      n += count;
    });
  }
  for (dsort::ValueWriter& w : out) w.Commit();
  std::printf("sort-map: mapper %llu/%llu: %llu numbers into %llu partitions in %.2f s\n",
              (unsigned long long)index, (unsigned long long)mappers, (unsigned long long)n,
              (unsigned long long)reducers, dsort::NowSeconds() - start);
}

}  // namespace

int main(int argc, char** argv) { return dsort::RunProgram(argc, argv, kUsage, Map); }
