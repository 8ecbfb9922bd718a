// Cgroups: per-container cgroup v2 groups under <root>/batchd/<uid>/<container>
// with cpu.max / memory.max limits and OOM-kill detection (memory.events).
// Used by the shim (create, read OOM counts) and by the runtime (remove).
// Where the host has no writable cgroup2 mount, `Open` fails and callers run
// without limits (the shim logs one warning).
//
// Thread-safety: stateless apart from the root path; safe to copy and share.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace batchd::agent {

class Cgroups {
 public:
  // FailedPrecondition unless `root` is a writable cgroup2 mount.
  static absl::StatusOr<Cgroups> Open(const std::string& root);
  // Skips the filesystem-type check: `root` may be any directory (tests).
  static Cgroups OpenForTest(const std::string& root) { return Cgroups(root); }

  // Creates the container's group and writes its limits (0 = none). Returns
  // its directory; a process joins by writing its pid to `<dir>/cgroup.procs`.
  absl::StatusOr<std::string> CreateContainer(const std::string& uid,
                                              const std::string& container,
                                              int64_t cpu_limit_millis,
                                              int64_t memory_limit_bytes) const;
  // The `oom_kill` count in `<dir>/memory.events` (0 when unreadable).
  static int64_t OomKills(const std::string& dir);
  // Removes the pod's groups (they must hold no processes); best effort.
  void RemovePod(const std::string& uid) const;
  std::string PodDir(const std::string& uid) const { return root_ + "/batchd/" + uid; }

 private:
  explicit Cgroups(std::string root) : root_(std::move(root)) {}
  std::string root_;
};

// "quota period" for cpu.max: 100ms periods, quota = millis * 100 µs.
std::string CpuMaxValue(int64_t cpu_limit_millis);

}  // namespace batchd::agent
