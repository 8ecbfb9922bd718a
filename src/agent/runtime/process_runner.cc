#include "agent/runtime/process_runner.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace batchd::agent {
namespace {

absl::Status ErrnoStatus(int err, const std::string& what) {
  return absl::InternalError(absl::StrCat(what, ": ", std::strerror(err)));
}

// Owns the posix_spawn attribute and file-action objects and any temporary
// descriptors, releasing them on every path.
class SpawnArgs {
 public:
  SpawnArgs() {
    posix_spawnattr_init(&attr_);
    posix_spawn_file_actions_init(&actions_);
  }
  ~SpawnArgs() {
    posix_spawnattr_destroy(&attr_);
    posix_spawn_file_actions_destroy(&actions_);
    for (int fd : temp_fds_) close(fd);
  }
  SpawnArgs(const SpawnArgs&) = delete;
  SpawnArgs& operator=(const SpawnArgs&) = delete;

  // dup2(src, dst) in the child; src == -1 opens /dev/null. When src == dst the
  // descriptor is first copied so dup2 clears close-on-exec.
  int Redirect(int src, int dst) {
    if (src < 0) {
      return posix_spawn_file_actions_addopen(&actions_, dst, "/dev/null", O_RDWR, 0);
    }
    if (src == dst) {
      int copy = fcntl(src, F_DUPFD_CLOEXEC, 10);
      if (copy < 0) return errno;
      temp_fds_.push_back(copy);
      src = copy;
    }
    return posix_spawn_file_actions_adddup2(&actions_, src, dst);
  }

  absl::Status Configure(const SpawnRequest& req) {
    int rc = Redirect(req.stdin_fd, 0);
    if (rc == 0) rc = Redirect(req.stdout_fd, 1);
    if (rc == 0) rc = Redirect(req.stderr_fd, 2);
    for (const auto& [src, dst] : req.extra_fds) {
      if (rc == 0) rc = Redirect(src, dst);
    }
    if (rc == 0 && !req.cwd.empty()) {
      rc = posix_spawn_file_actions_addchdir_np(&actions_, req.cwd.c_str());
    }
    if (rc != 0) return ErrnoStatus(rc, "posix_spawn file actions");
    short flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
    if (req.new_session) {
      flags |= POSIX_SPAWN_SETSID;
    } else if (req.new_process_group) {
      flags |= POSIX_SPAWN_SETPGROUP;
      posix_spawnattr_setpgroup(&attr_, 0);
    }
    sigset_t empty, all;
    sigemptyset(&empty);
    sigfillset(&all);
    posix_spawnattr_setsigmask(&attr_, &empty);
    posix_spawnattr_setsigdefault(&attr_, &all);
    posix_spawnattr_setflags(&attr_, flags);
    return absl::OkStatus();
  }

  posix_spawnattr_t attr_;
  posix_spawn_file_actions_t actions_;

 private:
  std::vector<int> temp_fds_;
};

}  // namespace

absl::StatusOr<int> PosixProcessRunner::Spawn(const SpawnRequest& req) {
  if (req.argv.empty()) return absl::InvalidArgumentError("spawn: empty argv");
  SpawnArgs args;
  if (absl::Status s = args.Configure(req); !s.ok()) return s;
  std::vector<char*> argv, envp;
  for (const auto& a : req.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (const auto& e : req.env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  pid_t pid = 0;
  const bool search = req.argv[0].find('/') == std::string::npos;
  int rc = search ? posix_spawnp(&pid, argv[0], &args.actions_, &args.attr_, argv.data(),
                                 envp.data())
                  : posix_spawn(&pid, argv[0], &args.actions_, &args.attr_, argv.data(),
                                envp.data());
  if (rc != 0) return ErrnoStatus(rc, absl::StrCat("spawn ", req.argv[0]));
  return static_cast<int>(pid);
}

absl::Status PosixProcessRunner::Signal(int pid, int sig, bool group) {
  if (pid <= 0) return absl::InvalidArgumentError("signal: bad pid");
  if (kill(group ? -pid : pid, sig) == 0) return absl::OkStatus();
  if (errno == ESRCH) return absl::NotFoundError(absl::StrCat("no process ", pid));
  return ErrnoStatus(errno, absl::StrCat("kill ", pid));
}

std::optional<int> PosixProcessRunner::TryReap(int pid) {
  int status = 0;
  pid_t r = waitpid(pid, &status, WNOHANG);
  if (r == pid) return status;
  return std::nullopt;
}

}  // namespace batchd::agent
