// ProcessRuntime (process_runtime.cc): the PodRuntime of host processes, one
// batchd-shim per pod. Declared here for its two files: process_runtime.cc
// (the calls on pods) and process_runtime_launch.cc (the launcher and the
// spawning of shims). Internal to agent/runtime; NewProcessRuntime makes one.
#pragma once

#include <functional>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "agent/runtime/pod_files.h"
#include "agent/runtime/pod_runtime.h"
#include "agent/runtime/process_runner.h"

namespace batchd::agent::internal {

class ProcessRuntime : public PodRuntime {
 public:
  ProcessRuntime(ProcessRuntimeOptions opts, std::unique_ptr<ProcessRunner> runner)
      : opts_(std::move(opts)), runner_(std::move(runner)) {}
  ~ProcessRuntime() override {
    WatchChanges(nullptr);
    absl::MutexLock lock(&mu_);
    StopLauncher();
    if (shim_log_fd_ >= 0) close(shim_log_fd_);
  }

  absl::Status Start(const PodSandboxSpec& spec) override;
  absl::StatusOr<PodSandboxStatus> Status(const std::string& uid) override;
  absl::Status Stop(const std::string& uid, absl::Duration grace) override;
  absl::Status RestartContainers(const std::string& uid, int64_t generation, bool hold,
                                 absl::Duration grace) override;
  absl::Status Remove(const std::string& uid) override;
  absl::Status WriteHosts(const std::string& uid, const std::string& content) override;
  absl::Status SetFence(const std::string& uid, absl::Duration remaining) override;
  std::vector<std::string> List() override;
  void WatchChanges(std::function<void(const std::string& uid)> on_change) override;
  std::string LogPath(const std::string& uid, const std::string& container,
                      bool previous) override;
  int64_t LogBytes(const std::string& uid) override;
  std::vector<ContainerUsage> ContainerUsages(const std::string& uid) override;
  absl::Status RemoveLogs(const std::string& uid) override;

 private:
  enum class Shim { kNoPod, kAlive, kDead };

  PodPaths Paths(const std::string& uid) const { return PodPaths(opts_.root + "/" + uid); }
  // Tests the flock on spec.json (kNoPod: no spec.json). Counts toward the sweep.
  Shim Probe(const PodPaths& paths) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Reaps `pid` if it is a terminated child; a shim from a past runtime in
  // this process is reaped too (it is not in children_).
  void Reap(int pid) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void SweepShims() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The shared shims.log, opened once (-1 if it cannot be opened).
  int ShimLogFd() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status StartLauncher() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Closes our end (the launcher exits at EOF; its shims run on), kills and
  // reaps it: at shutdown, and when it failed (a hung one's late reply must
  // not reach its successor).
  void StopLauncher() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Has the launcher fork a shim for `paths` answering on `ready_fd`; its pid.
  // Unavailable when the launcher is gone (or hangs): the caller restarts it.
  absl::StatusOr<int> Launch(const PodPaths& paths, int ready_fd)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status SpawnShim(const PodPaths& paths, const std::string& uid)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The node's cgroup facts for every shim (ShimConfig), found on the first
  // call: whether the cgroup root is usable, where the v1 pids hierarchy is.
  void ResolveCgroups() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Blocks (releasing mu_) while `uid`'s Start waits for its shim.
  void AwaitStarted(const std::string& uid) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::StatusOr<PodSandboxStatus> ReadStatus(const PodPaths& paths, bool alive)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Signals a live shim (not its group) at `pid`, verified where its state
  // recorded its start time.
  absl::Status SignalShim(const absl::StatusOr<PodSandboxStatus>& st, int pid, int sig);

  const ProcessRuntimeOptions opts_;
  std::unique_ptr<ProcessRunner> runner_;
  absl::Mutex mu_;
  std::set<int> children_ ABSL_GUARDED_BY(mu_);  // shims this process spawned and has not reaped
  int probes_ ABSL_GUARDED_BY(mu_) = 0;          // liveness checks since the last sweep
  int shim_log_fd_ ABSL_GUARDED_BY(mu_) = -1;
  int launcher_fd_ ABSL_GUARDED_BY(mu_) = -1;      // our end of the launcher's socket (-1: none)
  int launcher_pid_ ABSL_GUARDED_BY(mu_) = 0;
  int direct_spawns_left_ ABSL_GUARDED_BY(mu_) = 0;  // > 0: the launcher failed; spawn shims directly
  bool cgroups_resolved_ ABSL_GUARDED_BY(mu_) = false;
  std::string cgroups_error_ ABSL_GUARDED_BY(mu_);  // non-empty: opts_.cgroup_root is unusable
  std::string pids_v1_root_ ABSL_GUARDED_BY(mu_);   // "" = no writable v1 pids hierarchy
  // Pods whose Start waits for the shim's "ok" without holding mu_ (so pods
  // start in parallel); other calls on such a pod wait on started_cv_, which
  // keeps the per-pod order the single lock used to give.
  std::set<std::string> starting_ ABSL_GUARDED_BY(mu_);
  absl::CondVar started_cv_;
  // WatchChanges: the bound events.sock, an eventfd that stops the thread.
  absl::Mutex watch_mu_;  // serializes WatchChanges calls
  int events_fd_ = -1;
  int events_stop_fd_ = -1;
  std::thread events_thread_;
};

}  // namespace batchd::agent::internal
