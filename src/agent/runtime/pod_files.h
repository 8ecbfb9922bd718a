// The on-disk contract between the agent runtime and the pod shim: the
// layout of a pod directory and the JSON of spec.json and state.json.
//
//   <pod-dir>/spec.json           ShimConfig (written once by Start); the live
//                                 shim holds an flock on it (liveness without pids)
//   <pod-dir>/state.json          PodSandboxStatus and the shim's pid (rewritten in
//                                 place by the shim, see StateFile)
//   <pod-dir>/stop                grace period in ms, written by Stop before SIGTERM
//   <pod-dir>/restart             "<generation> <hold 0|1> <grace ms>", written by
//                                 RestartContainers before SIGUSR1
//   <pod-dir>/hosts               the pod's hosts file (pods with one), rewritten in place;
//                                 bind-mounted over /etc/hosts in isolated pods
//   <pod-dir>/work/               the containers' default working directory, owned by
//                                 the pod's user, mode 0700 (the pod dir itself is
//                                 root's, 0711: containers cannot touch the files above)
//   <pod-dir>/volumes/<name>/     the pod's emptyDir volumes (a tmpfs in isolated pods
//                                 for medium Memory), deleted with the pod directory
//   <pod-dir>/<container>.<run>.log   stdout+stderr of run <run> (= restart count);
//                                 container names are DNS labels, so hold no dot
//   <root>/shims.log              every shim's own diagnostics, one append-only
//                                 file shared by all pods, lines prefixed with the uid
//   <root>/events.sock            the runtime's datagram socket: a shim sends its
//                                 pod's uid after recording a container's exit
//                                 (a hint; nobody listening is fine)
//
// A pod costs few inodes (the directory, spec.json, state.json, one log per
// run): inode creation is a visible share of starting a pod, and on ext4
// without a journal each new inode is searched for past every recently freed
// one, so it grows costly right after many pods were deleted.
//
// Thread-safety: free functions, no shared state.
#pragma once

#include <sys/un.h>

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "agent/runtime/log_files.h"
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
  // The pod has a hosts file (<pod-dir>/hosts): read from spec.json, where
  // `pod.hosts` (the content) is not kept.
  bool has_hosts = false;
  // Container log rotation (the agent's --container-log-max-size/-files).
  LogRotation log_rotation;
  // The node's cgroup facts, found once by the runtime rather than by every
  // shim (a statfs, a read and parse of /proc/self/mounts, a warning line in
  // shims.log per pod). Non-empty `cgroups_error`: `cgroup_root` is unusable,
  // for this reason. `pids_v1_root` set: the v1 pids hierarchy ("" = none);
  // unset (a spec of an earlier agent): the shim looks for itself.
  std::string cgroups_error;
  std::optional<std::string> pids_v1_root;
};

struct PodPaths {
  explicit PodPaths(std::string pod_dir) : dir(std::move(pod_dir)) {}
  std::string dir;
  std::string Spec() const { return dir + "/spec.json"; }
  std::string State() const { return dir + "/state.json"; }
  std::string Stop() const { return dir + "/stop"; }
  std::string Restart() const { return dir + "/restart"; }
  std::string Hosts() const { return dir + "/hosts"; }
  std::string Work() const { return dir + "/work"; }
  std::string Volume(const std::string& name) const { return dir + "/volumes/" + name; }
  std::string Log(const std::string& container, int run) const {
    return dir + "/" + container + "." + std::to_string(run) + ".log";
  }
};

// The shims' shared diagnostics file under the runtime's root (see above).
inline constexpr char kShimLogName[] = "shims.log";
// The runtime's change-hint socket under its root (see above).
inline constexpr char kEventsSocketName[] = "events.sock";
// Fills `addr` with <root>/events.sock; false when that path does not fit a
// sockaddr_un (hints are then off: the runtime polls only).
bool EventsSocketAddress(const std::string& root, sockaddr_un* addr);
// The fd of the shim launcher's socket in the launcher (`batchd-shim
// --launcher`); the protocol is described in shim_main.cc.
inline constexpr int kLauncherFd = 3;

nlohmann::json ShimConfigToJson(const ShimConfig& c);
absl::StatusOr<ShimConfig> ShimConfigFromJson(const nlohmann::json& j);
nlohmann::json PodStatusToJson(const PodSandboxStatus& s);
absl::StatusOr<PodSandboxStatus> PodStatusFromJson(const nlohmann::json& j);

// File helpers. `WriteFileAtomic` writes a temp file, fsyncs it, renames it
// over `path` and fsyncs the directory (atomic against crashes and power loss).
absl::Status WriteFileAtomic(const std::string& path, const std::string& content);
// state.json as the shim writes it: each write is a WriteFileAtomic, so a
// reader (no lock needed) sees a whole state, the previous or the next. A
// shim of an earlier release rewrote the file in place under an OFD write
// lock; content that does not parse is retried by readers.
class StateFile {
 public:
  explicit StateFile(std::string path) : path_(std::move(path)) {}
  ~StateFile();
  StateFile(const StateFile&) = delete;
  StateFile& operator=(const StateFile&) = delete;
  // Replaces the whole content.
  absl::Status Write(const std::string& content);

 private:
  std::string path_;
  int fd_ = -1;
};
// Reads `path` under an OFD read lock (see StateFile).
absl::StatusOr<std::string> ReadFileShared(const std::string& path);
// Writes all of `content` to `fd` from its current offset (`path` names it in errors).
absl::Status WriteFd(int fd, const std::string& content, const std::string& path);
absl::StatusOr<std::string> ReadFile(const std::string& path);
// Replaces the content of `path` keeping its inode (created when missing):
// writes from offset 0, then truncates to the new length, so a bind mount of
// the file shows the new content. Readers may see a mix while it runs.
absl::Status RewriteInPlace(const std::string& path, const std::string& content);
// Reads `fd` from its current offset to the end (`path` names it in errors).
absl::StatusOr<std::string> ReadFd(int fd, const std::string& path);
absl::StatusOr<nlohmann::json> ReadJsonFile(const std::string& path);
// Parses `text` read from `path`; DataLoss when it is not JSON.
absl::StatusOr<nlohmann::json> ParseJsonFile(const std::string& text, const std::string& path);
absl::Status MakeDirs(const std::string& path);
absl::Status RemoveTree(const std::string& path);

// Kubernetes' reading of a wait status: exit N → (N, 0); signal N → (128+N, N).
struct ExitInfo {
  int exit_code = 0;
  int signal = 0;
};
ExitInfo DecodeWaitStatus(int wait_status);

}  // namespace batchd::agent
