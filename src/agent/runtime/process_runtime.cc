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
#include "agent/runtime/fence_file.h"
#include "agent/runtime/pod_files.h"
#include "agent/runtime/pod_runtime.h"
#include "agent/runtime/proc_identity.h"
#include "agent/runtime/process_runner.h"
#include "common/logging.h"
#include "common/thread_name.h"

extern char** environ;

namespace batchd::agent {
namespace {

// How many liveness checks pass between sweeps of all spawned shims.
constexpr int kSweepEvery = 64;
// After the launcher failed twice in one Start, this many shims are spawned
// directly before it is tried again (a launcher that cannot run costs no
// extra spawn per pod).
constexpr int kDirectSpawnsAfterLauncherFailure = 64;

bool ValidUid(const std::string& uid) {
  return !uid.empty() && uid != "." && uid != ".." && uid != kShimLogName &&
         uid.find('/') == std::string::npos;
}

// Waits for the shim's "ok"/"busy"/"error: ..." line (or EOF) on `fd`.
// `timed_out`: neither came in time (the shim still holds the pipe: it has not exited).
std::string ReadReady(int fd, absl::Duration timeout, bool& timed_out) {
  std::string out;
  timed_out = false;
  const absl::Time deadline = absl::Now() + timeout;
  char buf[256];
  while (out.find('\n') == std::string::npos) {
    const int64_t ms = absl::ToInt64Milliseconds(deadline - absl::Now());
    if (ms <= 0) {
      timed_out = true;
      break;
    }
    struct pollfd p = {fd, POLLIN, 0};
    int r = poll(&p, 1, static_cast<int>(std::min<int64_t>(ms, 60000)));
    if (r < 0 && errno == EINTR) continue;
    if (r == 0) continue;  // the deadline check above decides
    if (r < 0) break;
    ssize_t n = read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return std::string(absl::StripAsciiWhitespace(out));
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

std::vector<std::string> CurrentEnviron() {
  std::vector<std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) env.emplace_back(*e);
  return env;
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

class ProcessRuntime : public PodRuntime {
 public:
  ProcessRuntime(ProcessRuntimeOptions opts, std::unique_ptr<ProcessRunner> runner)
      : opts_(std::move(opts)), runner_(std::move(runner)) {}
  ~ProcessRuntime() override {
    WatchChanges(nullptr);
    absl::MutexLock lock(&mu_);
    StopLauncher();
    if (shim_log_fd_ >= 0) close(shim_log_fd_);
  }

  absl::Status Start(const PodSandboxSpec& spec) override;
  absl::StatusOr<PodSandboxStatus> Status(const std::string& uid) override;
  absl::Status Stop(const std::string& uid, absl::Duration grace) override;
  absl::Status RestartContainers(const std::string& uid, int64_t generation, bool hold,
                                 absl::Duration grace) override;
  absl::Status Remove(const std::string& uid) override;
  absl::Status WriteHosts(const std::string& uid, const std::string& content) override;
  absl::Status SetFence(const std::string& uid, absl::Duration remaining) override;
  std::vector<std::string> List() override;
  void WatchChanges(std::function<void(const std::string& uid)> on_change) override;
  std::string LogPath(const std::string& uid, const std::string& container,
                      bool previous) override;
  int64_t LogBytes(const std::string& uid) override;
  std::vector<ContainerUsage> ContainerUsages(const std::string& uid) override;
  absl::Status RemoveLogs(const std::string& uid) override;

 private:
  enum class Shim { kNoPod, kAlive, kDead };

  PodPaths Paths(const std::string& uid) const { return PodPaths(opts_.root + "/" + uid); }
  // Tests the flock on spec.json (kNoPod: no spec.json). Counts toward the sweep.
  Shim Probe(const PodPaths& paths) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Reaps `pid` if it is a terminated child; a shim from a past runtime in
  // this process is reaped too (it is not in children_).
  void Reap(int pid) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void SweepShims() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The shared shims.log, opened once (-1 if it cannot be opened).
  int ShimLogFd() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status StartLauncher() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Closes our end (the launcher exits at EOF; its shims run on), kills and
  // reaps it: at shutdown, and when it failed (a hung one's late reply must
  // not reach its successor).
  void StopLauncher() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Has the launcher fork a shim for `paths` answering on `ready_fd`; its pid.
  // Unavailable when the launcher is gone (or hangs): the caller restarts it.
  absl::StatusOr<int> Launch(const PodPaths& paths, int ready_fd)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status SpawnShim(const PodPaths& paths, const std::string& uid)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The node's cgroup facts for every shim (ShimConfig), found on the first
  // call: whether the cgroup root is usable, where the v1 pids hierarchy is.
  void ResolveCgroups() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Blocks (releasing mu_) while `uid`'s Start waits for its shim.
  void AwaitStarted(const std::string& uid) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::StatusOr<PodSandboxStatus> ReadStatus(const PodPaths& paths, bool alive)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Signals a live shim (not its group) at `pid`, verified where its state
  // recorded its start time.
  absl::Status SignalShim(const absl::StatusOr<PodSandboxStatus>& st, int pid, int sig);

  const ProcessRuntimeOptions opts_;
  std::unique_ptr<ProcessRunner> runner_;
  absl::Mutex mu_;
  std::set<int> children_ ABSL_GUARDED_BY(mu_);  // shims this process spawned and has not reaped
  int probes_ ABSL_GUARDED_BY(mu_) = 0;          // liveness checks since the last sweep
  int shim_log_fd_ ABSL_GUARDED_BY(mu_) = -1;
  int launcher_fd_ ABSL_GUARDED_BY(mu_) = -1;      // our end of the launcher's socket (-1: none)
  int launcher_pid_ ABSL_GUARDED_BY(mu_) = 0;
  int direct_spawns_left_ ABSL_GUARDED_BY(mu_) = 0;  // > 0: the launcher failed; spawn shims directly
  bool cgroups_resolved_ ABSL_GUARDED_BY(mu_) = false;
  std::string cgroups_error_ ABSL_GUARDED_BY(mu_);  // non-empty: opts_.cgroup_root is unusable
  std::string pids_v1_root_ ABSL_GUARDED_BY(mu_);   // "" = no writable v1 pids hierarchy
  // Pods whose Start waits for the shim's "ok" without holding mu_ (so pods
  // start in parallel); other calls on such a pod wait on started_cv_, which
  // keeps the per-pod order the single lock used to give.
  std::set<std::string> starting_ ABSL_GUARDED_BY(mu_);
  absl::CondVar started_cv_;
  // WatchChanges: the bound events.sock, an eventfd that stops the thread.
  absl::Mutex watch_mu_;  // serializes WatchChanges calls
  int events_fd_ = -1;
  int events_stop_fd_ = -1;
  std::thread events_thread_;
};

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

int ProcessRuntime::ShimLogFd() {
  if (shim_log_fd_ < 0) {
    const std::string path = opts_.root + "/" + kShimLogName;
    shim_log_fd_ = open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  }
  return shim_log_fd_;
}

absl::Status ProcessRuntime::StartLauncher() {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
    return absl::UnavailableError(absl::StrCat("socketpair: ", std::strerror(errno)));
  }
  const int log_fd = ShimLogFd();
  // Its shims inherit its environment, stdio (shims.log) and working
  // directory: what an exec'ed shim would get from us.
  SpawnRequest req{.argv = {opts_.shim_path, "--launcher"},
                   .env = CurrentEnviron(),
                   .stdout_fd = log_fd,
                   .stderr_fd = log_fd,
                   .extra_fds = {{sv[1], kLauncherFd}},
                   .new_session = true};
  absl::StatusOr<int> pid = runner_->Spawn(req);
  close(sv[1]);
  if (!pid.ok()) {
    close(sv[0]);
    return absl::UnavailableError(pid.status().message());
  }
  launcher_fd_ = sv[0];
  launcher_pid_ = *pid;
  return absl::OkStatus();
}

void ProcessRuntime::StopLauncher() {
  if (launcher_fd_ < 0) return;
  close(launcher_fd_);  // EOF: the launcher exits; its shims run on
  // It would exit by itself; SIGKILL (to our own unreaped child) spares the
  // wait when a fork of this process still holds our end of the socket, and
  // ends one that hangs. The wait blocks: one that closed its socket as it
  // died may not be a zombie yet, and a non-blocking reap would leave it one.
  (void)runner_->Signal(launcher_pid_, SIGKILL, /*group=*/false);
  while (waitpid(launcher_pid_, nullptr, 0) < 0 && errno == EINTR) {
  }
  launcher_fd_ = -1;
  launcher_pid_ = 0;
}

absl::StatusOr<int> ProcessRuntime::Launch(const PodPaths& paths, int ready_fd) {
  struct iovec iov = {const_cast<char*>(paths.dir.data()), paths.dir.size()};
  alignas(struct cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  struct msghdr msg = {};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof(control);
  struct cmsghdr* c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(c), &ready_fd, sizeof(int));
  ssize_t n;
  do {
    n = sendmsg(launcher_fd_, &msg, MSG_NOSIGNAL);  // EPIPE, not SIGPIPE, if it is gone
  } while (n < 0 && errno == EINTR);
  if (n < 0) return absl::UnavailableError(absl::StrCat("send: ", std::strerror(errno)));
  // One request at a time (under mu_), so the next reply is this one's.
  struct pollfd p = {launcher_fd_, POLLIN, 0};
  int r;
  do {
    r = poll(&p, 1, static_cast<int>(absl::ToInt64Milliseconds(opts_.start_timeout)));
  } while (r < 0 && errno == EINTR);
  if (r <= 0) return absl::UnavailableError("no reply");
  int32_t reply = 0;
  do {
    n = recv(launcher_fd_, &reply, sizeof(reply), 0);
  } while (n < 0 && errno == EINTR);
  if (n == 0) return absl::UnavailableError("it exited");
  if (n != static_cast<ssize_t>(sizeof(reply))) {
    return absl::UnavailableError(n < 0 ? absl::StrCat("recv: ", std::strerror(errno))
                                        : "short reply");
  }
  if (reply <= 0) {
    return absl::InternalError(absl::StrCat("spawn pod shim: ", std::strerror(-reply)));
  }
  return reply;
}

// Called with mu_ held; releases it while the shim starts the pod.
absl::Status ProcessRuntime::SpawnShim(const PodPaths& paths, const std::string& uid) {
  int ready[2];
  if (pipe2(ready, O_CLOEXEC) != 0) return absl::InternalError("pipe2 failed");
  absl::StatusOr<int> pid = absl::UnavailableError("launcher not used");
  if (direct_spawns_left_ > 0) {
    --direct_spawns_left_;
  } else {
    // A launcher that died (or never ran) is restarted once. A shim it may
    // have forked before dying answers on the same pipe, and the flock on
    // spec.json lets only one shim hold the pod ("ok" or "busy" both do).
    for (int attempt = 0; attempt < 2; ++attempt) {
      if (launcher_fd_ < 0) {
        if (absl::Status s = StartLauncher(); !s.ok()) {
          pid = s;
          continue;
        }
      }
      pid = Launch(paths, ready[1]);
      if (!absl::IsUnavailable(pid.status())) break;
      StopLauncher();
    }
    if (absl::IsUnavailable(pid.status())) {
      direct_spawns_left_ = kDirectSpawnsAfterLauncherFailure;
      const int log_fd = ShimLogFd();
      if (log_fd >= 0) {
        (void)WriteFd(log_fd,
                      absl::StrCat("batchd-shim launcher: ", pid.status().message(),
                                   "; exec'ing the next ", kDirectSpawnsAfterLauncherFailure,
                                   " shims directly\n"),
                      kShimLogName);
      }
    }
  }
  const bool direct = absl::IsUnavailable(pid.status());
  if (direct) {
    const int log_fd = ShimLogFd();
    SpawnRequest req{.argv = {opts_.shim_path, "--pod-dir", paths.dir, "--ready-fd", "3"},
                     .env = CurrentEnviron(),
                     .stdout_fd = log_fd,
                     .stderr_fd = log_fd,
                     .extra_fds = {{ready[1], 3}},
                     .new_session = true};
    pid = runner_->Spawn(req);
  }
  close(ready[1]);
  if (!pid.ok()) {
    close(ready[0]);
    return pid.status();
  }
  if (direct) children_.insert(*pid);
  starting_.insert(uid);
  mu_.Unlock();
  bool timed_out = false;
  const std::string reply = ReadReady(ready[0], opts_.start_timeout, timed_out);
  close(ready[0]);
  mu_.Lock();
  starting_.erase(uid);
  started_cv_.SignalAll();
  if (reply == "ok" || reply == "busy") return absl::OkStatus();
  // Only a shim not yet reaped may be signalled: our child (unless another
  // call reaped it meanwhile), or the launcher's while it holds the pipe.
  if (direct ? children_.contains(*pid) : timed_out) {
    (void)runner_->Signal(*pid, SIGKILL, /*group=*/false);
  }
  return absl::InternalError(absl::StrCat("pod shim did not start (",
                                          reply.empty() ? "no reply" : reply, "); see ",
                                          opts_.root, "/", kShimLogName));
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

}  // namespace

std::unique_ptr<PodRuntime> NewProcessRuntime(ProcessRuntimeOptions opts) {
  return std::make_unique<ProcessRuntime>(std::move(opts), std::make_unique<PosixProcessRunner>());
}

}  // namespace batchd::agent
