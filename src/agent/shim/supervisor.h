// Supervisor: the state machine inside `batchd-shim` that runs one pod's
// containers. Init containers run in order (each must exit 0; sidecars —
// restartable init containers — start and keep running), then app containers
// run concurrently; exits are restarted per the pod's restart policy with
// Kubernetes' crash-loop backoff (first restart immediate, then `initial`
// doubling to `max`, reset after a run of 2×max). Exec readiness probes run on
// their period. Every transition rewrites state.json atomically.
//
// Each container is spawned directly (one exec, no wrapper) in its own process
// group: the runner's child sets PR_SET_PDEATHSIG(SIGKILL), joins the
// container's cgroup and chdirs before exec'ing the command; exec failures
// come back from the spawn (StartError).
//
// Controller-driven restarts (PodSandboxSpec::restart_generation >= 0, the
// in-place restart of JobSet): a failed container is not restarted by the
// restart policy and does not end the pod; `RequestRestart` for a newer
// generation stops every container (SIGTERM, SIGKILL after the grace) and,
// once all are gone, runs them all again from the first init container,
// unless held (a barrier released by a request for the same generation).
//
// Thread-safety: single-threaded; driven by the shim's event loop (or a test):
// `Begin`, then `OnExit` for every reaped child, `Tick` when `NextDeadline`
// passes, `RequestStop` on SIGTERM, `RequestRestart` on SIGUSR1, until `Done`.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "agent/runtime/cgroup.h"
#include "agent/runtime/log_files.h"
#include "agent/runtime/pod_files.h"
#include "agent/runtime/pod_runtime.h"
#include "agent/runtime/process_runner.h"
#include "common/clock.h"

namespace batchd::agent {

struct SupervisorEnv {
  std::string pod_dir;
  std::vector<std::string> base_env;  // "K=V" every container starts with (PATH, HOSTNAME)
  std::optional<Cgroups> cgroups;     // nullopt = no limits
  std::string cgroups_error;          // why `cgroups` is nullopt (for the pod's limits warning)
  // pids.max on a hybrid host (cgroups without the pids controller); nullopt = none.
  std::optional<PidsV1> pids_v1;
  int shim_pid = 0;                   // recorded in state.json (Stop signals it)
  // Recorded with the pids (proc_identity.h): the boot, the shim's start
  // time, and how a spawned pid's start time is read (null: not recorded).
  std::string boot_id;
  uint64_t shim_start_ticks = 0;
  std::function<uint64_t(int pid)> start_ticks;
  // Containers write to a pipe that the shim copies into rotated log files
  // (log_files.h; the shim's loop calls PumpLog when one is readable).
  // False: each container writes its log file directly (no rotation).
  bool pipe_logs = false;
  // Called once state.json records a container's exit (and with it perhaps
  // the pod's end): the shim hints the runtime (kEventsSocketName).
  std::function<void()> exited;
  // Bytes used under `dir`, counting stops once past `stop_above` (a bounded
  // walk). Null: emptyDir sizeLimits are not checked.
  std::function<int64_t(const std::string& dir, int64_t stop_above)> dir_usage;
  // The pod's emptyDirs on memory are tmpfs mounts sized by their limit (the
  // shim made them): the kernel enforces those, they are not walked.
  bool memory_volumes_are_tmpfs = false;
  // Node fencing (api/core/v1/node_fence.h): the pod's fence deadline as
  // the agent last wrote it (it moves it on with every lease renewal), read
  // anew at every check; InfiniteFuture when there is none. Past it, the
  // pod's containers are killed at once and the pod ends Evicted. Null: off.
  std::function<absl::Time()> fence_deadline;
};

// How often the shim reads the fence deadline again before it is due (the
// agent may have set or removed one); at the deadline it is read once more.
inline constexpr absl::Duration kFenceRecheckPeriod = absl::Seconds(10);

// How often the shim measures emptyDir volumes that have a sizeLimit.
inline constexpr absl::Duration kEmptyDirCheckPeriod = absl::Seconds(10);

// The environment variable that names a volume's directory in pods whose
// mounts could not be made (no isolation): BATCHD_VOLUME_<NAME>, the volume
// name upper-cased with '-' as '_'.
std::string VolumeEnvName(const std::string& volume);

class Supervisor {
 public:
  Supervisor(ShimConfig config, SupervisorEnv env, ProcessRunner& runner, const Clock& clock);

  void Begin();
  // A child of the shim was reaped with `wait_status`; unknown pids are ignored.
  void OnExit(int pid, int wait_status);
  // Runs what is due: restarts after backoff, probes, probe timeouts, SIGKILL after grace.
  void Tick();
  // SIGTERM to every container's group now, SIGKILL after `grace`; nothing restarts.
  void RequestStop(absl::Duration grace);
  // Re-runs every container for `generation` (see the header comment); with
  // `hold`, they stay stopped until a request for the same generation
  // without it. Ignored for a pod that is not controller-driven, a stopping
  // pod and older generations.
  void RequestRestart(int64_t generation, bool hold, absl::Duration grace);
  // When `Tick` next has work (InfiniteFuture when none).
  absl::Time NextDeadline() const;
  // Nothing runs and nothing will: the shim may exit.
  bool Done() const;
  const PodSandboxStatus& status() const { return status_; }

  ~Supervisor();
  Supervisor(const Supervisor&) = delete;
  Supervisor& operator=(const Supervisor&) = delete;
  // The read ends of the containers' log pipes still open (pipe_logs).
  std::vector<int> LogFds() const;
  // Copies what `fd` holds (at most `budget` bytes) into its log; closes it
  // at EOF (every writer gone). Never blocks.
  void PumpLog(int fd, size_t budget = 1 << 20);
  // Copies what every log pipe holds (at exit, once the writers are gone).
  void DrainLogs();

 private:
  struct Container {
    const ContainerSpec* spec = nullptr;
    bool init = false;
    size_t index = 0;  // into status_.init or status_.app
    int pid = 0;
    int log_fd = -1;  // the read end of the current run's log pipe (pipe_logs)
    std::string cgroup;
    int64_t oom_base = 0;
    std::string start_error;
    absl::Time restart_at = absl::InfiniteFuture();
    absl::Duration backoff = absl::ZeroDuration();
    bool done = false;
    int probe_pid = 0;
    absl::Time probe_at = absl::InfiniteFuture();
    absl::Time probe_deadline = absl::InfiniteFuture();
    bool probe_timed_out = false;
    int probe_successes = 0;
    int probe_failures = 0;
  };

  ContainerStatus& StatusOf(const Container& c);
  void Advance();
  void StartContainer(Container& c);
  absl::StatusOr<int> SpawnInContainer(const Container& c, const std::vector<std::string>& argv,
                                       int log_fd);
  void HandleExit(Container& c, int wait_status);
  void AfterTermination(Container& c);
  void ScheduleRestart(Container& c);
  void StartProbe(Container& c);
  void HandleProbeExit(Container& c, int wait_status);
  void CheckAppsDone();
  void BeginStopping(absl::Duration grace);
  bool Controlled() const { return config_.pod.restart_generation >= 0; }
  // Restarting and nothing runs any more: every container back to waiting
  // (its last run in lastState, restart count + 1), then started unless held.
  void MaybeFinishRestart();
  std::vector<std::string> ContainerEnv(const ContainerSpec& spec) const;
  // The bind mounts of a container (sub paths created), or why not.
  absl::StatusOr<std::vector<BindMount>> ContainerMounts(const ContainerSpec& spec) const;
  // The host directory of a volume (emptyDir: in the pod directory).
  std::string VolumeSource(const VolumeSpec& v) const;
  // Evicts the pod when an emptyDir outgrew its sizeLimit (kubelet's local
  // storage eviction).
  void CheckVolumeUsage();
  // Reads the fence deadline; past it, fences the pod (kills everything, no
  // grace, reason Evicted). True when it did.
  bool CheckFence();
  std::string WorkingDir(const ContainerSpec& spec) const;
  // Records a limit that could not be applied (PodSandboxStatus::limits_warning).
  void WarnLimits(const std::string& what);
  // The pod's pids.max, once, before the first container.
  void ApplyPidsLimit();
  void Persist();

  ShimConfig config_;
  SupervisorEnv env_;
  PodPaths paths_;
  StateFile state_file_;
  ProcessRunner& runner_;
  const Clock& clock_;
  PodSandboxStatus status_;
  std::vector<Container> containers_;  // init containers, then app containers
  size_t next_init_ = 0;
  bool in_app_phase_ = false;
  bool stopping_ = false;
  bool killed_ = false;
  absl::Time kill_at_ = absl::InfiniteFuture();
  // A controller-driven restart: SIGKILL to what still runs at `restart_kill_at_`.
  bool restart_killed_ = false;
  absl::Time restart_kill_at_ = absl::InfiniteFuture();
  absl::Time usage_check_at_ = absl::InfiniteFuture();
  absl::Time fence_check_at_ = absl::InfiniteFuture();
  std::string pids_cgroup_;  // the pod's v1 pids group ("" = none)
  // Open log pipes (read end -> the run's log): a run's pipe stays until
  // EOF, past its container's exit, so output of its leftovers is kept.
  std::map<int, std::unique_ptr<RotatingLog>> log_pipes_;
};

}  // namespace batchd::agent
