// PosixProcessRunner against real processes: the posix_spawn path and the
// vfork path (cgroup join, working dir, PATH search in the child's env, exec
// and chdir failures reported by Spawn, PR_SET_PDEATHSIG).
#include "agent/runtime/process_runner.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "gtest/gtest.h"

namespace batchd::agent {
namespace {

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

int WaitExit(int pid) {
  int status = 0;
  EXPECT_EQ(waitpid(pid, &status, 0), pid);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

class ProcessRunnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/batchd-runner-XXXXXX";
    dir_ = mkdtemp(tmpl);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  // Output file descriptor for a spawned child (closed by the test's end).
  int Out(const std::string& name) {
    int fd = open((dir_ + "/" + name).c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    fds_.push_back(fd);
    return fd;
  }
  ~ProcessRunnerTest() override {
    for (int fd : fds_) close(fd);
  }

  std::string dir_;
  std::vector<int> fds_;
  PosixProcessRunner runner_;
};

TEST_F(ProcessRunnerTest, BothPathsRunTheCommandWithEnvCwdAndRedirects) {
  struct Case {
    std::string name;
    bool vfork;
  };
  for (const Case& tc : {Case{"posix_spawn", false}, Case{"vfork", true}}) {
    SCOPED_TRACE(tc.name);
    const int out = Out(tc.name + ".out");
    SpawnRequest req{.argv = {"sh", "-c", "echo $K $(pwd); echo err >&2; exit 3"},
                     .env = {"PATH=/usr/bin:/bin", "K=v"},
                     .cwd = dir_,
                     .stdout_fd = out,
                     .stderr_fd = out,
                     .new_process_group = true,
                     .die_with_parent = tc.vfork};
    absl::StatusOr<int> pid = runner_.Spawn(req);
    ASSERT_TRUE(pid.ok()) << pid.status();
    EXPECT_EQ(getpgid(*pid), *pid);  // its own group (a zombie keeps it until reaped)
    EXPECT_EQ(WaitExit(*pid), 3);
    EXPECT_EQ(Slurp(dir_ + "/" + tc.name + ".out"), "v " + dir_ + "\nerr\n");
  }
}

TEST_F(ProcessRunnerTest, VforkPathReportsStartFailuresFromSpawn) {
  std::filesystem::create_directories(dir_ + "/bin");
  const std::string noexec = dir_ + "/bin/noexec";
  std::ofstream(noexec) << "echo hi\n";  // no execute bit
  struct Case {
    std::string name;
    std::vector<std::string> argv;
    std::string cwd, want;
  };
  const std::vector<Case> cases = {
      {"missing", {"/nonexistent/cmd"}, "", "exec: \"/nonexistent/cmd\": No such file or directory"},
      {"not-in-path", {"no-such-cmd-xyz"}, "", "exec: \"no-such-cmd-xyz\": No such file or directory"},
      {"denied", {noexec}, "", "exec: \"" + noexec + "\": Permission denied"},
      {"bad-cwd", {"true"}, "/nonexistent/dir", "chdir /nonexistent/dir: No such file or directory"},
  };
  for (const Case& tc : cases) {
    SCOPED_TRACE(tc.name);
    SpawnRequest req{.argv = tc.argv, .env = {"PATH=/usr/bin:/bin"}, .cwd = tc.cwd,
                     .die_with_parent = true};
    absl::StatusOr<int> pid = runner_.Spawn(req);
    ASSERT_FALSE(pid.ok());
    EXPECT_EQ(pid.status().message(), tc.want);
  }
  EXPECT_EQ(waitpid(-1, nullptr, WNOHANG), -1);  // no child left behind (ECHILD)
  EXPECT_EQ(errno, ECHILD);
}

TEST_F(ProcessRunnerTest, VforkPathSearchesTheChildsPathAndRunsScriptsWithoutShebang) {
  std::filesystem::create_directories(dir_ + "/bin");
  const std::string script = dir_ + "/bin/hello";
  std::ofstream(script) << "echo from-script \"$1\"\n";  // no #! line: run by /bin/sh
  std::filesystem::permissions(script, std::filesystem::perms::owner_all);
  const int out = Out("script.out");
  SpawnRequest req{.argv = {"hello", "arg"},
                   .env = {"PATH=/nonexistent:" + dir_ + "/bin:/usr/bin:/bin"},
                   .stdout_fd = out,
                   .die_with_parent = true};
  absl::StatusOr<int> pid = runner_.Spawn(req);
  ASSERT_TRUE(pid.ok()) << pid.status();
  EXPECT_EQ(WaitExit(*pid), 0);
  EXPECT_EQ(Slurp(dir_ + "/script.out"), "from-script arg\n");
}

TEST_F(ProcessRunnerTest, VforkPathJoinsTheCgroupBeforeExec) {
  // A plain directory stands in for the cgroup: the child writes "0" to its
  // cgroup.procs; a missing one is only a warning on the child's stderr.
  struct Case {
    std::string name;
    bool exists;
    std::string want_procs, want_err;
  };
  const std::vector<Case> cases = {
      {"present", true, "0", ""},
      {"missing", false, "", "batchd-shim: cannot join cgroup "},
  };
  for (const Case& tc : cases) {
    SCOPED_TRACE(tc.name);
    const std::string cg = dir_ + "/cg-" + tc.name;
    if (tc.exists) {
      std::filesystem::create_directories(cg);
      std::ofstream(cg + "/cgroup.procs") << "";
    }
    const int err = Out(tc.name + ".err");
    SpawnRequest req{.argv = {"true"}, .env = {"PATH=/usr/bin:/bin"}, .stderr_fd = err,
                     .cgroup = cg};
    absl::StatusOr<int> pid = runner_.Spawn(req);
    ASSERT_TRUE(pid.ok()) << pid.status();
    EXPECT_EQ(WaitExit(*pid), 0);
    if (tc.exists) {
      EXPECT_EQ(Slurp(cg + "/cgroup.procs"), tc.want_procs);
    }
    EXPECT_EQ(Slurp(dir_ + "/" + tc.name + ".err").substr(0, tc.want_err.size()), tc.want_err);
  }
}

// True once `pid` is gone or a zombie (killed, not yet reaped by init).
bool Dead(int pid) {
  std::string stat = Slurp("/proc/" + std::to_string(pid) + "/stat");
  size_t paren = stat.rfind(')');
  return stat.empty() || (paren != std::string::npos && stat.substr(paren + 2, 1) == "Z");
}

TEST_F(ProcessRunnerTest, VforkPathChildDiesWithItsParent) {
  // A forked helper spawns `sleep` (die_with_parent) and exits at once.
  int pipefd[2];
  ASSERT_EQ(pipe2(pipefd, O_CLOEXEC), 0);
  const pid_t helper = fork();
  ASSERT_GE(helper, 0);
  if (helper == 0) {
    PosixProcessRunner runner;
    SpawnRequest req{.argv = {"sleep", "100"}, .env = {"PATH=/usr/bin:/bin"},
                     .die_with_parent = true};
    absl::StatusOr<int> pid = runner.Spawn(req);
    const int v = pid.ok() ? *pid : -1;
    (void)!write(pipefd[1], &v, sizeof(v));
    _exit(0);
  }
  close(pipefd[1]);
  int sleeper = 0;
  ASSERT_EQ(read(pipefd[0], &sleeper, sizeof(sleeper)), static_cast<ssize_t>(sizeof(sleeper)));
  close(pipefd[0]);
  ASSERT_GT(sleeper, 0);
  EXPECT_EQ(WaitExit(helper), 0);
  // The kernel delivers SIGKILL as the helper exits; give the reaper a moment.
  bool dead = false;
  for (int i = 0; i < 500 && !(dead = Dead(sleeper)); ++i) usleep(10000);
  EXPECT_TRUE(dead);
  if (!dead) kill(sleeper, SIGKILL);
}

// The SigIgn mask of a vfork-path child of a caller that ignores SIGPIPE.
std::string ChildSigIgn(ProcessRunner& runner, const std::string& out_path, int out) {
  SpawnRequest req{.argv = {"cat", "/proc/self/status"},
                   .env = {"PATH=/usr/bin:/bin"},
                   .stdout_fd = out,
                   .die_with_parent = true};
  struct sigaction ign = {}, old = {};
  ign.sa_handler = SIG_IGN;
  sigaction(SIGPIPE, &ign, &old);
  absl::StatusOr<int> pid = runner.Spawn(req);
  sigaction(SIGPIPE, &old, nullptr);
  EXPECT_TRUE(pid.ok()) << pid.status();
  if (!pid.ok()) return "";
  EXPECT_EQ(WaitExit(*pid), 0);
  std::istringstream in(Slurp(out_path));
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("SigIgn:", 0) != 0) continue;
    // The signals glibc keeps for itself (32 up to SIGRTMIN) cannot be
    // reset through sigaction: the child has them as the test's caller left
    // them (`make` runs its recipes with them ignored here). Not compared.
    uint64_t mask = std::stoull(line.substr(line.find_first_not_of(" \t", 7)), nullptr, 16);
    for (int sig = 32; sig < SIGRTMIN; ++sig) mask &= ~(uint64_t{1} << (sig - 1));
    char hex[17];
    std::snprintf(hex, sizeof(hex), "%016llx", static_cast<unsigned long long>(mask));
    return hex;
  }
  return "";
}

TEST_F(ProcessRunnerTest, VforkChildStartsWithDefaultSignalDispositions) {
  const std::string none = "0000000000000000";
  const std::string pipe_ignored = "0000000000001000";  // bit 13 - 1
  // Every signal is looked at.
  EXPECT_EQ(ChildSigIgn(runner_, dir_ + "/a", Out("a")), none);
  // A caller that names what it changed: just those are reset.
  PosixProcessRunner knows_pipe({SIGPIPE});
  EXPECT_EQ(ChildSigIgn(knows_pipe, dir_ + "/b", Out("b")), none);
  // What it leaves out stays as it is (the list is all the child resets).
  PosixProcessRunner knows_nothing(std::vector<int>{});
  EXPECT_EQ(ChildSigIgn(knows_nothing, dir_ + "/c", Out("c")), pipe_ignored);
}

TEST_F(ProcessRunnerTest, EmptyArgvIsInvalid) {
  EXPECT_FALSE(runner_.Spawn(SpawnRequest{}).ok());
}

}  // namespace
}  // namespace batchd::agent

namespace batchd::agent {
namespace {

// Bind mounts in the child's own mount namespace (root only: the shim of an
// isolated pod). The caller's namespace never sees them.
TEST_F(ProcessRunnerTest, MountsAreTheChildsOwn) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root (CAP_SYS_ADMIN)";
  std::filesystem::create_directories(dir_ + "/src");
  std::ofstream(dir_ + "/src/file") << "inside";
  SpawnRequest req;
  req.argv = {"sh", "-c", "cat " + dir_ + "/mnt/file; touch " + dir_ + "/mnt/new 2>/dev/null || "
              "echo ' read-only'"};
  req.env = {"PATH=/usr/bin:/bin"};
  req.stdout_fd = Out("out");
  req.mounts = {{.source = dir_ + "/src", .target = dir_ + "/mnt", .read_only = true}};
  absl::StatusOr<int> pid = runner_.Spawn(req);
  ASSERT_TRUE(pid.ok()) << pid.status();
  EXPECT_EQ(WaitExit(*pid), 0);
  EXPECT_EQ(Slurp(dir_ + "/out"), "inside read-only\n");
  EXPECT_TRUE(std::filesystem::is_directory(dir_ + "/mnt"));  // The mount point was made...
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/mnt/file"));  // ...and nothing shows here.
  // A mount inside another's mount path lands in that volume, whatever the
  // order given (shallower first).
  std::filesystem::create_directories(dir_ + "/outer");
  std::filesystem::create_directories(dir_ + "/inner");
  std::ofstream(dir_ + "/inner/file") << "nested";
  req.argv = {"cat", dir_ + "/m/a/b/file"};
  req.stdout_fd = Out("nested");
  req.mounts = {{.source = dir_ + "/inner", .target = dir_ + "/m/a/b"},
                {.source = dir_ + "/outer", .target = dir_ + "/m/a"}};
  pid = runner_.Spawn(req);
  ASSERT_TRUE(pid.ok()) << pid.status();
  EXPECT_EQ(WaitExit(*pid), 0);
  EXPECT_EQ(Slurp(dir_ + "/nested"), "nested");
  EXPECT_TRUE(std::filesystem::is_directory(dir_ + "/outer/b"));  // Its mount point, in the volume.
  // A mount that cannot be made fails the spawn, naming it.
  req.mounts = {{.source = dir_ + "/missing", .target = dir_ + "/mnt2"}};
  pid = runner_.Spawn(req);
  ASSERT_FALSE(pid.ok());
  EXPECT_EQ(pid.status().message(), "mount " + dir_ + "/missing on " + dir_ +
                                        "/mnt2: No such file or directory");
}

TEST_F(ProcessRunnerTest, ChildRunsAsTheRequestedUserWithoutPrivileges) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root (CAP_SETUID) to switch users";
  chmod(dir_.c_str(), 0777);  // the child (uid 4321) writes its output here
  SpawnRequest req;
  req.argv = {"/bin/sh", "-c",
              "echo $(id -u) $(id -g) $(id -G); grep -E '^(CapBnd|CapEff|NoNewPrivs)' "
              "/proc/self/status"};
  req.env = {"PATH=/usr/bin:/bin"};
  req.stdout_fd = Out("id");
  req.uid = 4321;
  req.gid = 4322;
  req.groups = {4322, 5000};
  req.no_new_privs = true;
  req.drop_all_capabilities = true;
  absl::StatusOr<int> pid = runner_.Spawn(req);
  ASSERT_TRUE(pid.ok()) << pid.status();
  EXPECT_EQ(WaitExit(*pid), 0);
  const std::string out = Slurp(dir_ + "/id");
  EXPECT_NE(out.find("4321 4322 4322 5000\n"), std::string::npos) << out;
  EXPECT_NE(out.find("CapEff:\t0000000000000000"), std::string::npos) << out;
  EXPECT_NE(out.find("CapBnd:\t0000000000000000"), std::string::npos) << out;
  EXPECT_NE(out.find("NoNewPrivs:\t1"), std::string::npos) << out;
}

TEST_F(ProcessRunnerTest, RootChildWithDropAllKeepsNoCapability) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root";
  SpawnRequest req;
  req.argv = {"/bin/sh", "-c", "id -u; grep -E '^CapEff' /proc/self/status"};
  req.env = {"PATH=/usr/bin:/bin"};
  req.stdout_fd = Out("root");
  req.uid = 0;
  req.gid = 0;
  req.drop_all_capabilities = true;
  absl::StatusOr<int> pid = runner_.Spawn(req);
  ASSERT_TRUE(pid.ok()) << pid.status();
  EXPECT_EQ(WaitExit(*pid), 0);
  EXPECT_EQ(Slurp(dir_ + "/root"), "0\nCapEff:\t0000000000000000\n");
}

}  // namespace
}  // namespace batchd::agent
