#include "agent/runtime/pod_files.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <stdio.h>  // rename

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace batchd::agent {
namespace {

using nlohmann::json;
constexpr const char* kTimeFormat = "%Y-%m-%dT%H:%M:%E9SZ";

json TimeToJson(absl::Time t) {
  if (t == absl::InfinitePast()) return nullptr;
  return absl::FormatTime(kTimeFormat, t, absl::UTCTimeZone());
}

absl::Time TimeFromJson(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_string()) return absl::InfinitePast();
  absl::Time t;
  std::string err;
  if (!absl::ParseTime(kTimeFormat, it->get<std::string>(), &t, &err)) return absl::InfinitePast();
  return t;
}

json ContainerSpecToJson(const ContainerSpec& c) {
  json env = json::array();
  for (const auto& [k, v] : c.env) env.push_back({k, v});
  json mounts = json::array();
  for (const MountSpec& m : c.mounts) {
    mounts.push_back({{"volume", m.volume},
                      {"mountPath", m.mount_path},
                      {"subPath", m.sub_path},
                      {"readOnly", m.read_only}});
  }
  return {{"name", c.name},
          {"mounts", mounts},
          {"image", c.image},
          {"argv", c.argv},
          {"env", env},
          {"workingDir", c.working_dir},
          {"cpuLimitMillis", c.cpu_limit_millis},
          {"memoryLimitBytes", c.memory_limit_bytes},
          {"readinessExec", c.readiness_exec},
          {"readinessPeriodSeconds", c.readiness_period_seconds},
          {"readinessInitialDelaySeconds", c.readiness_initial_delay_seconds},
          {"readinessTimeoutSeconds", c.readiness_timeout_seconds},
          {"readinessFailureThreshold", c.readiness_failure_threshold},
          {"readinessSuccessThreshold", c.readiness_success_threshold},
          {"restartableInit", c.restartable_init},
          {"uid", c.uid},
          {"gid", c.gid},
          {"groups", c.groups},
          {"noNewPrivs", c.no_new_privs},
          {"dropAllCapabilities", c.drop_all_capabilities}};
}

ContainerSpec ContainerSpecFromJson(const json& j) {
  ContainerSpec c;
  c.name = j.at("name").get<std::string>();
  c.image = j.value("image", "");
  c.argv = j.value("argv", std::vector<std::string>{});
  for (const auto& kv : j.value("env", json::array())) {
    c.env.emplace_back(kv.at(0).get<std::string>(), kv.at(1).get<std::string>());
  }
  c.working_dir = j.value("workingDir", "");
  c.cpu_limit_millis = j.value("cpuLimitMillis", int64_t{0});
  c.memory_limit_bytes = j.value("memoryLimitBytes", int64_t{0});
  c.readiness_exec = j.value("readinessExec", std::vector<std::string>{});
  c.readiness_period_seconds = j.value("readinessPeriodSeconds", 10);
  c.readiness_initial_delay_seconds = j.value("readinessInitialDelaySeconds", 0);
  c.readiness_timeout_seconds = j.value("readinessTimeoutSeconds", 1);
  c.readiness_failure_threshold = j.value("readinessFailureThreshold", 3);
  c.readiness_success_threshold = j.value("readinessSuccessThreshold", 1);
  c.restartable_init = j.value("restartableInit", false);
  c.uid = j.value("uid", int64_t{-1});
  c.gid = j.value("gid", int64_t{-1});
  c.groups = j.value("groups", std::vector<int64_t>{});
  c.no_new_privs = j.value("noNewPrivs", false);
  c.drop_all_capabilities = j.value("dropAllCapabilities", false);
  for (const auto& m : j.value("mounts", json::array())) {
    c.mounts.push_back({.volume = m.at("volume").get<std::string>(),
                        .mount_path = m.at("mountPath").get<std::string>(),
                        .sub_path = m.value("subPath", ""),
                        .read_only = m.value("readOnly", false)});
  }
  return c;
}

json VolumeToJson(const VolumeSpec& v) {
  return {{"name", v.name},
          {"type", v.type == VolumeSpec::Type::kHost ? "host" : "emptyDir"},
          {"hostPath", v.host_path},
          {"memory", v.memory},
          {"sizeLimitBytes", v.size_limit_bytes},
          {"sizeLimit", v.size_limit_text}};
}

VolumeSpec VolumeFromJson(const json& j) {
  VolumeSpec v;
  v.name = j.at("name").get<std::string>();
  v.type = j.value("type", "emptyDir") == "host" ? VolumeSpec::Type::kHost
                                                 : VolumeSpec::Type::kEmptyDir;
  v.host_path = j.value("hostPath", "");
  v.memory = j.value("memory", false);
  v.size_limit_bytes = j.value("sizeLimitBytes", int64_t{0});
  v.size_limit_text = j.value("sizeLimit", "");
  return v;
}

json TerminatedToJson(const TerminatedState& t) {
  return {{"exitCode", t.exit_code},         {"signal", t.signal},
          {"reason", t.reason},              {"message", t.message},
          {"startedAt", TimeToJson(t.started_at)}, {"finishedAt", TimeToJson(t.finished_at)}};
}

TerminatedState TerminatedFromJson(const json& j) {
  TerminatedState t;
  t.exit_code = j.value("exitCode", 0);
  t.signal = j.value("signal", 0);
  t.reason = j.value("reason", "");
  t.message = j.value("message", "");
  t.started_at = TimeFromJson(j, "startedAt");
  t.finished_at = TimeFromJson(j, "finishedAt");
  return t;
}

const char* StateName(ContainerStatus::State s) {
  switch (s) {
    case ContainerStatus::State::kWaiting: return "waiting";
    case ContainerStatus::State::kRunning: return "running";
    case ContainerStatus::State::kTerminated: return "terminated";
  }
  return "waiting";
}

json ContainerStatusToJson(const ContainerStatus& c) {
  json j = {{"name", c.name},
            {"state", StateName(c.state)},
            {"reason", c.reason},
            {"message", c.message},
            {"exitCode", c.exit_code},
            {"signal", c.signal},
            {"startedAt", TimeToJson(c.started_at)},
            {"finishedAt", TimeToJson(c.finished_at)},
            {"restartCount", c.restart_count},
            {"ready", c.ready},
            {"started", c.started},
            {"pid", c.pid},
            {"startTicks", c.start_ticks}};
  if (c.last_terminated) j["lastTerminated"] = TerminatedToJson(*c.last_terminated);
  return j;
}

ContainerStatus ContainerStatusFromJson(const json& j) {
  ContainerStatus c;
  c.name = j.at("name").get<std::string>();
  std::string state = j.value("state", "waiting");
  c.state = state == "running"      ? ContainerStatus::State::kRunning
            : state == "terminated" ? ContainerStatus::State::kTerminated
                                    : ContainerStatus::State::kWaiting;
  c.reason = j.value("reason", "");
  c.message = j.value("message", "");
  c.exit_code = j.value("exitCode", 0);
  c.signal = j.value("signal", 0);
  c.started_at = TimeFromJson(j, "startedAt");
  c.finished_at = TimeFromJson(j, "finishedAt");
  c.restart_count = j.value("restartCount", 0);
  c.ready = j.value("ready", false);
  c.started = j.value("started", false);
  c.pid = j.value("pid", 0);
  c.start_ticks = j.value("startTicks", uint64_t{0});
  if (auto it = j.find("lastTerminated"); it != j.end() && it->is_object()) {
    c.last_terminated = TerminatedFromJson(*it);
  }
  return c;
}

}  // namespace

json ShimConfigToJson(const ShimConfig& c) {
  json inits = json::array(), apps = json::array(), volumes = json::array();
  for (const auto& s : c.pod.init_containers) inits.push_back(ContainerSpecToJson(s));
  for (const auto& s : c.pod.containers) apps.push_back(ContainerSpecToJson(s));
  for (const auto& v : c.pod.volumes) volumes.push_back(VolumeToJson(v));
  // `hosts` (the file's content) is not kept here: the file is <pod-dir>/hosts.
  json j = {{"uid", c.pod.uid},
          {"isolate", c.pod.isolate},
          {"hostname", c.pod.hostname},
          {"hasHosts", c.has_hosts || !c.pod.hosts.empty()},
          {"volumes", volumes},
          {"namespace", c.pod.ns},
          {"name", c.pod.name},
          {"initContainers", inits},
          {"containers", apps},
          {"restartPolicy", c.pod.restart_policy},
          {"terminationGraceSeconds", c.pod.termination_grace_seconds},
          {"activeDeadlineSeconds", c.pod.active_deadline_seconds},
          {"shimPath", c.shim_path},
          {"cgroupRoot", c.cgroup_root},
          {"backoffInitialMs", absl::ToInt64Milliseconds(c.backoff_initial)},
          {"backoffMaxMs", absl::ToInt64Milliseconds(c.backoff_max)},
          {"logMaxBytes", c.log_rotation.max_bytes},
          {"logMaxFiles", c.log_rotation.max_files},
          {"restartGeneration", c.pod.restart_generation},
          {"restartHold", c.pod.restart_hold},
          {"ownerUid", c.pod.owner_uid},
          {"ownerGid", c.pod.owner_gid},
          {"pidsLimit", c.pod.pids_limit}};
  if (!c.cgroups_error.empty()) j["cgroupsError"] = c.cgroups_error;
  if (c.pids_v1_root) j["pidsV1Root"] = *c.pids_v1_root;
  return j;
}

absl::StatusOr<ShimConfig> ShimConfigFromJson(const json& j) {
  try {
    ShimConfig c;
    c.pod.uid = j.at("uid").get<std::string>();
    c.pod.ns = j.value("namespace", "");
    c.pod.name = j.value("name", "");
    for (const auto& s : j.value("initContainers", json::array())) {
      c.pod.init_containers.push_back(ContainerSpecFromJson(s));
    }
    for (const auto& s : j.value("containers", json::array())) {
      c.pod.containers.push_back(ContainerSpecFromJson(s));
    }
    c.pod.restart_policy = j.value("restartPolicy", "Always");
    c.pod.termination_grace_seconds = j.value("terminationGraceSeconds", int64_t{30});
    c.pod.active_deadline_seconds = j.value("activeDeadlineSeconds", int64_t{0});
    c.pod.isolate = j.value("isolate", false);
    c.pod.hostname = j.value("hostname", "");
    c.has_hosts = j.value("hasHosts", false);
    for (const auto& v : j.value("volumes", json::array())) {
      c.pod.volumes.push_back(VolumeFromJson(v));
    }
    c.shim_path = j.value("shimPath", "");
    c.cgroup_root = j.value("cgroupRoot", "");
    c.backoff_initial = absl::Milliseconds(j.value("backoffInitialMs", int64_t{10000}));
    c.backoff_max = absl::Milliseconds(j.value("backoffMaxMs", int64_t{300000}));
    c.log_rotation.max_bytes = j.value("logMaxBytes", LogRotation{}.max_bytes);
    c.log_rotation.max_files = j.value("logMaxFiles", LogRotation{}.max_files);
    c.pod.restart_generation = j.value("restartGeneration", int64_t{-1});
    c.pod.restart_hold = j.value("restartHold", false);
    c.pod.owner_uid = j.value("ownerUid", int64_t{-1});
    c.pod.owner_gid = j.value("ownerGid", int64_t{-1});
    c.pod.pids_limit = j.value("pidsLimit", int64_t{0});
    c.cgroups_error = j.value("cgroupsError", "");
    if (auto it = j.find("pidsV1Root"); it != j.end() && it->is_string()) {
      c.pids_v1_root = it->get<std::string>();
    }
    return c;
  } catch (const json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("pod spec: ", e.what()));
  }
}

json PodStatusToJson(const PodSandboxStatus& s) {
  json inits = json::array(), apps = json::array();
  for (const auto& c : s.init) inits.push_back(ContainerStatusToJson(c));
  for (const auto& c : s.app) apps.push_back(ContainerStatusToJson(c));
  return {{"init", inits},
          {"app", apps},
          {"finished", s.finished},
          {"stopRequested", s.stop_requested},
          {"startedAt", TimeToJson(s.started_at)},
          {"shimPid", s.shim_pid},
          {"shimStartTicks", s.shim_start_ticks},
          {"bootId", s.boot_id},
          {"reason", s.reason},
          {"message", s.message},
          {"generation", s.generation},
          {"held", s.held},
          {"restarting", s.restarting},
          {"failed", s.failed},
          {"limitsWarning", s.limits_warning}};
}

absl::StatusOr<PodSandboxStatus> PodStatusFromJson(const json& j) {
  try {
    PodSandboxStatus s;
    s.found = true;
    for (const auto& c : j.value("init", json::array())) s.init.push_back(ContainerStatusFromJson(c));
    for (const auto& c : j.value("app", json::array())) s.app.push_back(ContainerStatusFromJson(c));
    s.finished = j.value("finished", false);
    s.stop_requested = j.value("stopRequested", false);
    s.started_at = TimeFromJson(j, "startedAt");
    s.shim_pid = j.value("shimPid", 0);  // absent in states written before it existed
    s.shim_start_ticks = j.value("shimStartTicks", uint64_t{0});
    s.boot_id = j.value("bootId", "");
    s.reason = j.value("reason", "");
    s.message = j.value("message", "");
    s.generation = j.value("generation", int64_t{-1});
    s.held = j.value("held", false);
    s.restarting = j.value("restarting", false);
    s.failed = j.value("failed", false);
    s.limits_warning = j.value("limitsWarning", "");
    return s;
  } catch (const json::exception& e) {
    return absl::DataLossError(absl::StrCat("pod state: ", e.what()));
  }
}

absl::Status WriteFd(int fd, const std::string& content, const std::string& path) {
  size_t off = 0;
  while (off < content.size()) {
    ssize_t n = write(fd, content.data() + off, content.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return absl::InternalError(absl::StrCat("write ", path, ": ", std::strerror(errno)));
    off += static_cast<size_t>(n);
  }
  return absl::OkStatus();
}


absl::Status RewriteInPlace(const std::string& path, const std::string& content) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return absl::InternalError(absl::StrCat("open ", path, ": ", std::strerror(errno)));
  absl::Status s = WriteFd(fd, content, path);
  if (s.ok() && ftruncate(fd, static_cast<off_t>(content.size())) != 0) {
    s = absl::InternalError(absl::StrCat("truncate ", path, ": ", std::strerror(errno)));
  }
  close(fd);
  return s;
}

absl::Status WriteFileAtomic(const std::string& path, const std::string& content) {
  // Temp file, fsync, rename, fsync of the directory: after a crash or a
  // power loss the file is the old content or the new, never a mix, and a
  // rename that returned is on disk.
  const std::string tmp = path + ".tmp";
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return absl::InternalError(absl::StrCat("open ", tmp, ": ", std::strerror(errno)));
  absl::Status s = WriteFd(fd, content, tmp);
  if (s.ok() && fsync(fd) != 0) {
    s = absl::InternalError(absl::StrCat("fsync ", tmp, ": ", std::strerror(errno)));
  }
  close(fd);
  if (!s.ok()) {
    unlink(tmp.c_str());
    return s;
  }
  if (rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    unlink(tmp.c_str());
    return absl::InternalError(absl::StrCat("rename ", tmp, ": ", std::strerror(err)));
  }
  const size_t slash = path.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  const int dfd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    (void)fsync(dfd);
    close(dfd);
  }
  return absl::OkStatus();
}

namespace {

// Takes (F_RDLCK / F_WRLCK) or drops (F_UNLCK) an OFD lock on all of `fd`.
int LockWhole(int fd, short type) {
  struct flock fl {};
  fl.l_type = type;
  fl.l_whence = SEEK_SET;
  for (;;) {
    if (fcntl(fd, F_OFD_SETLKW, &fl) == 0) return 0;
    if (errno != EINTR) return -1;
  }
}

}  // namespace

bool EventsSocketAddress(const std::string& root, sockaddr_un* addr) {
  const std::string path = root + "/" + kEventsSocketName;
  *addr = sockaddr_un{};
  addr->sun_family = AF_UNIX;
  if (path.size() >= sizeof(addr->sun_path)) return false;
  std::memcpy(addr->sun_path, path.c_str(), path.size() + 1);
  return true;
}

StateFile::~StateFile() {
  if (fd_ >= 0) close(fd_);
}

absl::Status StateFile::Write(const std::string& content) {
  // Atomic and durable (WriteFileAtomic): a shim killed mid-write, or a
  // power loss, leaves the previous state, never a partial one. (Earlier
  // shims rewrote one inode in place under an OFD lock; readers still take
  // no lock they could wait on.)
  return WriteFileAtomic(path_, content);
}

absl::StatusOr<std::string> ReadFileShared(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  (void)LockWhole(fd, F_RDLCK);  // unlocked where the file system has no OFD locks
  absl::StatusOr<std::string> out = ReadFd(fd, path);
  close(fd);  // drops the lock
  return out;
}

absl::StatusOr<std::string> ReadFd(int fd, const std::string& path) {
  std::string out;
  char buf[8192];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return absl::InternalError(absl::StrCat("read ", path, ": ", std::strerror(errno)));
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  // Plain read(2): these small files are read on every pod status check.
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  absl::StatusOr<std::string> out = ReadFd(fd, path);
  close(fd);
  return out;
}

absl::StatusOr<json> ReadJsonFile(const std::string& path) {
  absl::StatusOr<std::string> text = ReadFile(path);
  if (!text.ok()) return text.status();
  return ParseJsonFile(*text, path);
}

absl::StatusOr<json> ParseJsonFile(const std::string& text, const std::string& path) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return absl::DataLossError(absl::StrCat("bad JSON in ", path));
  return j;
}

absl::Status MakeDirs(const std::string& path) {
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  if (ec) return absl::InternalError(absl::StrCat("mkdir ", path, ": ", ec.message()));
  return absl::OkStatus();
}

absl::Status RemoveTree(const std::string& path) {
  std::error_code ec;
  std::filesystem::remove_all(path, ec);
  if (ec) return absl::InternalError(absl::StrCat("remove ", path, ": ", ec.message()));
  return absl::OkStatus();
}

ExitInfo DecodeWaitStatus(int wait_status) {
  if (WIFSIGNALED(wait_status)) {
    int sig = WTERMSIG(wait_status);
    return {128 + sig, sig};
  }
  if (WIFEXITED(wait_status)) return {WEXITSTATUS(wait_status), 0};
  return {0, 0};
}

}  // namespace batchd::agent
