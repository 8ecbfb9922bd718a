#include "agent/runtime/proc_identity.h"

#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "gtest/gtest.h"

namespace batchd::agent {
namespace {

TEST(ProcIdentityTest, ParsesStartTicksPastAnOddCommand) {
  // Field 22 counted after the last ')': a command may hold spaces and parens.
  const std::string stat =
      "4242 (we ird) (cmd)) S 1 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 "
      "987654 1000 200";
  EXPECT_EQ(ParseStartTicks(stat), 987654u);
  EXPECT_EQ(ParseStartTicks("garbage"), std::nullopt);
  EXPECT_EQ(ParseStartTicks("1 (x) S 1 2"), std::nullopt);
}

TEST(ProcIdentityTest, OwnProcess) {
  const ProcessIdentity me = IdentityOf(getpid());
  EXPECT_GT(me.start_ticks, 0u);
  EXPECT_FALSE(me.boot_id.empty());
  EXPECT_EQ(ProcessStartTicks(getpid()), me.start_ticks);
  EXPECT_EQ(ProcessStartTicks(0), std::nullopt);
}

// A child in its own process group, sleeping until killed.
int SpawnSleeper() {
  const pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);
    for (;;) pause();
  }
  setpgid(pid, pid);
  return pid;
}

bool Alive(int pid) {
  int status = 0;
  return waitpid(pid, &status, WNOHANG) == 0;
}

class BootIdFile : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/batchd-boot-XXXXXX";
    dir_ = mkdtemp(tmpl);
  }
  void TearDown() override {
    unsetenv(kBootIdFileEnv);
    std::filesystem::remove_all(dir_);
  }
  void SetBoot(const std::string& id) {
    const std::string f = dir_ + "/boot_id";
    std::ofstream(f) << id << "\n";
    setenv(kBootIdFileEnv, f.c_str(), 1);
  }
  std::string dir_;
};

TEST_F(BootIdFile, TheOverrideFileIsTheBootId) {
  SetBoot("boot-a");
  EXPECT_EQ(BootId(), "boot-a");
}

TEST_F(BootIdFile, SignalsOnlyAVerifiedProcess) {
  SetBoot("boot-a");
  const int pid = SpawnSleeper();
  const ProcessIdentity id = IdentityOf(pid);
  ASSERT_GT(id.start_ticks, 0u);
  // Another boot: nothing is signalled.
  SetBoot("boot-b");
  EXPECT_TRUE(absl::IsFailedPrecondition(SignalRecorded(id, SIGKILL, true)));
  EXPECT_TRUE(Alive(pid));
  SetBoot("boot-a");
  // Another start time (the pid was reused): nothing is signalled.
  ProcessIdentity other = id;
  other.start_ticks += 1;
  EXPECT_TRUE(absl::IsFailedPrecondition(SignalRecorded(other, SIGKILL, true)));
  EXPECT_TRUE(Alive(pid));
  // Nothing recorded: nothing is signalled.
  EXPECT_TRUE(absl::IsFailedPrecondition(
      SignalRecorded(ProcessIdentity{.pid = pid}, SIGKILL, false)));
  EXPECT_TRUE(Alive(pid));
  // The process itself: signalled.
  ASSERT_TRUE(SignalRecorded(id, SIGKILL, /*group=*/false).ok());
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFSIGNALED(status));
  EXPECT_TRUE(absl::IsNotFound(SignalRecorded(id, SIGKILL, false)));
}

TEST_F(BootIdFile, SignalsAGroupByItsVerifiedLeader) {
  SetBoot("boot-a");
  const int pid = SpawnSleeper();
  const ProcessIdentity id = IdentityOf(pid);
  ASSERT_TRUE(SignalRecorded(id, SIGKILL, /*group=*/true).ok());
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFSIGNALED(status));
}

TEST(KillCgroupTest, NoSuchGroup) {
  EXPECT_TRUE(absl::IsNotFound(KillCgroup("/nonexistent/batchd/cgroup")));
  EXPECT_TRUE(absl::IsNotFound(KillCgroup("")));
}

}  // namespace
}  // namespace batchd::agent
