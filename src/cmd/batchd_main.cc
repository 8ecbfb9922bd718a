// batchd: the Kubernetes batch stack in one program.
//   batchd server [--listen 127.0.0.1:8080] [--data-dir DIR] ...
//   batchd agent --server URL --node-name N [--data-dir DIR] [--labels k=v,...]
//                [--taints k=v:NoSchedule,...] [--log-port P] [--node-ip IP]
//   batchd simulate -f scenario.yaml [--until D] [--events F] [--state F] [--summary F] ...
#include <sys/resource.h>
#include <sys/stat.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <string_view>
#include <tuple>

#include <CLI/CLI.hpp>
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"

#include "agent/agent.h"
#include "agent/kubelet_auth.h"
#include "agent/runtime/log_files.h"
#include "apiserver/http_server.h"
#include "client/http_client.h"
#include "cmd/server.h"
#include "common/pki.h"
#include "common/logging.h"
#include "sim/simulate_command.h"

namespace {

volatile std::sig_atomic_t g_stop = 0;
void OnSignal(int) { g_stop = 1; }

int RunServer(const batchd::cmd::ServerOptions& opts) {
  auto server = batchd::cmd::Server::Create(opts);
  if (!server.ok()) {
    std::cerr << "batchd: " << server.status().message() << "\n";
    return 1;
  }
  auto port = (*server)->Start();
  if (!port.ok()) {
    std::cerr << "batchd: " << port.status().message() << "\n";
    return 1;
  }
  std::string host = opts.listen.substr(0, opts.listen.rfind(':'));
  const std::string url = (*server)->scheme() + "://" + host + ":" + std::to_string(*port);
  const std::string& ca = (*server)->ca_file();
  const std::string ca_flag = ca.empty() ? "" : " --certificate-authority " + ca;
  std::cout << "batchd server listening on " << url << "\n";
  if (opts.allow_loopback_admin) {
    std::cout << "  kubectl -s " << url << ca_flag << " get namespaces"
              << "   (loopback requests without credentials act as the admin)\n";
  }
  std::cout << "  admin kubeconfig: build/bin/batchctl kubeconfig --server " << url
            << " --data-dir " << opts.data_dir << " > ~/.kube/config" << std::endl;
  std::signal(SIGINT, OnSignal);
  std::signal(SIGTERM, OnSignal);
  while (!g_stop) pause();
  BATCHD_LOG_INFO("shutting down");
  if (!(*server)->Stop()) {
    // Requests left running (logged) may still use what the destructors
    // free: exit without them. Acknowledged writes are already durable.
    spdlog::default_logger()->flush();
    std::fflush(nullptr);
    std::_Exit(0);
  }
  return 0;
}

struct AgentCommand {
  std::string server;
  std::string node_name;
  std::string data_dir = "./batchd-agent-data";
  std::string labels;
  std::string taints;
  std::string node_ip = "127.0.0.1";
  std::string shim_path;
  int log_port = 10250;
  // Reaching an https server: its CA, an optional client certificate and
  // token, or all of it from a kubeconfig.
  std::string kubeconfig;
  std::string certificate_authority;
  std::string client_certificate;
  std::string client_key;
  std::string token;
  std::string pod_root;
  std::string pod_user = batchd::agent::kDefaultPodUser;
  int64_t pod_pids_limit = batchd::agent::kDefaultPodPidsLimit;
  std::string container_log_max_size = "10Mi";
  int container_log_max_files = 5;
  std::string eviction_hard = "nodefs.available<10%";
  std::string eviction_pressure_transition_period = "5m";
  // Node fencing (docs/operations.md "Node failure and fencing") and the
  // lease (renewed every quarter of its duration, as the kubelet does).
  std::string fence_period = "40s";
  int node_lease_duration_seconds = 40;
  // The node's credential (`batchctl create node-token NAME`): the agent
  // authenticates as system:node:NAME.
  std::string token_file;
  // The log port (kubelet's 10250): client certificates verify against this
  // CA (default: the CA that verifies the server).
  std::string client_ca_file;
};

// `batchd agent`: a NodeAgent against a remote server. SIGTERM stops the
// heartbeats and status reports; the pods' processes keep running under
// their shims and are re-adopted by the next agent on the same data dir.
int RunAgent(const AgentCommand& cmd) {
  namespace agent = batchd::agent;
  auto fail = [](const absl::Status& s) {
    std::cerr << "batchd agent: " << s.message() << "\n";
    return 1;
  };
  batchd::client::HttpClientOptions co;
  std::string server = cmd.server;
  if (!cmd.kubeconfig.empty()) {
    auto k = batchd::client::LoadKubeconfig(cmd.kubeconfig);
    if (!k.ok()) return fail(k.status());
    co = k->options;
    if (server.empty()) server = k->server;
  }
  if (server.empty()) return fail(absl::InvalidArgumentError("--server or --kubeconfig is required"));
  if (!cmd.certificate_authority.empty()) {
    co.ca_file = cmd.certificate_authority;
    co.ca_data.clear();
  }
  if (!cmd.client_certificate.empty()) co.client_cert_file = cmd.client_certificate;
  if (!cmd.client_key.empty()) co.client_key_file = cmd.client_key;
  if (!cmd.token.empty()) co.bearer_token = cmd.token;
  if (!cmd.token_file.empty()) {
    std::ifstream in(cmd.token_file);
    std::getline(in, co.bearer_token);
    if (co.bearer_token.empty()) {
      std::cerr << "batchd agent: no token in " << cmd.token_file << "\n";
      return 1;
    }
  }
  auto client = batchd::client::HttpClient::Create(server, batchd::api::BuiltinScheme(), co);
  if (!client.ok()) return fail(client.status());
  auto labels = agent::ParseLabels(cmd.labels);
  if (!labels.ok()) return fail(labels.status());
  auto taints = agent::ParseTaints(cmd.taints);
  if (!taints.ok()) return fail(taints.status());
  agent::AgentOptions o;
  o.node_name = cmd.node_name;
  o.labels = *labels;
  o.taints = *taints;
  o.data_dir = cmd.data_dir;
  o.shim_path = cmd.shim_path.empty() ? agent::DefaultShimPath() : cmd.shim_path;
  o.host_ip = cmd.node_ip;
  o.pod_isolation = agent::CanIsolatePods();
  o.node_hosts = agent::ReadNodeHosts();
  o.pod_pids_limit = cmd.pod_pids_limit;
  if (auto st = agent::ResolvePodUser(cmd.pod_user, o); !st.ok()) return fail(st);
  const std::string pod_root =
      cmd.pod_root.empty() ? (std::filesystem::path(o.data_dir) / "pods").string() : cmd.pod_root;
  if (auto st = agent::CheckPodUserCanReach(o, pod_root); !st.ok()) return fail(st);
  if (auto st = agent::ParseEvictionHard(cmd.eviction_hard, o); !st.ok()) return fail(st);
  auto log_max = agent::ParseByteQuantity(cmd.container_log_max_size);
  if (!log_max.ok()) return fail(log_max.status());
  if (*log_max < batchd::agent::kMinLogMaxBytes || cmd.container_log_max_files < batchd::agent::kMinLogMaxFiles) {
    return fail(absl::InvalidArgumentError(
        "--container-log-max-size must be at least 1Ki and --container-log-max-files at least 2"));
  }
  o.container_log_max_bytes = *log_max;
  o.container_log_max_files = cmd.container_log_max_files;
  if (!absl::ParseDuration(cmd.eviction_pressure_transition_period,
                           &o.eviction_pressure_transition_period)) {
    return fail(absl::InvalidArgumentError("--eviction-pressure-transition-period: want a duration"));
  }
  if (cmd.node_lease_duration_seconds < 4) {
    return fail(absl::InvalidArgumentError("--node-lease-duration-seconds must be at least 4"));
  }
  o.lease_duration = absl::Seconds(cmd.node_lease_duration_seconds);
  o.heartbeat_period = o.lease_duration / 4;
  if (!absl::ParseDuration(cmd.fence_period, &o.fence_period) ||
      o.fence_period < absl::ZeroDuration()) {
    return fail(absl::InvalidArgumentError("--fence-period: want a duration (0: no fencing)"));
  }
  if (o.fence_period > absl::ZeroDuration() && o.fence_period < 2 * o.heartbeat_period) {
    return fail(absl::InvalidArgumentError(absl::StrCat(
        "--fence-period must be 0 or at least two lease renewals (",
        absl::FormatDuration(2 * o.heartbeat_period), "): a late renewal must not kill pods")));
  }
  std::error_code ec;
  std::filesystem::create_directories(pod_root, ec);
  if (ec) return fail(absl::InternalError("create " + pod_root + ": " + ec.message()));
  chmod(pod_root.c_str(), 0711);
  // The log port serves HTTPS only and requires a client certificate signed
  // by the client CA (the server's kubelet client certificate when it
  // proxies), authorized with a SubjectAccessReview (kubelet's webhook mode).
  std::string client_ca = cmd.client_ca_file;
  if (client_ca.empty()) client_ca = co.ca_file;
  const std::filesystem::path agent_pki = std::filesystem::path(o.data_dir) / "pki";
  if (client_ca.empty() && !co.ca_data.empty()) {
    std::filesystem::create_directories(agent_pki, ec);
    client_ca = (agent_pki / "client-ca.crt").string();
    std::ofstream(client_ca, std::ios::trunc) << co.ca_data;
  }
  if (client_ca.empty()) {
    return fail(absl::InvalidArgumentError(
        "the log port requires client certificates: pass --client-ca-file (the server's "
        "DATA_DIR/pki/ca.crt, which signs its kubelet client certificate) or "
        "--certificate-authority"));
  }
  auto serving = batchd::pki::EnsureServingPki(agent_pki.string(), {cmd.node_ip},
                                               "system:node:" + cmd.node_name);
  if (!serving.ok()) return fail(serving.status());
  {
    std::ifstream in(serving->ca_cert_file);
    std::stringstream buf;
    buf << in.rdbuf();
    o.serving_ca_pem = buf.str();
  }
  batchd::RealClock auth_clock;
  agent::KubeletAuth log_auth(agent::SubjectAccessReviewer(**client, o.node_name),
                                        auth_clock);
  batchd::apiserver::HttpServerOptions lo{cmd.node_ip, cmd.log_port};
  lo.tls = batchd::apiserver::TlsServerFiles{serving->cert_file, serving->key_file, client_ca};
  std::atomic<agent::NodeAgent*> running{nullptr};
  batchd::apiserver::HttpServer logs(
      lo, [&](const batchd::apiserver::HttpRequest& req, batchd::apiserver::ResponseWriter& w) {
        if (!log_auth.Admit(req, w)) return;
        agent::NodeAgent* a = running.load();
        if (!a) return w.Send(503, {{"Content-Type", "text/plain"}}, "starting\n");
        a->ServeLogs(req, w);
      });
  auto port = logs.Start();
  if (!port.ok()) return fail(port.status());
  o.log_port = *port;
  batchd::agent::ProcessRuntimeOptions ro;
  ro.root = pod_root;
  ro.shim_path = o.shim_path;
  ro.log_max_bytes = o.container_log_max_bytes;
  ro.log_max_files = o.container_log_max_files;
  auto probe = agent::NewSystemHostProbe();
  batchd::RealClock clock;
  agent::NodeAgent node(o, **client, clock, agent::NewProcessRuntime(ro), *probe);
  if (auto st = node.Start(); !st.ok()) return fail(st);
  running = &node;
  std::cout << "batchd agent: node " << o.node_name << " registered with " << server
            << ", logs on https://" << cmd.node_ip << ":" << *port
            << " (client certificates signed by " << client_ca << ")"
            << (o.pod_isolation ? "; pods get their own mount and UTS namespaces"
                                : "; no pod isolation (not root): peer names and volume mounts "
                                  "only through $BATCHD_HOSTS_FILE / $BATCHD_VOLUME_<NAME>")
            << std::endl;
  std::signal(SIGINT, OnSignal);
  std::signal(SIGTERM, OnSignal);
  while (!g_stop) pause();
  BATCHD_LOG_INFO("agent stopping; pods keep running");
  logs.Stop();
  running = nullptr;
  node.Stop();
  return 0;
}

// --store and --store-sync values.
const std::map<std::string, batchd::cmd::StoreBackend> kStoreBackends = {
    {"sqlite", batchd::cmd::StoreBackend::kSqlite}, {"memory", batchd::cmd::StoreBackend::kMemory},
    {"etcd", batchd::cmd::StoreBackend::kEtcd}};
const std::map<std::string, batchd::cmd::LeaderElect> kLeaderElect = {
    {"auto", batchd::cmd::LeaderElect::kAuto}, {"true", batchd::cmd::LeaderElect::kOn},
    {"false", batchd::cmd::LeaderElect::kOff}};
const std::map<std::string, batchd::cmd::StoreSync> kStoreSyncs = {
    {"normal", batchd::cmd::StoreSync::kNormal}, {"full", batchd::cmd::StoreSync::kFull}};

}  // namespace

// A server holds a descriptor per connection: use the hard limit (as Go
// programs do), not the often small soft one.
void RaiseFileLimit() {
  rlimit r{};
  if (getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur < r.rlim_max) {
    r.rlim_cur = r.rlim_max;
    setrlimit(RLIMIT_NOFILE, &r);
  }
}

const std::map<std::string, batchd::cmd::ServerOptions::Https> kServeHttps = {
    {"auto", batchd::cmd::ServerOptions::Https::kAuto},
    {"always", batchd::cmd::ServerOptions::Https::kAlways},
    {"never", batchd::cmd::ServerOptions::Https::kNever}};

int main(int argc, char** argv) {
  std::signal(SIGPIPE, SIG_IGN);
  // Abseil's lock-order (deadlock) detection is on in Debian's build and cost
  // ~12% of the server's CPU in a profile. Unit tests keep it (they never run
  // this main); the end-to-end suite turns it back on with
  // BATCHD_MUTEX_DEADLOCK_CHECK=1 so lock-order inversions still abort there.
  if (const char* check = std::getenv("BATCHD_MUTEX_DEADLOCK_CHECK");
      check == nullptr || std::string_view(check) != "1") {
    absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  }
  RaiseFileLimit();
  CLI::App app{"batchd: Kubernetes batch, Kueue-style queueing and JobSet in one program"};
  app.require_subcommand(0, 1);
  batchd::cmd::ServerOptions opts;
  std::string compaction_interval = "5m";
  std::string event_ttl = "1h";
  std::string le_lease = "15s", le_renew = "10s", le_retry = "2s";
  auto* server = app.add_subcommand("server", "Run the API server with the embedded store");
  for (CLI::App* a : {&app, server}) {
    a->add_option("--listen", opts.listen,
                  "HOST:PORT to serve on: plain HTTP on loopback, HTTPS beyond it "
                  "(see --serve-https)")
        ->capture_default_str();
    a->add_option("--serve-https", opts.serve_https,
                  "auto (HTTPS beyond loopback or with --tls-cert-file; plain HTTP on "
                  "loopback), always, or never")
        ->transform(CLI::CheckedTransformer(kServeHttps))
        ->default_str("auto");
    a->add_option("--tls-cert-file", opts.tls_cert_file,
                  "Serving certificate (PEM, with its chain); default: DATA_DIR/pki/apiserver.crt, "
                  "created with a CA (DATA_DIR/pki/ca.crt) on first start");
    a->add_option("--tls-private-key-file", opts.tls_private_key_file,
                  "Key of --tls-cert-file (PEM)");
    a->add_option("--client-ca-file", opts.client_ca_file,
                  "CA bundle client certificates are verified against (default: the generated "
                  "CA)");
    a->add_option("--kubelet-client-certificate", opts.kubelet_client_certificate,
                  "Client certificate for remote agents' log ports (default: "
                  "DATA_DIR/pki/kubelet-client.crt, signed by DATA_DIR/pki/ca.crt)");
    a->add_option("--kubelet-client-key", opts.kubelet_client_key,
                  "Key of --kubelet-client-certificate");
    a->add_option("--tls-san", opts.tls_sans,
                  "Extra host name or IP for the generated serving certificate (repeatable)");
    a->add_flag("--insecure-serve-unauthenticated", opts.insecure_serve_unauthenticated,
                "Allow plain HTTP beyond loopback: ONLY for tests inside a network namespace");
    a->add_option("--max-connections", opts.max_connections,
                  "Open connections at most; more are closed at once (0: no limit)")
        ->capture_default_str();
    a->add_option("--max-requests-inflight", opts.max_requests_inflight,
                  "Read-only requests in flight at most; more get 429 (0: no limit)")
        ->capture_default_str();
    a->add_option("--max-mutating-requests-inflight", opts.max_mutating_requests_inflight,
                  "Mutating requests in flight at most; more get 429 (0: no limit)")
        ->capture_default_str();
    a->add_option("--max-long-running-requests", opts.max_long_running_requests,
                  "Watches and log/exec streams open at most; more get 429 (0: no limit)")
        ->capture_default_str();
    a->add_option("--request-timeout", opts.request_timeout_seconds,
                  "Seconds a non-long-running request may take before 504 (0: no limit)")
        ->capture_default_str();
    a->add_option("--data-dir", opts.data_dir, "Directory of the embedded SQLite store")
        ->capture_default_str();
    a->add_option("--etcd-servers", opts.etcd_servers,
                  "--store etcd: the etcd members' client URLs (http[s]://HOST:PORT, "
                  "comma-separated)")
        ->delimiter(',');
    a->add_option("--etcd-cafile", opts.etcd_cafile, "--store etcd: CA bundle of https members");
    a->add_option("--etcd-certfile", opts.etcd_certfile, "--store etcd: client certificate (PEM)");
    a->add_option("--etcd-keyfile", opts.etcd_keyfile, "--store etcd: client key (PEM)");
    a->add_option("--etcd-prefix", opts.etcd_prefix,
                  "--store etcd: the prefix of every key batchd writes")
        ->capture_default_str();
    a->add_option("--leader-elect", opts.leader_elect,
                  "Run the controllers, admission, scheduler and sweepers only while holding the "
                  "Lease kube-system/batchd-controller-manager: true, false, or auto (true with "
                  "--store etcd)")
        ->transform(CLI::CheckedTransformer(kLeaderElect))
        ->default_str("auto");
    a->add_option("--leader-elect-lease-duration", le_lease,
                  "How long a leader's Lease holds without renewal")
        ->capture_default_str();
    a->add_option("--leader-elect-renew-deadline", le_renew,
                  "How long a leader keeps trying to renew before it stops leading (and exits)")
        ->capture_default_str();
    a->add_option("--leader-elect-retry-period", le_retry,
                  "How often candidates try to acquire and leaders renew")
        ->capture_default_str();
    a->add_option("--store", opts.store, "Store backend: sqlite, memory or etcd")
        ->transform(CLI::CheckedTransformer(kStoreBackends))
        ->default_str("sqlite");
    a->add_option("--store-sync", opts.sync,
                  "SQLite durability: full (power loss) or normal (process crash)")
        ->transform(CLI::CheckedTransformer(kStoreSyncs))
        ->default_str("normal");
    a->add_flag("!--no-local-node", opts.local_node, "Do not run a node agent for this machine");
    a->add_option("--config", opts.config_file, "Queueing configuration file");
    a->add_option("--container-log-max-size", opts.container_log_max_size,
                  "The local node: size at which a container's log is rotated")
        ->capture_default_str();
    a->add_option("--container-log-max-files", opts.container_log_max_files,
                  "The local node: log files kept per container run")
        ->capture_default_str();
    a->add_option("--eviction-hard", opts.eviction_hard,
                  "The local node: disk-pressure threshold, nodefs.available<PERCENT% or "
                  "<QUANTITY (\"\": off)")
        ->capture_default_str();
    a->add_option("--eviction-pressure-transition-period",
                  opts.eviction_pressure_transition_period,
                  "The local node: how long the disk must stay above the threshold before "
                  "DiskPressure clears")
        ->capture_default_str();
    a->add_option("--default-not-ready-toleration-seconds",
                  opts.default_not_ready_toleration_seconds,
                  "tolerationSeconds of the not-ready:NoExecute toleration added to every pod")
        ->capture_default_str();
    a->add_option("--default-unreachable-toleration-seconds",
                  opts.default_unreachable_toleration_seconds,
                  "tolerationSeconds of the unreachable:NoExecute toleration added to every pod")
        ->capture_default_str();
    a->add_option("--node-eviction-rate", opts.node_eviction_rate,
                  "Nodes per second whose pods may be evicted (NoExecute taints added)")
        ->capture_default_str();
    a->add_option("--secondary-node-eviction-rate", opts.secondary_node_eviction_rate,
                  "The rate in a partially disrupted zone of a large cluster")
        ->capture_default_str();
    a->add_option("--unhealthy-zone-threshold", opts.unhealthy_zone_threshold,
                  "Share of not-Ready nodes (at least 3) that makes a zone partially disrupted")
        ->capture_default_str();
    a->add_option("--large-cluster-size-threshold", opts.large_cluster_size_threshold,
                  "Nodes above which a partially disrupted zone still evicts, at the "
                  "secondary rate")
        ->capture_default_str();
    a->add_option("--node-monitor-grace-period", opts.node_monitor_grace_period,
                  "How long a node's heartbeat may be silent before it is Unknown")
        ->capture_default_str();
    a->add_option("--etcd-compaction-interval", compaction_interval,
                  "How often the store's revision history is compacted (as kube-apiserver's "
                  "flag; 0: never)")
        ->capture_default_str();
    a->add_option("--event-ttl", event_ttl, "How long Events are kept after their last write")
        ->capture_default_str();
    a->add_option("--feature-gates", opts.feature_gates,
                  "Kubernetes feature gates, Name=true|false,...: WorkloadWithJob (default "
                  "true: Indexed Jobs with parallelism == completions > 1 are gang-scheduled)");
    a->add_option("--pod-root", opts.pod_root,
                  "Where the local node's pods (working dirs, logs) and claim directories "
                  "live; never inside --data-dir (default: <data-dir>-pods)");
    a->add_option("--pod-user", opts.pod_user,
                  "The unprivileged user pods run as when the server runs as root and a pod "
                  "sets no runAsUser (created with useradd when missing)")
        ->capture_default_str();
    a->add_option("--pod-pids-limit", opts.pod_pids_limit,
                  "pids.max of every pod's cgroup (kubelet's podPidsLimit; 0: none)")
        ->capture_default_str();
    a->add_option("--token-auth-file", opts.token_auth_file,
                  "Bearer tokens, Kubernetes' CSV: token,user,uid,\"group1,group2\"");
    a->add_option("--authorization-mode", opts.authorization_mode, "RBAC or AlwaysAllow")
        ->capture_default_str();
    a->add_flag("--allow-loopback-admin", opts.allow_loopback_admin,
                "Requests from 127.0.0.1/::1 without credentials act as the admin "
                "(system:masters); for a single-user machine");
    a->add_option("--anonymous-auth", opts.anonymous_auth,
                  "Requests without credentials are system:anonymous (which reaches only "
                  "health and version); false: they are refused with 401, health checks too")
        ->capture_default_str();
    a->add_option("--audit-log-path", opts.audit_log_path,
                  "Write audit.k8s.io/v1 events (Metadata level) to this file ('-': stdout)");
    a->add_option("--audit-log-maxsize", opts.audit_log_maxsize_mb,
                  "Rotate the audit log at this many megabytes")->capture_default_str();
    a->add_option("--audit-log-maxbackup", opts.audit_log_maxbackup,
                  "Rotated audit log files to keep")->capture_default_str();
    a->add_option("--service-account-key-file", opts.service_account_key_file,
                  "PEM private key signing ServiceAccount and node tokens: RSA (RS256) or EC "
                  "P-256 (ES256); default DATA_DIR/pki/sa.key, an RSA key created on first start");
    a->add_option("--service-account-issuer", opts.service_account_issuer,
                  "Issuer (iss) of ServiceAccount tokens")->capture_default_str();
    a->add_option("--api-audiences", opts.api_audiences,
                  "Audiences ServiceAccount tokens must carry (default: the issuer)")
        ->delimiter(',');
  }
  AgentCommand agent_cmd;
  auto* agent = app.add_subcommand("agent", "Run a node agent against a remote batchd server");
  agent->add_option("--server", agent_cmd.server,
                    "The API server, https://HOST:PORT (or http:// on loopback); several "
                    "replicas comma-separated: the agent moves to another when one dies");
  agent->add_option("--kubeconfig", agent_cmd.kubeconfig,
                    "A kubeconfig naming the server, its CA and this node's credentials");
  agent->add_option("--certificate-authority", agent_cmd.certificate_authority,
                    "CA file that verifies an https server (the server's DATA_DIR/pki/ca.crt)");
  agent->add_option("--client-certificate", agent_cmd.client_certificate,
                    "Client certificate file for the server");
  agent->add_option("--client-key", agent_cmd.client_key, "Key of --client-certificate");
  agent->add_option("--token", agent_cmd.token, "Bearer token for the server");
  agent->add_option("--node-name", agent_cmd.node_name, "This node's name")->required();
  agent->add_option("--data-dir", agent_cmd.data_dir, "Where pods, logs and state live")
      ->capture_default_str();
  agent->add_option("--pod-root", agent_cmd.pod_root,
                    "Where pods (working dirs, logs) live (default: <data-dir>/pods)");
  agent->add_option("--pod-user", agent_cmd.pod_user,
                    "The unprivileged user pods run as when the agent runs as root and a pod "
                    "sets no runAsUser (created with useradd when missing)")
      ->capture_default_str();
  agent->add_option("--pod-pids-limit", agent_cmd.pod_pids_limit,
                    "pids.max of every pod's cgroup (kubelet's podPidsLimit; 0: none)")
      ->capture_default_str();
  agent->add_option("--labels", agent_cmd.labels, "Extra node labels: k=v,k2=v2");
  agent->add_option("--taints", agent_cmd.taints, "Node taints: k=v:NoSchedule,k2:NoExecute");
  agent->add_option("--log-port", agent_cmd.log_port, "Port of the pod log endpoint (0: any)")
      ->capture_default_str();
  agent->add_option("--node-ip", agent_cmd.node_ip,
                    "Address the node publishes (InternalIP) and serves logs on")
      ->capture_default_str();
  agent->add_option("--shim", agent_cmd.shim_path, "The batchd-shim executable");
  agent->add_option("--container-log-max-size", agent_cmd.container_log_max_size,
                    "Size at which a container's log is rotated (kubelet's containerLogMaxSize)")
      ->capture_default_str();
  agent->add_option("--container-log-max-files", agent_cmd.container_log_max_files,
                    "Log files kept per container run, the current one included")
      ->capture_default_str();
  agent->add_option("--eviction-hard", agent_cmd.eviction_hard,
                    "Disk-pressure threshold: nodefs.available<PERCENT% or <QUANTITY (\"\": off)")
      ->capture_default_str();
  agent->add_option("--eviction-pressure-transition-period",
                    agent_cmd.eviction_pressure_transition_period,
                    "How long the disk must stay above the threshold before DiskPressure clears")
      ->capture_default_str();
  agent->add_option("--fence-period", agent_cmd.fence_period,
                    "Kill this node's pods when no lease renewal succeeded for this long (a pod "
                    "tolerating node.kubernetes.io/unreachable longer: that long), so none runs "
                    "beside the replacement the server creates (0: off)")
      ->capture_default_str();
  agent->add_option("--node-lease-duration-seconds", agent_cmd.node_lease_duration_seconds,
                    "The node Lease's duration; it is renewed every quarter of it")
      ->capture_default_str();
  agent->add_option("--token-file", agent_cmd.token_file,
                    "File with this node's bearer token (batchctl create node-token NAME)");
  agent->add_option("--client-ca-file", agent_cmd.client_ca_file,
                    "CA that signs the client certificates the log port accepts: the server's "
                    "DATA_DIR/pki/ca.crt (default: --certificate-authority)");
  batchd::sim::SimulateCommand sim_cmd;
  auto* simulate = app.add_subcommand(
      "simulate", "Run a scenario on simulated nodes and a virtual clock (docs/simulation.md)");
  simulate->add_option("-f,--filename", sim_cmd.scenario, "Scenario: multi-document YAML");
  simulate->add_option("--trace", sim_cmd.trace, "Job trace to replay: CSV or JSON Lines");
  simulate->add_option("--until", sim_cmd.until, "Virtual time bound (Go duration or Nd; 30d)");
  simulate->add_option("--events", sim_cmd.events, "Write workload and job transitions (JSON Lines)");
  simulate->add_option("--state", sim_cmd.state, "Write every object at the end (a JSON List)");
  simulate->add_option("--summary", sim_cmd.summary, "Write the summary (JSON)");
  simulate->add_option("--plot", sim_cmd.plot, "Write quota usage and pending per ClusterQueue (SVG)");
  simulate->add_option("--seed", sim_cmd.seed, "Seed of UIDs and generated names")
      ->capture_default_str();
  simulate->add_option("--config", sim_cmd.config, "Queueing configuration file");
  simulate->add_option("--compare", sim_cmd.compare,
                       "Run again under this queueing configuration and print both side by side");
  simulate->add_flag("-q,--quiet", sim_cmd.quiet, "No summary table on stderr");
  bool version = false;
  app.add_flag("--version", version, "Print the version");
  CLI11_PARSE(app, argc, argv);
  if (version) {
    std::cout << "batchd v0.1.0 (Kubernetes API v1.32)\n";
    return 0;
  }
  spdlog::set_level(spdlog::level::info);
  if (simulate->parsed()) {
    spdlog::set_level(spdlog::level::warn);
    return batchd::sim::RunSimulate(sim_cmd);
  }
  if (agent->parsed()) return RunAgent(agent_cmd);
  for (auto [flag, text, out] : {std::make_tuple("--etcd-compaction-interval",
                                                 &compaction_interval, &opts.compaction_interval),
                                 std::make_tuple("--event-ttl", &event_ttl, &opts.event_ttl),
                                 std::make_tuple("--leader-elect-lease-duration", &le_lease,
                                                 &opts.leader_elect_lease_duration),
                                 std::make_tuple("--leader-elect-renew-deadline", &le_renew,
                                                 &opts.leader_elect_renew_deadline),
                                 std::make_tuple("--leader-elect-retry-period", &le_retry,
                                                 &opts.leader_elect_retry_period)}) {
    if (!absl::ParseDuration(*text, out) || *out < absl::ZeroDuration()) {
      std::cerr << flag << ": invalid duration \"" << *text << "\" (e.g. 5m, 30s, 1h)\n";
      return 2;
    }
  }
  return RunServer(opts);
}
