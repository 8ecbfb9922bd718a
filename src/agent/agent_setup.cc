// Option parsing, the log proxy, the isolation probe and the local agent factory.
#include <pwd.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <optional>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "agent/agent.h"
#include "agent/internal/kubelet_client.h"
#include "agent/internal/logs.h"
#include "agent/runtime/mount_propagation.h"
#include "agent/runtime/process_runner.h"
#include "api/meta/object_meta.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "api/resource/quantity.h"
#include "client/http_client.h"
#include "registry/errors.h"

namespace batchd::agent {

using api::Json;

absl::StatusOr<std::map<std::string, std::string>> ParseLabels(const std::string& s) {
  std::map<std::string, std::string> out;
  for (absl::string_view kv : absl::StrSplit(s, ',', absl::SkipWhitespace())) {
    std::vector<std::string> p = absl::StrSplit(kv, absl::MaxSplits('=', 1));
    if (p.size() != 2 || p[0].empty()) {
      return absl::InvalidArgumentError(absl::StrCat("invalid label \"", kv, "\": want KEY=VALUE"));
    }
    out[std::string(absl::StripAsciiWhitespace(p[0]))] =
        std::string(absl::StripAsciiWhitespace(p[1]));
  }
  return out;
}

absl::StatusOr<int64_t> ParseByteQuantity(const std::string& s) {
  absl::StatusOr<api::Quantity> q = api::Quantity::Parse(s);
  if (!q.ok()) return absl::InvalidArgumentError(absl::StrCat("invalid quantity \"", s, "\""));
  const int64_t v = q->Value();
  if (v <= 0) return absl::InvalidArgumentError(absl::StrCat("\"", s, "\" is not positive"));
  return v;
}

absl::Status ParseEvictionHard(const std::string& s, AgentOptions& opts) {
  const std::string text(absl::StripAsciiWhitespace(s));
  if (text.empty()) {
    opts.eviction_nodefs_available_fraction = 0;
    opts.eviction_nodefs_available_bytes = 0;
    return absl::OkStatus();
  }
  constexpr absl::string_view kSignal = "nodefs.available<";
  if (!absl::StartsWith(text, kSignal)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "invalid eviction threshold \"", text, "\": only nodefs.available<PERCENT% or "
        "nodefs.available<QUANTITY is supported"));
  }
  std::string value(text.substr(kSignal.size()));
  if (absl::EndsWith(value, "%")) {
    double pct = 0;
    if (!absl::SimpleAtod(value.substr(0, value.size() - 1), &pct) || pct <= 0 || pct >= 100) {
      return absl::InvalidArgumentError(
          absl::StrCat("invalid eviction threshold \"", text, "\": want 0 < percent < 100"));
    }
    opts.eviction_nodefs_available_fraction = pct / 100;
    opts.eviction_nodefs_available_bytes = 0;
    return absl::OkStatus();
  }
  absl::StatusOr<int64_t> bytes = ParseByteQuantity(value);
  if (!bytes.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid eviction threshold \"", text, "\": ", bytes.status().message()));
  }
  opts.eviction_nodefs_available_bytes = *bytes;
  opts.eviction_nodefs_available_fraction = 0;
  return absl::OkStatus();
}

absl::StatusOr<Json> ParseTaints(const std::string& s) {
  Json out = Json::array();
  for (absl::string_view t : absl::StrSplit(s, ',', absl::SkipWhitespace())) {
    size_t colon = t.rfind(':');
    if (colon == absl::string_view::npos) {
      return absl::InvalidArgumentError(absl::StrCat("invalid taint \"", t,
                                                     "\": want KEY[=VALUE]:EFFECT"));
    }
    std::string effect(t.substr(colon + 1));
    if (effect != "NoSchedule" && effect != "PreferNoSchedule" && effect != "NoExecute") {
      return absl::InvalidArgumentError(absl::StrCat("invalid taint effect \"", effect, "\""));
    }
    std::vector<std::string> kv = absl::StrSplit(t.substr(0, colon), absl::MaxSplits('=', 1));
    if (kv[0].empty()) return absl::InvalidArgumentError(absl::StrCat("invalid taint \"", t, "\""));
    Json taint = {{"key", kv[0]}, {"effect", effect}};
    if (kv.size() == 2) taint["value"] = kv[1];
    out.push_back(taint);
  }
  return out;
}

namespace {

class ProxyLogSource : public apiserver::PodLogSource {
 public:
  ProxyLogSource(client::Client& client, std::string local_node, PodLogSource* local,
                 KubeletClientOptions kubelet)
      : client_(client), local_node_(std::move(local_node)), local_(local),
        kubelet_(std::move(kubelet)) {}

  absl::Status StreamLog(const Json& pod, const Options& o,
                         const std::function<bool(std::string_view)>& write) override {
    std::string node = pod.value("spec", Json::object()).value("nodeName", "");
    std::string name = api::meta::GetName(pod);
    if (node.empty()) {
      return registry::BadRequest(absl::StrCat("container \"", o.container, "\" in pod \"", name,
                                               "\" is waiting to start: ContainerCreating"));
    }
    if (node == local_node_ && local_) return local_->StreamLog(pod, o, write);
    auto n = client_.Get(client_.Kind("", "v1", "nodes"), "", node);
    if (!n.ok()) return n.status();
    // Only where the node itself said, verifying its serving certificate.
    auto t = internal::KubeletTargetFor(*n, kubelet_);
    if (!t.ok()) return t.status();
    std::string target = absl::StrCat("/containerLogs/", api::meta::GetNamespace(pod), "/",
                                      name, "/", o.container);
    std::string q = internal::LogQuery(o);
    if (!q.empty()) absl::StrAppend(&target, "?", q);
    return client::StreamGet(t->base_url, target, write, t->options);
  }

 private:
  client::Client& client_;
  std::string local_node_;
  PodLogSource* local_;
  const KubeletClientOptions kubelet_;
};

}  // namespace

bool CanIsolatePods() {
  if (const char* env = std::getenv("BATCHD_POD_ISOLATION");
      env != nullptr && std::strcmp(env, "off") == 0) {
    return false;
  }
  if (geteuid() != 0) return false;
  // Try what the shim will do, in a child (only system calls after fork).
  const pid_t pid = fork();
  if (pid < 0) return false;
  if (pid == 0) {
    const char kName[] = "batchd-probe";
    if (unshare(CLONE_NEWNS | CLONE_NEWUTS) != 0) _exit(1);
    // In a chroot "/" is not a mount point: the parent decides (exit 2).
    const bool private_root = mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) == 0;
    const int mount_errno = errno;
    if (sethostname(kName, sizeof(kName) - 1) != 0) _exit(1);
    _exit(private_root ? 0 : mount_errno == EINVAL ? 2 : 1);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return false;
  }
  if (!WIFEXITED(status)) return false;
  // As the shim: without a private "/", only where nothing can propagate.
  return WEXITSTATUS(status) == 0 || (WEXITSTATUS(status) == 2 && !RootMountsMayPropagate());
}

std::string ReadNodeHosts() {
  std::ifstream in("/etc/hosts");
  std::stringstream buf;
  if (in) buf << in.rdbuf();
  std::string text = buf.str();
  return text.empty() ? std::string("127.0.0.1\tlocalhost\n") : text;
}

std::string DefaultShimPath() {
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return "batchd-shim";
  return (exe.parent_path() / "batchd-shim").string();
}

std::unique_ptr<apiserver::PodLogSource> NewProxyLogSource(client::Client& client,
                                                           std::string local_node,
                                                           apiserver::PodLogSource* local,
                                                           KubeletClientOptions kubelet) {
  return std::make_unique<ProxyLogSource>(client, std::move(local_node), local,
                                          std::move(kubelet));
}

namespace {

std::optional<std::pair<int64_t, int64_t>> LookupUserName(const std::string& name) {
  struct passwd pw;
  struct passwd* found = nullptr;
  std::vector<char> buf(16384);
  if (getpwnam_r(name.c_str(), &pw, buf.data(), buf.size(), &found) != 0 || found == nullptr) {
    return std::nullopt;
  }
  return std::make_pair(static_cast<int64_t>(pw.pw_uid), static_cast<int64_t>(pw.pw_gid));
}

// Runs `useradd` for the pod user: a system account with its own group,
// no home directory and no login shell. The error says what failed.
absl::Status CreateSystemUser(const std::string& name) {
  PosixProcessRunner runner;
  for (const char* useradd : {"/usr/sbin/useradd", "/sbin/useradd"}) {
    if (access(useradd, X_OK) != 0) continue;
    absl::StatusOr<int> pid = runner.Spawn(SpawnRequest{
        .argv = {useradd, "--system", "--user-group", "--no-create-home", "--home-dir",
                 "/nonexistent", "--shell", "/usr/sbin/nologin", "--comment",
                 "batchd pods", name},
        .env = {"PATH=/usr/sbin:/usr/bin:/sbin:/bin"},
        .stderr_fd = 2});
    if (!pid.ok()) return pid.status();
    int status = 0;
    while (waitpid(*pid, &status, 0) < 0) {
      if (errno != EINTR) return absl::InternalError("waitpid useradd");
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return absl::OkStatus();
    return absl::InternalError(absl::StrCat(useradd, " exited with status ", WEXITSTATUS(status)));
  }
  return absl::NotFoundError("useradd is not installed");
}

}  // namespace

absl::Status ResolvePodUser(const std::string& name, AgentOptions& o) {
  o.agent_uid = geteuid();
  o.agent_gid = getegid();
  o.agent_is_root = o.agent_uid == 0;
  if (!o.agent_is_root) {
    // Pods run as this process's user; the flag names nobody to switch to.
    o.pod_user.clear();
    o.pod_uid = o.agent_uid;
    o.pod_gid = o.agent_gid;
    return absl::OkStatus();
  }
  if (name.empty()) {
    return absl::FailedPreconditionError(
        "--pod-user is empty: a root agent needs an unprivileged user to run pods as");
  }
  std::optional<std::pair<int64_t, int64_t>> ids = LookupUserName(name);
  if (!ids) {
    absl::Status created = CreateSystemUser(name);
    ids = LookupUserName(name);
    if (!ids) {
      return absl::FailedPreconditionError(absl::StrCat(
          "pod user \"", name, "\" does not exist and could not be created (",
          created.ok() ? "useradd succeeded but the user is not found" : created.message(),
          "): create it (useradd --system ", name, ") or pass --pod-user an existing "
          "unprivileged user"));
    }
    BATCHD_LOG_INFO("created the pod user {} (uid {})", name, ids->first);
  }
  if (ids->first == 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "--pod-user ", name, " is root (uid 0): pods must not run as root by default; run "
        "them as root with securityContext.runAsUser: 0 in a privileged namespace instead"));
  }
  o.pod_user = name;
  o.pod_uid = ids->first;
  o.pod_gid = ids->second;
  return absl::OkStatus();
}

absl::Status CheckPathSearchable(const std::string& path, int64_t uid, int64_t gid) {
  std::filesystem::path p = std::filesystem::path(path).lexically_normal();
  if (!p.is_absolute()) p = std::filesystem::absolute(p);
  std::filesystem::path dir;
  for (const auto& part : p) {
    dir /= part;
    struct stat st;
    if (stat(dir.c_str(), &st) != 0) return absl::OkStatus();  // created later, by us
    if (!S_ISDIR(st.st_mode)) return absl::OkStatus();
    mode_t need = static_cast<int64_t>(st.st_uid) == uid   ? S_IXUSR
                  : static_cast<int64_t>(st.st_gid) == gid ? S_IXGRP
                                                           : S_IXOTH;
    if ((st.st_mode & need) == 0) {
      char mode[8];
      snprintf(mode, sizeof(mode), "%04o", static_cast<unsigned>(st.st_mode & 07777));
      return absl::FailedPreconditionError(absl::StrCat(
          "uid ", uid, " cannot search \"", dir.string(), "\" (mode ", mode, ", owner ",
          st.st_uid, ":", st.st_gid, ")"));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckPodUserCanReach(const AgentOptions& o, const std::string& pod_root) {
  if (!o.agent_is_root) return absl::OkStatus();  // pods run as the agent's own user
  for (const std::string& path : {std::string("/usr/bin"), std::string("/bin"), pod_root}) {
    absl::Status st = CheckPathSearchable(path, o.pod_uid, o.pod_gid);
    if (!st.ok()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "pods run as the unprivileged user \"", o.pod_user, "\" but ", st.message(),
          ", so no pod could start its command: make the directory searchable (chmod o+x), "
          "or pass --pod-user a user that can reach it"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<NodeAgent>> NewLocalAgent(const LocalAgentOptions& opts,
                                                         client::Client& client, Clock& clock) {
  auto probe = NewSystemHostProbe();
  AgentOptions o;
  o.node_name = opts.node_name.empty() ? probe->Facts().hostname : opts.node_name;
  if (o.node_name.empty()) o.node_name = "localhost";
  o.data_dir = opts.data_dir;
  o.shim_path = opts.shim_path.empty() ? DefaultShimPath() : opts.shim_path;
  o.log_port = opts.log_port;
  o.shared_pods = opts.shared_pods;
  o.shared_endpoint_slices = opts.shared_endpoint_slices;
  o.events = opts.events;
  o.pod_isolation = CanIsolatePods();
  o.node_hosts = ReadNodeHosts();
  o.first_status_delay = o.status_poll_min;  // `true`-like pods: one status write
  o.pod_pids_limit = opts.pod_pids_limit;
  BATCHD_RETURN_IF_ERROR(ResolvePodUser(opts.pod_user, o));
  const std::string pod_root =
      opts.pod_root.empty() ? (std::filesystem::path(o.data_dir) / "pods").string() : opts.pod_root;
  o.claims_root = (std::filesystem::path(pod_root) / "claims").string();
  o.container_log_max_bytes = opts.container_log_max_bytes;
  o.container_log_max_files = opts.container_log_max_files;
  o.eviction_nodefs_available_fraction = opts.eviction_nodefs_available_fraction;
  o.eviction_nodefs_available_bytes = opts.eviction_nodefs_available_bytes;
  o.eviction_pressure_transition_period = opts.eviction_pressure_transition_period;
  BATCHD_RETURN_IF_ERROR(CheckPodUserCanReach(o, pod_root));
  std::error_code ec;
  std::filesystem::create_directories(pod_root, ec);
  if (ec) return absl::InternalError(absl::StrCat("create ", pod_root, ": ", ec.message()));
  // Pods may reach their own directories by path, not list their neighbours.
  chmod(pod_root.c_str(), 0711);
  ProcessRuntimeOptions ro;
  ro.root = pod_root;
  ro.shim_path = o.shim_path;
  ro.log_max_bytes = o.container_log_max_bytes;
  ro.log_max_files = o.container_log_max_files;
  auto runtime = NewProcessRuntime(ro);
  auto agent = std::make_unique<NodeAgent>(std::move(o), client, clock, std::move(runtime),
                                           *probe);
  agent->AdoptProbe(std::move(probe));
  return agent;
}

}  // namespace batchd::agent
