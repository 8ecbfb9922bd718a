// The on-disk contract between the agent runtime and the pod shim: the
// layout of a pod directory and the JSON of spec.json and state.json.
//
//   <pod-dir>/spec.json           ShimConfig (written once by Start)
//   <pod-dir>/state.json          PodSandboxStatus (rewritten atomically by the shim)
//   <pod-dir>/shim.lock           flock'ed by the live shim (liveness without pids)
//   <pod-dir>/shim.pid, shim.log  the shim's pid and its own diagnostics
//   <pod-dir>/stop                grace period in ms, written by Stop before SIGTERM
//   <pod-dir>/logs/<container>/<run>.log   stdout+stderr of run <run> (= restart count)
//
// Thread-safety: free functions, no shared state.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "agent/runtime/pod_runtime.h"
#include "nlohmann/json.hpp"

namespace batchd::agent {

// Everything the shim needs, as written to spec.json.
struct ShimConfig {
  PodSandboxSpec pod;
  std::string shim_path;    // the shim executable (kept in spec.json; no longer re-executed)
  std::string cgroup_root;  // "" = no cgroups
  absl::Duration backoff_initial = absl::Seconds(10);
  absl::Duration backoff_max = absl::Minutes(5);
};

struct PodPaths {
  explicit PodPaths(std::string pod_dir) : dir(std::move(pod_dir)) {}
  std::string dir;
  std::string Spec() const { return dir + "/spec.json"; }
  std::string State() const { return dir + "/state.json"; }
  std::string Lock() const { return dir + "/shim.lock"; }
  std::string Pid() const { return dir + "/shim.pid"; }
  std::string ShimLog() const { return dir + "/shim.log"; }
  std::string Stop() const { return dir + "/stop"; }
  std::string LogDir(const std::string& container) const { return dir + "/logs/" + container; }
  std::string Log(const std::string& container, int run) const {
    return LogDir(container) + "/" + std::to_string(run) + ".log";
  }
};

nlohmann::json ShimConfigToJson(const ShimConfig& c);
absl::StatusOr<ShimConfig> ShimConfigFromJson(const nlohmann::json& j);
nlohmann::json PodStatusToJson(const PodSandboxStatus& s);
absl::StatusOr<PodSandboxStatus> PodStatusFromJson(const nlohmann::json& j);

// File helpers. `WriteFileAtomic` writes a temp file and renames it over `path`
// (atomic against process crashes; no fsync, since pods do not survive a reboot).
absl::Status WriteFileAtomic(const std::string& path, const std::string& content);
// Like WriteFileAtomic for a file rewritten often (state.json): writes
// `path`.tmp and swaps it with `path` (renameat2 RENAME_EXCHANGE), so after
// the second write the two inodes are reused and no inode is freed or created
// per write (new inodes are slow on ext4 next to recently freed ones). A crash
// never leaves `path` partial; a reader racing two writes can see the old
// inode being rewritten, i.e. a short/partial file, and should re-read when
// the content does not parse. Falls back to rename where exchange fails.
absl::Status WriteFileSwap(const std::string& path, const std::string& content);
absl::StatusOr<std::string> ReadFile(const std::string& path);
absl::StatusOr<nlohmann::json> ReadJsonFile(const std::string& path);
absl::Status MakeDirs(const std::string& path);
absl::Status RemoveTree(const std::string& path);

// Kubernetes' reading of a wait status: exit N → (N, 0); signal N → (128+N, N).
struct ExitInfo {
  int exit_code = 0;
  int signal = 0;
};
ExitInfo DecodeWaitStatus(int wait_status);

}  // namespace batchd::agent
