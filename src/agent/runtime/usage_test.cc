#include "agent/runtime/usage.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

namespace batchd::agent {
namespace {

namespace fs = std::filesystem;

class UsageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / ("usage-" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  void Write(const std::string& rel, const std::string& text) {
    fs::path p = dir_ / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
  }
  fs::path dir_;
};

int64_t Hz() { return sysconf(_SC_CLK_TCK); }

TEST_F(UsageTest, CgroupCpuAndWorkingSet) {
  Write("cg/cpu.stat", "usage_usec 2500000\nuser_usec 2000000\nsystem_usec 500000\n");
  Write("cg/memory.current", "10485760\n");
  Write("cg/memory.stat", "anon 4096\nfile 8192\ninactive_file 2097152\nactive_file 1\n");
  Usage u = ReadCgroupUsage((dir_ / "cg").string());
  EXPECT_EQ(u.cpu_usec, 2500000);
  EXPECT_EQ(u.memory_bytes, 10485760 - 2097152);
}

TEST_F(UsageTest, CgroupWithoutMemoryControllerLeavesMemoryUnknown) {
  Write("cg/cpu.stat", "usage_usec 7\n");
  Usage u = ReadCgroupUsage((dir_ / "cg").string());
  EXPECT_EQ(u.cpu_usec, 7);
  EXPECT_EQ(u.memory_bytes, -1);
  Usage none = ReadCgroupUsage((dir_ / "missing").string());
  EXPECT_EQ(none.cpu_usec, -1);
  EXPECT_EQ(none.memory_bytes, -1);
}

TEST_F(UsageTest, ProcessTimesIncludeReapedChildrenAndResidentSet) {
  // Field 22 (start time) is 555; utime 100, stime 50, cutime 30, cstime 20.
  std::string stat = "42 (my (odd) name) S 1 42 42 0 -1 4194560 100 0 0 0 100 50 30 20 20 0 1 0 555 "
                     "1000 10 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0\n";
  Write("proc/42/stat", stat);
  Write("proc/42/statm", "1000 25 10 1 0 100 0\n");
  Usage u = ReadProcessUsage((dir_ / "proc").string(), 42, 555);
  EXPECT_EQ(u.cpu_usec, 200 * 1000000 / Hz());
  EXPECT_EQ(u.memory_bytes, 25 * sysconf(_SC_PAGESIZE));
  // Another process now has the pid: nothing is reported for it.
  Usage reused = ReadProcessUsage((dir_ / "proc").string(), 42, 556);
  EXPECT_EQ(reused.cpu_usec, -1);
  EXPECT_EQ(reused.memory_bytes, -1);
  Usage gone = ReadProcessUsage((dir_ / "proc").string(), 43, 0);
  EXPECT_EQ(gone.cpu_usec, -1);
}

TEST_F(UsageTest, ThisProcessIsReadable) {
  Usage u = ReadProcessUsage("/proc", getpid(), 0);
  EXPECT_GE(u.cpu_usec, 0);
  EXPECT_GT(u.memory_bytes, 0);
}

TEST_F(UsageTest, NodeBusyTimeAndMemory) {
  // user nice system idle iowait irq softirq steal
  Write("proc/stat", "cpu  100 10 40 5000 300 5 5 2 0 0\ncpu0 1 2 3 4 5 6 7 8 0 0\n");
  Write("proc/meminfo", "MemTotal:       16000 kB\nMemFree:         1000 kB\nMemAvailable:    6000 kB\n");
  Usage u = ReadNodeUsage((dir_ / "proc").string());
  EXPECT_EQ(u.cpu_usec, (100 + 10 + 40 + 5 + 5 + 2) * 1000000 / Hz());
  EXPECT_EQ(u.memory_bytes, 10000 * 1024);
}

TEST_F(UsageTest, MergePrefersTheCgroup) {
  Usage cg{.cpu_usec = 5, .memory_bytes = -1};
  Usage pr{.cpu_usec = 3, .memory_bytes = 100};
  Usage m = MergeUsage(cg, pr);
  EXPECT_EQ(m.cpu_usec, 5);
  EXPECT_EQ(m.memory_bytes, 100);
}

}  // namespace
}  // namespace batchd::agent
