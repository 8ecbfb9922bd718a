#include "agent/runtime/pod_files.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <iterator>
#include <set>
#include <thread>

#include "agent/runtime/cgroup.h"
#include "gtest/gtest.h"

namespace batchd::agent {
namespace {

TEST(PodFilesTest, ShimConfigRoundTrips) {
  ShimConfig c;
  c.pod = PodSandboxSpec{.uid = "u", .ns = "ns", .name = "p"};
  c.pod.restart_policy = "OnFailure";
  c.pod.termination_grace_seconds = 7;
  c.pod.active_deadline_seconds = 99;
  ContainerSpec s{.name = "a", .image = "busybox", .argv = {"sh", "-c", "x"},
                  .env = {{"K", "v"}, {"K2", ""}}, .working_dir = "/w",
                  .cpu_limit_millis = 250, .memory_limit_bytes = 1 << 20,
                  .readiness_exec = {"true"}, .readiness_period_seconds = 3,
                  .readiness_initial_delay_seconds = 4, .readiness_timeout_seconds = 5,
                  .readiness_failure_threshold = 6, .readiness_success_threshold = 2,
                  .restartable_init = true};
  c.pod.init_containers = {s};
  c.pod.containers = {ContainerSpec{.name = "b", .argv = {"b"}}};
  c.shim_path = "/bin/shim";
  c.cgroup_root = "/sys/fs/cgroup";
  c.backoff_initial = absl::Milliseconds(15);
  c.backoff_max = absl::Seconds(3);
  absl::StatusOr<ShimConfig> back = ShimConfigFromJson(ShimConfigToJson(c));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(ShimConfigToJson(*back), ShimConfigToJson(c));
  const ContainerSpec& r = back->pod.init_containers[0];
  EXPECT_EQ(r.env, s.env);
  EXPECT_EQ(r.readiness_success_threshold, 2);
  EXPECT_TRUE(r.restartable_init);
  EXPECT_EQ(back->backoff_initial, absl::Milliseconds(15));
  EXPECT_EQ(back->pod.active_deadline_seconds, 99);
  // The runtime's cgroup findings: absent unless it made them.
  EXPECT_EQ(back->cgroups_error, "");
  EXPECT_FALSE(back->pids_v1_root.has_value());
  c.cgroups_error = "/sys/fs/cgroup is not a cgroup2 mount";
  c.pids_v1_root = "";
  back = ShimConfigFromJson(ShimConfigToJson(c));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->cgroups_error, c.cgroups_error);
  EXPECT_EQ(back->pids_v1_root, std::optional<std::string>(""));
  c.pids_v1_root = "/sys/fs/cgroup/pids";
  EXPECT_EQ(ShimConfigFromJson(ShimConfigToJson(c))->pids_v1_root, c.pids_v1_root);
}

TEST(PodFilesTest, PodStatusRoundTripsWithNanosecondTimes) {
  PodSandboxStatus s;
  s.finished = true;
  s.stop_requested = true;
  s.started_at = absl::FromUnixNanos(1767225600123456789);
  s.shim_pid = 4242;
  ContainerStatus c{.name = "a", .state = ContainerStatus::State::kTerminated,
                    .reason = "Error", .message = "m", .exit_code = 137, .signal = 9,
                    .started_at = absl::FromUnixNanos(1767225601000000001),
                    .finished_at = absl::FromUnixNanos(1767225602000000002),
                    .restart_count = 3, .ready = false, .started = true, .pid = 0};
  c.last_terminated = TerminatedState{.exit_code = 1, .reason = "Error",
                                      .started_at = absl::FromUnixSeconds(5),
                                      .finished_at = absl::FromUnixSeconds(6)};
  s.app = {c};
  s.init = {ContainerStatus{.name = "i", .reason = "PodInitializing"}};
  absl::StatusOr<PodSandboxStatus> back = PodStatusFromJson(PodStatusToJson(s));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_TRUE(back->found);
  EXPECT_EQ(PodStatusToJson(*back), PodStatusToJson(s));
  EXPECT_EQ(back->app[0].finished_at, c.finished_at);
  EXPECT_EQ(back->app[0].last_terminated->finished_at, absl::FromUnixSeconds(6));
  EXPECT_EQ(back->init[0].started_at, absl::InfinitePast());  // unset stays unset
  EXPECT_EQ(back->shim_pid, 4242);
}

TEST(PodFilesTest, StateWithoutShimPidReadsAsZero) {
  absl::StatusOr<PodSandboxStatus> st = PodStatusFromJson({{"finished", true}});
  ASSERT_TRUE(st.ok()) << st.status();
  EXPECT_EQ(st->shim_pid, 0);
}

TEST(PodFilesTest, ContainerLogsLieFlatInThePodDir) {
  EXPECT_EQ(PodPaths("/r/u").Log("main", 3), "/r/u/main.3.log");
}

TEST(PodFilesTest, BadJsonIsAnErrorNotACrash) {
  EXPECT_FALSE(ShimConfigFromJson(nlohmann::json::object()).ok());  // uid required
  EXPECT_FALSE(ShimConfigFromJson({{"uid", 3}}).ok());
  EXPECT_FALSE(PodStatusFromJson({{"app", {{{"state", "running"}}}}}).ok());  // no name
}

TEST(PodFilesTest, DecodeWaitStatus) {
  struct Case {
    std::string name;
    int wait_status;
    int want_code, want_signal;
  };
  const std::vector<Case> cases = {
      {"exit 0", 0, 0, 0},
      {"exit 3", 3 << 8, 3, 0},
      {"SIGTERM", SIGTERM, 143, SIGTERM},
      {"SIGKILL", SIGKILL, 137, SIGKILL},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    ExitInfo e = DecodeWaitStatus(c.wait_status);
    EXPECT_EQ(e.exit_code, c.want_code);
    EXPECT_EQ(e.signal, c.want_signal);
  }
}

TEST(PodFilesTest, AtomicWriteAndRead) {
  char tmpl[] = "/tmp/batchd-pf-XXXXXX";
  const std::string dir = mkdtemp(tmpl);
  ASSERT_TRUE(WriteFileAtomic(dir + "/f", "one").ok());
  ASSERT_TRUE(WriteFileAtomic(dir + "/f", "two").ok());
  EXPECT_EQ(*ReadFile(dir + "/f"), "two");
  EXPECT_FALSE(std::filesystem::exists(dir + "/f.tmp"));
  EXPECT_EQ(ReadFile(dir + "/missing").status().code(), absl::StatusCode::kNotFound);
  ASSERT_TRUE(WriteFileAtomic(dir + "/bad.json", "{").ok());
  EXPECT_FALSE(ReadJsonFile(dir + "/bad.json").ok());
  EXPECT_FALSE(WriteFileAtomic(dir + "/no/such/dir/f", "x").ok());
  std::filesystem::remove_all(dir);
}

// The state file is replaced atomically: every write leaves exactly the
// new content (no tail of a longer earlier one), no temp file behind, and a
// reader that opened the file before a write still reads a whole old state.
TEST(PodFilesTest, StateFileWritesAtomically) {
  char tmpl[] = "/tmp/batchd-pf-XXXXXX";
  const std::string dir = mkdtemp(tmpl);
  const std::string f = dir + "/state.json";
  StateFile state(f);
  ASSERT_TRUE(state.Write("one, the longest").ok());
  EXPECT_EQ(*ReadFileShared(f), "one, the longest");
  const int reader = open(f.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(reader, 0);
  for (const std::string text : {"two", "three!", ""}) {
    SCOPED_TRACE(text);
    ASSERT_TRUE(state.Write(text).ok());
    EXPECT_EQ(*ReadFile(f), text);
  }
  EXPECT_EQ(*ReadFd(reader, f), "one, the longest");
  close(reader);
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir),
                          std::filesystem::directory_iterator()),
            1);
  EXPECT_EQ(ReadFileShared(dir + "/missing").status().code(), absl::StatusCode::kNotFound);
  StateFile nowhere(dir + "/no/such/dir/f");
  EXPECT_FALSE(nowhere.Write("x").ok());
  std::filesystem::remove_all(dir);
}

// A reader holding a read lock (as earlier readers did) never holds up a write.
TEST(PodFilesTest, StateFileWriteDoesNotWaitForReaders) {
  char tmpl[] = "/tmp/batchd-pf-XXXXXX";
  const std::string dir = mkdtemp(tmpl);
  const std::string f = dir + "/state.json";
  StateFile state(f);
  ASSERT_TRUE(state.Write("old").ok());
  const int reader = open(f.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(reader, 0);
  struct flock rd {};
  rd.l_type = F_RDLCK;
  rd.l_whence = SEEK_SET;
  ASSERT_EQ(fcntl(reader, F_OFD_SETLK, &rd), 0);
  ASSERT_TRUE(state.Write("new").ok());  // would block forever if it took a write lock
  EXPECT_EQ(*ReadFd(reader, f), "old");
  EXPECT_EQ(*ReadFile(f), "new");
  close(reader);
  std::filesystem::remove_all(dir);
}

TEST(CgroupTest, CpuMaxAndDetection) {
  EXPECT_EQ(CpuMaxValue(0), "max 100000");
  EXPECT_EQ(CpuMaxValue(1500), "150000 100000");
  EXPECT_EQ(CpuMaxValue(1), "100 100000");
  EXPECT_FALSE(Cgroups::Open("/tmp").ok());  // not a cgroup2 mount
  EXPECT_FALSE(Cgroups::Open("").ok());
}

}  // namespace
}  // namespace batchd::agent
