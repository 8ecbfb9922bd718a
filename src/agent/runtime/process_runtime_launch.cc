// ProcessRuntime's launcher (`batchd-shim --launcher`, which forks the
// shims) and the spawning of a pod's shim through it, or directly when it
// cannot run (process_runtime.cc's header comment has the whole story).
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "agent/runtime/internal/process_runtime_impl.h"
#include "common/logging.h"

extern char** environ;

namespace batchd::agent::internal {
namespace {

// After the launcher failed twice in one Start, this many shims are spawned
// directly before it is tried again (a launcher that cannot run costs no
// extra spawn per pod).
constexpr int kDirectSpawnsAfterLauncherFailure = 64;

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

std::vector<std::string> CurrentEnviron() {
  std::vector<std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) env.emplace_back(*e);
  return env;
}

}  // namespace

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

}  // namespace batchd::agent::internal
