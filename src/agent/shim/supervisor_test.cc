// Supervisor logic against a fake ProcessRunner and FakeClock: deterministic,
// no processes. (Real processes are covered by agent/runtime/process_runtime_test.)
#include "agent/shim/supervisor.h"
#include "agent/runtime/mount_propagation.h"

#include <signal.h>
#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>

#include "absl/strings/match.h"
#include "common/testing/fake_clock.h"
#include "gtest/gtest.h"

namespace batchd::agent {
namespace {

using State = ContainerStatus::State;

int Exited(int code) { return code << 8; }
int Killed(int sig) { return sig; }

class FakeProcessRunner : public ProcessRunner {
 public:
  struct Sent {
    int pid, sig;
    bool group;
    bool operator==(const Sent&) const = default;
  };
  absl::StatusOr<int> Spawn(const SpawnRequest& req) override {
    if (auto it = fail.find(req.argv.empty() ? "" : req.argv[0]); it != fail.end()) {
      return absl::InternalError(it->second);
    }
    const int pid = next_pid_++;
    auto dash = std::find(req.argv.begin(), req.argv.end(), "--");
    std::vector<std::string> cmd(dash == req.argv.end() ? req.argv.begin() : dash + 1,
                                 req.argv.end());
    spawned.push_back({pid, cmd});
    requests.push_back(req);
    return pid;
  }
  absl::Status Signal(int pid, int sig, bool group) override {
    signals.push_back({pid, sig, group});
    return absl::OkStatus();
  }
  std::optional<int> TryReap(int) override { return std::nullopt; }

  // The pid of the latest spawn whose command starts with `cmd0`.
  int PidOf(const std::string& cmd0) const {
    for (auto it = spawned.rbegin(); it != spawned.rend(); ++it) {
      if (!it->second.empty() && it->second[0] == cmd0) return it->first;
    }
    return 0;
  }
  int Count(const std::string& cmd0) const {
    return static_cast<int>(std::count_if(spawned.begin(), spawned.end(), [&](const auto& s) {
      return !s.second.empty() && s.second[0] == cmd0;
    }));
  }
  bool SentTo(int pid, int sig) const {
    return std::find(signals.begin(), signals.end(), Sent{pid, sig, true}) != signals.end();
  }

  std::vector<std::pair<int, std::vector<std::string>>> spawned;
  std::vector<SpawnRequest> requests;
  std::vector<Sent> signals;
  std::map<std::string, std::string> fail;  // argv[0] -> the spawn error

 private:
  int next_pid_ = 1000;
};

class SupervisorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/batchd-sup-XXXXXX";
    dir_ = mkdtemp(tmpl);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  ShimConfig Config(std::vector<ContainerSpec> apps, std::string policy = "Never",
                    std::vector<ContainerSpec> inits = {}) {
    ShimConfig c;
    c.pod = PodSandboxSpec{.uid = "u1", .ns = "ns", .name = "p"};
    c.pod.containers = std::move(apps);
    c.pod.init_containers = std::move(inits);
    c.pod.restart_policy = std::move(policy);
    c.pod.termination_grace_seconds = 30;
    c.shim_path = "/shim";
    return c;
  }
  static ContainerSpec C(const std::string& name) {
    return ContainerSpec{.name = name, .argv = {name}};
  }
  std::unique_ptr<Supervisor> Make(ShimConfig config, std::optional<Cgroups> cg = std::nullopt) {
    return std::make_unique<Supervisor>(
        std::move(config),
        SupervisorEnv{.pod_dir = dir_, .base_env = {"PATH=/bin"}, .cgroups = cg, .shim_pid = 77},
        runner_, clock_);
  }
  // Advances the fake clock to the supervisor's next deadline and ticks.
  void AdvanceToDeadline(Supervisor& s) {
    clock_.AdvanceTo(s.NextDeadline());
    s.Tick();
  }

  std::string dir_;
  FakeProcessRunner runner_;
  FakeClock clock_;
};

TEST_F(SupervisorTest, RestartPolicyDecidesWhatHappensAfterAnExit) {
  struct Case {
    std::string name, policy;
    int wait_status;
    bool want_restart;
    std::string want_reason;
  };
  const std::vector<Case> cases = {
      {"never-fail", "Never", Exited(1), false, "Error"},
      {"never-ok", "Never", Exited(0), false, "Completed"},
      {"onfailure-fail", "OnFailure", Exited(2), true, "Error"},
      {"onfailure-ok", "OnFailure", Exited(0), false, "Completed"},
      {"onfailure-signal", "OnFailure", Killed(SIGKILL), true, "Error"},
      {"always-ok", "Always", Exited(0), true, "Completed"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    runner_ = FakeProcessRunner();
    auto sup = Make(Config({C("a")}, c.policy));
    sup->Begin();
    ASSERT_EQ(sup->status().app[0].state, State::kRunning);
    sup->OnExit(runner_.PidOf("a"), c.wait_status);
    const ContainerStatus& st = sup->status().app[0];
    EXPECT_EQ(runner_.Count("a"), c.want_restart ? 2 : 1);  // the first restart is immediate
    EXPECT_EQ(sup->Done(), !c.want_restart);
    if (c.want_restart) {
      EXPECT_EQ(st.state, State::kRunning);
      EXPECT_EQ(st.restart_count, 1);
      ASSERT_TRUE(st.last_terminated.has_value());
      EXPECT_EQ(st.last_terminated->reason, c.want_reason);
    } else {
      EXPECT_EQ(st.state, State::kTerminated);
      EXPECT_EQ(st.reason, c.want_reason);
    }
  }
}

TEST_F(SupervisorTest, CrashLoopBackoffDoublesToTheCap) {
  ShimConfig config = Config({C("a")}, "Always");
  config.backoff_initial = absl::Seconds(10);
  config.backoff_max = absl::Seconds(60);
  auto sup = Make(config);
  sup->Begin();
  const std::vector<int> want_delays = {0, 10, 20, 40, 60, 60};
  for (size_t i = 0; i < want_delays.size(); ++i) {
    SCOPED_TRACE(i);
    const absl::Time died = clock_.Now();
    sup->OnExit(runner_.PidOf("a"), Exited(1));
    if (want_delays[i] == 0) {
      EXPECT_EQ(sup->status().app[0].state, State::kRunning);
      continue;
    }
    const ContainerStatus& st = sup->status().app[0];
    EXPECT_EQ(st.state, State::kWaiting);
    EXPECT_EQ(st.reason, "CrashLoopBackOff");
    EXPECT_TRUE(absl::StrContains(st.message, "back-off")) << st.message;
    EXPECT_EQ(sup->NextDeadline() - died, absl::Seconds(want_delays[i]));
    const int spawns = runner_.Count("a");
    clock_.Advance(absl::Seconds(want_delays[i]) - absl::Milliseconds(1));
    sup->Tick();
    EXPECT_EQ(runner_.Count("a"), spawns);  // not yet
    AdvanceToDeadline(*sup);
    EXPECT_EQ(runner_.Count("a"), spawns + 1);
    EXPECT_EQ(sup->status().app[0].restart_count, static_cast<int>(i) + 1);
  }
}

TEST_F(SupervisorTest, BackoffResetsAfterALongRun) {
  ShimConfig config = Config({C("a")}, "Always");
  config.backoff_initial = absl::Seconds(10);
  config.backoff_max = absl::Seconds(60);
  auto sup = Make(config);
  sup->Begin();
  sup->OnExit(runner_.PidOf("a"), Exited(1));  // immediate restart
  sup->OnExit(runner_.PidOf("a"), Exited(1));  // 10s
  AdvanceToDeadline(*sup);
  clock_.Advance(absl::Minutes(2));  // ran 2×max
  sup->OnExit(runner_.PidOf("a"), Exited(1));
  EXPECT_EQ(sup->status().app[0].state, State::kRunning);  // forgiven: immediate again
}

TEST_F(SupervisorTest, InitContainersRunOneAtATimeThenApps) {
  auto sup = Make(Config({C("app1"), C("app2")}, "Never", {C("i1"), C("i2")}));
  sup->Begin();
  EXPECT_EQ(runner_.spawned.size(), 1u);
  EXPECT_EQ(sup->status().app[0].reason, "PodInitializing");
  sup->OnExit(runner_.PidOf("i1"), Exited(0));
  EXPECT_EQ(runner_.spawned.size(), 2u);
  EXPECT_EQ(runner_.spawned[1].second[0], "i2");
  sup->OnExit(runner_.PidOf("i2"), Exited(0));
  ASSERT_EQ(runner_.spawned.size(), 4u);
  EXPECT_EQ(sup->status().app[0].state, State::kRunning);
  EXPECT_EQ(sup->status().app[1].state, State::kRunning);
  sup->OnExit(runner_.PidOf("app1"), Exited(0));
  EXPECT_FALSE(sup->Done());
  sup->OnExit(runner_.PidOf("app2"), Exited(4));
  EXPECT_TRUE(sup->Done());
  EXPECT_TRUE(sup->status().finished);
}

TEST_F(SupervisorTest, FailedInitContainer) {
  struct Case {
    std::string name, policy;
    bool want_done;
  };
  for (const Case& c : std::vector<Case>{{"never", "Never", true}, {"onfailure", "OnFailure", false}}) {
    SCOPED_TRACE(c.name);
    runner_ = FakeProcessRunner();
    auto sup = Make(Config({C("app")}, c.policy, {C("init")}));
    sup->Begin();
    sup->OnExit(runner_.PidOf("init"), Exited(1));
    EXPECT_EQ(sup->Done(), c.want_done);
    EXPECT_EQ(runner_.Count("app"), 0);
    EXPECT_EQ(runner_.Count("init"), c.want_done ? 1 : 2);
  }
}

TEST_F(SupervisorTest, SidecarStartsBeforeAppsAndIsStoppedWhenAppsEnd) {
  ContainerSpec sidecar = C("side");
  sidecar.restartable_init = true;
  auto sup = Make(Config({C("app")}, "Never", {sidecar}));
  sup->Begin();
  const int side = runner_.PidOf("side"), app = runner_.PidOf("app");
  ASSERT_NE(side, 0);
  ASSERT_NE(app, 0);
  sup->OnExit(side, Exited(1));  // a sidecar restarts even under Never
  const int side2 = runner_.PidOf("side");
  EXPECT_NE(side2, side);
  sup->OnExit(app, Exited(0));
  EXPECT_TRUE(runner_.SentTo(side2, SIGTERM));
  EXPECT_FALSE(sup->Done());
  sup->OnExit(side2, Killed(SIGTERM));
  EXPECT_TRUE(sup->Done());
  EXPECT_EQ(sup->status().init[0].exit_code, 143);
  EXPECT_EQ(sup->status().app[0].reason, "Completed");
}

TEST_F(SupervisorTest, StopTermsThenKillsAfterGrace) {
  auto sup = Make(Config({C("a"), C("b")}, "Always"));
  sup->Begin();
  const int a = runner_.PidOf("a"), b = runner_.PidOf("b");
  sup->RequestStop(absl::Seconds(5));
  EXPECT_TRUE(runner_.SentTo(a, SIGTERM));
  EXPECT_TRUE(runner_.SentTo(b, SIGTERM));
  EXPECT_TRUE(sup->status().stop_requested);
  sup->OnExit(a, Killed(SIGTERM));  // a obeys; no restart while stopping
  EXPECT_EQ(runner_.Count("a"), 1);
  clock_.Advance(absl::Seconds(4));
  sup->Tick();
  EXPECT_FALSE(runner_.SentTo(b, SIGKILL));
  AdvanceToDeadline(*sup);
  EXPECT_TRUE(runner_.SentTo(b, SIGKILL));
  sup->OnExit(b, Killed(SIGKILL));
  EXPECT_TRUE(sup->Done());
  EXPECT_EQ(sup->status().app[0].exit_code, 143);
  EXPECT_EQ(sup->status().app[1].exit_code, 137);
  EXPECT_EQ(sup->status().app[1].signal, SIGKILL);
}

// Node fencing: the deadline the agent keeps moving on with its lease
// renewals. While it moves, nothing happens; once it passes, every container
// is killed at once (no grace, no restart) and the pod ends Evicted.
TEST_F(SupervisorTest, FenceDeadlineKillsThePodOnceItPasses) {
  absl::Time deadline = absl::InfiniteFuture();  // no fence file yet
  int reads = 0;
  auto sup = std::make_unique<Supervisor>(
      Config({C("a"), C("b")}, "Always"),
      SupervisorEnv{.pod_dir = dir_, .base_env = {"PATH=/bin"}, .shim_pid = 77,
                    .fence_deadline = [&] { ++reads; return deadline; }},
      runner_, clock_);
  sup->Begin();
  const int a = runner_.PidOf("a"), b = runner_.PidOf("b");
  ASSERT_NE(a, 0);
  EXPECT_EQ(reads, 1);
  // No deadline: read again every kFenceRecheckPeriod.
  EXPECT_EQ(sup->NextDeadline(), clock_.Now() + kFenceRecheckPeriod);
  deadline = clock_.Now() + absl::Seconds(25);  // the agent wrote one
  AdvanceToDeadline(*sup);
  EXPECT_EQ(reads, 2);
  EXPECT_EQ(sup->NextDeadline(), clock_.Now() + kFenceRecheckPeriod);
  // Renewals move it on: never reached.
  for (int i = 0; i < 5; ++i) {
    deadline = clock_.Now() + absl::Seconds(25);
    AdvanceToDeadline(*sup);
  }
  EXPECT_TRUE(runner_.signals.empty());
  EXPECT_FALSE(sup->Done());
  // The renewals stop: at most kFenceRecheckPeriod before the deadline the
  // shim looks again, and then wakes exactly at it.
  const absl::Time last = clock_.Now() + absl::Seconds(25);
  deadline = last;
  AdvanceToDeadline(*sup);
  AdvanceToDeadline(*sup);
  ASSERT_LT(clock_.Now(), last);
  EXPECT_EQ(sup->NextDeadline(), last);
  AdvanceToDeadline(*sup);
  EXPECT_EQ(clock_.Now(), last);
  EXPECT_TRUE(runner_.SentTo(a, SIGKILL));
  EXPECT_TRUE(runner_.SentTo(b, SIGKILL));
  EXPECT_EQ(sup->status().reason, "Evicted");
  EXPECT_TRUE(absl::StrContains(sup->status().message, "fence period"));
  sup->OnExit(a, Killed(SIGKILL));
  sup->OnExit(b, Killed(SIGKILL));
  EXPECT_EQ(runner_.Count("a"), 1);  // not restarted despite "Always"
  EXPECT_TRUE(sup->Done());
  EXPECT_TRUE(sup->status().finished);
}

// A pod whose deadline has passed when its shim starts (a cut-off agent
// started it) runs nothing; a deadline that is removed (fencing turned off)
// stops nothing.
TEST_F(SupervisorTest, FencedBeforeItStartsRunsNothing) {
  auto sup = std::make_unique<Supervisor>(
      Config({C("a")}),
      SupervisorEnv{.pod_dir = dir_, .shim_pid = 77,
                    .fence_deadline = [this] { return clock_.Now() - absl::Seconds(1); }},
      runner_, clock_);
  sup->Begin();
  EXPECT_EQ(runner_.Count("a"), 0);
  EXPECT_TRUE(sup->Done());
  EXPECT_EQ(sup->status().reason, "Evicted");

  absl::Time deadline = clock_.Now() + absl::Seconds(5);
  auto other = std::make_unique<Supervisor>(
      Config({C("b")}),
      SupervisorEnv{.pod_dir = dir_, .shim_pid = 77,
                    .fence_deadline = [&] { return deadline; }},
      runner_, clock_);
  other->Begin();
  deadline = absl::InfiniteFuture();  // removed before it was due
  AdvanceToDeadline(*other);
  AdvanceToDeadline(*other);
  EXPECT_TRUE(runner_.signals.empty());
  EXPECT_FALSE(other->Done());
  EXPECT_TRUE(other->status().reason.empty());
}

// Controller-driven restarts (JobSet's in-place restart).
TEST_F(SupervisorTest, ControlledPodWaitsOnAFailureUntilANewGeneration) {
  ShimConfig config = Config({C("a"), C("b")}, "OnFailure", {C("init")});
  config.pod.restart_generation = 0;
  auto sup = Make(config);
  sup->Begin();
  sup->OnExit(runner_.PidOf("init"), Exited(0));
  const int a = runner_.PidOf("a"), b = runner_.PidOf("b");
  ASSERT_NE(a, 0);
  sup->OnExit(a, Exited(3));  // Not restarted by OnFailure, and the pod keeps running.
  EXPECT_EQ(runner_.Count("a"), 1);
  EXPECT_TRUE(sup->status().failed);
  EXPECT_EQ(sup->NextDeadline(), absl::InfiniteFuture());
  EXPECT_FALSE(sup->Done());

  // Generation 1: b is stopped (TERM, then KILL after the grace), then all
  // of them run again from the init container.
  sup->RequestRestart(1, /*hold=*/false, absl::Seconds(5));
  EXPECT_TRUE(runner_.SentTo(b, SIGTERM));
  EXPECT_TRUE(sup->status().restarting);
  EXPECT_FALSE(sup->status().failed);
  EXPECT_EQ(sup->status().generation, 1);
  AdvanceToDeadline(*sup);
  EXPECT_TRUE(runner_.SentTo(b, SIGKILL));
  sup->OnExit(b, Killed(SIGKILL));
  EXPECT_FALSE(sup->status().restarting);
  EXPECT_EQ(runner_.Count("init"), 2);
  EXPECT_EQ(runner_.Count("a"), 1);  // After the init container.
  sup->OnExit(runner_.PidOf("init"), Exited(0));
  EXPECT_EQ(runner_.Count("a"), 2);
  EXPECT_EQ(runner_.Count("b"), 2);
  const ContainerStatus& sa = sup->status().app[0];
  EXPECT_EQ(sa.state, State::kRunning);
  EXPECT_EQ(sa.restart_count, 1);
  ASSERT_TRUE(sa.last_terminated.has_value());
  EXPECT_EQ(sa.last_terminated->exit_code, 3);
  EXPECT_EQ(sup->status().app[1].last_terminated->exit_code, 128 + SIGKILL);
  EXPECT_EQ(sup->status().init[0].restart_count, 1);

  // An older or the same generation changes nothing; success ends the pod.
  sup->RequestRestart(1, false, absl::Seconds(5));
  sup->RequestRestart(0, false, absl::Seconds(5));
  EXPECT_EQ(runner_.Count("a"), 2);
  sup->OnExit(runner_.PidOf("a"), Exited(0));
  sup->OnExit(runner_.PidOf("b"), Exited(0));
  EXPECT_TRUE(sup->Done());
}

TEST_F(SupervisorTest, HeldGenerationStartsOnlyWhenReleased) {
  ShimConfig config = Config({C("a")}, "Never");
  config.pod.restart_generation = 2;
  config.pod.restart_hold = true;
  auto sup = Make(config);
  sup->Begin();
  EXPECT_EQ(runner_.Count("a"), 0);  // Held from the start.
  EXPECT_TRUE(sup->status().held);
  sup->RequestRestart(2, /*hold=*/false, absl::Seconds(1));
  EXPECT_EQ(runner_.Count("a"), 1);
  EXPECT_FALSE(sup->status().held);
  // A held restart stops a and waits.
  const int a = runner_.PidOf("a");
  sup->RequestRestart(3, /*hold=*/true, absl::Seconds(1));
  sup->OnExit(a, Killed(SIGTERM));
  EXPECT_EQ(runner_.Count("a"), 1);
  EXPECT_TRUE(sup->status().held);
  EXPECT_EQ(sup->status().app[0].state, State::kWaiting);
  sup->RequestRestart(3, /*hold=*/false, absl::Seconds(1));
  EXPECT_EQ(runner_.Count("a"), 2);
  EXPECT_EQ(sup->status().app[0].restart_count, 1);
}

TEST_F(SupervisorTest, PodsWithoutAGenerationIgnoreRestartsAndStopWins) {
  auto plain = Make(Config({C("a")}, "Never"));
  plain->Begin();
  plain->RequestRestart(1, false, absl::Seconds(1));
  EXPECT_EQ(runner_.Count("a"), 1);
  EXPECT_EQ(plain->status().generation, -1);
  plain->OnExit(runner_.PidOf("a"), Exited(1));
  EXPECT_TRUE(plain->Done());  // Never: the failure ends it.

  ShimConfig config = Config({C("b")}, "Never");
  config.pod.restart_generation = 0;
  auto sup = Make(config);
  sup->Begin();
  const int b = runner_.PidOf("b");
  sup->RequestRestart(1, false, absl::Seconds(5));
  sup->RequestStop(absl::Seconds(5));  // Deleted mid-restart: nothing runs again.
  sup->OnExit(b, Killed(SIGTERM));
  EXPECT_TRUE(sup->Done());
  EXPECT_EQ(runner_.Count("b"), 1);
}

TEST_F(SupervisorTest, StopDuringBackoffEndsWithTheLastRun) {
  ShimConfig config = Config({C("a")}, "Always");
  auto sup = Make(config);
  sup->Begin();
  sup->OnExit(runner_.PidOf("a"), Exited(1));
  sup->OnExit(runner_.PidOf("a"), Exited(2));  // now in CrashLoopBackOff
  ASSERT_EQ(sup->status().app[0].state, State::kWaiting);
  sup->RequestStop(absl::Seconds(30));
  EXPECT_TRUE(sup->Done());
  EXPECT_EQ(sup->status().app[0].state, State::kTerminated);
  EXPECT_EQ(sup->status().app[0].exit_code, 2);
}

TEST_F(SupervisorTest, ReadinessProbe) {
  ContainerSpec c = C("a");
  c.readiness_exec = {"probe"};
  c.readiness_initial_delay_seconds = 3;
  c.readiness_period_seconds = 10;
  c.readiness_failure_threshold = 2;
  c.readiness_timeout_seconds = 1;
  auto sup = Make(Config({c}));
  sup->Begin();
  EXPECT_FALSE(sup->status().app[0].ready);
  EXPECT_EQ(sup->NextDeadline(), clock_.Now() + absl::Seconds(3));
  AdvanceToDeadline(*sup);
  ASSERT_EQ(runner_.Count("probe"), 1);
  sup->OnExit(runner_.PidOf("probe"), Exited(0));
  EXPECT_TRUE(sup->status().app[0].ready);
  struct Step {
    std::string name;
    int probe_exit;  // -1 = time out
    bool want_ready;
  };
  const std::vector<Step> steps = {
      {"one failure is below the threshold", 1, true},
      {"second failure", 1, false},
      {"success", 0, true},
      {"timeout", -1, true},
      {"second timeout", -1, false},
  };
  for (const Step& s : steps) {
    SCOPED_TRACE(s.name);
    AdvanceToDeadline(*sup);  // the period passes: a probe starts
    const int probe = runner_.PidOf("probe");
    if (s.probe_exit < 0) {
      AdvanceToDeadline(*sup);  // its timeout passes
      EXPECT_TRUE(runner_.SentTo(probe, SIGKILL));
      sup->OnExit(probe, Killed(SIGKILL));
    } else {
      sup->OnExit(probe, Exited(s.probe_exit));
    }
    EXPECT_EQ(sup->status().app[0].ready, s.want_ready);
  }
}

TEST_F(SupervisorTest, CgroupLimitsAndOomKilled) {
  const std::string cg_root = dir_ + "/cg";
  std::filesystem::create_directories(cg_root);
  ContainerSpec c = C("a");
  c.cpu_limit_millis = 500;
  c.memory_limit_bytes = 64 << 20;
  auto sup = Make(Config({c}), Cgroups::OpenForTest(cg_root));
  sup->Begin();
  const std::string cg = cg_root + "/batchd/u1/a";
  EXPECT_EQ(*ReadFile(cg + "/cpu.max"), "50000 100000");
  EXPECT_EQ(*ReadFile(cg + "/memory.max"), std::to_string(64 << 20));
  EXPECT_EQ(runner_.requests.back().cgroup, cg);  // the spawned child joins it
  std::ofstream(cg + "/memory.events") << "oom 1\noom_kill 1\n";
  sup->OnExit(runner_.PidOf("a"), Killed(SIGKILL));
  EXPECT_EQ(sup->status().app[0].reason, "OOMKilled");
  EXPECT_EQ(sup->status().app[0].exit_code, 137);
}

TEST_F(SupervisorTest, ContainersRunAsTheirIdentity) {
  ContainerSpec c = C("a");
  c.uid = 1234;
  c.gid = 2345;
  c.groups = {2345, 3000};
  c.no_new_privs = true;
  c.drop_all_capabilities = true;
  auto sup = Make(Config({c}));
  sup->Begin();
  const SpawnRequest& req = runner_.requests.back();
  EXPECT_EQ(req.uid, 1234);
  EXPECT_EQ(req.gid, 2345);
  EXPECT_EQ(req.groups, (std::vector<int64_t>{2345, 3000}));
  EXPECT_TRUE(req.no_new_privs);
  EXPECT_TRUE(req.drop_all_capabilities);
}

TEST_F(SupervisorTest, PidsLimitOnThePodGroup) {
  const std::string cg_root = dir_ + "/cg";
  std::filesystem::create_directories(cg_root);
  std::ofstream(cg_root + "/cgroup.controllers") << "cpu memory pids\n";
  ShimConfig config = Config({C("a"), C("b")});
  config.pod.pids_limit = 100;
  auto sup = Make(config, Cgroups::OpenForTest(cg_root));
  sup->Begin();
  // One limit for the whole pod: its containers' groups are below it.
  EXPECT_EQ(*ReadFile(cg_root + "/batchd/u1/pids.max"), "100");
  EXPECT_EQ(runner_.requests.back().cgroup, cg_root + "/batchd/u1/b");
  EXPECT_EQ(sup->status().limits_warning, "");
}

TEST_F(SupervisorTest, PidsLimitFromTheV1HierarchyOnHybridHosts) {
  const std::string cg_root = dir_ + "/cg", v1 = dir_ + "/pids";
  std::filesystem::create_directories(cg_root);
  std::filesystem::create_directories(v1);
  std::ofstream(cg_root + "/cgroup.controllers") << "hugetlb\n";  // no pids in v2
  ShimConfig config = Config({C("a")});
  config.pod.pids_limit = 64;
  SupervisorEnv env{.pod_dir = dir_, .base_env = {"PATH=/bin"},
                    .cgroups = Cgroups::OpenForTest(cg_root),
                    .pids_v1 = PidsV1::OpenForTest(v1), .shim_pid = 77};
  Supervisor sup(config, std::move(env), runner_, clock_);
  sup.Begin();
  EXPECT_EQ(*ReadFile(v1 + "/batchd/u1/pids.max"), "64");
  EXPECT_EQ(runner_.requests.back().pids_cgroup, v1 + "/batchd/u1");  // each container joins
  EXPECT_EQ(sup.status().limits_warning, "");
}

TEST_F(SupervisorTest, LimitsThatCannotBeAppliedAreReported) {
  ContainerSpec c = C("a");
  c.memory_limit_bytes = 64 << 20;
  ShimConfig config = Config({c});
  config.pod.pids_limit = 64;
  SupervisorEnv env{.pod_dir = dir_, .base_env = {"PATH=/bin"},
                    .cgroups_error = "/sys/fs/cgroup is not a cgroup2 mount", .shim_pid = 77};
  Supervisor sup(config, std::move(env), runner_, clock_);
  sup.Begin();
  EXPECT_EQ(sup.status().limits_warning,
            "pids.max not applied: /sys/fs/cgroup is not a cgroup2 mount; cpu and memory limits "
            "not applied: /sys/fs/cgroup is not a cgroup2 mount");
  // In state.json too: the agent turns it into a condition and an event.
  absl::StatusOr<PodSandboxStatus> st = PodStatusFromJson(*ReadJsonFile(dir_ + "/state.json"));
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(st->limits_warning, sup.status().limits_warning);
}

TEST_F(SupervisorTest, ContainerRequestAndStateFile) {
  ContainerSpec c = C("a");
  c.argv = {"run", "x"};
  c.env = {{"PATH", "/opt"}, {"K", "v"}};
  auto sup = Make(Config({c}));
  sup->Begin();
  const SpawnRequest& req = runner_.requests.back();
  EXPECT_TRUE(req.new_process_group);
  EXPECT_EQ(req.env, (std::vector<std::string>{"PATH=/opt", "K=v"}));
  EXPECT_EQ(req.argv, (std::vector<std::string>{"run", "x"}));  // no wrapper in between
  EXPECT_TRUE(req.die_with_parent);
  EXPECT_EQ(req.cwd, dir_ + "/work");  // the pod user's directory, not the shim's
  EXPECT_EQ(req.cgroup, "");
  EXPECT_EQ(req.uid, -1);  // a spec without an identity: the shim's own
  absl::StatusOr<nlohmann::json> j = ReadJsonFile(dir_ + "/state.json");
  ASSERT_TRUE(j.ok());
  absl::StatusOr<PodSandboxStatus> st = PodStatusFromJson(*j);
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(st->app[0].state, State::kRunning);
  EXPECT_EQ(st->app[0].pid, runner_.PidOf("run"));
  EXPECT_EQ(st->shim_pid, 77);  // Stop signals the pid recorded here
  EXPECT_TRUE(std::filesystem::exists(dir_ + "/a.0.log"));  // flat: no logs/ directories
}

TEST_F(SupervisorTest, EmptyCommandIsAStartError) {
  ContainerSpec c = C("a");
  c.argv.clear();
  auto sup = Make(Config({c}));
  sup->Begin();
  EXPECT_TRUE(sup->Done());
  EXPECT_EQ(sup->status().app[0].reason, "StartError");
  EXPECT_EQ(sup->status().app[0].exit_code, 128);
}

TEST_F(SupervisorTest, SpawnFailuresAreStartErrorsAndProbeFailures) {
  struct Case {
    std::string name, policy;
    bool want_done;
  };
  const std::vector<Case> cases = {{"never", "Never", true}, {"onfailure", "OnFailure", false}};
  for (const Case& tc : cases) {
    SCOPED_TRACE(tc.name);
    runner_.fail = {{"missing", "exec: \"missing\": No such file or directory"}};
    ContainerSpec c = C("missing");
    auto sup = Make(Config({c}, tc.policy));
    sup->Begin();
    const ContainerStatus& st = sup->status().app[0];
    EXPECT_EQ(sup->Done(), tc.want_done);
    EXPECT_EQ(st.exit_code, 128);
    if (tc.want_done) {
      EXPECT_EQ(st.state, State::kTerminated);
      EXPECT_EQ(st.reason, "StartError");
      EXPECT_EQ(st.message, "exec: \"missing\": No such file or directory");
    } else {
      ASSERT_TRUE(st.last_terminated.has_value());
      EXPECT_EQ(st.last_terminated->reason, "StartError");
    }
  }
  // A probe that cannot be spawned counts as a failed probe: never ready.
  runner_.fail = {{"probe", "exec: \"probe\": No such file or directory"}};
  ContainerSpec c = C("a");
  c.readiness_exec = {"probe"};
  c.readiness_period_seconds = 1;
  auto sup = Make(Config({c}));
  sup->Begin();
  for (int i = 0; i < 3; ++i) AdvanceToDeadline(*sup);
  EXPECT_EQ(sup->status().app[0].state, State::kRunning);
  EXPECT_FALSE(sup->status().app[0].ready);
  EXPECT_EQ(runner_.Count("probe"), 0);
}

}  // namespace
}  // namespace batchd::agent

namespace batchd::agent {
namespace {

class SupervisorVolumeTest : public SupervisorTest {
 protected:
  ShimConfig WithVolumes(bool isolate) {
    ContainerSpec c = C("a");
    c.mounts = {{"scratch", "/scratch", "", false}, {"data", "/data", "part", true}};
    ShimConfig config = Config({c});
    config.pod.isolate = isolate;
    config.pod.volumes = {
        {.name = "scratch", .size_limit_bytes = 100, .size_limit_text = "100"},
        {.name = "data", .type = VolumeSpec::Type::kHost, .host_path = dir_ + "/host"}};
    config.has_hosts = true;
    return config;
  }
  std::unique_ptr<Supervisor> MakeWithUsage(ShimConfig config) {
    return std::make_unique<Supervisor>(
        std::move(config),
        SupervisorEnv{.pod_dir = dir_,
                      .base_env = {"PATH=/bin"},
                      .shim_pid = 77,
                      .dir_usage = [this](const std::string& d, int64_t) { return usage_[d]; }},
        runner_, clock_);
  }
  std::map<std::string, int64_t> usage_;
};

bool HasEnv(const SpawnRequest& r, const std::string& kv) {
  return std::find(r.env.begin(), r.env.end(), kv) != r.env.end();
}

TEST_F(SupervisorVolumeTest, IsolatedPodsGetBindMounts) {
  auto sup = MakeWithUsage(WithVolumes(/*isolate=*/true));
  sup->Begin();
  ASSERT_EQ(runner_.requests.size(), 1u);
  const SpawnRequest& r = runner_.requests[0];
  ASSERT_EQ(r.mounts.size(), 2u);
  EXPECT_EQ(r.mounts[0].source, dir_ + "/volumes/scratch");
  EXPECT_EQ(r.mounts[0].target, "/scratch");
  EXPECT_FALSE(r.mounts[0].read_only);
  EXPECT_EQ(r.mounts[1].source, dir_ + "/host/part");
  EXPECT_TRUE(r.mounts[1].read_only);
  EXPECT_TRUE(std::filesystem::is_directory(dir_ + "/host/part"));  // subPath created
  EXPECT_FALSE(HasEnv(r, "BATCHD_HOSTS_FILE=" + dir_ + "/hosts"));
}

TEST_F(SupervisorVolumeTest, WithoutIsolationEnvNamesTheDirectories) {
  auto sup = MakeWithUsage(WithVolumes(/*isolate=*/false));
  sup->Begin();
  const SpawnRequest& r = runner_.requests.at(0);
  EXPECT_TRUE(r.mounts.empty());
  EXPECT_TRUE(HasEnv(r, "BATCHD_VOLUME_SCRATCH=" + dir_ + "/volumes/scratch"));
  EXPECT_TRUE(HasEnv(r, "BATCHD_VOLUME_DATA=" + dir_ + "/host/part"));
  EXPECT_TRUE(HasEnv(r, "BATCHD_HOSTS_FILE=" + dir_ + "/hosts"));
  EXPECT_EQ(VolumeEnvName("my-data.v1"), "BATCHD_VOLUME_MY_DATA_V1");
}

TEST_F(SupervisorVolumeTest, EmptyDirOverItsSizeLimitEvictsThePod) {
  auto sup = MakeWithUsage(WithVolumes(/*isolate=*/true));
  sup->Begin();
  const int pid = runner_.PidOf("a");
  EXPECT_EQ(sup->NextDeadline(), clock_.Now() + kEmptyDirCheckPeriod);
  usage_[dir_ + "/volumes/scratch"] = 100;  // at the limit: fine
  AdvanceToDeadline(*sup);
  EXPECT_TRUE(sup->status().reason.empty());
  usage_[dir_ + "/volumes/scratch"] = 101;
  AdvanceToDeadline(*sup);
  EXPECT_EQ(sup->status().reason, "Evicted");
  EXPECT_EQ(sup->status().message,
            "Usage of EmptyDir volume \"scratch\" exceeds the limit \"100\". ");
  EXPECT_TRUE(runner_.SentTo(pid, SIGKILL));
  sup->OnExit(pid, Killed(SIGKILL));
  EXPECT_TRUE(sup->Done());
  EXPECT_TRUE(sup->status().finished);
}

TEST_F(SupervisorVolumeTest, MemoryVolumesOnTmpfsAreNotWalked) {
  ShimConfig config = WithVolumes(/*isolate=*/true);
  config.pod.volumes[0].memory = true;
  auto sup = std::make_unique<Supervisor>(
      config,
      SupervisorEnv{.pod_dir = dir_,
                    .base_env = {"PATH=/bin"},
                    .dir_usage = [](const std::string&, int64_t) -> int64_t { return 1 << 30; },
                    .memory_volumes_are_tmpfs = true},
      runner_, clock_);
  sup->Begin();
  EXPECT_EQ(sup->NextDeadline(), absl::InfiniteFuture());
}

}  // namespace
}  // namespace batchd::agent

namespace batchd::agent {
namespace {

// Where "/" is not a mount point (a chroot), the shim asks whether the
// mounts of the root's device could carry a mount back to the host.
TEST(PodNamespaceTest, DeviceMountsMayPropagateReadsTheOptionalFields) {
  const std::string private_root =
      "22 27 0:21 / /proc rw,relatime - proc proc rw\n"
      "27 1 254:0 / / rw,relatime - ext4 /dev/vda rw\n"
      "28 27 254:0 /srv /mnt/srv rw,relatime master:4 - ext4 /dev/vda rw\n";
  EXPECT_FALSE(DeviceMountsMayPropagate(private_root, 254, 0));
  // systemd's default: "/" shared with a peer group.
  const std::string shared_root =
      "22 27 0:21 / /proc rw,relatime shared:12 - proc proc rw\n"
      "27 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw\n";
  EXPECT_TRUE(DeviceMountsMayPropagate(shared_root, 254, 0));
  // Only the root's device counts; another shared device does not.
  EXPECT_FALSE(DeviceMountsMayPropagate(
      "27 1 254:0 / / rw - ext4 /dev/vda rw\n30 27 8:1 / /data rw shared:3 - ext4 /dev/sda1 rw\n",
      254, 0));
  // A bind of the same device elsewhere that is shared counts.
  EXPECT_TRUE(DeviceMountsMayPropagate(
      "27 1 254:0 / / rw - ext4 /dev/vda rw\n31 27 254:0 /x /y rw shared:9 - ext4 /dev/vda rw\n",
      254, 0));
  // Not listed, empty, or malformed: assume it may propagate.
  EXPECT_TRUE(DeviceMountsMayPropagate(private_root, 8, 1));
  EXPECT_TRUE(DeviceMountsMayPropagate("", 254, 0));
  EXPECT_TRUE(DeviceMountsMayPropagate("garbage\n27 1 x:y / / rw - ext4 a b\n", 254, 0));
  // "shared:" after the separator (a source or option named so) is not a tag.
  EXPECT_FALSE(DeviceMountsMayPropagate("27 1 254:0 / / rw - ext4 shared:1 rw\n", 254, 0));
}

}  // namespace
}  // namespace batchd::agent
