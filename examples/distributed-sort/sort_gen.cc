// sort-gen: writes shard --index (default $JOB_COMPLETION_INDEX) of --shards
// of the --count numbers generated from --seed (dsort::Generate), and its
// checksum; with --format text, the same numbers as decimal lines in
// <dir>/text/shard-<i>.txt instead (the input of GNU sort in the benchmark).
#include <charconv>
#include <stdexcept>
#include <string>
#include <cstdio>

#include "dsort.h"

namespace {

constexpr char kUsage[] =
    "--dir DIR --count N --shards G [--seed S] [--index I] [--format bin|text]";

void WriteText(const std::string& path, uint64_t seed, dsort::Range r) {
  const std::string tmp = path + ".tmp";
  std::FILE* f = std::fopen(tmp.c_str(), "w");
  if (f == nullptr) throw std::runtime_error("cannot create " + tmp);
  char line[24];
  for (uint64_t k = r.first; k < r.last; ++k) {
    auto [end, ec] = std::to_chars(line, line + sizeof line - 1, dsort::Generate(seed, k));
    *end++ = '\n';
    std::fwrite(line, 1, end - line, f);
  }
  if (std::fclose(f) != 0 || std::rename(tmp.c_str(), path.c_str()) != 0) {
    throw std::runtime_error("cannot write " + path);
  }
}

void Gen(const dsort::Flags& flags) {
  const std::string dir = flags.Str("dir");
  if (dir.empty()) throw std::runtime_error("missing --dir");
  const uint64_t count = flags.U64Required("count");
  const uint64_t shards = flags.U64Required("shards");
  const uint64_t seed = flags.U64("seed", 1);
  const uint64_t index = flags.Index();
  if (shards == 0 || index >= shards) throw std::runtime_error("--index must be < --shards");
  const dsort::Range r = dsort::ShardRange(count, shards, index);
  const double start = dsort::NowSeconds();
  if (flags.Str("format", "bin") == "text") {
    dsort::MakeDirs(dir + "/text");
    WriteText(dir + "/text/shard-" + std::to_string(index) + ".txt", seed, r);
  } else {
    dsort::MakeDirs(dir + "/input");
    dsort::Checksum sum;
    dsort::ValueWriter out(dsort::ShardPath(dir, index));
    for (uint64_t k = r.first; k < r.last; ++k) {
      const uint64_t v = dsort::Generate(seed, k);
      sum.Add(v);
      out.Put(v);
    }
    out.Commit();
    dsort::WriteChecksum(dsort::ShardMetaPath(dir, index), sum);
  }
  std::printf("sort-gen: shard %llu/%llu: %llu numbers in %.2f s\n",
              (unsigned long long)index, (unsigned long long)shards,
              (unsigned long long)(r.last - r.first), dsort::NowSeconds() - start);
}

}  // namespace

int main(int argc, char** argv) { return dsort::RunProgram(argc, argv, kUsage, Gen); }
