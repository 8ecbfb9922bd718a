// Cgroups: per-container cgroup v2 groups under <root>/batchd/<uid>/<container>
// with cpu.max / memory.max limits and OOM-kill detection (memory.events),
// and the pod's pids.max on its group <root>/batchd/<uid> (all its
// containers together, as kubelet's podPidsLimit). Hosts with the hybrid
// layout (cgroup v1 controllers, v2 without them) get pids.max from the v1
// pids hierarchy instead (PidsV1), the only limit batchd applies there.
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
  // Whether the v2 root delegates the pids controller (cgroup.controllers).
  bool HasPids() const;
  // Writes the pod group's pids.max (creating the group). Its containers'
  // groups sit below it, so the limit counts all of them.
  absl::Status SetPodPidsMax(const std::string& uid, int64_t pids_max) const;
  // The `oom_kill` count in `<dir>/memory.events` (0 when unreadable).
  static int64_t OomKills(const std::string& dir);
  // Removes the pod's groups (they must hold no processes); best effort.
  void RemovePod(const std::string& uid) const;
  std::string PodDir(const std::string& uid) const { return root_ + "/batchd/" + uid; }

 private:
  explicit Cgroups(std::string root) : root_(std::move(root)) {}
  std::string root_;
};

// The cgroup v1 pids hierarchy (hybrid hosts): one group per pod,
// <root>/batchd/<uid>, with pids.max; containers join it too.
class PidsV1 {
 public:
  // The mount point of a writable v1 hierarchy with the pids controller
  // (from /proc/self/mounts), or FailedPrecondition.
  static absl::StatusOr<PidsV1> Find();
  static PidsV1 OpenForTest(const std::string& root) { return PidsV1(root); }
  // The hierarchy at `root`, as Find returned it before (the runtime found it
  // once for every shim).
  static PidsV1 At(const std::string& root) { return PidsV1(root); }
  const std::string& root() const { return root_; }
  // Creates the pod's group with pids.max; returns its directory.
  absl::StatusOr<std::string> CreatePod(const std::string& uid, int64_t pids_max) const;
  void RemovePod(const std::string& uid) const;
  std::string PodDir(const std::string& uid) const { return root_ + "/batchd/" + uid; }

 private:
  explicit PidsV1(std::string root) : root_(std::move(root)) {}
  std::string root_;
};

// "quota period" for cpu.max: 100ms periods, quota = millis * 100 µs.
std::string CpuMaxValue(int64_t cpu_limit_millis);

}  // namespace batchd::agent
