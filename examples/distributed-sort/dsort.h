// dsort: the pieces of the distributed sort example (examples/distributed-sort),
// shared by its five small programs — sort-gen, sort-map, sort-reduce,
// sort-verify and sort-local. Standard library only: the programs are built
// with the project but include none of its headers.
//
// Data layout under one directory (the JobSet's shared volume):
//   input/shard-<i>.u64   generator shard i: raw little-endian uint64 values
//   input/shard-<i>.meta  its count and checksum ("count N\nsum X\nxor Y\n")
//   parts/m<i>-r<j>.u64   what mapper i sends to reducer j
//   runs/run-<j>.u64      reducer j's sorted run (every value of run j is <=
//                         every value of run j+1)
//   runs/run-<j>.meta     its count and checksum
// Every file is written under a temporary name and renamed, so a retried
// pod never leaves half a file behind and a rerun overwrites whole files.
//
// Thread-safety: free functions and value types, no shared state.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace dsort {

// Value k (0-based) of the data set generated from `seed`: SplitMix64 of
// the k-th state, so a value does not depend on how the data is sharded.
uint64_t Generate(uint64_t seed, uint64_t k);

// The half-open range [first, last) of global indices in shard `i` of
// `shards` over `count` values.
struct Range {
  uint64_t first = 0, last = 0;
};
Range ShardRange(uint64_t count, uint64_t shards, uint64_t i);

// An order-independent checksum of a multiset of values: the count, and the
// sum and xor of a 64-bit mix of each value (a lost, duplicated or altered
// value changes the sum with probability ~1 - 2^-64).
struct Checksum {
  uint64_t count = 0, sum = 0, xored = 0;
  void Add(uint64_t v);
  void AddAll(const uint64_t* v, size_t n);
  void Merge(const Checksum& o);
  bool operator==(const Checksum& o) const {
    return count == o.count && sum == o.sum && xored == o.xored;
  }
  // "count=N checksum=<32 hex digits>".
  std::string ToString() const;
};

// File names under the data directory.
std::string ShardPath(const std::string& dir, uint64_t i);
std::string ShardMetaPath(const std::string& dir, uint64_t i);
std::string PartPath(const std::string& dir, uint64_t mapper, uint64_t reducer);
std::string RunPath(const std::string& dir, uint64_t reducer);
std::string RunMetaPath(const std::string& dir, uint64_t reducer);

// Errors are thrown as std::runtime_error with the file and errno text; the
// programs print them and exit 1.

// mkdir -p.
void MakeDirs(const std::string& path);
// The size of a file of uint64 values, in values.
uint64_t CountValues(const std::string& path);
// Appends the whole file's values to `out`.
void ReadValues(const std::string& path, std::vector<uint64_t>& out);
// Writes `n` values to `path` atomically (temporary file, then rename).
void WriteValues(const std::string& path, const uint64_t* v, size_t n);
void WriteChecksum(const std::string& path, const Checksum& c);
Checksum ReadChecksum(const std::string& path);

// Buffered writer of one uint64 stream to a temporary file, renamed to its
// path by Commit (never left half-written under the final name).
class ValueWriter {
 public:
  explicit ValueWriter(std::string path);
  ValueWriter(ValueWriter&& o) noexcept;
  ValueWriter(const ValueWriter&) = delete;
  ValueWriter& operator=(const ValueWriter&) = delete;
  ~ValueWriter();
  void Put(uint64_t v) {
    buf_[used_++] = v;
    if (used_ == kBuffer) Flush();
  }
  void Commit();

 private:
  static constexpr size_t kBuffer = 8192;  // 64 KiB per stream.
  void Flush();
  std::string path_, tmp_;
  int fd_ = -1;
  std::vector<uint64_t> buf_;
  size_t used_ = 0;
};

// Splitters by sampling: `per_shard` values of every input shard, read at
// positions that depend only on the shard's size, so every mapper computes
// the same splitters without talking to the others. Returns `reducers - 1`
// ascending splitters: reducer j takes the values v with
// splitters[j-1] <= v < splitters[j].
std::vector<uint64_t> SampleSplitters(const std::string& dir, uint64_t shards,
                                      uint64_t reducers, uint64_t per_shard);
// The splitters from an in-memory sample (sorted in place).
std::vector<uint64_t> SplittersFromSample(std::vector<uint64_t>& sample, uint64_t reducers);
// The reducer of `v`.
inline uint64_t ReducerOf(const std::vector<uint64_t>& splitters, uint64_t v) {
  // Binary search: the number of splitters <= v.
  size_t lo = 0, hi = splitters.size();
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (splitters[mid] <= v) lo = mid + 1; else hi = mid;
  }
  return lo;
}

// LSD radix sort of `v` (8-bit digits; passes whose digit is the same for
// every value are skipped). Uses a scratch buffer of v.size() values.
void RadixSort(std::vector<uint64_t>& v);

// Command-line flags "--name value"; the pod's JOB_COMPLETION_INDEX is the
// default of --index.
class Flags {
 public:
  Flags(int argc, char** argv);
  std::string Str(const std::string& name, const std::string& def = "") const;
  uint64_t U64(const std::string& name, uint64_t def) const;
  uint64_t U64Required(const std::string& name) const;
  bool Has(const std::string& name) const;
  // --index, else $JOB_COMPLETION_INDEX; throws when neither is set.
  uint64_t Index() const;

 private:
  std::vector<std::pair<std::string, std::string>> kv_;
};

// A program's main: parses the flags, runs `body`, prints an error (and
// `usage` for a flag error) to stderr. Returns the exit status: 0, 1 on
// failure, 2 on a usage error.
int RunProgram(int argc, char** argv, const char* usage, void (*body)(const Flags&));

// Seconds since an arbitrary start (steady clock), for the programs' own
// timing lines.
double NowSeconds();

}  // namespace dsort
