#include "agent/runtime/process_runner.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <cstring>
#include <memory>

#include "absl/strings/str_cat.h"
#include "agent/runtime/mount_propagation.h"

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


// Everything the vfork child needs, prepared by the parent: the child shares
// the parent's memory, so it must not allocate; it only makes system calls
// and reports a failure through `err_stage`/`err_no`.
// A bind mount as the vfork child makes it: everything computed beforehand.
struct PreparedMount {
  const BindMount* mount = nullptr;
  bool dir = true;                   // the source is a directory (else a file)
  std::vector<std::string> parents;  // the target's ancestors and itself (dir) to create
};

struct ChildArgs {
  std::vector<std::pair<int, int>> redirects;  // (src or -1 for /dev/null, dst)
  const char* cgroup_procs = nullptr;
  const char* pids_procs = nullptr;
  const char* cwd = nullptr;
  long uid = -1;
  long gid = -1;
  std::vector<gid_t> groups;
  bool no_new_privs = false;
  bool drop_all_capabilities = false;
  bool new_process_group = false;
  bool new_session = false;
  bool die_with_parent = false;
  pid_t parent = 0;
  std::vector<std::string> candidates;  // execve targets in PATH order
  char** argv = nullptr;
  char** envp = nullptr;
  char** sh_argv = nullptr;  // "/bin/sh", <slot for the script>, argv[1..]
  const std::vector<PreparedMount>* mounts = nullptr;  // made in the child's new mount namespace
  // "/" not a mount point (a chroot) may be left as is: no mount of its device
  // is shared, so nothing can propagate (mount_propagation.h).
  bool root_need_not_be_private = false;
  // The signals to reset to SIG_DFL; null: every signal found not at its default.
  const std::vector<int>* reset_signals = nullptr;
  volatile int err_stage = 0;  // 1 = chdir, 2 = exec, 3 = redirect, 4 = mount, 5 = mount point,
                               // 6 = set user, 7 = capabilities / no_new_privs
  volatile int err_no = 0;
  volatile int err_index = 0;  // the failed mount
};

void ChildWarn(int fd, const char* a, const char* b) {
  (void)!write(fd, a, strlen(a));
  (void)!write(fd, b, strlen(b));
  (void)!write(fd, "\n", 1);
}

[[noreturn]] void ChildFail(ChildArgs& a, int stage, int err) {
  a.err_no = err;
  a.err_stage = stage;
  _exit(127);
}

void ChildResetSignals(const std::vector<int>* known) {
  struct sigaction dfl = {};
  dfl.sa_handler = SIG_DFL;
  if (known != nullptr) {  // the caller said which ones it changed: one call each
    for (int sig : *known) sigaction(sig, &dfl, nullptr);
    return;
  }
  for (int sig = 1; sig < NSIG; ++sig) {
    struct sigaction old;
    if (sig == SIGKILL || sig == SIGSTOP || sigaction(sig, nullptr, &old) != 0) continue;
    if (old.sa_handler != SIG_DFL) sigaction(sig, &dfl, nullptr);
  }
}

void ChildRedirect(ChildArgs& a) {
  for (const auto& [src, dst] : a.redirects) {
    if (src < 0) {
      int fd = open("/dev/null", O_RDWR);
      if (fd < 0) ChildFail(a, 3, errno);
      if (fd != dst) {
        if (dup2(fd, dst) < 0) ChildFail(a, 3, errno);
        close(fd);
      }
    } else if (src == dst) {
      if (fcntl(src, F_SETFD, 0) < 0) ChildFail(a, 3, errno);
    } else if (dup2(src, dst) < 0) {
      ChildFail(a, 3, errno);
    }
  }
}

int ChildMain(void* arg) {
  ChildArgs& a = *static_cast<ChildArgs*>(arg);
  ChildResetSignals(a.reset_signals);
  if (a.new_session) {
    setsid();
  } else if (a.new_process_group) {
    setpgid(0, 0);
  }
  if (a.die_with_parent) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != a.parent) _exit(137);  // the parent died before prctl
  }
  ChildRedirect(a);
  if (a.mounts != nullptr) {
    // The new namespace starts as a copy of the caller's: make it private
    // first, so no bind below can propagate back (the shim's own namespace
    // is private already; a caller in the host's may not be).
    a.err_index = -1;
    if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 &&
        !(errno == EINVAL && a.root_need_not_be_private)) {
      ChildFail(a, 4, errno);
    }
    for (size_t i = 0; i < a.mounts->size(); ++i) {
      const PreparedMount& p = (*a.mounts)[i];
      const BindMount& m = *p.mount;
      a.err_index = static_cast<int>(i);
      // Mount points are made in the child's view, as a container runtime
      // makes them: inside a volume mounted before when they lie within one,
      // on the host otherwise.
      for (const std::string& d : p.parents) {
        if (mkdir(d.c_str(), 0755) != 0 && errno != EEXIST) ChildFail(a, 5, errno);
      }
      if (!p.dir) {
        int fd = open(m.target.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        if (fd < 0) ChildFail(a, 5, errno);
        close(fd);
      }
      if (mount(m.source.c_str(), m.target.c_str(), nullptr, MS_BIND | MS_REC, nullptr) != 0) {
        ChildFail(a, 4, errno);
      }
      if (m.read_only && mount(nullptr, m.target.c_str(), nullptr,
                               MS_BIND | MS_REMOUNT | MS_RDONLY, nullptr) != 0) {
        ChildFail(a, 4, errno);
      }
    }
  }
  if (a.cgroup_procs != nullptr) {
    int fd = open(a.cgroup_procs, O_WRONLY | O_CLOEXEC);
    if (fd < 0 || write(fd, "0", 1) != 1) {
      ChildWarn(2, "batchd-shim: cannot join cgroup ", a.cgroup_procs);
    }
    if (fd >= 0) close(fd);
  }
  if (a.pids_procs != nullptr) {
    int fd = open(a.pids_procs, O_WRONLY | O_CLOEXEC);
    if (fd < 0 || write(fd, "0", 1) != 1) {
      ChildWarn(2, "batchd-shim: cannot join cgroup ", a.pids_procs);
    }
    if (fd >= 0) close(fd);
  }
  if (a.cwd != nullptr && chdir(a.cwd) != 0) ChildFail(a, 1, errno);
  if (a.drop_all_capabilities) {
    // Every capability leaves the bounding set: nothing can be regained
    // through a set-user-ID or file-capability program.
    for (int cap = 0; cap <= 63; ++cap) {
      if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EINVAL) ChildFail(a, 7, errno);
    }
  }
  // Raw system calls: glibc's setuid family would signal every thread of
  // the (memory-sharing) parent to change them too.
  if (a.uid >= 0) {
    if (syscall(SYS_setgroups, a.groups.size(), a.groups.data()) != 0) ChildFail(a, 6, errno);
    if (a.gid >= 0 && syscall(SYS_setresgid, a.gid, a.gid, a.gid) != 0) ChildFail(a, 6, errno);
    if (syscall(SYS_setresuid, a.uid, a.uid, a.uid) != 0) ChildFail(a, 6, errno);
  }
  if (a.drop_all_capabilities && (a.uid == 0 || (a.uid < 0 && geteuid() == 0))) {
    // Root keeps its permitted/effective sets across exec unless they are cleared.
    struct {
      uint32_t version;
      int pid;
    } header = {0x20080522 /* _LINUX_CAPABILITY_VERSION_3 */, 0};
    uint32_t data[6] = {0, 0, 0, 0, 0, 0};
    if (syscall(SYS_capset, &header, data) != 0) ChildFail(a, 7, errno);
  }
  if (a.no_new_privs && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) ChildFail(a, 7, errno);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  int err = ENOENT;
  bool denied = false;
  for (const std::string& path : a.candidates) {
    execve(path.c_str(), a.argv, a.envp);
    err = errno;
    if (err == ENOEXEC) {  // no #! line: run it with the shell, as execvp does
      a.sh_argv[1] = const_cast<char*>(path.c_str());
      execve("/bin/sh", a.sh_argv, a.envp);
      err = errno;
    }
    if (err == EACCES) denied = true;
    if (err != ENOENT && err != ENOTDIR && err != EACCES) break;
  }
  ChildFail(a, 2, denied && (err == ENOENT || err == ENOTDIR) ? EACCES : err);
}

// Where argv[0] may be found: itself when it holds a '/', else each
// directory of the child's PATH (the caller's default when it sets none).
std::vector<std::string> ExecCandidates(const SpawnRequest& req) {
  const std::string& prog = req.argv[0];
  if (prog.find('/') != std::string::npos) return {prog};
  std::string path = "/usr/local/bin:/usr/bin:/bin";
  for (const std::string& e : req.env) {
    if (e.rfind("PATH=", 0) == 0) path = e.substr(5);
  }
  std::vector<std::string> out;
  size_t start = 0;
  for (;;) {
    size_t end = path.find(':', start);
    std::string dir = path.substr(start, end == std::string::npos ? end : end - start);
    out.push_back((dir.empty() ? std::string(".") : dir) + "/" + prog);
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return out;
}

// The mounts in the order they are made: shallower targets first, so a
// mount inside another volume's mount path lands in that volume.
std::vector<PreparedMount> PrepareMounts(const std::vector<BindMount>& mounts) {
  std::vector<PreparedMount> out;
  for (const BindMount& m : mounts) {
    PreparedMount p;
    p.mount = &m;
    struct stat st;
    p.dir = stat(m.source.c_str(), &st) != 0 || S_ISDIR(st.st_mode);
    const std::string& t = m.target;
    for (size_t slash = t.find('/', 1); slash != std::string::npos; slash = t.find('/', slash + 1)) {
      p.parents.push_back(t.substr(0, slash));
    }
    if (p.dir) p.parents.push_back(t);
    out.push_back(std::move(p));
  }
  auto depth = [](const PreparedMount& p) {
    return std::count(p.mount->target.begin(), p.mount->target.end(), '/');
  };
  std::stable_sort(out.begin(), out.end(), [&](const PreparedMount& x, const PreparedMount& y) {
    return depth(x) < depth(y);
  });
  return out;
}

absl::StatusOr<int> VforkSpawn(const SpawnRequest& req, const std::vector<int>* reset_signals) {
  const std::vector<PreparedMount> mounts = PrepareMounts(req.mounts);
  ChildArgs a;
  a.reset_signals = reset_signals;
  a.mounts = mounts.empty() ? nullptr : &mounts;
  if (a.mounts != nullptr) {
    // Read once (the answer is the host's, fixed while this process runs).
    static const bool may_propagate = RootMountsMayPropagate();
    a.root_need_not_be_private = !may_propagate;
  }
  a.redirects = {{req.stdin_fd, 0}, {req.stdout_fd, 1}, {req.stderr_fd, 2}};
  for (const auto& r : req.extra_fds) a.redirects.push_back(r);
  const std::string procs = req.cgroup.empty() ? "" : req.cgroup + "/cgroup.procs";
  a.cgroup_procs = procs.empty() ? nullptr : procs.c_str();
  const std::string pids_procs = req.pids_cgroup.empty() ? "" : req.pids_cgroup + "/cgroup.procs";
  a.pids_procs = pids_procs.empty() ? nullptr : pids_procs.c_str();
  a.uid = static_cast<long>(req.uid);
  a.gid = static_cast<long>(req.gid);
  for (int64_t g : req.groups) a.groups.push_back(static_cast<gid_t>(g));
  a.no_new_privs = req.no_new_privs;
  a.drop_all_capabilities = req.drop_all_capabilities;
  a.cwd = req.cwd.empty() ? nullptr : req.cwd.c_str();
  a.new_process_group = req.new_process_group;
  a.new_session = req.new_session;
  a.die_with_parent = req.die_with_parent;
  a.parent = getpid();
  a.candidates = ExecCandidates(req);
  std::vector<char*> argv, envp, sh_argv = {const_cast<char*>("/bin/sh"), nullptr};
  for (const auto& s : req.argv) argv.push_back(const_cast<char*>(s.c_str()));
  argv.push_back(nullptr);
  sh_argv.insert(sh_argv.end(), argv.begin() + 1, argv.end());
  for (const auto& e : req.env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  a.argv = argv.data();
  a.envp = envp.data();
  a.sh_argv = sh_argv.data();
  // Left uninitialized: make_unique<char[]> would zero (and so fault in) all
  // of it on every spawn; the child touches a page or two.
  constexpr size_t kStack = 64 * 1024;
  std::unique_ptr<char[]> stack(new char[kStack]);
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);  // no handler may run in the shared-memory child
  const int flags = CLONE_VM | CLONE_VFORK | SIGCHLD | (a.mounts != nullptr ? CLONE_NEWNS : 0);
  const int pid = clone(ChildMain, stack.get() + kStack, flags, &a);
  const int clone_err = errno;
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  if (pid < 0) return ErrnoStatus(clone_err, absl::StrCat("spawn ", req.argv[0]));
  if (a.err_stage == 0) return pid;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  const char* reason = std::strerror(a.err_no);
  if (a.err_stage == 1) return absl::InternalError(absl::StrCat("chdir ", req.cwd, ": ", reason));
  if (a.err_stage == 3) return absl::InternalError(absl::StrCat("redirect: ", reason));
  if (a.err_stage == 6) {
    return absl::InternalError(absl::StrCat("set user ", req.uid, ":", req.gid, ": ", reason));
  }
  if (a.err_stage == 7) return absl::InternalError(absl::StrCat("drop privileges: ", reason));
  if (a.err_stage == 4) {
    if (a.err_index < 0) return absl::InternalError(absl::StrCat("make / private: ", reason));
    const BindMount& m = *mounts[static_cast<size_t>(a.err_index)].mount;
    return absl::InternalError(absl::StrCat("mount ", m.source, " on ", m.target, ": ", reason));
  }
  if (a.err_stage == 5) {
    const BindMount& m = *mounts[static_cast<size_t>(a.err_index)].mount;
    return absl::InternalError(absl::StrCat("mount point ", m.target, ": ", reason));
  }
  return absl::InternalError(absl::StrCat("exec: \"", req.argv[0], "\": ", reason));
}

}  // namespace

absl::StatusOr<int> PosixProcessRunner::Spawn(const SpawnRequest& req) {
  if (req.argv.empty()) return absl::InvalidArgumentError("spawn: empty argv");
  if (!req.cgroup.empty() || !req.pids_cgroup.empty() || req.die_with_parent ||
      !req.mounts.empty() || req.uid >= 0 || req.no_new_privs || req.drop_all_capabilities) {
    return VforkSpawn(req, signals_known_ ? &changed_signals_ : nullptr);
  }
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
