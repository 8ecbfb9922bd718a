// batchd-shim: the per-pod supervisor (the containerd-shim role).
//
//   batchd-shim --launcher
//       The runtime's shim launcher (one per runtime): forks a shim per
//       request received on the socket at fd 3 (see LauncherMain), so that
//       starting a pod's shim costs a fork instead of an exec.
//
//   batchd-shim --pod-dir DIR [--ready-fd N]
//       Supervises the pod described by DIR/spec.json until nothing more runs,
//       holding an flock on DIR/spec.json while alive (its pid goes into
//       DIR/state.json). Writes "ok\n" (or "busy\n" when another shim holds
//       the pod, or "error: ...\n") to the ready fd once it holds the pod.
//       SIGTERM stops the pod with the grace period found in DIR/stop
//       (milliseconds; default: the spec's). SIGUSR1 re-runs the pod's
//       containers as DIR/restart asks ("<generation> <hold> <grace ms>",
//       Supervisor::RequestRestart). Container logs go through a pipe per
//       container run that the shim copies to DIR/<container>.<run>.log,
//       rotated by size and count (log_files.h). Past the deadline in DIR/fence
//       (node fencing, fence_file.h) the pod is killed at once and ends
//       Evicted. The shim's own diagnostics go to its
//       stderr (the runtime's shared <root>/shims.log), each line prefixed
//       with "batchd-shim <uid>: ".
//
// Containers are spawned directly from the shim (a vfork child joins the
// cgroup, chdirs, sets PR_SET_PDEATHSIG and execs: one exec per container).
// The binary is linked statically where the toolchain allows, so starting a
// shim loads no shared libraries.
//
// Stray processes: container main processes die with the shim (PDEATHSIG); a
// container's other processes are killed with its process group when its main
// process exits or the pod stops; the shim is a child subreaper, so orphaned
// descendants (even ones that left the group) are reaped by it and killed
// before it exits. If the shim itself is SIGKILLed, the runtime kills the
// recorded process groups when it next looks at the pod.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "agent/runtime/cgroup.h"
#include "agent/runtime/fence_file.h"
#include "agent/runtime/pod_files.h"
#include "agent/runtime/proc_identity.h"
#include "agent/runtime/process_runner.h"
#include "agent/shim/pod_namespace.h"
#include "agent/shim/supervisor.h"
#include "common/clock.h"

extern char** environ;

namespace batchd::agent {
namespace {

// The shim's edge to wall time: only `Now` is used by the supervisor.
class WallClock : public Clock {
 public:
  absl::Time Now() const override { return absl::Now(); }
  TimerId ScheduleAt(absl::Time, std::function<void()>) override { return 0; }
  bool Cancel(TimerId) override { return false; }
};

void WriteAll(int fd, const std::string& s) {
  if (fd < 0) return;
  size_t off = 0;
  while (off < s.size()) {
    ssize_t n = write(fd, s.data() + off, s.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    off += static_cast<size_t>(n);
  }
}

absl::Duration StopGrace(const PodPaths& paths, const ShimConfig& config) {
  int64_t ms = 0;
  absl::StatusOr<std::string> text = ReadFile(paths.Stop());
  if (text.ok() && absl::SimpleAtoi(absl::StripAsciiWhitespace(*text), &ms) && ms >= 0) {
    return absl::Milliseconds(ms);
  }
  return absl::Seconds(config.pod.termination_grace_seconds);
}

// DIR/restart ("<generation> <hold 0|1> <grace ms>") into the supervisor;
// a missing or malformed file asks nothing.
void RequestRestart(Supervisor& sup, const PodPaths& paths) {
  absl::StatusOr<std::string> text = ReadFile(paths.Restart());
  if (!text.ok()) return;
  std::vector<std::string> f = absl::StrSplit(*text, ' ', absl::SkipWhitespace());
  int64_t generation = 0, hold = 0, ms = 0;
  if (f.size() != 3 || !absl::SimpleAtoi(f[0], &generation) || !absl::SimpleAtoi(f[1], &hold) ||
      !absl::SimpleAtoi(f[2], &ms) || ms < 0) {
    return;
  }
  sup.RequestRestart(generation, hold != 0, absl::Milliseconds(ms));
}

absl::StatusOr<ShimConfig> ReadSpec(int fd, const std::string& path) {
  absl::StatusOr<std::string> text = ReadFd(fd, path);
  if (!text.ok()) return text.status();
  nlohmann::json j = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return absl::DataLossError(absl::StrCat("bad JSON in ", path));
  return ShimConfigFromJson(j);
}

// Reaps every exited child and hands it to the supervisor.
void ReapAll(Supervisor& sup) {
  for (;;) {
    int status = 0;
    pid_t pid = waitpid(-1, &status, WNOHANG);
    if (pid <= 0) return;
    sup.OnExit(pid, status);
  }
}

// At exit: SIGKILLs and reaps every remaining descendant (the shim is their
// subreaper), so nothing of the pod outlives the shim and no zombie is left.
void KillRemainingChildren() {
  const std::string list = absl::StrCat("/proc/self/task/", getpid(), "/children");
  for (int round = 0; round < 1000; ++round) {
    absl::StatusOr<std::string> text = ReadFile(list);
    std::vector<std::string> pids =
        text.ok() ? absl::StrSplit(*text, ' ', absl::SkipWhitespace()) : std::vector<std::string>{};
    for (const std::string& p : pids) {
      int pid = 0;
      if (absl::SimpleAtoi(p, &pid) && pid > 0) kill(pid, SIGKILL);
    }
    if (waitpid(-1, nullptr, pids.empty() ? WNOHANG : 0) < 0 && errno == ECHILD) return;
    if (pids.empty() && !text.ok()) return;  // no /proc: nothing more we can do
  }
}

int RunLoop(Supervisor& sup, int sfd, const PodPaths& paths, const ShimConfig& config,
            const Clock& clock) {
  while (!sup.Done()) {
    const absl::Duration wait = sup.NextDeadline() - clock.Now();
    int timeout_ms = wait > absl::Hours(1) ? 3600 * 1000
                     : wait <= absl::ZeroDuration()
                         ? 0
                         : static_cast<int>(absl::ToInt64Milliseconds(wait)) + 1;
    // The signalfd first, then every container's log pipe (log_files.h).
    std::vector<struct pollfd> fds{{sfd, POLLIN, 0}};
    for (int fd : sup.LogFds()) fds.push_back({fd, POLLIN, 0});
    if (poll(fds.data(), fds.size(), timeout_ms) > 0) {
      for (size_t i = 1; i < fds.size(); ++i) {
        if (fds[i].revents != 0) sup.PumpLog(fds[i].fd);
      }
    }
    if ((fds[0].revents & POLLIN) != 0) {
      struct signalfd_siginfo si;
      while (read(sfd, &si, sizeof(si)) == static_cast<ssize_t>(sizeof(si))) {
        if (si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT || si.ssi_signo == SIGHUP) {
          sup.RequestStop(StopGrace(paths, config));
        } else if (si.ssi_signo == SIGUSR1) {
          RequestRestart(sup, paths);
        }
      }
      ReapAll(sup);  // SIGCHLD coalesces: always sweep
    }
    sup.Tick();
  }
  return 0;
}

std::vector<std::string> BaseEnv(const ShimConfig& config) {
  const char* path = std::getenv("PATH");
  return {absl::StrCat("PATH=", path ? path : "/usr/local/bin:/usr/bin:/bin"),
          absl::StrCat("HOSTNAME=",
                       config.pod.hostname.empty() ? config.pod.name : config.pod.hostname)};
}

// Sends the pod's uid to the runtime's events.sock (next to the pod
// directory) without blocking: a hint that state.json changed. Nobody
// listening, or a full queue, only means the runtime polls.
class ExitHint {
 public:
  ExitHint(const std::string& pod_dir, std::string uid) : uid_(std::move(uid)) {
    const size_t slash = pod_dir.find_last_of('/');
    const std::string root = slash == std::string::npos ? "." : pod_dir.substr(0, slash);
    if (!EventsSocketAddress(root, &addr_)) return;
    fd_ = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  }
  ~ExitHint() {
    if (fd_ >= 0) close(fd_);
  }
  ExitHint(const ExitHint&) = delete;
  ExitHint& operator=(const ExitHint&) = delete;

  void Send() const {
    if (fd_ < 0) return;
    (void)sendto(fd_, uid_.data(), uid_.size(), MSG_DONTWAIT,
                 reinterpret_cast<const sockaddr*>(&addr_), sizeof(addr_));
  }

 private:
  std::string uid_;
  sockaddr_un addr_{};
  int fd_ = -1;
};

// Supervises the pod in `pod_dir` until nothing more runs (see the header
// comment); what `--pod-dir DIR --ready-fd N` runs, whether exec'ed or forked
// by the launcher. Returns the exit code.
int RunShim(const std::string& pod_dir, int ready_fd) {
  // Drop descriptors inherited from the agent so containers never see them.
  if (ready_fd > 3) close_range(3, ready_fd - 1, 0);
  close_range(ready_fd >= 3 ? ready_fd + 1 : 3, ~0U, 0);
  if (ready_fd >= 0) fcntl(ready_fd, F_SETFD, FD_CLOEXEC);
  if (pod_dir.empty()) {
    std::fprintf(stderr, "usage: batchd-shim --pod-dir DIR [--ready-fd N] | --launcher\n");
    return 2;
  }
  PodPaths paths(pod_dir);
  // The flock on spec.json is held for the shim's whole life (the fd is never
  // closed; O_CLOEXEC keeps it from the containers). spec.json is complete
  // once readable here: Start writes it while holding this same lock.
  int spec_fd = open(paths.Spec().c_str(), O_RDONLY | O_CLOEXEC);
  if (spec_fd < 0) {
    WriteAll(ready_fd, absl::StrCat("error: cannot open ", paths.Spec(), ": ",
                                    std::strerror(errno), "\n"));
    return 1;
  }
  if (flock(spec_fd, LOCK_EX | LOCK_NB) != 0) {
    WriteAll(ready_fd, "busy\n");  // another shim holds the pod
    return 0;
  }
  absl::StatusOr<ShimConfig> config = ReadSpec(spec_fd, paths.Spec());
  if (!config.ok()) {
    WriteAll(ready_fd, "error: " + config.status().ToString() + "\n");
    return 1;
  }
  // The pod's sandbox: emptyDirs, and for isolated pods the shim's own
  // mount and UTS namespaces, which its containers inherit.
  absl::Status sandbox = PrepareEmptyDirs(*config, paths);
  if (sandbox.ok() && config->pod.isolate) sandbox = EnterPodNamespaces(*config, paths);
  if (!sandbox.ok()) {
    WriteAll(ready_fd, "error: " + sandbox.ToString() + "\n");
    return 1;
  }
  // Orphaned container descendants reparent to the shim, which reaps them.
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  sigset_t mask;
  sigemptyset(&mask);
  for (int sig : {SIGCHLD, SIGTERM, SIGINT, SIGHUP, SIGUSR1}) sigaddset(&mask, sig);
  sigprocmask(SIG_BLOCK, &mask, nullptr);
  signal(SIGPIPE, SIG_IGN);
  int sfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
  const ExitHint hint(pod_dir, config->pod.uid);
  SupervisorEnv env{.pod_dir = pod_dir,
                    .base_env = BaseEnv(*config),
                    .shim_pid = getpid(),
                    .boot_id = BootId(),
                    .shim_start_ticks = ProcessStartTicks(getpid()).value_or(0),
                    .start_ticks = [](int pid) { return ProcessStartTicks(pid).value_or(0); },
                    .pipe_logs = true,
                    .exited = [&hint] { hint.Send(); },
                    .dir_usage = DirUsage,
                    .memory_volumes_are_tmpfs = config->pod.isolate};
  // No cgroup root configured is a choice, not a problem: warn only when a
  // configured root is unusable.
  if (!config->cgroup_root.empty()) {
    if (!config->cgroups_error.empty()) {
      // The runtime found the root unusable (and warned once, not per pod).
      env.cgroups_error = config->cgroups_error;
    } else if (absl::StatusOr<Cgroups> cg = Cgroups::Open(config->cgroup_root); cg.ok()) {
      env.cgroups = *cg;
    } else {
      env.cgroups_error = std::string(cg.status().message());
      std::fprintf(stderr, "batchd-shim %s: warning: no cgroup limits: %s\n",
                   config->pod.uid.c_str(), cg.status().ToString().c_str());
    }
    if (config->pod.pids_limit > 0 && (!env.cgroups || !env.cgroups->HasPids())) {
      if (config->pids_v1_root) {  // found by the runtime
        if (!config->pids_v1_root->empty()) env.pids_v1 = PidsV1::At(*config->pids_v1_root);
      } else if (absl::StatusOr<PidsV1> v1 = PidsV1::Find(); v1.ok()) {
        env.pids_v1 = *v1;
      }
    }
  } else {
    env.cgroups_error = "cgroups are disabled on this node";
  }
  // Every signal is at its default here (ShimMain, LauncherMain) but SIGPIPE,
  // ignored above: the containers' vfork children reset just that one.
  PosixProcessRunner runner({SIGPIPE});
  WallClock clock;
  // Node fencing: DIR/fence, kept current by the agent (fence_file.h).
  env.fence_deadline = [&clock, dir = std::string(pod_dir)] {
    return ReadFenceDeadline(dir, clock.Now());
  };
  Supervisor sup(*config, std::move(env), runner, clock);
  sup.Begin();
  WriteAll(ready_fd, "ok\n");
  if (ready_fd >= 0) close(ready_fd);
  int rc = RunLoop(sup, sfd, paths, *config, clock);
  ReapAll(sup);
  KillRemainingChildren();
  sup.DrainLogs();  // every writer is gone: the pipes end at EOF
  return rc;
}

// The launcher (`--launcher`): forks shims on request so that a pod's shim
// costs a fork of this small, single-threaded, static process instead of an
// exec (kernel exec, static start-up, page faults). Protocol on the
// SOCK_SEQPACKET socket at kLauncherFd, one request at a time: the runtime
// sends the pod directory as the payload with the ready pipe's write end
// (SCM_RIGHTS); the launcher replies with the shim's pid as an int32 (or
// -errno when fork failed). It reaps its exited shims (so no zombies pile
// up) and exits at EOF, when the runtime is gone: its shims keep running, as
// exec'ed ones do (session leaders, adopted through the flock on spec.json).

// Rewrites the process's command line (what ps and pgrep -f show) to
// `title`, so that a forked shim reads as an exec'ed one, with its pod dir.
// As setproctitle does: the argv strings and the environment strings after
// them are one block of memory that the kernel reports; the environment is
// copied elsewhere first. The title is cut to what fits.
void SetProcessTitle(int argc, char** argv, const std::string& title) {
  char* const begin = argv[0];
  char* end = begin;
  for (int i = 0; i < argc; ++i) {
    if (argv[i] != end) return;  // not one block: leave it alone
    end += std::strlen(argv[i]) + 1;
  }
  size_t count = 0;
  while (environ != nullptr && environ[count] != nullptr) ++count;
  if (count > 0 && environ[0] == end) {
    char** moved = new char*[count + 1];  // lives as long as the process
    for (size_t i = 0; i < count; ++i) {
      if (environ[i] == end) end += std::strlen(environ[i]) + 1;
      moved[i] = strdup(environ[i]);
    }
    moved[count] = nullptr;
    environ = moved;
  }
  const size_t len = std::min(title.size(), static_cast<size_t>(end - begin) - 1);
  std::memcpy(begin, title.data(), len);
  std::memset(begin + len, 0, static_cast<size_t>(end - begin) - len);
}

enum class Received { kRequest, kNothing, kEnd };

// Receives one request: the pod dir and the ready fd (-1 when none came).
// kEnd at EOF or on an error that ends the launcher.
Received ReceiveRequest(int sock, std::string& pod_dir, int& fd) {
  char buf[PATH_MAX + 1];
  alignas(struct cmsghdr) char control[CMSG_SPACE(sizeof(int) * 4)];
  struct iovec iov = {buf, sizeof(buf)};
  struct msghdr msg = {};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof(control);
  fd = -1;
  ssize_t n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
  if (n < 0) return errno == EINTR || errno == EAGAIN ? Received::kNothing : Received::kEnd;
  if (n == 0) return Received::kEnd;  // EOF: the runtime closed its end (or died)
  for (struct cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    const size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (size_t i = 0; i < count; ++i) {
      int received;
      std::memcpy(&received, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
      if (fd < 0) {
        fd = received;
      } else {
        close(received);  // one fd per request: extras would leak into the shim
      }
    }
  }
  if ((msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) != 0) {
    if (fd >= 0) close(fd);
    fd = -1;
  }
  pod_dir.assign(buf, static_cast<size_t>(n));
  return Received::kRequest;
}

// Sets every signal's disposition to the default (a handler or SIG_IGN
// inherited through exec, e.g. from nohup): what a shim's containers then
// inherit is known (see RunShim's runner).
void ResetSignalDispositions() {
  struct sigaction dfl = {};
  dfl.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sig != SIGKILL && sig != SIGSTOP) sigaction(sig, &dfl, nullptr);
  }
}

int LauncherMain(int argc, char** argv) {
  const int sock = kLauncherFd;
  ResetSignalDispositions();  // once: the shims it forks inherit them
  // Nothing from the runtime but stdio and the socket, so a forked shim
  // starts with what an exec'ed one has.
  close_range(kLauncherFd + 1, ~0U, 0);
  sigset_t chld;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  sigprocmask(SIG_BLOCK, &chld, nullptr);
  const int sfd = signalfd(-1, &chld, SFD_NONBLOCK | SFD_CLOEXEC);
  for (;;) {
    struct pollfd p[2] = {{sock, POLLIN, 0}, {sfd, POLLIN, 0}};
    if (poll(p, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if ((p[1].revents & POLLIN) != 0) {
      struct signalfd_siginfo si;
      while (read(sfd, &si, sizeof(si)) == static_cast<ssize_t>(sizeof(si))) {
      }
      while (waitpid(-1, nullptr, WNOHANG) > 0) {  // SIGCHLD coalesces: reap all
      }
    }
    if (p[0].revents == 0) continue;
    std::string pod_dir;
    int ready_fd = -1;
    const Received r = ReceiveRequest(sock, pod_dir, ready_fd);
    if (r == Received::kEnd) break;
    if (r == Received::kNothing) continue;
    int32_t reply;
    if (ready_fd < 0 || pod_dir.empty()) {
      reply = -EINVAL;
    } else {
      const pid_t pid = fork();
      if (pid == 0) {
        // The shim: the ready fd takes the socket's place (fd 3, as an
        // exec'ed shim is given it), which closes the socket; RunShim closes
        // the rest. Signals as after posix_spawn: nothing blocked, defaults.
        dup2(ready_fd, kLauncherFd);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, nullptr);
        setsid();
        SetProcessTitle(argc, argv, absl::StrCat(argv[0], " --pod-dir ", pod_dir, " --ready-fd ",
                                                 kLauncherFd));
        _exit(RunShim(pod_dir, kLauncherFd));
      }
      reply = pid > 0 ? pid : -errno;
      close(ready_fd);
    }
    if (send(sock, &reply, sizeof(reply), MSG_NOSIGNAL) < 0 && errno != EINTR) break;
  }
  return 0;
}

int ShimMain(int argc, char** argv) {
  if (argc == 2 && std::strcmp(argv[1], "--launcher") == 0) return LauncherMain(argc, argv);
  std::string pod_dir;
  int ready_fd = -1;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--pod-dir") == 0) pod_dir = argv[i + 1];
    if (std::strcmp(argv[i], "--ready-fd") == 0) (void)absl::SimpleAtoi(argv[i + 1], &ready_fd);
  }
  ResetSignalDispositions();
  return RunShim(pod_dir, ready_fd);
}

}  // namespace
}  // namespace batchd::agent

int main(int argc, char** argv) { return batchd::agent::ShimMain(argc, argv); }
