// ProcessRunner: the seam through which the agent runtime and the pod shim
// start and signal host processes, so their logic can be tested with a fake.
// `PosixProcessRunner` never forks: plain requests use posix_spawn (the agent
// is a large, multi-threaded process); requests with child-side steps that
// posix_spawn cannot do (join a cgroup, die with the parent) run them in a
// CLONE_VM|CLONE_VFORK child on its own stack before execve, so a container
// costs one exec and exec/chdir failures come back from Spawn itself. Waiting
// for exits is not part of the seam: the shim's event loop reaps with waitpid.
//
// Thread-safety: PosixProcessRunner is immutable after construction and thread-safe. File
// descriptors in a request stay owned by the caller.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace batchd::agent {

// A bind mount made in the child's own mount namespace before it execs.
struct BindMount {
  std::string source;  // an existing host path (directory or file)
  std::string target;  // created (as a directory, or an empty file for a file) when missing
  bool read_only = false;
};

struct SpawnRequest {
  std::vector<std::string> argv;  // argv[0] without '/' is searched in the caller's PATH
  std::vector<std::string> env;   // "KEY=VALUE"
  std::string cwd;                // "" = inherit
  int stdin_fd = -1;              // -1 = /dev/null
  int stdout_fd = -1;             // -1 = /dev/null
  int stderr_fd = -1;             // -1 = /dev/null
  std::vector<std::pair<int, int>> extra_fds;  // dup2(first, second) in the child
  bool new_process_group = false;  // the child leads its own process group
  bool new_session = false;        // setsid (detached from the caller's session)
  // Child-side steps (any one selects the vfork path):
  std::string cgroup;              // join this cgroup v2 dir ("" = stay; failure: a warning)
  std::string pids_cgroup;         // and this cgroup v1 pids dir ("" = none; failure: a warning)
  // Run as this user (-1 = the caller's): after the mounts, cgroups and the
  // chdir, the child sets `groups` (supplementary), then gid, then uid (real,
  // effective and saved). Needs CAP_SETUID/CAP_SETGID; a failure is an error.
  int64_t uid = -1;
  int64_t gid = -1;
  std::vector<int64_t> groups;
  bool no_new_privs = false;       // PR_SET_NO_NEW_PRIVS before exec
  bool drop_all_capabilities = false;  // empty the bounding set (and, for uid 0, every set)
  bool die_with_parent = false;    // PR_SET_PDEATHSIG(SIGKILL); exits 137 if the caller is already gone
  // Non-empty: the child gets a new mount namespace (a copy of the caller's,
  // which must be private: see the shim) with these binds. Needs CAP_SYS_ADMIN.
  std::vector<BindMount> mounts;
};

class ProcessRunner {
 public:
  virtual ~ProcessRunner() = default;
  // Starts a process; returns its pid. The child starts with an empty signal
  // mask and default signal dispositions. When the program cannot be executed
  // (or `cwd` entered, or a mount made, or the user set) the error says so, as
  // `exec: "ARGV0": REASON`, `chdir DIR: REASON`, `mount SRC on DST: REASON`
  // or `set user UID:GID: REASON`
  // on the vfork path, and no child is left behind.
  virtual absl::StatusOr<int> Spawn(const SpawnRequest& req) = 0;
  // kill(pid, sig), or kill(-pid, sig) for the whole process group.
  // NotFound when no such process (group) exists.
  virtual absl::Status Signal(int pid, int sig, bool group) = 0;
  // Reaps `pid` if it is a terminated child of this process: its wait status,
  // or nullopt when it is still running or is not our child.
  virtual std::optional<int> TryReap(int pid) = 0;
};

class PosixProcessRunner : public ProcessRunner {
 public:
  // The vfork child then resets every signal whose disposition is not the
  // default (it asks for each of the 64: a system call each).
  PosixProcessRunner() = default;
  // For a caller that knows each signal whose disposition it changed (a
  // handler or SIG_IGN) and changes no other while it spawns, such as the
  // single-threaded pod shim: the vfork child resets just these. A signal
  // left out stays ignored (or handled) up to the exec, and ignored after it.
  explicit PosixProcessRunner(std::vector<int> changed_signals)
      : changed_signals_(std::move(changed_signals)), signals_known_(true) {}

  absl::StatusOr<int> Spawn(const SpawnRequest& req) override;
  absl::Status Signal(int pid, int sig, bool group) override;
  std::optional<int> TryReap(int pid) override;

 private:
  std::vector<int> changed_signals_;
  bool signals_known_ = false;
};

}  // namespace batchd::agent
