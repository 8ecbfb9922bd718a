#include "agent/shim/supervisor.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <map>

#include "absl/strings/str_cat.h"

namespace batchd::agent {
namespace {

using State = ContainerStatus::State;

bool CheckedForUsage(const VolumeSpec& v, bool memory_is_tmpfs) {
  return v.type == VolumeSpec::Type::kEmptyDir && v.size_limit_bytes > 0 &&
         !(v.memory && memory_is_tmpfs);
}

}  // namespace

std::string VolumeEnvName(const std::string& volume) {
  std::string out = "BATCHD_VOLUME_";
  for (char ch : volume) {
    out.push_back(ch == '-' || ch == '.' ? '_' : static_cast<char>(std::toupper(ch)));
  }
  return out;
}

Supervisor::Supervisor(ShimConfig config, SupervisorEnv env, ProcessRunner& runner,
                       const Clock& clock)
    : config_(std::move(config)),
      env_(std::move(env)),
      paths_(env_.pod_dir),
      state_file_(paths_.State()),
      runner_(runner),
      clock_(clock) {
  const PodSandboxSpec& pod = config_.pod;
  const char* waiting = pod.init_containers.empty() ? "ContainerCreating" : "PodInitializing";
  for (size_t i = 0; i < pod.init_containers.size(); ++i) {
    containers_.push_back(Container{.spec = &pod.init_containers[i], .init = true, .index = i});
    status_.init.push_back(ContainerStatus{.name = pod.init_containers[i].name,
                                           .reason = "PodInitializing"});
  }
  for (size_t i = 0; i < pod.containers.size(); ++i) {
    containers_.push_back(Container{.spec = &pod.containers[i], .init = false, .index = i});
    status_.app.push_back(ContainerStatus{.name = pod.containers[i].name, .reason = waiting});
  }
  status_.found = true;
  status_.shim_pid = env_.shim_pid;
  status_.shim_start_ticks = env_.shim_start_ticks;
  status_.boot_id = env_.boot_id;
  status_.generation = pod.restart_generation;
  status_.held = pod.restart_generation >= 0 && pod.restart_hold;
  for (const VolumeSpec& v : pod.volumes) {
    if (env_.dir_usage && CheckedForUsage(v, env_.memory_volumes_are_tmpfs)) {
      usage_check_at_ = clock_.Now() + kEmptyDirCheckPeriod;
    }
  }
}

Supervisor::~Supervisor() {
  for (const auto& [fd, log] : log_pipes_) close(fd);
}

std::vector<int> Supervisor::LogFds() const {
  std::vector<int> fds;
  fds.reserve(log_pipes_.size());
  for (const auto& [fd, log] : log_pipes_) fds.push_back(fd);
  return fds;
}

void Supervisor::PumpLog(int fd, size_t budget) {
  auto it = log_pipes_.find(fd);
  if (it == log_pipes_.end()) return;
  char buf[64 * 1024];
  size_t copied = 0;
  while (copied < budget) {
    const ssize_t n = read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    if (n <= 0) {  // EOF: every writer is gone
      const int64_t dropped = it->second->dropped_bytes();
      if (dropped > 0) {
        std::fprintf(stderr, "batchd-shim %s: %lld log bytes dropped (could not write)\n",
                     config_.pod.uid.c_str(), static_cast<long long>(dropped));
      }
      close(fd);
      log_pipes_.erase(it);
      for (Container& c : containers_) {
        if (c.log_fd == fd) c.log_fd = -1;
      }
      return;
    }
    (void)it->second->Append(std::string_view(buf, static_cast<size_t>(n)));
    copied += static_cast<size_t>(n);
  }
}

void Supervisor::DrainLogs() {
  for (int fd : LogFds()) PumpLog(fd, SIZE_MAX);
}

ContainerStatus& Supervisor::StatusOf(const Container& c) {
  return c.init ? status_.init[c.index] : status_.app[c.index];
}

void Supervisor::WarnLimits(const std::string& what) {
  if (status_.limits_warning.find(what) != std::string::npos) return;
  if (!status_.limits_warning.empty()) status_.limits_warning += "; ";
  status_.limits_warning += what;
}

void Supervisor::ApplyPidsLimit() {
  const int64_t limit = config_.pod.pids_limit;
  if (limit <= 0) return;
  if (env_.cgroups && env_.cgroups->HasPids()) {
    absl::Status s = env_.cgroups->SetPodPidsMax(config_.pod.uid, limit);
    if (!s.ok()) WarnLimits(absl::StrCat("pids.max not applied: ", s.message()));
    return;
  }
  if (env_.pids_v1) {
    absl::StatusOr<std::string> dir = env_.pids_v1->CreatePod(config_.pod.uid, limit);
    if (dir.ok()) {
      pids_cgroup_ = *dir;
    } else {
      WarnLimits(absl::StrCat("pids.max not applied: ", dir.status().message()));
    }
    return;
  }
  WarnLimits(absl::StrCat("pids.max not applied: ",
                          env_.cgroups ? "the cgroup v2 root has no pids controller"
                                       : env_.cgroups_error));
}

void Supervisor::Begin() {
  status_.started_at = clock_.Now();
  ApplyPidsLimit();
  status_.supervisor_alive = true;
  // A pod whose fence deadline passed already (started by a cut-off agent)
  // runs nothing.
  if (CheckFence()) return;
  if (!status_.held) Advance();
  Persist();
}

// Starts the next init container(s), or every app container once inits are done.
void Supervisor::Advance() {
  const size_t n_init = config_.pod.init_containers.size();
  while (!in_app_phase_ && !stopping_) {
    if (next_init_ == n_init) {
      in_app_phase_ = true;
      for (size_t i = n_init; i < containers_.size(); ++i) StartContainer(containers_[i]);
      CheckAppsDone();
      return;
    }
    Container& c = containers_[next_init_];
    if (c.spec->restartable_init) {
      ++next_init_;  // a sidecar counts as done with its init step once started
      StartContainer(c);
      continue;
    }
    StartContainer(c);
    return;  // wait for it to exit (StartContainer may already have handled a failure)
  }
}

std::vector<std::string> Supervisor::ContainerEnv(const ContainerSpec& spec) const {
  std::map<std::string, size_t> pos;
  std::vector<std::pair<std::string, std::string>> kv;
  auto put = [&](const std::string& k, const std::string& v) {
    auto [it, inserted] = pos.emplace(k, kv.size());
    if (inserted) {
      kv.emplace_back(k, v);
    } else {
      kv[it->second].second = v;
    }
  };
  for (const std::string& e : env_.base_env) {
    size_t eq = e.find('=');
    if (eq != std::string::npos) put(e.substr(0, eq), e.substr(eq + 1));
  }
  for (const auto& [k, v] : spec.env) put(k, v);
  if (!config_.pod.isolate) {
    // Nothing is mounted: the pod learns where its volumes and hosts file are.
    for (const MountSpec& m : spec.mounts) {
      for (const VolumeSpec& v : config_.pod.volumes) {
        if (v.name != m.volume) continue;
        const std::string dir = m.sub_path.empty() ? VolumeSource(v)
                                                   : VolumeSource(v) + "/" + m.sub_path;
        if (!pos.contains(VolumeEnvName(v.name))) put(VolumeEnvName(v.name), dir);
      }
    }
    if (config_.has_hosts) put("BATCHD_HOSTS_FILE", paths_.Hosts());
  }
  std::vector<std::string> out;
  out.reserve(kv.size());
  for (const auto& [k, v] : kv) out.push_back(k + "=" + v);
  return out;
}

std::string Supervisor::VolumeSource(const VolumeSpec& v) const {
  return v.type == VolumeSpec::Type::kHost ? v.host_path : paths_.Volume(v.name);
}

absl::StatusOr<std::vector<BindMount>> Supervisor::ContainerMounts(
    const ContainerSpec& spec) const {
  std::vector<BindMount> out;
  for (const MountSpec& m : spec.mounts) {
    const VolumeSpec* vol = nullptr;
    for (const VolumeSpec& v : config_.pod.volumes) {
      if (v.name == m.volume) vol = &v;
    }
    if (vol == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("volume \"", m.volume, "\" not found"));
    }
    std::string source = VolumeSource(*vol);
    if (!m.sub_path.empty()) {
      source += "/" + m.sub_path;
      if (absl::Status s = MakeDirs(source); !s.ok()) return s;  // as the kubelet does
    }
    out.push_back({.source = source, .target = m.mount_path, .read_only = m.read_only});
  }
  return out;
}

std::string Supervisor::WorkingDir(const ContainerSpec& spec) const {
  return spec.working_dir.empty() ? paths_.Work() : spec.working_dir;
}

// Spawns `argv` in the container's context: its own process group, its
// cgroup, its working dir, dying with the shim. Exec failures come back as
// the error (the container's StartError message).
absl::StatusOr<int> Supervisor::SpawnInContainer(const Container& c,
                                                 const std::vector<std::string>& argv,
                                                 int log_fd) {
  SpawnRequest req;
  req.argv = argv;
  req.env = ContainerEnv(*c.spec);
  req.cwd = WorkingDir(*c.spec);
  req.stdout_fd = log_fd;
  req.stderr_fd = log_fd;
  req.new_process_group = true;
  req.cgroup = c.cgroup;
  req.pids_cgroup = pids_cgroup_;
  req.die_with_parent = true;
  req.uid = c.spec->uid;
  req.gid = c.spec->gid;
  req.groups = c.spec->groups;
  req.no_new_privs = c.spec->no_new_privs;
  req.drop_all_capabilities = c.spec->drop_all_capabilities;
  if (config_.pod.isolate) {
    absl::StatusOr<std::vector<BindMount>> mounts = ContainerMounts(*c.spec);
    if (!mounts.ok()) return mounts.status();
    req.mounts = *std::move(mounts);
  }
  return runner_.Spawn(req);
}

void Supervisor::StartContainer(Container& c) {
  ContainerStatus& st = StatusOf(c);
  const absl::Time now = clock_.Now();
  c.start_error.clear();
  if (env_.cgroups && c.cgroup.empty()) {
    absl::StatusOr<std::string> dir = env_.cgroups->CreateContainer(
        config_.pod.uid, c.spec->name, c.spec->cpu_limit_millis, c.spec->memory_limit_bytes);
    if (dir.ok()) {
      c.cgroup = *dir;
    } else {
      std::fprintf(stderr, "batchd-shim %s: %s\n", config_.pod.uid.c_str(),
                   dir.status().ToString().c_str());
      WarnLimits(absl::StrCat("container ", c.spec->name, ": ", dir.status().message()));
    }
  } else if (!env_.cgroups &&
             (c.spec->cpu_limit_millis > 0 || c.spec->memory_limit_bytes > 0)) {
    WarnLimits(absl::StrCat("cpu and memory limits not applied: ", env_.cgroups_error));
  }
  if (!c.cgroup.empty()) c.oom_base = Cgroups::OomKills(c.cgroup);
  const std::string log = paths_.Log(c.spec->name, st.restart_count);
  // Logs of runs before the previous one go (the kubelet keeps the last
  // dead container's): a crash-looping container's logs stay bounded.
  if (st.restart_count >= 2) RemoveLogFiles(paths_.Log(c.spec->name, st.restart_count - 2));
  // The pod's own output: its user owns the files (the directory stays root's).
  int log_fd = -1;
  if (env_.pipe_logs) {
    int p[2];
    if (pipe2(p, O_CLOEXEC) == 0) {
      (void)fcntl(p[0], F_SETPIPE_SZ, 1 << 20);  // fewer wake-ups for a chatty writer
      (void)fcntl(p[0], F_SETFL, O_NONBLOCK);
      log_pipes_[p[0]] = std::make_unique<RotatingLog>(
          log, config_.log_rotation, config_.pod.owner_uid, config_.pod.owner_gid);
      c.log_fd = p[0];
      log_fd = p[1];
    }
  } else {
    log_fd = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (log_fd >= 0 && config_.pod.owner_uid >= 0) {
      (void)!fchown(log_fd, static_cast<uid_t>(config_.pod.owner_uid),
                    static_cast<gid_t>(config_.pod.owner_gid));
    }
  }
  absl::StatusOr<int> pid = absl::InvalidArgumentError("container has no command");
  if (!c.spec->argv.empty()) pid = SpawnInContainer(c, c.spec->argv, log_fd);
  if (log_fd >= 0) close(log_fd);  // the container holds the write end now
  st.state = State::kRunning;
  st.reason.clear();
  st.message.clear();
  st.started_at = now;
  st.finished_at = absl::InfinitePast();
  st.started = true;
  st.ready = c.spec->readiness_exec.empty();
  c.probe_successes = c.probe_failures = 0;
  c.probe_at = c.spec->readiness_exec.empty()
                   ? absl::InfiniteFuture()
                   : now + absl::Seconds(c.spec->readiness_initial_delay_seconds);
  if (!pid.ok()) {  // could not even spawn: terminate it here
    c.start_error = std::string(pid.status().message());
    c.pid = 0;
    HandleExit(c, 128 << 8);
    return;
  }
  c.pid = *pid;
  st.pid = *pid;
  st.start_ticks = env_.start_ticks ? env_.start_ticks(*pid) : 0;
}

void Supervisor::OnExit(int pid, int wait_status) {
  for (Container& c : containers_) {
    if (c.pid != 0 && c.pid == pid) {
      HandleExit(c, wait_status);
      Persist();
      if (env_.exited) env_.exited();
      return;
    }
    if (c.probe_pid != 0 && c.probe_pid == pid) {
      HandleProbeExit(c, wait_status);
      Persist();
      return;
    }
  }
}

void Supervisor::HandleExit(Container& c, int wait_status) {
  ContainerStatus& st = StatusOf(c);
  if (c.pid != 0) (void)runner_.Signal(c.pid, SIGKILL, /*group=*/true);  // leftovers die with it
  // What the container wrote before it exited is in its pipe: into the log
  // before the exit is recorded (a reader of a terminated container's log
  // sees all of its main process's output). Bounded: a leftover that has
  // not died yet cannot keep the shim here.
  if (c.log_fd >= 0) PumpLog(c.log_fd, 16 << 20);
  c.log_fd = -1;
  if (c.probe_pid != 0) (void)runner_.Signal(c.probe_pid, SIGKILL, /*group=*/true);
  const ExitInfo e = DecodeWaitStatus(wait_status);
  st.state = State::kTerminated;
  st.exit_code = e.exit_code;
  st.signal = e.signal;
  st.finished_at = clock_.Now();
  st.ready = false;
  st.pid = 0;
  st.start_ticks = 0;
  st.message.clear();
  if (!c.start_error.empty()) {
    st.reason = "StartError";
    st.message = c.start_error;
    st.exit_code = 128;
    st.signal = 0;
  } else if (!c.cgroup.empty() && Cgroups::OomKills(c.cgroup) > c.oom_base) {
    st.reason = "OOMKilled";
  } else {
    st.reason = st.exit_code == 0 ? "Completed" : "Error";
  }
  c.pid = 0;
  c.probe_at = absl::InfiniteFuture();
  AfterTermination(c);
}

// Decides what follows a container's exit: the next init step, a restart, or the end.
void Supervisor::AfterTermination(Container& c) {
  const ContainerStatus& st = StatusOf(c);
  const std::string& policy = config_.pod.restart_policy;
  const bool success = st.exit_code == 0;
  if (stopping_) {
    c.done = true;
    return;
  }
  if (status_.restarting) {
    c.done = true;
    MaybeFinishRestart();
    return;
  }
  if (c.spec->restartable_init) {
    ScheduleRestart(c);
    return;
  }
  if (Controlled() && !success) {
    // The controller restarts the pod's containers (all of them, in place);
    // the pod keeps running meanwhile.
    c.done = true;
    status_.failed = true;
    return;
  }
  const bool restart = policy == "Always" ? !c.init || !success
                       : policy == "OnFailure" ? !success
                                               : false;
  if (restart) {
    ScheduleRestart(c);
    return;
  }
  c.done = true;
  if (c.init) {
    if (success) {
      ++next_init_;
      Advance();
    } else {
      BeginStopping(absl::Seconds(config_.pod.termination_grace_seconds));  // pod failed
    }
    return;
  }
  CheckAppsDone();
}

void Supervisor::ScheduleRestart(Container& c) {
  ContainerStatus& st = StatusOf(c);
  if (st.finished_at - st.started_at >= 2 * config_.backoff_max) {
    c.backoff = absl::ZeroDuration();  // it ran long enough: forgive past crashes
  }
  const absl::Duration delay = c.backoff;
  c.backoff = c.backoff == absl::ZeroDuration()
                  ? config_.backoff_initial
                  : std::min(2 * c.backoff, config_.backoff_max);
  st.last_terminated = TerminatedState{.exit_code = st.exit_code,
                                       .signal = st.signal,
                                       .reason = st.reason,
                                       .message = st.message,
                                       .started_at = st.started_at,
                                       .finished_at = st.finished_at};
  if (delay <= absl::ZeroDuration()) {
    ++st.restart_count;
    StartContainer(c);
    return;
  }
  st.state = State::kWaiting;
  st.reason = "CrashLoopBackOff";
  st.message = absl::StrCat("back-off ", absl::FormatDuration(delay),
                            " restarting failed container=", c.spec->name, " pod=",
                            config_.pod.name, "_", config_.pod.ns, "(", config_.pod.uid, ")");
  c.restart_at = clock_.Now() + delay;
}

// Once every regular app container is done, sidecars are terminated and the pod ends.
void Supervisor::CheckAppsDone() {
  if (!in_app_phase_ || stopping_ || status_.failed) return;
  for (const Container& c : containers_) {
    if (!c.init && !c.done) return;
  }
  BeginStopping(absl::Seconds(config_.pod.termination_grace_seconds));
}

void Supervisor::RequestStop(absl::Duration grace) {
  status_.stop_requested = true;
  BeginStopping(grace);
  Persist();
}

void Supervisor::RequestRestart(int64_t generation, bool hold, absl::Duration grace) {
  if (!Controlled() || stopping_ || generation < status_.generation) return;
  if (generation == status_.generation) {
    if (status_.held && !hold) {  // The barrier lifts.
      status_.held = false;
      if (!status_.restarting) Advance();
      Persist();
    }
    return;
  }
  status_.generation = generation;
  status_.held = hold;
  status_.failed = false;
  status_.restarting = true;
  restart_killed_ = false;
  restart_kill_at_ = clock_.Now() + std::max(grace, absl::ZeroDuration());
  for (Container& c : containers_) {
    c.restart_at = absl::InfiniteFuture();
    c.probe_at = absl::InfiniteFuture();
    if (c.probe_pid != 0) {
      (void)runner_.Signal(c.probe_pid, SIGKILL, true);
      c.probe_pid = 0;  // Its exit is not waited for.
    }
    if (c.pid != 0) (void)runner_.Signal(c.pid, SIGTERM, true);
  }
  MaybeFinishRestart();
  Persist();
}

void Supervisor::MaybeFinishRestart() {
  if (!status_.restarting) return;
  for (const Container& c : containers_) {
    if (c.pid != 0) return;
  }
  status_.restarting = false;
  restart_kill_at_ = absl::InfiniteFuture();
  const bool has_init = !config_.pod.init_containers.empty();
  for (Container& c : containers_) {
    ContainerStatus& st = StatusOf(c);
    if (st.state == State::kTerminated) {
      st.last_terminated = TerminatedState{.exit_code = st.exit_code,
                                           .signal = st.signal,
                                           .reason = st.reason,
                                           .message = st.message,
                                           .started_at = st.started_at,
                                           .finished_at = st.finished_at};
    }
    if (st.state != State::kWaiting || st.last_terminated) ++st.restart_count;
    st.state = State::kWaiting;
    st.reason = has_init ? "PodInitializing" : "ContainerCreating";
    st.message.clear();
    st.exit_code = st.signal = st.pid = 0;
    st.ready = st.started = false;
    c.done = false;
    c.backoff = absl::ZeroDuration();
    c.start_error.clear();
    c.probe_successes = c.probe_failures = 0;
  }
  next_init_ = 0;
  in_app_phase_ = false;
  if (!status_.held) Advance();
}

void Supervisor::BeginStopping(absl::Duration grace) {
  const absl::Time now = clock_.Now();
  if (stopping_) {
    kill_at_ = std::min(kill_at_, now + grace);  // a shorter grace wins
    if (kill_at_ <= now) Tick();
    return;
  }
  stopping_ = true;
  kill_at_ = now + std::max(grace, absl::ZeroDuration());
  for (Container& c : containers_) {
    c.restart_at = absl::InfiniteFuture();
    c.probe_at = absl::InfiniteFuture();
    ContainerStatus& st = StatusOf(c);
    if (st.state == State::kWaiting && st.last_terminated) {  // in backoff: stays terminated
      const TerminatedState t = *st.last_terminated;
      st.state = State::kTerminated;
      st.exit_code = t.exit_code;
      st.signal = t.signal;
      st.reason = t.reason;
      st.message = t.message;
      st.started_at = t.started_at;
      st.finished_at = t.finished_at;
      st.last_terminated.reset();
    }
    if (c.probe_pid != 0) (void)runner_.Signal(c.probe_pid, SIGKILL, true);
    if (c.pid != 0) {
      (void)runner_.Signal(c.pid, SIGTERM, true);
    } else {
      c.done = true;
    }
  }
  if (kill_at_ <= now) Tick();
}

void Supervisor::StartProbe(Container& c) {
  absl::StatusOr<int> pid = SpawnInContainer(c, c.spec->readiness_exec, -1);
  const absl::Time now = clock_.Now();
  c.probe_timed_out = false;
  if (!pid.ok()) {
    c.probe_pid = 0;
    HandleProbeExit(c, 1 << 8);
    return;
  }
  c.probe_pid = *pid;
  c.probe_at = absl::InfiniteFuture();
  c.probe_deadline = now + absl::Seconds(std::max(1, c.spec->readiness_timeout_seconds));
}

void Supervisor::HandleProbeExit(Container& c, int wait_status) {
  if (c.probe_pid != 0) (void)runner_.Signal(c.probe_pid, SIGKILL, true);
  c.probe_pid = 0;
  c.probe_deadline = absl::InfiniteFuture();
  ContainerStatus& st = StatusOf(c);
  if (st.state != State::kRunning || stopping_) return;
  const bool ok = !c.probe_timed_out && DecodeWaitStatus(wait_status).exit_code == 0;
  if (ok) {
    c.probe_failures = 0;
    if (++c.probe_successes >= std::max(1, c.spec->readiness_success_threshold)) st.ready = true;
  } else {
    c.probe_successes = 0;
    if (++c.probe_failures >= std::max(1, c.spec->readiness_failure_threshold)) st.ready = false;
  }
  c.probe_at = clock_.Now() + absl::Seconds(std::max(1, c.spec->readiness_period_seconds));
}

void Supervisor::Tick() {
  const absl::Time now = clock_.Now();
  bool changed = false;
  for (Container& c : containers_) {
    if (!stopping_ && c.restart_at <= now) {
      c.restart_at = absl::InfiniteFuture();
      ++StatusOf(c).restart_count;
      StartContainer(c);
      changed = true;
    }
    if (c.pid != 0 && c.probe_pid == 0 && c.probe_at <= now) StartProbe(c);
    if (c.probe_pid != 0 && !c.probe_timed_out && c.probe_deadline <= now) {
      c.probe_timed_out = true;
      (void)runner_.Signal(c.probe_pid, SIGKILL, true);
    }
  }
  if (status_.restarting && !restart_killed_ && restart_kill_at_ <= now) {
    restart_killed_ = true;
    for (Container& c : containers_) {
      if (c.pid != 0) (void)runner_.Signal(c.pid, SIGKILL, true);
    }
    changed = true;
  }
  if (!stopping_ && usage_check_at_ <= now) {
    usage_check_at_ = now + kEmptyDirCheckPeriod;
    CheckVolumeUsage();
  }
  if (!stopping_ && fence_check_at_ <= now && CheckFence()) return;
  if (stopping_ && !killed_ && kill_at_ <= now) {
    killed_ = true;
    for (Container& c : containers_) {
      if (c.pid != 0) (void)runner_.Signal(c.pid, SIGKILL, true);
    }
    changed = true;
  }
  if (changed) Persist();
}

absl::Time Supervisor::NextDeadline() const {
  absl::Time next = absl::InfiniteFuture();
  for (const Container& c : containers_) {
    if (!stopping_) next = std::min(next, c.restart_at);
    if (c.pid != 0 && c.probe_pid == 0) next = std::min(next, c.probe_at);
    if (c.probe_pid != 0 && !c.probe_timed_out) next = std::min(next, c.probe_deadline);
  }
  if (stopping_ && !killed_) next = std::min(next, kill_at_);
  if (status_.restarting && !restart_killed_) next = std::min(next, restart_kill_at_);
  if (!stopping_) next = std::min(next, std::min(usage_check_at_, fence_check_at_));
  return next;
}

void Supervisor::CheckVolumeUsage() {
  for (const VolumeSpec& v : config_.pod.volumes) {
    if (!CheckedForUsage(v, env_.memory_volumes_are_tmpfs)) continue;
    if (env_.dir_usage(VolumeSource(v), v.size_limit_bytes) <= v.size_limit_bytes) continue;
    status_.reason = "Evicted";
    status_.message = absl::StrCat("Usage of EmptyDir volume \"", v.name,
                                   "\" exceeds the limit \"", v.size_limit_text, "\". ");
    Persist();
    BeginStopping(absl::ZeroDuration());
    return;
  }
}

bool Supervisor::CheckFence() {
  if (!env_.fence_deadline) return false;
  const absl::Time now = clock_.Now();
  const absl::Time deadline = env_.fence_deadline();
  if (deadline > now) {
    fence_check_at_ = std::min(deadline, now + kFenceRecheckPeriod);
    return false;
  }
  fence_check_at_ = absl::InfiniteFuture();
  std::fprintf(stderr, "batchd-shim %s: fenced: the node's lease was not renewed in time; "
               "killing the pod\n", config_.pod.uid.c_str());
  status_.reason = "Evicted";
  status_.message =
      "The node lost contact with the API server for longer than its fence period: the pod "
      "was stopped so that it never runs beside its replacement. ";
  Persist();
  BeginStopping(absl::ZeroDuration());
  return true;
}

bool Supervisor::Done() const {
  if (!stopping_) return false;
  for (const Container& c : containers_) {
    if (c.pid != 0 || c.probe_pid != 0) return false;
  }
  return true;
}

void Supervisor::Persist() {
  status_.finished = Done();
  status_.supervisor_alive = !status_.finished;
  absl::Status s = state_file_.Write(PodStatusToJson(status_).dump());
  if (!s.ok()) {
    std::fprintf(stderr, "batchd-shim %s: %s\n", config_.pod.uid.c_str(), s.ToString().c_str());
  }
}

}  // namespace batchd::agent
