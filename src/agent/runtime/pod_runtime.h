// PodRuntime: runs a pod's containers as host processes (no container engine;
// the image is recorded and ignored). The real implementation starts one
// supervisor process per pod (`batchd-shim`, the containerd-shim role) that
// owns the containers, captures their output to log files and records their
// state in `<root>/<uid>/state.json`, so pods outlive the agent: a new
// `PodRuntime` on the same root re-adopts running pods and reads the exit codes
// of pods that ended while no agent ran.
//
// Thread-safety: every method may be called from any thread; calls for the
// same uid are serialized internally. The runtime owns nothing in memory that
// matters: all state is on disk under `root`.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "agent/runtime/usage.h"

namespace batchd::agent {

// A pod volume as the runtime provides it. emptyDir volumes live in the pod
// directory (`<pod-dir>/volumes/<name>`, deleted with the pod); host volumes
// (hostPath, and persistentVolumeClaim resolved by the agent to a node-local
// directory) are a host path the agent has already checked.
struct VolumeSpec {
  enum class Type { kEmptyDir, kHost };
  std::string name;
  Type type = Type::kEmptyDir;
  std::string host_path;          // kHost: the absolute host path (a directory or a file)
  bool memory = false;            // emptyDir medium Memory: a tmpfs where the pod is isolated
  int64_t size_limit_bytes = 0;   // emptyDir sizeLimit (0 = none): tmpfs size, or the usage
                                  // above which the shim evicts the pod
  std::string size_limit_text;    // the sizeLimit as written ("1Gi"), for messages
  bool operator==(const VolumeSpec&) const = default;
};

// One volumeMounts entry of a container.
struct MountSpec {
  std::string volume;      // a VolumeSpec name
  std::string mount_path;  // absolute
  std::string sub_path;    // relative, "" = the volume's root
  bool read_only = false;
  bool operator==(const MountSpec&) const = default;
};

struct ContainerSpec {
  std::string name;
  std::string image;                  // recorded only
  std::vector<std::string> argv;      // command + args, $(VAR) already expanded; argv[0]
                                      // is looked up in the container's PATH
  std::vector<std::pair<std::string, std::string>> env;  // fully resolved; the runtime
                                      // adds PATH (the host's) and HOSTNAME (pod name)
                                      // unless given here
  std::string working_dir;            // "" = the pod directory
  int64_t cpu_limit_millis = 0;       // 0 = none; cgroup v2 cpu.max
  int64_t memory_limit_bytes = 0;     // 0 = none; cgroup v2 memory.max
  std::vector<std::string> readiness_exec;  // exec readinessProbe argv; empty = none
  int32_t readiness_period_seconds = 10;
  int32_t readiness_initial_delay_seconds = 0;
  int32_t readiness_timeout_seconds = 1;
  int32_t readiness_failure_threshold = 3;
  int32_t readiness_success_threshold = 1;
  bool restartable_init = false;      // sidecar: init container with restartPolicy Always
  // Bind-mounted at their mount paths in the container's own mount namespace
  // where the pod is isolated; otherwise only BATCHD_VOLUME_<NAME> points at
  // each volume's directory.
  std::vector<MountSpec> mounts;
  // The identity the container's processes run as (securityContext, or the
  // agent's dedicated pod user): -1 = the shim's own (a non-root agent).
  // `groups` are the supplementary groups (set only when uid >= 0).
  int64_t uid = -1;
  int64_t gid = -1;
  std::vector<int64_t> groups;
  // securityContext.allowPrivilegeEscalation: false (PR_SET_NO_NEW_PRIVS).
  bool no_new_privs = false;
  // securityContext.capabilities.drop contains ALL: the capability bounding
  // set is emptied (and a root container keeps no capability).
  bool drop_all_capabilities = false;
};

struct PodSandboxSpec {
  std::string uid, ns, name;
  std::vector<ContainerSpec> init_containers, containers;
  std::string restart_policy = "Always";  // Always | OnFailure | Never
  int64_t termination_grace_seconds = 30;
  // Not enforced by the runtime: the agent watches the deadline and calls `Stop`.
  int64_t active_deadline_seconds = 0;
  // Isolation (root agents): the shim enters a private mount namespace and a
  // UTS namespace, sets the host name to `hostname` and bind-mounts the pod's
  // hosts file over /etc/hosts; each container gets its volume mounts in a
  // mount namespace of its own. The network stays the node's.
  bool isolate = false;
  std::string hostname;
  // The pod's hosts file ("" = none: the node's /etc/hosts is used as is);
  // kept current with WriteHosts. Without isolation BATCHD_HOSTS_FILE names it.
  std::string hosts;
  std::vector<VolumeSpec> volumes;
  // Restarts by a controller (the pod annotation batchd.io/restart-generation;
  // JobSet's in-place restart), -1 = none. Otherwise the containers run as
  // generation `restart_generation`: a container that fails is not restarted
  // by the restart policy but stays terminated, and the pod keeps running,
  // until `RestartContainers` re-runs every container for a newer generation.
  int64_t restart_generation = -1;
  // With a generation: the containers do not start until released (a barrier
  // the controller lifts with `RestartContainers(uid, generation, false, ...)`).
  bool restart_hold = false;
  // Owner of the pod's working directory (<pod-dir>/work, mode 0700), its
  // emptyDir volumes and its log files: the pod-level user and group (fsGroup
  // when set). -1 = the shim's own (a non-root agent).
  int64_t owner_uid = -1;
  int64_t owner_gid = -1;
  // The pod's pids.max (kubelet's podPidsLimit), 0 = none.
  int64_t pids_limit = 0;
  // Node fencing: the pod's fence deadline, this long after Start (set
  // before its supervisor starts; moved on with SetFence). Infinite: none.
  absl::Duration fence_remaining = absl::InfiniteDuration();
};

// The previous run of a container (Kubernetes' lastState.terminated).
struct TerminatedState {
  int exit_code = 0;
  int signal = 0;
  std::string reason;  // Completed | Error | OOMKilled | ContainerStatusUnknown | StartError
  std::string message;
  absl::Time started_at = absl::InfinitePast();
  absl::Time finished_at = absl::InfinitePast();
};

struct ContainerStatus {
  enum class State { kWaiting, kRunning, kTerminated };
  std::string name;
  State state = State::kWaiting;
  // Waiting: PodInitializing | ContainerCreating | CrashLoopBackOff.
  // Terminated: Completed (exit 0) | Error | OOMKilled | StartError (could not
  // exec: message says why, exit_code 128) | ContainerStatusUnknown (the
  // supervisor died and the outcome is unknown; exit_code 137).
  std::string reason;
  std::string message;
  int exit_code = 0;  // killed by signal N: 128+N
  int signal = 0;     // the signal that killed it, 0 = exited normally
  absl::Time started_at = absl::InfinitePast();   // current (or last) run
  absl::Time finished_at = absl::InfinitePast();  // terminated only
  int restart_count = 0;
  bool ready = false;  // running and (no readiness probe or probe passing)
  bool started = false;
  int pid = 0;  // the container's main process (= its process group) while running
  // `pid`'s start time (/proc/PID/stat field 22; 0 = not recorded): with the
  // pod's boot_id, what makes `pid` safe to signal later (proc_identity.h).
  uint64_t start_ticks = 0;
  std::optional<TerminatedState> last_terminated;
};

struct PodSandboxStatus {
  bool found = false;             // the pod directory exists
  bool supervisor_alive = false;  // its shim is running
  std::vector<ContainerStatus> init;  // in spec order
  std::vector<ContainerStatus> app;   // in spec order
  // Nothing more will run: every container is terminated and the restart
  // policy restarts none of them (an init container failed under Never, all
  // app containers ended, or the pod was stopped).
  bool finished = false;
  bool stop_requested = false;
  absl::Time started_at = absl::InfinitePast();  // when the shim started the pod
  int shim_pid = 0;  // the supervisor's pid as it recorded it (0 = not recorded)
  uint64_t shim_start_ticks = 0;  // its start time (proc_identity.h; 0 = not recorded)
  std::string boot_id;            // the boot the shim ran in ("" = not recorded)
  // Why the supervisor ended the pod itself ("" = it did not): "Evicted" when
  // an emptyDir outgrew its sizeLimit.
  std::string reason;
  std::string message;
  // Resource limits the pod asked for (cpu.max, memory.max, pids.max) that
  // the shim could not apply, and why ("" = all applied, or none asked).
  std::string limits_warning;
  // Controller-driven restarts (PodSandboxSpec::restart_generation >= 0): the
  // generation the containers run, stop or are held for (-1 = none); whether
  // they are held (stopped, waiting for a release), restarting (the previous
  // generation's containers are stopping), or a container failed in this
  // generation (it waits for a newer one).
  int64_t generation = -1;
  bool held = false;
  bool restarting = false;
  bool failed = false;
};

class PodRuntime {
 public:
  virtual ~PodRuntime() = default;

  // Creates the pod directory and starts its supervisor. Idempotent: a no-op
  // when the pod directory already holds a started pod (alive or ended: a pod
  // never runs twice under one uid). Returns once the supervisor holds the pod.
  virtual absl::Status Start(const PodSandboxSpec& spec) = 0;

  // What the supervisor last recorded. `found == false` (and OK) for an
  // unknown uid. If the supervisor died (killed), containers recorded as
  // running are reported terminated with ContainerStatusUnknown and their
  // process groups are killed.
  virtual absl::StatusOr<PodSandboxStatus> Status(const std::string& uid) = 0;

  // SIGTERM to every container's process group, SIGKILL after `grace`.
  // Asynchronous: returns at once; `Status` shows progress (`finished` once all
  // are gone). OK for an unknown or finished pod.
  virtual absl::Status Stop(const std::string& uid, absl::Duration grace) = 0;

  // Controller-driven restarts (see PodSandboxSpec::restart_generation): for
  // a newer `generation`, stops every container (SIGTERM to its process
  // group, SIGKILL after `grace`) and runs them all again, init containers
  // first, in the same sandbox (volumes, hosts file, pod directory); each
  // re-run container's restart count goes up by one. With `hold` they stay
  // stopped until a call for the same generation without it. Asynchronous
  // (`Status` shows progress); an older generation changes nothing.
  // FailedPrecondition when the pod is not running or not controller-driven.
  virtual absl::Status RestartContainers(const std::string& uid, int64_t generation, bool hold,
                                         absl::Duration grace) {
    (void)uid, (void)generation, (void)hold, (void)grace;
    return absl::UnimplementedError("this runtime cannot restart containers in place");
  }

  // Deletes the pod directory (logs go too) and its cgroups.
  // REQUIRES: the supervisor is not alive (else FailedPrecondition).
  virtual absl::Status Remove(const std::string& uid) = 0;

  // Rewrites the pod's hosts file in place (same inode: the bind mount over
  // the pod's /etc/hosts shows the new content at once). NotFound when the
  // pod was started without one.
  virtual absl::Status WriteHosts(const std::string& uid, const std::string& content) = 0;

  // Node fencing (api/core/v1/node_fence.h): the supervisor kills the pod,
  // ending it Evicted, once `remaining` from now has passed without another
  // call; InfiniteDuration removes the deadline. NotFound for an unknown pod.
  // The default runtime does not fence.
  virtual absl::Status SetFence(const std::string& uid, absl::Duration remaining) {
    (void)uid, (void)remaining;
    return absl::OkStatus();
  }

  // Uids of every pod directory under root (re-adoption after a restart).
  virtual std::vector<std::string> List() = 0;
  // Calls `on_change(uid)`, from a runtime thread, soon after a pod's
  // supervisor recorded a change a poll would otherwise find late: a
  // container exited or the pod ended (the kubelet's PLEG events). A hint
  // only: it may come late, never, or twice, and `Status` stays the truth.
  // A later call replaces the callback; null stops the calls and returns
  // once none is running. The default runtime has no such events.
  virtual void WatchChanges(std::function<void(const std::string& uid)> on_change) {
    (void)on_change;
  }

  // Bytes of a pod's container logs (every run, rotated files included):
  // what the agent's disk-pressure eviction ranks pods by. 0 when unknown.
  virtual int64_t LogBytes(const std::string& uid) {
    (void)uid;
    return 0;
  }
  // Deletes the logs of a finished pod (disk-pressure reclaim, as the
  // kubelet's container GC removes dead containers). FailedPrecondition
  // while its supervisor is alive.
  virtual absl::Status RemoveLogs(const std::string& uid) {
    (void)uid;
    return absl::UnimplementedError("this runtime cannot remove logs");
  }

  // The log file of a container's current run (or, with `previous`, of the
  // run before it); "" when there is none. Files are raw stdout+stderr.
  virtual std::string LogPath(const std::string& uid, const std::string& container,
                              bool previous) = 0;
  // Resource usage of each running container of the pod (init containers
  // included, spec order; usage.h says where it comes from), for the
  // node's resource metrics (`kubectl top`). Empty for an unknown or
  // finished pod, and from runtimes that cannot measure.
  struct ContainerUsage {
    std::string name;
    Usage usage;
  };
  virtual std::vector<ContainerUsage> ContainerUsages(const std::string& uid) {
    (void)uid;
    return {};
  }
};

struct ProcessRuntimeOptions {
  std::string root;       // pods live in <root>/<uid>/ (never inside the store's directory)
  std::string shim_path;  // the `batchd-shim` executable
  // cgroup v2 mount; per-container cgroups go under <cgroup_root>/batchd/<uid>/<name>.
  // Used only when it is a writable cgroup2 mount ("" = never use cgroups).
  std::string cgroup_root = "/sys/fs/cgroup";
  // Crash-loop backoff (Kubernetes: 10s doubling to 5m); tests shorten it.
  absl::Duration backoff_initial = absl::Seconds(10);
  absl::Duration backoff_max = absl::Minutes(5);
  absl::Duration start_timeout = absl::Seconds(10);  // for the shim to take the pod
  // Container log rotation by size and count (log_files.h); kubelet's defaults.
  int64_t log_max_bytes = 10 << 20;
  int log_max_files = 5;
};

// The real runtime (one `batchd-shim` per pod, forked by a `batchd-shim
// --launcher` it posix_spawns once; see process_runtime.cc).
std::unique_ptr<PodRuntime> NewProcessRuntime(ProcessRuntimeOptions opts);

}  // namespace batchd::agent
