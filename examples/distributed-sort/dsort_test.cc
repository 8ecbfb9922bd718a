#include "dsort.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace dsort {
namespace {

class TempDir {
 public:
  TempDir() {
    std::string tmpl = ::testing::TempDir() + "dsort_test.XXXXXX";
    path_ = ::mkdtemp(tmpl.data());
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

TEST(RadixSortTest, SortsLikeStdSort) {
  struct Case {
    std::string name;
    std::vector<uint64_t> in;
  };
  std::mt19937_64 rng(42);
  std::vector<uint64_t> random(10000), narrow(10000), mixed;
  for (auto& v : random) v = rng();
  for (auto& v : narrow) v = 0x1234567800000000ULL + (rng() % 1000);  // Only low digits differ.
  mixed = {UINT64_MAX, 0, 1, UINT64_MAX, 256, 255, 1ULL << 63, 0};
  const std::vector<Case> cases = {
      {"empty", {}},
      {"one", {7}},
      {"all equal (every pass skipped)", std::vector<uint64_t>(100, 0xABCDEF)},
      {"random", random},
      {"narrow range", narrow},
      {"extremes", mixed},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    std::vector<uint64_t> got = c.in, want = c.in;
    RadixSort(got);
    std::sort(want.begin(), want.end());
    EXPECT_EQ(got, want);
  }
}

TEST(ShardRangeTest, ShardsCoverEveryIndexOnce) {
  for (uint64_t count : {0ULL, 1ULL, 7ULL, 100ULL, 1000003ULL}) {
    for (uint64_t shards : {1ULL, 2ULL, 3ULL, 8ULL}) {
      uint64_t next = 0;
      for (uint64_t i = 0; i < shards; ++i) {
        Range r = ShardRange(count, shards, i);
        EXPECT_EQ(r.first, next);
        EXPECT_LE(r.first, r.last);
        next = r.last;
      }
      EXPECT_EQ(next, count);
    }
  }
}

TEST(GenerateTest, DeterministicAndSeedDependent) {
  EXPECT_EQ(Generate(1, 5), Generate(1, 5));
  EXPECT_NE(Generate(1, 5), Generate(2, 5));
  EXPECT_NE(Generate(1, 5), Generate(1, 6));
}

TEST(ChecksumTest, OrderIndependentButSensitiveToContent) {
  std::vector<uint64_t> v = {1, 2, 3, 4, 5};
  Checksum a, b, c, d;
  a.AddAll(v.data(), v.size());
  std::reverse(v.begin(), v.end());
  b.AddAll(v.data(), v.size());
  EXPECT_EQ(a, b);
  v[0] = 6;  // Altered value.
  c.AddAll(v.data(), v.size());
  EXPECT_FALSE(a == c);
  v = {1, 2, 3, 4, 4};  // 5 replaced by a duplicate.
  d.AddAll(v.data(), v.size());
  EXPECT_FALSE(a == d);
  Checksum m;
  Checksum first, second;
  first.AddAll(v.data(), 2);
  second.AddAll(v.data() + 2, 3);
  m.Merge(first);
  m.Merge(second);
  EXPECT_EQ(m, d);
}

TEST(SplittersTest, QuantilesAndReducerOf) {
  std::vector<uint64_t> sample;
  for (uint64_t i = 100; i > 0; --i) sample.push_back(i * 10);  // 10..1000, unsorted.
  std::vector<uint64_t> s = SplittersFromSample(sample, 4);
  EXPECT_EQ(s, (std::vector<uint64_t>{260, 510, 760}));
  EXPECT_EQ(ReducerOf(s, 0), 0u);
  EXPECT_EQ(ReducerOf(s, 259), 0u);
  EXPECT_EQ(ReducerOf(s, 260), 1u);  // A splitter starts its reducer's range.
  EXPECT_EQ(ReducerOf(s, 759), 2u);
  EXPECT_EQ(ReducerOf(s, UINT64_MAX), 3u);
  std::vector<uint64_t> empty;
  EXPECT_EQ(SplittersFromSample(empty, 3).size(), 2u);
  EXPECT_EQ(SplittersFromSample(empty, 1).size(), 0u);
}

TEST(FilesTest, ValuesAndChecksumsRoundTrip) {
  TempDir dir;
  const std::string path = dir.path() + "/v.u64";
  std::vector<uint64_t> v = {3, 1, UINT64_MAX};
  WriteValues(path, v.data(), v.size());
  EXPECT_EQ(CountValues(path), 3u);
  std::vector<uint64_t> got = {9};
  ReadValues(path, got);
  EXPECT_EQ(got, (std::vector<uint64_t>{9, 3, 1, UINT64_MAX}));
  Checksum c;
  c.AddAll(v.data(), v.size());
  WriteChecksum(path + ".meta", c);
  EXPECT_EQ(ReadChecksum(path + ".meta"), c);
  EXPECT_THROW(ReadChecksum(dir.path() + "/missing"), std::runtime_error);
}

TEST(FilesTest, UncommittedWriterLeavesNothing) {
  TempDir dir;
  {
    ValueWriter w(dir.path() + "/a.u64");
    for (uint64_t i = 0; i < 20000; ++i) w.Put(i);  // Past one buffer.
  }
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
  ValueWriter w(dir.path() + "/b.u64");
  for (uint64_t i = 0; i < 20000; ++i) w.Put(i);
  w.Commit();
  std::vector<uint64_t> got;
  ReadValues(dir.path() + "/b.u64", got);
  ASSERT_EQ(got.size(), 20000u);
  EXPECT_EQ(got[19999], 19999u);
}

// The sampled splitters are the same however many times they are computed
// (every mapper computes its own) and balance uniform data.
TEST(SampleSplittersTest, DeterministicAndBalanced) {
  TempDir dir;
  MakeDirs(dir.path() + "/input");
  const uint64_t count = 200000, shards = 3;
  std::vector<uint64_t> all;
  for (uint64_t s = 0; s < shards; ++s) {
    Range r = ShardRange(count, shards, s);
    std::vector<uint64_t> v;
    for (uint64_t k = r.first; k < r.last; ++k) v.push_back(Generate(7, k));
    WriteValues(ShardPath(dir.path(), s), v.data(), v.size());
    all.insert(all.end(), v.begin(), v.end());
  }
  std::vector<uint64_t> a = SampleSplitters(dir.path(), shards, 4, 1024);
  EXPECT_EQ(a, SampleSplitters(dir.path(), shards, 4, 1024));
  ASSERT_EQ(a.size(), 3u);
  EXPECT_TRUE(std::is_sorted(a.begin(), a.end()));
  std::vector<uint64_t> per(4, 0);
  for (uint64_t v : all) ++per[ReducerOf(a, v)];
  for (uint64_t n : per) {
    EXPECT_GT(n, count / 4 * 8 / 10);  // Within 20% of a quarter.
    EXPECT_LT(n, count / 4 * 12 / 10);
  }
}

TEST(FlagsTest, ParsesAndDefaultsIndexFromEnvironment) {
  const char* argv[] = {"prog", "--dir", "/d", "--count=5", "--bad", "x"};
  Flags f(6, const_cast<char**>(argv));
  EXPECT_EQ(f.Str("dir"), "/d");
  EXPECT_EQ(f.U64("count", 0), 5u);
  EXPECT_EQ(f.U64("missing", 9), 9u);
  EXPECT_THROW(f.U64("bad", 0), std::runtime_error);
  ::setenv("JOB_COMPLETION_INDEX", "3", 1);
  EXPECT_EQ(f.Index(), 3u);
  ::unsetenv("JOB_COMPLETION_INDEX");
  EXPECT_THROW(f.Index(), std::runtime_error);
  const char* dangling[] = {"prog", "--dir"};
  EXPECT_THROW(Flags(2, const_cast<char**>(dangling)), std::runtime_error);
}

}  // namespace
}  // namespace dsort
