// Runs real pods through the real `batchd-shim`. Every wait polls with a bound.
#include <signal.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <set>
#include <string>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/ascii.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/strings/str_split.h"
#include "agent/runtime/log_files.h"
#include "agent/runtime/pod_files.h"
#include "agent/runtime/pod_runtime.h"
#include "agent/runtime/proc_identity.h"
#include "agent/runtime/process_runner.h"
#include "gtest/gtest.h"

namespace batchd::agent {
namespace {

using State = ContainerStatus::State;

class ProcessRuntimeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/batchd-rt-XXXXXX";
    root_ = mkdtemp(tmpl);
    rt_ = NewRuntime();
  }
  void TearDown() override {
    for (const std::string& uid : rt_->List()) {
      (void)rt_->Stop(uid, absl::ZeroDuration());
      Wait(uid, [](const PodSandboxStatus& s) { return !s.supervisor_alive; });
    }
    std::filesystem::remove_all(root_);
  }
  std::unique_ptr<PodRuntime> NewRuntime() {
    return NewProcessRuntime({.root = root_,
                              .shim_path = BATCHD_SHIM_PATH,
                              .cgroup_root = "",
                              .backoff_initial = absl::Milliseconds(10),
                              .backoff_max = absl::Milliseconds(40)});
  }
  static PodSandboxSpec Pod(const std::string& uid, std::vector<std::string> argv,
                            std::string policy = "Never") {
    PodSandboxSpec p{.uid = uid, .ns = "default", .name = uid};
    p.containers.push_back(ContainerSpec{.name = "main", .argv = std::move(argv)});
    p.restart_policy = std::move(policy);
    return p;
  }
  static std::vector<std::string> Sh(const std::string& script) { return {"sh", "-c", script}; }

  // Polls `Status` until `pred` holds (bounded: fails the test after 20s).
  PodSandboxStatus Wait(const std::string& uid,
                        const std::function<bool(const PodSandboxStatus&)>& pred) {
    PodSandboxStatus last;
    for (int i = 0; i < 2000; ++i) {
      absl::StatusOr<PodSandboxStatus> s = rt_->Status(uid);
      if (s.ok()) {
        last = *s;
        if (pred(last)) return last;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ADD_FAILURE() << "timed out waiting on pod " << uid;
    return last;
  }
  PodSandboxStatus WaitFinished(const std::string& uid) {
    return Wait(uid, [](const PodSandboxStatus& s) { return s.finished && !s.supervisor_alive; });
  }
  PodSandboxStatus WaitRunning(const std::string& uid) {
    return Wait(uid, [](const PodSandboxStatus& s) {
      return !s.app.empty() && s.app[0].state == State::kRunning;
    });
  }
  std::string Log(const std::string& uid, const std::string& c, bool previous = false) {
    std::string path = rt_->LogPath(uid, c, previous);
    if (path.empty()) return "";
    absl::StatusOr<std::string> text = ReadFile(path);
    return text.ok() ? *text : "";
  }
  void WaitLogContains(const std::string& uid, const std::string& needle) {
    for (int i = 0; i < 2000 && !absl::StrContains(Log(uid, "main"), needle); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ASSERT_TRUE(absl::StrContains(Log(uid, "main"), needle));
  }
  // Polls until `pid` has left /proc (exited and reaped: no zombie).
  static bool Gone(int pid) {
    const std::string path = "/proc/" + std::to_string(pid);
    for (int i = 0; i < 2000 && std::filesystem::exists(path); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return !std::filesystem::exists(path);
  }
  static int ParentOf(int pid) {
    absl::StatusOr<std::string> stat = ReadFile("/proc/" + std::to_string(pid) + "/stat");
    if (!stat.ok() || stat->rfind(')') == std::string::npos) return 0;
    // "pid (comm) state ppid ...": comm may hold spaces, so parse after ')'.
    int ppid = 0;
    char state = 0;
    if (std::sscanf(stat->c_str() + stat->rfind(')') + 1, " %c %d", &state, &ppid) != 2) return 0;
    return ppid;
  }
  // This process's children running `batchd-shim --launcher`.
  static std::vector<int> Launchers() {
    std::vector<int> out;
    for (const auto& e : std::filesystem::directory_iterator("/proc")) {
      int pid = 0;
      if (!absl::SimpleAtoi(e.path().filename().string(), &pid) || ParentOf(pid) != getpid()) {
        continue;
      }
      absl::StatusOr<std::string> cmd = ReadFile(e.path().string() + "/cmdline");
      if (cmd.ok() && absl::StrContains(*cmd, "--launcher")) out.push_back(pid);
    }
    return out;
  }
  int ShimPid(const std::string& uid) {
    absl::StatusOr<nlohmann::json> j = ReadJsonFile(root_ + "/" + uid + "/state.json");
    absl::StatusOr<PodSandboxStatus> st =
        j.ok() ? PodStatusFromJson(*j) : absl::StatusOr<PodSandboxStatus>(j.status());
    return st.ok() ? st->shim_pid : 0;
  }

  std::string root_;
  std::unique_ptr<PodRuntime> rt_;
};

TEST_F(ProcessRuntimeTest, ExitCodeReasonAndLog) {
  struct Case {
    std::string name;
    std::string script;
    int want_code;
    std::string want_reason;
    std::string want_log;
  };
  const std::vector<Case> cases = {
      {"error", "echo hi; exit 3", 3, "Error", "hi\n"},
      {"success", "echo out; echo err >&2", 0, "Completed", "out\nerr\n"},
      {"signal", "echo x; kill -KILL $$", 137, "Error", "x\n"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    ASSERT_TRUE(rt_->Start(Pod(c.name, Sh(c.script))).ok());
    PodSandboxStatus s = WaitFinished(c.name);
    ASSERT_EQ(s.app.size(), 1u);
    EXPECT_EQ(s.app[0].state, State::kTerminated);
    EXPECT_EQ(s.app[0].exit_code, c.want_code);
    EXPECT_EQ(s.app[0].reason, c.want_reason);
    EXPECT_EQ(Log(c.name, "main"), c.want_log);
    EXPECT_LE(s.app[0].started_at, s.app[0].finished_at);
  }
}

TEST_F(ProcessRuntimeTest, SignalExitReportsSignal) {
  ASSERT_TRUE(rt_->Start(Pod("sig", Sh("kill -TERM $$"))).ok());
  PodSandboxStatus s = WaitFinished("sig");
  EXPECT_EQ(s.app[0].exit_code, 143);
  EXPECT_EQ(s.app[0].signal, SIGTERM);
}

TEST_F(ProcessRuntimeTest, InitContainersRunInOrderBeforeApps) {
  PodSandboxSpec p = Pod("init", Sh("cat order; echo three >> order"));
  p.init_containers = {ContainerSpec{.name = "one", .argv = Sh("echo one >> order")},
                       ContainerSpec{.name = "two", .argv = Sh("echo two >> order")}};
  ASSERT_TRUE(rt_->Start(p).ok());
  PodSandboxStatus s = WaitFinished("init");
  ASSERT_EQ(s.init.size(), 2u);
  for (const ContainerStatus& c : s.init) {
    EXPECT_EQ(c.reason, "Completed") << c.name;
    EXPECT_LE(c.finished_at, s.app[0].started_at) << c.name;
  }
  EXPECT_EQ(Log("init", "main"), "one\ntwo\n");
  // Containers start in the pod's work/ directory, not among the shim's files.
  EXPECT_EQ(*ReadFile(root_ + "/init/work/order"), "one\ntwo\nthree\n");
}

TEST_F(ProcessRuntimeTest, FailedInitUnderNeverFailsPodWithoutApps) {
  PodSandboxSpec p = Pod("initfail", Sh("echo app-ran"));
  p.init_containers = {ContainerSpec{.name = "bad", .argv = Sh("exit 2")}};
  ASSERT_TRUE(rt_->Start(p).ok());
  PodSandboxStatus s = WaitFinished("initfail");
  EXPECT_EQ(s.init[0].exit_code, 2);
  EXPECT_EQ(s.app[0].state, State::kWaiting);
  EXPECT_EQ(s.app[0].reason, "PodInitializing");
  EXPECT_EQ(Log("initfail", "main"), "");
}

TEST_F(ProcessRuntimeTest, EnvAndWorkingDir) {
  const std::string wd = root_ + "/wd";
  std::filesystem::create_directories(wd);
  PodSandboxSpec p = Pod("env", Sh("echo $FOO $HOSTNAME; pwd; command -v sh >/dev/null && echo path"));
  p.containers[0].env = {{"FOO", "bar"}, {"FOO", "baz"}};
  p.containers[0].working_dir = wd;
  ASSERT_TRUE(rt_->Start(p).ok());
  WaitFinished("env");
  EXPECT_EQ(Log("env", "main"), "baz env\n" + wd + "\npath\n");
}

TEST_F(ProcessRuntimeTest, StartErrorForMissingCommand) {
  ASSERT_TRUE(rt_->Start(Pod("noexec", {"/nonexistent/cmd"})).ok());
  PodSandboxStatus s = WaitFinished("noexec");
  EXPECT_EQ(s.app[0].reason, "StartError");
  EXPECT_EQ(s.app[0].exit_code, 128);
  EXPECT_TRUE(absl::StrContains(s.app[0].message, "No such file")) << s.app[0].message;
}

TEST_F(ProcessRuntimeTest, OnFailureRestartsUntilSuccess) {
  ASSERT_TRUE(rt_->Start(Pod("retry",
                             Sh("n=$(cat count 2>/dev/null || echo 0); n=$((n+1)); echo $n > count;"
                                " echo run$n; [ $n -ge 3 ]"),
                             "OnFailure"))
                  .ok());
  PodSandboxStatus s = WaitFinished("retry");
  EXPECT_EQ(s.app[0].restart_count, 2);
  EXPECT_EQ(s.app[0].exit_code, 0);
  EXPECT_EQ(s.app[0].reason, "Completed");
  ASSERT_TRUE(s.app[0].last_terminated.has_value());
  EXPECT_EQ(s.app[0].last_terminated->exit_code, 1);
  EXPECT_EQ(Log("retry", "main"), "run3\n");
  EXPECT_EQ(Log("retry", "main", /*previous=*/true), "run2\n");
}

TEST_F(ProcessRuntimeTest, StopSendsSigtermThenSigkillAfterGrace) {
  struct Case {
    std::string name;
    std::string script;
    absl::Duration grace;
    int want_code;
  };
  const std::vector<Case> cases = {
      {"term", "echo ready; exec sleep 1000", absl::Seconds(30), 143},
      {"trap", "trap '' TERM; echo ready; while :; do sleep 0.05; done", absl::Milliseconds(200),
       137},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    ASSERT_TRUE(rt_->Start(Pod(c.name, Sh(c.script))).ok());
    WaitLogContains(c.name, "ready");
    const int pgid = WaitRunning(c.name).app[0].pid;
    ASSERT_GT(pgid, 0);
    ASSERT_TRUE(rt_->Stop(c.name, c.grace).ok());
    PodSandboxStatus s = WaitFinished(c.name);
    EXPECT_TRUE(s.stop_requested);
    EXPECT_EQ(s.app[0].exit_code, c.want_code);
    EXPECT_EQ(kill(-pgid, 0), -1);  // the whole group is gone
  }
}

TEST_F(ProcessRuntimeTest, StopLeavesNoShimChildrenOrZombies) {
  ASSERT_TRUE(rt_->Start(Pod("tree", Sh("sleep 1000 & sleep 1000 & echo ready; wait"))).ok());
  WaitLogContains("tree", "ready");
  const int pgid = WaitRunning("tree").app[0].pid;
  const int shim = ShimPid("tree");
  ASSERT_GT(shim, 0);
  ASSERT_TRUE(rt_->Stop("tree", absl::Seconds(5)).ok());
  WaitFinished("tree");
  EXPECT_EQ(kill(-pgid, 0), -1);
  EXPECT_TRUE(Gone(shim)) << "shim " << shim << " still in /proc";  // reaped, no zombie
}

TEST_F(ProcessRuntimeTest, OneLauncherForksTheShimsAndLeavesWithTheRuntime) {
  ASSERT_TRUE(rt_->Start(Pod("a", Sh("echo ready; exec sleep 1000"))).ok());
  ASSERT_TRUE(rt_->Start(Pod("b", Sh("true"))).ok());
  const std::vector<int> launchers = Launchers();
  ASSERT_EQ(launchers.size(), 1u);
  WaitRunning("a");
  EXPECT_EQ(ParentOf(ShimPid("a")), launchers[0]);  // forked, not exec'ed by us
  // ps and pgrep -f see the pod dir, as on an exec'ed shim's command line.
  const std::string cmdline = *ReadFile("/proc/" + std::to_string(ShimPid("a")) + "/cmdline");
  EXPECT_TRUE(absl::StrContains(cmdline, "batchd-shim --pod-dir " + root_ + "/a --ready-fd 3"))
      << cmdline;
  const int shim_b = WaitFinished("b").shim_pid;
  EXPECT_TRUE(Gone(shim_b));  // the launcher reaps its shims
  rt_ = NewRuntime();  // the old runtime's launcher exits and is reaped; pod a runs on
  EXPECT_TRUE(Gone(launchers[0]));
  EXPECT_TRUE(Launchers().empty());
  PodSandboxStatus s = *rt_->Status("a");
  EXPECT_TRUE(s.supervisor_alive);
  EXPECT_EQ(s.app[0].state, State::kRunning);
  ASSERT_TRUE(rt_->Stop("a", absl::ZeroDuration()).ok());
  EXPECT_TRUE(WaitFinished("a").stop_requested);
}

TEST_F(ProcessRuntimeTest, KilledLauncherIsReapedAndRestarted) {
  ASSERT_TRUE(rt_->Start(Pod("first", Sh("true"))).ok());
  const std::vector<int> launchers = Launchers();
  ASSERT_EQ(launchers.size(), 1u);
  ASSERT_EQ(kill(launchers[0], SIGKILL), 0);
  ASSERT_TRUE(rt_->Start(Pod("second", Sh("echo ran; exec sleep 1000"))).ok());
  WaitLogContains("second", "ran");
  EXPECT_TRUE(Gone(launchers[0]));  // reaped by the runtime: no zombie
  const std::vector<int> now = Launchers();
  ASSERT_EQ(now.size(), 1u);
  EXPECT_EQ(ParentOf(ShimPid("second")), now[0]);
}

TEST_F(ProcessRuntimeTest, ShimsAreExecedWhenNoLauncherRuns) {
  // A shim binary without --launcher (the launcher exits at once).
  const std::string shim = root_ + "/old-shim";
  ASSERT_TRUE(WriteFileAtomic(shim, "#!/bin/sh\n[ \"$1\" = --launcher ] && exit 2\nexec " +
                                        std::string(BATCHD_SHIM_PATH) + " \"$@\"\n")
                  .ok());
  ASSERT_EQ(chmod(shim.c_str(), 0755), 0);
  rt_ = NewProcessRuntime({.root = root_, .shim_path = shim, .cgroup_root = ""});
  for (const std::string uid : {"x1", "x2"}) {
    ASSERT_TRUE(rt_->Start(Pod(uid, Sh("echo ran"))).ok());
    EXPECT_EQ(WaitFinished(uid).app[0].reason, "Completed");
    EXPECT_EQ(Log(uid, "main"), "ran\n");
    EXPECT_TRUE(Gone(ShimPid(uid)));
  }
  EXPECT_TRUE(Launchers().empty());
  const std::string log = *ReadFile(root_ + "/shims.log");
  // Tried (and restarted) once, then not again for the second pod.
  EXPECT_EQ(log.find("batchd-shim launcher: "), 0u) << log;
  EXPECT_EQ(log.find("batchd-shim launcher: ", 1), std::string::npos) << log;
}

TEST_F(ProcessRuntimeTest, ReadoptsRunningPodAfterRuntimeRestart) {
  ASSERT_TRUE(rt_->Start(Pod("adopt", Sh("while [ ! -f go ]; do sleep 0.02; done; exit 7"))).ok());
  WaitRunning("adopt");
  rt_ = NewRuntime();  // the agent "restarts"; the shim keeps running
  EXPECT_EQ(rt_->List(), std::vector<std::string>{"adopt"});
  PodSandboxStatus s = *rt_->Status("adopt");
  EXPECT_TRUE(s.supervisor_alive);
  EXPECT_EQ(s.app[0].state, State::kRunning);
  ASSERT_TRUE(WriteFileAtomic(root_ + "/adopt/work/go", "").ok());
  s = WaitFinished("adopt");
  EXPECT_EQ(s.app[0].exit_code, 7);
  EXPECT_EQ(s.app[0].reason, "Error");
}

// Collects WatchChanges hints; Await waits (bounded) for one about `uid`.
class Hints {
 public:
  std::function<void(const std::string&)> Callback() {
    return [this](const std::string& uid) {
      absl::MutexLock lock(&mu_);
      seen_.insert(uid);
      cv_.SignalAll();
    };
  }
  bool Await(const std::string& uid) {
    absl::MutexLock lock(&mu_);
    const absl::Time deadline = absl::Now() + absl::Seconds(20);
    while (seen_.count(uid) == 0 && !cv_.WaitWithDeadline(&mu_, deadline)) {
    }
    return seen_.count(uid) > 0;
  }

 private:
  absl::Mutex mu_;
  absl::CondVar cv_;
  std::multiset<std::string> seen_ ABSL_GUARDED_BY(mu_);
};

// A container's exit is hinted with its pod's uid once state.json records it,
// also for a pod re-adopted by a new runtime on the same root; without a
// subscriber the shim's hint goes nowhere and nothing breaks.
TEST_F(ProcessRuntimeTest, ContainerExitIsHintedToWatchChanges) {
  ASSERT_TRUE(rt_->Start(Pod("unwatched", Sh("exit 0"))).ok());
  EXPECT_EQ(WaitFinished("unwatched").app[0].exit_code, 0);

  Hints hints;
  rt_->WatchChanges(hints.Callback());
  ASSERT_TRUE(rt_->Start(Pod("hinted", Sh("exit 3"))).ok());
  ASSERT_TRUE(hints.Await("hinted"));
  PodSandboxStatus s = *rt_->Status("hinted");  // recorded before the hint was sent
  EXPECT_EQ(s.app[0].state, State::kTerminated);
  EXPECT_EQ(s.app[0].exit_code, 3);

  ASSERT_TRUE(rt_->Start(Pod("adopted", Sh("while [ ! -f go ]; do sleep 0.02; done"))).ok());
  WaitRunning("adopted");
  rt_ = NewRuntime();  // the agent "restarts"; the shim keeps running
  Hints after;
  rt_->WatchChanges(after.Callback());
  ASSERT_TRUE(WriteFileAtomic(root_ + "/adopted/work/go", "").ok());
  ASSERT_TRUE(after.Await("adopted"));
  EXPECT_EQ(rt_->Status("adopted")->app[0].state, State::kTerminated);
  rt_->WatchChanges(nullptr);
}

TEST_F(ProcessRuntimeTest, KilledShimTakesContainersWithIt) {
  prctl(PR_SET_CHILD_SUBREAPER, 1);  // orphans come to us, so they cannot linger as zombies
  ASSERT_TRUE(rt_->Start(Pod("orphan", Sh("sleep 1000 & echo ready; wait"))).ok());
  WaitLogContains("orphan", "ready");
  const int pgid = WaitRunning("orphan").app[0].pid;
  ASSERT_EQ(kill(ShimPid("orphan"), SIGKILL), 0);
  PodSandboxStatus s = WaitFinished("orphan");
  EXPECT_EQ(s.app[0].reason, "ContainerStatusUnknown");
  EXPECT_EQ(s.app[0].exit_code, 137);
  bool gone = false;
  for (int i = 0; i < 2000 && !gone; ++i) {
    while (waitpid(-1, nullptr, WNOHANG) > 0) {
    }
    gone = kill(-pgid, 0) == -1;
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(gone);
  prctl(PR_SET_CHILD_SUBREAPER, 0);
}

// The shim copies a fast writer's output through a pipe into rotated files:
// the kept files hold the newest lines, consecutive (nothing dropped), and
// never more than max_files x max_bytes.
TEST_F(ProcessRuntimeTest, LogsAreRotatedUnderAFastWriterWithoutLoss) {
  rt_ = NewProcessRuntime({.root = root_,
                           .shim_path = BATCHD_SHIM_PATH,
                           .cgroup_root = "",
                           .log_max_bytes = 4096,
                           .log_max_files = 3});
  ASSERT_TRUE(rt_->Start(Pod("chatty", Sh("seq 1 20000"))).ok());
  PodSandboxStatus s = WaitFinished("chatty");
  EXPECT_EQ(s.app[0].exit_code, 0);
  const std::string current = rt_->LogPath("chatty", "main", false);
  ASSERT_FALSE(current.empty());
  std::vector<std::string> rotated = RotatedLogFiles(current);
  ASSERT_EQ(rotated.size(), 2u);
  EXPECT_LE(LogBytes(current), 3 * 4096);
  std::string all;
  for (auto it = rotated.rbegin(); it != rotated.rend(); ++it) all += *ReadFile(*it);
  all += *ReadFile(current);
  std::vector<std::string> lines = absl::StrSplit(all, '\n', absl::SkipEmpty());
  ASSERT_GT(lines.size(), 100u);
  int prev = 0;
  ASSERT_TRUE(absl::SimpleAtoi(lines[0], &prev));
  for (size_t i = 1; i < lines.size(); ++i) {
    int n = 0;
    ASSERT_TRUE(absl::SimpleAtoi(lines[i], &n)) << lines[i];
    ASSERT_EQ(n, prev + 1) << "a line is missing or split";
    prev = n;
  }
  EXPECT_EQ(prev, 20000);
}

// A pod whose shim died, recorded as running `pid` (its own group) in
// `boot_id` with `ticks`: what the runtime finds on disk after a crash.
void WriteDeadPod(const std::string& dir, int pid, uint64_t ticks, const std::string& boot_id) {
  ASSERT_TRUE(MakeDirs(dir).ok());
  ASSERT_TRUE(WriteFileAtomic(dir + "/spec.json", "{}").ok());
  PodSandboxStatus st;
  st.app.push_back(ContainerStatus{.name = "main", .state = State::kRunning, .pid = pid,
                                   .start_ticks = ticks});
  st.boot_id = boot_id;
  ASSERT_TRUE(WriteFileAtomic(dir + "/state.json", PodStatusToJson(st).dump()).ok());
}

// A recorded process group is killed only when it is verifiably the
// container's: after a reboot (another boot id), or when the pid now belongs
// to a process that started at another time, an unrelated process that
// holds the recorded pid is left alone.
TEST_F(ProcessRuntimeTest, RecordedGroupsAreKilledOnlyWhenVerified) {
  const std::string boot_file = root_ + "/boot_id";
  ASSERT_TRUE(WriteFileAtomic(boot_file, "boot-now\n").ok());
  setenv(kBootIdFileEnv, boot_file.c_str(), 1);
  auto spawn = [] {
    const pid_t pid = fork();
    if (pid == 0) {
      setpgid(0, 0);
      for (;;) pause();
    }
    setpgid(pid, pid);
    return pid;
  };
  auto alive = [](int pid) { return waitpid(pid, nullptr, WNOHANG) == 0; };
  const int stranger = spawn();
  const uint64_t ticks = ProcessStartTicks(stranger).value_or(0);
  ASSERT_GT(ticks, 0u);
  WriteDeadPod(root_ + "/rebooted", stranger, ticks, "boot-before");
  WriteDeadPod(root_ + "/reused", stranger, ticks + 7, "boot-now");
  WriteDeadPod(root_ + "/unrecorded", stranger, 0, "");
  for (const char* uid : {"rebooted", "reused", "unrecorded"}) {
    SCOPED_TRACE(uid);
    absl::StatusOr<PodSandboxStatus> s = rt_->Status(uid);
    ASSERT_TRUE(s.ok());
    EXPECT_TRUE(s->finished);
    EXPECT_EQ(s->app[0].reason, "ContainerStatusUnknown");
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_TRUE(alive(stranger));
  }
  // The same boot and start time: it is the container's group, and goes.
  WriteDeadPod(root_ + "/same", stranger, ticks, "boot-now");
  ASSERT_TRUE(rt_->Status("same").ok());
  int status = 0;
  EXPECT_EQ(waitpid(stranger, &status, 0), stranger);
  EXPECT_TRUE(WIFSIGNALED(status));
  unsetenv(kBootIdFileEnv);
}

TEST_F(ProcessRuntimeTest, StartIsIdempotentAndNeverRerunsAPod) {
  PodSandboxSpec p = Pod("once", Sh("echo x >> runs"));
  ASSERT_TRUE(rt_->Start(p).ok());
  ASSERT_TRUE(rt_->Start(p).ok());
  WaitFinished("once");
  ASSERT_TRUE(rt_->Start(p).ok());
  WaitFinished("once");
  EXPECT_EQ(*ReadFile(root_ + "/once/work/runs"), "x\n");
}

TEST_F(ProcessRuntimeTest, StartRewritesAPartialSpecLeftByACrashedStart) {
  // A Start that died mid-write of spec.json left no state.json and no shim.
  std::filesystem::create_directories(root_ + "/partial");
  ASSERT_TRUE(WriteFileAtomic(root_ + "/partial/spec.json",
                              "{\"uid\": \"partial\", " + std::string(8192, ' ')).ok());
  EXPECT_EQ(rt_->List(), std::vector<std::string>{"partial"});
  ASSERT_TRUE(rt_->Start(Pod("partial", Sh("echo ran"))).ok());
  PodSandboxStatus s = WaitFinished("partial");
  EXPECT_EQ(s.app[0].reason, "Completed");
  EXPECT_EQ(Log("partial", "main"), "ran\n");
  absl::StatusOr<nlohmann::json> spec = ReadJsonFile(root_ + "/partial/spec.json");
  ASSERT_TRUE(spec.ok()) << spec.status();  // no tail of the longer partial file is left
}

TEST_F(ProcessRuntimeTest, RemoveRefusesRunningPodAndDeletesFinishedOne) {
  ASSERT_TRUE(rt_->Start(Pod("rm", Sh("echo ready; exec sleep 1000"))).ok());
  WaitRunning("rm");
  EXPECT_EQ(rt_->Remove("rm").code(), absl::StatusCode::kFailedPrecondition);
  ASSERT_TRUE(rt_->Stop("rm", absl::ZeroDuration()).ok());
  WaitFinished("rm");
  ASSERT_TRUE(rt_->Remove("rm").ok());
  EXPECT_FALSE(std::filesystem::exists(root_ + "/rm"));
  EXPECT_TRUE(rt_->List().empty());
  EXPECT_FALSE(rt_->Status("rm")->found);
}

TEST_F(ProcessRuntimeTest, PodDirHoldsFewFilesAndShimsShareOneQuietLog) {
  ASSERT_TRUE(rt_->Start(Pod("few", Sh("echo hi"))).ok());
  WaitFinished("few");
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(root_ + "/few")) {
    files.push_back(e.path().filename().string());
  }
  std::sort(files.begin(), files.end());
  // work/ is the one inode more that running pods as their own user costs:
  // the containers' directory, apart from the shim's root-owned files.
  EXPECT_EQ(files,
            (std::vector<std::string>{"main.0.log", "spec.json", "state.json", "work"}));
  struct stat st;
  ASSERT_EQ(stat((root_ + "/few").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0711u);
  ASSERT_EQ(stat((root_ + "/few/work").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  ASSERT_EQ(stat((root_ + "/few/spec.json").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);  // the resolved env may hold Secret values
  ASSERT_EQ(stat((root_ + "/few/main.0.log").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  EXPECT_EQ(Log("few", "main"), "hi\n");
  // One shared shim log; no cgroup root configured is not worth a warning.
  EXPECT_EQ(*ReadFile(root_ + "/shims.log"), "");
  EXPECT_EQ(rt_->List(), std::vector<std::string>{"few"});  // shims.log is no pod
}

TEST_F(ProcessRuntimeTest, AnUnusableCgroupRootIsFoundOnceForEveryPod) {
  // The runtime looks at the cgroup root (and for the v1 pids hierarchy)
  // once and hands what it found to each shim: no shim looks again, and
  // shims.log gets no warning per pod. A pod with limits still learns why
  // they were not applied.
  rt_ = NewProcessRuntime({.root = root_,
                           .shim_path = BATCHD_SHIM_PATH,
                           .cgroup_root = root_ + "/no-cgroup2-here"});
  for (const std::string uid : {"cg1", "cg2"}) {
    PodSandboxSpec pod = Pod(uid, Sh("true"));
    pod.containers[0].cpu_limit_millis = 500;
    ASSERT_TRUE(rt_->Start(pod).ok());
    const PodSandboxStatus st = WaitFinished(uid);
    EXPECT_TRUE(absl::StrContains(st.limits_warning, "cpu and memory limits not applied: "))
        << st.limits_warning;
    EXPECT_TRUE(absl::StrContains(st.limits_warning, "no-cgroup2-here is not a cgroup2 mount"))
        << st.limits_warning;
    absl::StatusOr<nlohmann::json> spec = ReadJsonFile(root_ + "/" + uid + "/spec.json");
    ASSERT_TRUE(spec.ok()) << spec.status();
    EXPECT_TRUE(absl::StrContains(spec->value("cgroupsError", ""), "no-cgroup2-here"));
    EXPECT_TRUE(spec->contains("pidsV1Root"));  // resolved by the runtime ("" when none)
  }
  EXPECT_EQ(*ReadFile(root_ + "/shims.log"), "");
}

TEST_F(ProcessRuntimeTest, ShimOfAnEarlierSpecChecksTheCgroupRootItself) {
  // A spec without the runtime's findings (written by an earlier agent, the
  // shim adopted after an upgrade): the shim looks itself and warns, naming
  // its pod.
  const std::string dir = root_ + "/old";
  std::filesystem::create_directories(dir);
  ShimConfig config{.pod = Pod("old", Sh("true")),
                    .shim_path = BATCHD_SHIM_PATH,
                    .cgroup_root = root_ + "/no-cgroup2-here"};
  ASSERT_TRUE(WriteFileAtomic(dir + "/spec.json", ShimConfigToJson(config).dump()).ok());
  const int log_fd = open((root_ + "/shims.log").c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  ASSERT_GE(log_fd, 0);
  PosixProcessRunner runner;
  absl::StatusOr<int> pid = runner.Spawn(
      {.argv = {BATCHD_SHIM_PATH, "--pod-dir", dir}, .stdout_fd = log_fd, .stderr_fd = log_fd});
  close(log_fd);
  ASSERT_TRUE(pid.ok()) << pid.status();
  int status = 0;
  ASSERT_EQ(waitpid(*pid, &status, 0), *pid);
  const std::string log = *ReadFile(root_ + "/shims.log");
  EXPECT_TRUE(absl::StartsWith(log, "batchd-shim old: warning: no cgroup limits: ")) << log;
}

TEST_F(ProcessRuntimeTest, FinishedShimsAreReapedWithoutPerCallSweeps) {
  // More pods than calls between sweeps: whatever Status does not reap
  // itself, List's sweep does, so no zombie stays behind.
  std::vector<int> shims;
  for (int i = 0; i < 70; ++i) {
    const std::string uid = "z" + std::to_string(i);
    ASSERT_TRUE(rt_->Start(Pod(uid, {"true"})).ok());
    WaitFinished(uid);
    shims.push_back(ShimPid(uid));
    ASSERT_GT(shims.back(), 0);
  }
  auto zombies = [&] {
    int n = 0;
    for (int pid : shims) n += std::filesystem::exists("/proc/" + std::to_string(pid)) ? 1 : 0;
    return n;
  };
  for (int i = 0; i < 2000 && zombies() > 0; ++i) {
    (void)rt_->List();
    if (zombies() > 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(zombies(), 0);
}

TEST_F(ProcessRuntimeTest, StartsManyPodsAndReportsTheMedianStartTime) {
  // Start() returns once the shim holds the pod, i.e. after starting the shim
  // and (with a container) its first container: reported for both, not
  // asserted (timings vary by machine).
  constexpr int kPods = 200;
  for (const bool with_container : {false, true}) {
    std::vector<double> ms;
    for (int i = 0; i < kPods; ++i) {
      const std::string uid = "m" + std::to_string(i);
      PodSandboxSpec pod = Pod(uid, {"true"});
      if (!with_container) pod.containers.clear();
      const auto begin = std::chrono::steady_clock::now();
      ASSERT_TRUE(rt_->Start(pod).ok());
      ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() -
                                                             begin).count());
    }
    for (int i = 0; i < kPods; ++i) {
      const std::string uid = "m" + std::to_string(i);
      PodSandboxStatus s = WaitFinished(uid);
      if (with_container) {
        EXPECT_EQ(s.app.at(0).reason, "Completed");
      }
      ASSERT_TRUE(rt_->Remove(uid).ok());
    }
    std::sort(ms.begin(), ms.end());
    std::printf("Start -> ready, %d pods %s: median %.3f ms, p90 %.3f ms\n", kPods,
                with_container ? "running true" : "without containers", ms[kPods / 2],
                ms[kPods * 9 / 10]);
  }
}

TEST_F(ProcessRuntimeTest, PodOfThePreviousLayoutIsStillAdopted) {
  // A pod whose shim (of the layout before spec.json's flock) outlived an
  // agent upgrade: shim.lock held, pid in shim.pid, logs under logs/.
  const std::string dir = root_ + "/old";
  std::filesystem::create_directories(dir + "/logs/main");
  ASSERT_TRUE(WriteFileAtomic(dir + "/spec.json", "{}").ok());
  ASSERT_TRUE(WriteFileAtomic(dir + "/logs/main/0.log", "old\n").ok());
  const pid_t shim = fork();  // stands in for the old shim: waits for SIGTERM
  if (shim == 0) {
    alarm(60);  // never outlives a failed test by long
    pause();
    _exit(0);
  }
  ASSERT_GT(shim, 0);
  ASSERT_TRUE(WriteFileAtomic(dir + "/shim.pid", std::to_string(shim)).ok());
  PodSandboxStatus running;
  running.app.push_back(ContainerStatus{.name = "main", .state = State::kRunning, .pid = 0});
  ASSERT_TRUE(WriteFileAtomic(dir + "/state.json", PodStatusToJson(running).dump()).ok());
  int lock = open((dir + "/shim.lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  ASSERT_EQ(flock(lock, LOCK_EX | LOCK_NB), 0);

  PodSandboxStatus s = *rt_->Status("old");
  EXPECT_TRUE(s.supervisor_alive);
  EXPECT_EQ(s.app[0].state, State::kRunning);
  EXPECT_EQ(Log("old", "main"), "old\n");
  EXPECT_EQ(rt_->Remove("old").code(), absl::StatusCode::kFailedPrecondition);
  ASSERT_TRUE(rt_->Stop("old", absl::Seconds(3)).ok());
  int wait_status = 0;
  ASSERT_EQ(waitpid(shim, &wait_status, 0), shim);
  EXPECT_TRUE(WIFSIGNALED(wait_status) && WTERMSIG(wait_status) == SIGTERM);
  EXPECT_EQ(*ReadFile(dir + "/stop"), "3000");

  close(lock);  // the old shim died without finishing the pod
  s = *rt_->Status("old");
  EXPECT_FALSE(s.supervisor_alive);
  EXPECT_TRUE(s.finished);
  EXPECT_EQ(s.app[0].reason, "ContainerStatusUnknown");
  EXPECT_TRUE(rt_->Remove("old").ok());
}

TEST_F(ProcessRuntimeTest, UnknownPod) {
  EXPECT_FALSE(rt_->Status("nope")->found);
  EXPECT_TRUE(rt_->Stop("nope", absl::Seconds(1)).ok());
  EXPECT_EQ(rt_->LogPath("nope", "main", false), "");
  EXPECT_FALSE(rt_->Start(Pod("../x", Sh("true"))).ok());
}

}  // namespace
}  // namespace batchd::agent

namespace batchd::agent {
namespace {

// An isolated pod (root only): its host name, its hosts file over
// /etc/hosts — rewritten in place while the pod runs — and an emptyDir at its
// mount path, none of it visible to the host.
TEST_F(ProcessRuntimeTest, IsolatedPodHasItsNameHostsFileAndMounts) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root (CAP_SYS_ADMIN)";
  const std::string mnt = root_ + "/mnt";
  PodSandboxSpec p = Pod("iso", Sh("hostname; cat /etc/hosts; echo data > " + mnt + "/f; "
                                   "while ! grep -q peer /etc/hosts; do sleep 0.05; done; "
                                   "echo peer-seen"));
  p.isolate = true;
  p.hostname = "w-0";
  p.hosts = "10.1.2.3\tw-0.s.ns.svc.cluster.local\tw-0\n";
  p.volumes = {{.name = "scratch"}};
  p.containers[0].mounts = {{.volume = "scratch", .mount_path = mnt}};
  ASSERT_TRUE(rt_->Start(p).ok());
  WaitLogContains("iso", "w-0.s.ns.svc.cluster.local");
  EXPECT_TRUE(absl::StartsWith(Log("iso", "main"), "w-0\n")) << Log("iso", "main");
  struct stat before;
  ASSERT_EQ(stat((root_ + "/iso/hosts").c_str(), &before), 0);
  ASSERT_TRUE(rt_->WriteHosts("iso", p.hosts + "10.1.2.4\tpeer\n").ok());
  WaitLogContains("iso", "peer-seen");
  struct stat after;
  ASSERT_EQ(stat((root_ + "/iso/hosts").c_str(), &after), 0);
  EXPECT_EQ(before.st_ino, after.st_ino);  // In place: the bind mount shows it.
  EXPECT_EQ(WaitFinished("iso").app[0].exit_code, 0);
  EXPECT_EQ(ReadFile(root_ + "/iso/volumes/scratch/f").value_or(""), "data\n");
  EXPECT_FALSE(std::filesystem::exists(mnt + "/f"));  // The host's mount point stays empty.
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  EXPECT_NE(std::string(host), "w-0");
  EXPECT_EQ(rt_->WriteHosts("nope", "x").code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace batchd::agent
