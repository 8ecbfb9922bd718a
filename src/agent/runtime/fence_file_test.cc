#include "agent/runtime/fence_file.h"

#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include "gtest/gtest.h"

namespace batchd::agent {
namespace {

TEST(FenceFile, WriteReadRemove) {
  char tmpl[] = "/tmp/batchd-fence-XXXXXX";
  const std::string dir = mkdtemp(tmpl);
  const absl::Time now = absl::FromUnixSeconds(1000);  // any frame: only differences count
  EXPECT_EQ(ReadFenceDeadline(dir, now), absl::InfiniteFuture());
  ASSERT_TRUE(WriteFenceDeadline(dir, absl::Seconds(30)).ok());
  const absl::Time got = ReadFenceDeadline(dir, now);
  // Written a moment ago: between 29 and 30 s from now.
  EXPECT_LE(got, now + absl::Seconds(30));
  EXPECT_GT(got, now + absl::Seconds(29));
  ASSERT_TRUE(WriteFenceDeadline(dir, -absl::Seconds(5)).ok());  // already due
  EXPECT_LE(ReadFenceDeadline(dir, now), now);
  EXPECT_FALSE(std::filesystem::exists(dir + "/fence.tmp"));
  ASSERT_TRUE(WriteFenceDeadline(dir, absl::InfiniteDuration()).ok());
  EXPECT_EQ(ReadFenceDeadline(dir, now), absl::InfiniteFuture());
  EXPECT_TRUE(WriteFenceDeadline(dir, absl::InfiniteDuration()).ok());  // twice: fine
  std::ofstream(dir + "/fence") << "garbage\n";
  EXPECT_EQ(ReadFenceDeadline(dir, now), absl::InfiniteFuture());
  EXPECT_EQ(WriteFenceDeadline(dir + "/missing", absl::Seconds(1)).code(),
            absl::StatusCode::kNotFound);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace batchd::agent
