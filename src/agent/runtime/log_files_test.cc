#include "agent/runtime/log_files.h"

#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace batchd::agent {
namespace {

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

int64_t SizeOf(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 ? st.st_size : -1;
}

class LogFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/batchd-logs-XXXXXX";
    dir_ = mkdtemp(tmpl);
    path_ = dir_ + "/c.0.log";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  // Oldest first: every file's content, concatenated.
  std::string All() const {
    std::vector<std::string> rotated = RotatedLogFiles(path_);
    std::string out;
    for (auto it = rotated.rbegin(); it != rotated.rend(); ++it) out += Slurp(*it);
    return out + Slurp(path_);
  }
  std::string dir_, path_;
};

TEST_F(LogFilesTest, RotatesAtWholeLinesAndKeepsEveryByteWhileFilesLast) {
  RotatingLog log(path_, {.max_bytes = 1024, .max_files = 5});
  std::string written;
  for (int i = 0; written.size() < 3000; ++i) {
    std::string line = absl::StrCat("line ", i, " ", std::string(i % 37, 'x'), "\n");
    written += line;
    ASSERT_TRUE(log.Append(line).ok());
  }
  EXPECT_GE(log.rotations(), 2);
  ASSERT_LE(log.rotations(), 4);
  EXPECT_EQ(RotatedLogFiles(path_).size(), static_cast<size_t>(log.rotations()));
  EXPECT_EQ(All(), written);  // nothing lost, nothing twice, in order
  for (const std::string& p : RotatedLogFiles(path_)) {
    EXPECT_LE(SizeOf(p), 1024);
    const std::string content = Slurp(p);
    EXPECT_EQ(content.back(), '\n') << p << " ends inside a line";
  }
  EXPECT_EQ(LogBytes(path_), static_cast<int64_t>(written.size()));
}

TEST_F(LogFilesTest, KeepsAtMostMaxFilesOfMaxBytes) {
  RotatingLog log(path_, {.max_bytes = 2048, .max_files = 3});
  const std::string chunk(100, 'a');
  for (int i = 0; i < 1000; ++i) ASSERT_TRUE(log.Append(chunk + "\n").ok());
  EXPECT_EQ(RotatedLogFiles(path_).size(), 2u);
  EXPECT_FALSE(std::filesystem::exists(path_ + ".3"));
  EXPECT_LE(LogBytes(path_), 3 * 2048);
  // The newest lines are kept: the last line written ends the current file.
  const std::string current = Slurp(path_);
  EXPECT_EQ(current.substr(current.size() - 101), chunk + "\n");
}

TEST_F(LogFilesTest, CutsALineLongerThanAFile) {
  RotatingLog log(path_, {.max_bytes = 1024, .max_files = 4});
  const std::string huge(2500, 'z');
  ASSERT_TRUE(log.Append(huge).ok());
  EXPECT_EQ(All(), huge);
  EXPECT_EQ(SizeOf(path_ + ".2"), 1024);
  EXPECT_EQ(SizeOf(path_ + ".1"), 1024);
  EXPECT_EQ(SizeOf(path_), 2500 - 2048);
}

TEST_F(LogFilesTest, ContinuesAnExistingFileAndRemoves) {
  {
    RotatingLog log(path_, {.max_bytes = 1024, .max_files = 2});
    ASSERT_TRUE(log.Append(std::string(1000, 'a') + "\n").ok());
  }
  RotatingLog again(path_, {.max_bytes = 1024, .max_files = 2});
  ASSERT_TRUE(again.Append("b\nc\n").ok());  // 1001 + 4 > 1024? no: fits
  EXPECT_EQ(again.rotations(), 0);
  ASSERT_TRUE(again.Append(std::string(30, 'd') + "\n").ok());
  EXPECT_EQ(again.rotations(), 1);
  EXPECT_EQ(Slurp(path_), std::string(30, 'd') + "\n");
  RemoveLogFiles(path_);
  EXPECT_FALSE(std::filesystem::exists(path_));
  EXPECT_TRUE(RotatedLogFiles(path_).empty());
  EXPECT_EQ(LogBytes(path_), 0);
}

TEST_F(LogFilesTest, SettingsBelowTheMinimumAreRaised) {
  RotatingLog log(path_, {.max_bytes = 1, .max_files = 0});
  ASSERT_TRUE(log.Append(std::string(kMinLogMaxBytes, 'q')).ok());
  EXPECT_EQ(log.rotations(), 0);
  ASSERT_TRUE(log.Append("r").ok());
  EXPECT_EQ(log.rotations(), 1);
  EXPECT_EQ(RotatedLogFiles(path_).size(), static_cast<size_t>(kMinLogMaxFiles - 1));
}

}  // namespace
}  // namespace batchd::agent
