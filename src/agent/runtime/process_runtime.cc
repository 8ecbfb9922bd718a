// The real PodRuntime: one `batchd-shim` per pod, state on disk (pod_files.h).
// Liveness of a shim is its flock on <pod-dir>/spec.json (immune to pid reuse
// and to zombies).
//
// Shims are forked by a launcher (`batchd-shim --launcher`, posix_spawn'ed
// once, on the first Start) instead of exec'ed one by one: a fork of that
// small static process is far cheaper than an exec. The launcher talks over a
// SOCK_SEQPACKET socketpair (protocol in shim_main.cc), reaps its shims and
// exits when this runtime closes the socket (destructor) or dies; the shims
// run on, as before. Its shims are not our children, so they are never
// waited for here (a pid from state.json may since belong to anyone). When
// the launcher is gone it is restarted once; if that fails too, shims are
// exec'ed directly (posix_spawn) for a while. A directly spawned shim is
// reaped when a call finds it dead or finished, and every such child is
// swept now and then (every kSweepEvery calls, and in List), so zombies are
// short-lived and bounded.
//
// The calls are syscall-lean because the agent polls Status for every pod:
// Status is open+flock+close of spec.json and one read of state.json.
//
// The class is declared in internal/process_runtime_impl.h; the launcher and
// the spawning of shims are in process_runtime_launch.cc.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <set>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/ascii.h"
#include "absl/synchronization/mutex.h"
#include "agent/runtime/cgroup.h"
#include "agent/runtime/internal/process_runtime_impl.h"
#include "agent/runtime/fence_file.h"
#include "agent/runtime/pod_files.h"
#include "agent/runtime/pod_runtime.h"
#include "agent/runtime/proc_identity.h"
#include "agent/runtime/process_runner.h"
#include "common/logging.h"
#include "common/thread_name.h"

namespace batchd::agent {
namespace {

// How many liveness checks pass between sweeps of all spawned shims.
constexpr int kSweepEvery = 64;

bool ValidUid(const std::string& uid) {
  return !uid.empty() && uid != "." && uid != ".." && uid != kShimLogName &&
         uid.find('/') == std::string::npos;
}


// state.json, read without a lock: the shim replaces it atomically
// (StateFile), so no call here ever waits on a pod's file lock while holding
// the runtime's mutex. Shims of earlier releases rewrote it in place, so a
// read that raced one of their writes could see a partial file: such a read
// is retried.
absl::StatusOr<nlohmann::json> ReadState(const PodPaths& paths) {
  auto read = [&]() -> absl::StatusOr<nlohmann::json> {
    absl::StatusOr<std::string> text = ReadFile(paths.State());
    if (!text.ok()) return text.status();
    return ParseJsonFile(*text, paths.State());
  };
  absl::StatusOr<nlohmann::json> j = read();
  for (int i = 0; i < 50 && absl::IsDataLoss(j.status()); ++i) {
    if (i > 0) usleep(1000);
    j = read();
  }
  return j;
}


// Pods started by a shim of the previous layout (shim.lock, shim.pid,
// logs/<container>/<run>.log), which keeps running across an agent upgrade.
// Consulted only where the current layout finds no live shim and the pod is
// not finished (or on Remove and a missing log), so current pods pay nothing.
enum class Legacy { kNone, kAlive, kDead };
Legacy LegacyShim(const PodPaths& paths) {
  int fd = open((paths.dir + "/shim.lock").c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Legacy::kNone;
  const bool held = flock(fd, LOCK_EX | LOCK_NB) != 0;
  close(fd);
  return held ? Legacy::kAlive : Legacy::kDead;
}

int LegacyShimPid(const PodPaths& paths) {
  int pid = 0;
  absl::StatusOr<std::string> text = ReadFile(paths.dir + "/shim.pid");
  if (!text.ok() || !absl::SimpleAtoi(absl::StripAsciiWhitespace(*text), &pid)) return 0;
  return pid;
}

std::string LegacyLog(const PodPaths& paths, const std::string& container, int run) {
  return absl::StrCat(paths.dir, "/logs/", container, "/", run, ".log");
}

}  // namespace

namespace internal {


absl::Status ProcessRuntime::SignalShim(const absl::StatusOr<PodSandboxStatus>& st, int pid,
                                        int sig) {
  // The shim holds the pod's flock (the caller checked), so it runs in this
  // boot; its recorded start time, where there is one, makes sure the pid
  // is still it (through a pidfd). A shim of an earlier release recorded
  // none: its pid is signalled as is, as before.
  if (st.ok() && st->shim_pid == pid && st->shim_start_ticks != 0) {
    return SignalRecorded(ProcessIdentity{.pid = pid, .start_ticks = st->shim_start_ticks,
                                          .boot_id = st->boot_id.empty() ? BootId() : st->boot_id},
                          sig, /*group=*/false);
  }
  return runner_->Signal(pid, sig, /*group=*/false);
}

void ProcessRuntime::ResolveCgroups() {
  if (cgroups_resolved_ || opts_.cgroup_root.empty()) return;
  cgroups_resolved_ = true;
  if (absl::StatusOr<Cgroups> cg = Cgroups::Open(opts_.cgroup_root); !cg.ok()) {
    cgroups_error_ = std::string(cg.status().message());
    BATCHD_LOG_WARN("pod runtime: no cgroup limits for pods: {}", cg.status().ToString());
  }
  if (absl::StatusOr<PidsV1> v1 = PidsV1::Find(); v1.ok()) pids_v1_root_ = v1->root();
}

void ProcessRuntime::AwaitStarted(const std::string& uid) {
  while (starting_.contains(uid)) started_cv_.Wait(&mu_);
}

void ProcessRuntime::Reap(int pid) {
  // Only our own children: a launcher's shim is not one, and its recorded pid
  // may belong to another process (another child of ours) by now.
  if (children_.contains(pid) && runner_->TryReap(pid).has_value()) children_.erase(pid);
}

void ProcessRuntime::SweepShims() {
  probes_ = 0;
  for (auto it = children_.begin(); it != children_.end();) {
    it = runner_->TryReap(*it).has_value() ? children_.erase(it) : std::next(it);
  }
  if (launcher_pid_ > 0 && runner_->TryReap(launcher_pid_).has_value()) {  // it died
    close(launcher_fd_);
    launcher_fd_ = -1;
    launcher_pid_ = 0;
  }
}

ProcessRuntime::Shim ProcessRuntime::Probe(const PodPaths& paths) {
  if (++probes_ >= kSweepEvery) SweepShims();
  int fd = open(paths.Spec().c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Shim::kNoPod;
  const bool held = flock(fd, LOCK_EX | LOCK_NB) != 0;
  close(fd);  // releases the lock if this took it
  return held ? Shim::kAlive : Shim::kDead;
}

absl::Status ProcessRuntime::Start(const PodSandboxSpec& spec) {
  if (!ValidUid(spec.uid)) return absl::InvalidArgumentError("pod uid is not a file name");
  absl::MutexLock lock(&mu_);
  AwaitStarted(spec.uid);
  const PodPaths paths = Paths(spec.uid);
  // A directory this call creates holds nothing yet: no state, no shim, no stop file.
  // 0711: the pod's user may reach its volumes and hosts file by path but
  // neither list nor change the shim's files (its own directory is work/).
  bool fresh = mkdir(paths.dir.c_str(), 0711) == 0;
  if (!fresh && errno == ENOENT) {  // no root yet
    if (absl::Status s = MakeDirs(paths.dir); !s.ok()) return s;
    fresh = true;
  } else if (!fresh && errno != EEXIST) {
    return absl::InternalError(absl::StrCat("mkdir ", paths.dir, ": ", std::strerror(errno)));
  }
  if (!fresh && std::filesystem::exists(paths.State())) return absl::OkStatus();
  // spec.json is written in place (no temp file and rename: one inode less per
  // pod), under the shim's own flock, which makes that as safe as a rename:
  // - a live shim holds the lock, so the flock fails and the pod is left alone
  //   (it is started);
  // - a shim that has not taken the lock yet (one a crashed agent spawned)
  //   takes it only after this write is complete, and reads spec.json only
  //   once it holds the lock; it then runs the pod and ours answers "busy";
  // - a crash mid-write leaves a partial spec.json with no state.json and no
  //   shim: Status never parses spec.json (such a pod reads as finished with
  //   no containers, as one whose shim never started), and the next Start
  //   rewrites it, since it skips only when state.json exists or a shim is
  //   alive. No shim is spawned before the write completed.
  // 0600: the resolved environment may hold Secret values.
  int fd = open(paths.Spec().c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) {
    return absl::InternalError(absl::StrCat("open ", paths.Spec(), ": ", std::strerror(errno)));
  }
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    close(fd);
    return absl::OkStatus();  // a live shim holds the pod
  }
  ResolveCgroups();
  ShimConfig config{.pod = spec,
                    .shim_path = opts_.shim_path,
                    .cgroup_root = opts_.cgroup_root,
                    .backoff_initial = opts_.backoff_initial,
                    .backoff_max = opts_.backoff_max,
                    .log_rotation = {.max_bytes = opts_.log_max_bytes,
                                     .max_files = opts_.log_max_files}};
  if (cgroups_resolved_) {
    config.cgroups_error = cgroups_error_;
    config.pids_v1_root = pids_v1_root_;
  }
  const std::string text = ShimConfigToJson(config).dump(2);
  absl::Status s = WriteFd(fd, text, paths.Spec());
  if (s.ok() && !fresh && ftruncate(fd, static_cast<off_t>(text.size())) != 0) {
    s = absl::InternalError(absl::StrCat("truncate ", paths.Spec(), ": ", std::strerror(errno)));
  }
  // The hosts file exists before the shim that bind-mounts it, the fence
  // deadline before the shim that enforces it.
  if (s.ok() && !spec.hosts.empty()) s = RewriteInPlace(paths.Hosts(), spec.hosts);
  if (s.ok() && spec.fence_remaining != absl::InfiniteDuration()) {
    s = WriteFenceDeadline(paths.dir, spec.fence_remaining);
  }
  close(fd);  // releases the lock: the shim takes it next
  if (!s.ok()) return s;
  if (!fresh) unlink(paths.Stop().c_str());
  return SpawnShim(paths, spec.uid);
}

// Reads state.json. A dead shim that did not finish the pod (it was killed):
// containers recorded as running are unknown now; their groups are killed and
// the corrected state is written back so this happens once. A dead or
// finished pod's shim is reaped here (by the pid it recorded).
absl::StatusOr<PodSandboxStatus> ProcessRuntime::ReadStatus(const PodPaths& paths, bool alive) {
  absl::StatusOr<nlohmann::json> j;
  PodSandboxStatus st;
  auto read = [&]() -> absl::Status {
    j = ReadState(paths);
    st = PodSandboxStatus{};
    if (j.ok()) {
      absl::StatusOr<PodSandboxStatus> parsed = PodStatusFromJson(*j);
      if (!parsed.ok()) return parsed.status();
      st = *std::move(parsed);
    }
    st.found = true;
    st.supervisor_alive = alive;
    return absl::OkStatus();
  };
  if (absl::Status s = read(); !s.ok()) return s;
  if (!alive || st.finished) Reap(st.shim_pid);
  if (alive || st.finished) return st;
  if (const Legacy legacy = LegacyShim(paths); legacy == Legacy::kAlive) {
    st.supervisor_alive = true;
    return st;
  } else if (legacy == Legacy::kDead) {
    // That shim may have finished the pod after the read above: read again.
    if (absl::Status s = read(); !s.ok()) return s;
    if (st.finished) return st;
  }
  const absl::Time now = absl::Now();
  // What the dead shim left running is killed through the pod's cgroup when
  // there is one (it holds every process of the pod, and does not outlive a
  // reboot); otherwise by each recorded process group, only when it is
  // verifiably the container's: same boot, same start time (proc_identity.h).
  bool cgroup_killed = false;
  const std::string boot = BootId();
  const bool other_boot = !st.boot_id.empty() && st.boot_id != boot;
  if (other_boot) {
    // Nothing of that boot runs any more: its pids and even a cgroup of the
    // same name (in a simulated reboot) are not its processes.
    BATCHD_LOG_WARN("pod runtime: {} was recorded in another boot ({}, now {}); nothing of it "
                    "is signalled", paths.dir, st.boot_id, boot);
  } else if (!opts_.cgroup_root.empty()) {
    if (absl::StatusOr<Cgroups> cg = Cgroups::Open(opts_.cgroup_root); cg.ok()) {
      cgroup_killed = KillCgroup(cg->PodDir(paths.dir.substr(paths.dir.find_last_of('/') + 1))).ok();
    }
  }
  for (auto* list : {&st.init, &st.app}) {
    for (ContainerStatus& c : *list) {
      if (c.state != ContainerStatus::State::kRunning) continue;
      if (c.pid > 0 && !cgroup_killed && !other_boot) {
        const absl::Status k = SignalRecorded(
            ProcessIdentity{.pid = c.pid, .start_ticks = c.start_ticks, .boot_id = st.boot_id},
            SIGKILL, /*group=*/true);
        if (!k.ok() && !absl::IsNotFound(k)) {
          BATCHD_LOG_WARN("pod runtime: container {} of {}: {}", c.name, paths.dir, k.ToString());
        }
      }
      c.state = ContainerStatus::State::kTerminated;
      c.reason = "ContainerStatusUnknown";
      c.message = "The container could not be located when the pod was terminated";
      c.exit_code = 137;
      c.signal = 0;
      c.finished_at = now;
      c.ready = false;
      c.pid = 0;
      c.start_ticks = 0;
    }
  }
  st.finished = true;
  if (j.ok()) (void)WriteFileAtomic(paths.State(), PodStatusToJson(st).dump());
  return st;
}

absl::Status ProcessRuntime::SetFence(const std::string& uid, absl::Duration remaining) {
  if (!ValidUid(uid)) return absl::NotFoundError("no such pod");
  // No lock: only the agent writes the file, and a rename replaces it whole.
  return WriteFenceDeadline(Paths(uid).dir, remaining);
}

absl::Status ProcessRuntime::WriteHosts(const std::string& uid, const std::string& content) {
  if (!ValidUid(uid)) return absl::NotFoundError("no such pod");
  const PodPaths paths = Paths(uid);
  // No lock: only the agent writes the file, one reconcile per pod at a time.
  if (!std::filesystem::exists(paths.Hosts())) {
    return absl::NotFoundError(absl::StrCat("pod ", uid, " has no hosts file"));
  }
  return RewriteInPlace(paths.Hosts(), content);
}

absl::StatusOr<PodSandboxStatus> ProcessRuntime::Status(const std::string& uid) {
  if (!ValidUid(uid)) return PodSandboxStatus{};
  absl::MutexLock lock(&mu_);
  AwaitStarted(uid);
  const PodPaths paths = Paths(uid);
  const Shim shim = Probe(paths);  // before reading: a dead shim's state is final
  if (shim == Shim::kNoPod) return PodSandboxStatus{};
  return ReadStatus(paths, shim == Shim::kAlive);
}

absl::Status ProcessRuntime::Stop(const std::string& uid, absl::Duration grace) {
  if (!ValidUid(uid)) return absl::OkStatus();
  absl::MutexLock lock(&mu_);
  AwaitStarted(uid);
  const PodPaths paths = Paths(uid);
  const Shim shim = Probe(paths);
  if (shim == Shim::kNoPod) return absl::OkStatus();
  if (shim == Shim::kDead) {
    absl::StatusOr<PodSandboxStatus> st = ReadStatus(paths, false);
    if (!st.ok() || !st->supervisor_alive) return st.status();  // alive: a legacy shim
  }
  const int64_t ms = std::max<int64_t>(0, absl::ToInt64Milliseconds(grace));
  if (absl::Status s = WriteFileAtomic(paths.Stop(), std::to_string(ms)); !s.ok()) return s;
  // A live shim has recorded its pid: it writes state.json before it answers "ok".
  absl::StatusOr<nlohmann::json> j = ReadState(paths);
  absl::StatusOr<PodSandboxStatus> st =
      j.ok() ? PodStatusFromJson(*j) : absl::StatusOr<PodSandboxStatus>(j.status());
  int pid = st.ok() ? st->shim_pid : 0;
  if (pid <= 0) pid = LegacyShimPid(paths);
  if (pid <= 0) return absl::InternalError(absl::StrCat("no shim pid in ", paths.State()));
  absl::Status s = SignalShim(st, pid, SIGTERM);
  return absl::IsNotFound(s) ? absl::OkStatus() : s;
}

absl::Status ProcessRuntime::RestartContainers(const std::string& uid, int64_t generation,
                                               bool hold, absl::Duration grace) {
  if (!ValidUid(uid)) return absl::InvalidArgumentError("pod uid is not a file name");
  absl::MutexLock lock(&mu_);
  AwaitStarted(uid);
  const PodPaths paths = Paths(uid);
  if (Probe(paths) != Shim::kAlive) {
    return absl::FailedPreconditionError(absl::StrCat("pod ", uid, " is not running"));
  }
  absl::StatusOr<nlohmann::json> j = ReadState(paths);
  absl::StatusOr<PodSandboxStatus> st =
      j.ok() ? PodStatusFromJson(*j) : absl::StatusOr<PodSandboxStatus>(j.status());
  if (!st.ok()) return st.status();
  if (st->generation < 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("pod ", uid, " was not started for controller-driven restarts"));
  }
  const int64_t ms = std::max<int64_t>(0, absl::ToInt64Milliseconds(grace));
  if (absl::Status w = WriteFileAtomic(paths.Restart(),
                                      absl::StrCat(generation, " ", hold ? 1 : 0, " ", ms));
      !w.ok()) {
    return w;
  }
  if (st->shim_pid <= 0) return absl::InternalError(absl::StrCat("no shim pid in ", paths.State()));
  absl::Status s = SignalShim(st, st->shim_pid, SIGUSR1);
  return absl::IsNotFound(s) ? absl::FailedPreconditionError("the pod's shim is gone") : s;
}

absl::Status ProcessRuntime::Remove(const std::string& uid) {
  if (!ValidUid(uid)) return absl::InvalidArgumentError("pod uid is not a file name");
  absl::MutexLock lock(&mu_);
  AwaitStarted(uid);
  const PodPaths paths = Paths(uid);
  const Shim shim = Probe(paths);
  if (shim == Shim::kAlive || (shim == Shim::kDead && LegacyShim(paths) == Legacy::kAlive)) {
    return absl::FailedPreconditionError(absl::StrCat("pod ", uid, " is still running"));
  }
  ResolveCgroups();
  if (cgroups_resolved_ && cgroups_error_.empty()) {
    if (absl::StatusOr<Cgroups> cg = Cgroups::Open(opts_.cgroup_root); cg.ok()) cg->RemovePod(uid);
  }
  if (!pids_v1_root_.empty()) PidsV1::At(pids_v1_root_).RemovePod(uid);
  return RemoveTree(paths.dir);
}

void ProcessRuntime::WatchChanges(std::function<void(const std::string& uid)> on_change) {
  absl::MutexLock lock(&watch_mu_);
  if (events_thread_.joinable()) {
    uint64_t one = 1;
    (void)!write(events_stop_fd_, &one, sizeof(one));
    events_thread_.join();
    close(events_fd_);
    close(events_stop_fd_);
    events_fd_ = events_stop_fd_ = -1;
  }
  if (!on_change) return;
  sockaddr_un addr;
  if (!EventsSocketAddress(opts_.root, &addr)) {
    BATCHD_LOG_WARN("pod runtime: {}/{} is too long for a socket path; pod changes are polled only",
                    opts_.root, kEventsSocketName);
    return;
  }
  const std::string path = addr.sun_path;
  const int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  const int stop_fd = eventfd(0, EFD_CLOEXEC);
  unlink(path.c_str());  // a previous runtime's
  if (fd < 0 || stop_fd < 0 ||
      bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0) {
    BATCHD_LOG_WARN("pod runtime: cannot listen on {}: {}; pod changes are polled only", path,
                    std::strerror(errno));
    if (fd >= 0) close(fd);
    if (stop_fd >= 0) close(stop_fd);
    return;
  }
  events_fd_ = fd;
  events_stop_fd_ = stop_fd;
  events_thread_ = std::thread([fd, stop_fd, fn = std::move(on_change)] {
    SetThreadName("pod-events");
    char buf[256];
    for (;;) {
      pollfd p[2] = {{fd, POLLIN, 0}, {stop_fd, POLLIN, 0}};
      if (poll(p, 2, -1) < 0) {
        if (errno == EINTR) continue;
        return;
      }
      if (p[1].revents != 0) return;
      for (;;) {
        const ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
        if (n <= 0) break;
        fn(std::string(buf, static_cast<size_t>(n)));
      }
    }
  });
}

std::vector<std::string> ProcessRuntime::List() {
  absl::MutexLock lock(&mu_);
  SweepShims();
  std::vector<std::string> uids;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(opts_.root, ec)) {
    if (std::filesystem::exists(entry.path() / "spec.json", ec)) {
      uids.push_back(entry.path().filename().string());
    }
  }
  std::sort(uids.begin(), uids.end());
  return uids;
}

namespace {
// Whether `name` is a container log of the current layout: <c>.<run>.log
// or a rotation of one (<c>.<run>.log.<n>).
bool IsLogFile(const std::string& name) {
  const size_t at = name.find(".log");
  return at != std::string::npos && at > 0 &&
         (at + 4 == name.size() || name[at + 4] == '.');
}
}  // namespace

std::vector<PodRuntime::ContainerUsage> ProcessRuntime::ContainerUsages(const std::string& uid) {
  std::vector<ContainerUsage> out;
  if (!ValidUid(uid)) return out;
  absl::StatusOr<PodSandboxStatus> st = Status(uid);
  if (!st.ok() || !st->found || st->finished) return out;
  for (const std::vector<ContainerStatus>* list : {&st->init, &st->app}) {
    for (const ContainerStatus& c : *list) {
      if (c.state != ContainerStatus::State::kRunning || c.pid <= 0) continue;
      Usage cg;
      if (!opts_.cgroup_root.empty()) {
        cg = ReadCgroupUsage(absl::StrCat(opts_.cgroup_root, "/batchd/", uid, "/", c.name));
      }
      out.push_back({c.name, MergeUsage(cg, ReadProcessUsage("/proc", c.pid, c.start_ticks))});
    }
  }
  return out;
}

int64_t ProcessRuntime::LogBytes(const std::string& uid) {
  if (!ValidUid(uid)) return 0;
  int64_t total = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(Paths(uid).dir, ec)) {
    if (!IsLogFile(e.path().filename().string())) continue;
    const uintmax_t n = e.file_size(ec);
    if (!ec) total += static_cast<int64_t>(n);
  }
  return total;
}

absl::Status ProcessRuntime::RemoveLogs(const std::string& uid) {
  if (!ValidUid(uid)) return absl::InvalidArgumentError("pod uid is not a file name");
  {
    absl::MutexLock lock(&mu_);
    AwaitStarted(uid);
    if (Probe(Paths(uid)) == Shim::kAlive) {
      return absl::FailedPreconditionError(absl::StrCat("pod ", uid, " is still running"));
    }
  }
  std::error_code ec;
  std::vector<std::string> logs;
  for (const auto& e : std::filesystem::directory_iterator(Paths(uid).dir, ec)) {
    if (IsLogFile(e.path().filename().string())) logs.push_back(e.path().string());
  }
  for (const std::string& p : logs) unlink(p.c_str());
  return absl::OkStatus();
}

std::string ProcessRuntime::LogPath(const std::string& uid, const std::string& container,
                                    bool previous) {
  if (!ValidUid(uid)) return "";
  absl::MutexLock lock(&mu_);
  AwaitStarted(uid);
  const PodPaths paths = Paths(uid);
  absl::StatusOr<nlohmann::json> j = ReadState(paths);
  if (!j.ok()) return "";
  absl::StatusOr<PodSandboxStatus> st = PodStatusFromJson(*j);
  if (!st.ok()) return "";
  for (const auto* list : {&st->init, &st->app}) {
    for (const ContainerStatus& c : *list) {
      if (c.name != container) continue;
      const int run = previous ? c.restart_count - 1 : c.restart_count;
      if (run < 0) return "";
      std::string path = paths.Log(container, run);
      if (std::filesystem::exists(path)) return path;
      path = LegacyLog(paths, container, run);
      return std::filesystem::exists(path) ? path : "";
    }
  }
  return "";
}

}  // namespace internal

std::unique_ptr<PodRuntime> NewProcessRuntime(ProcessRuntimeOptions opts) {
  return std::make_unique<internal::ProcessRuntime>(std::move(opts),
                                                    std::make_unique<PosixProcessRunner>());
}

}  // namespace batchd::agent
