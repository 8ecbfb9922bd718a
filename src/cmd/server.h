// The composition root of `batchd server`: builds the store, registry, API
// server and HTTP listener from ServerOptions (STYLE.md practice 14). Later
// layers (controllers, scheduler, node agent) are wired here too.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace batchd::cmd {

// Where the cluster's state lives: the embedded SQLite file in the data
// directory, memory (lost at exit; for tests and benchmarks), or an etcd
// cluster shared by several servers (docs/ha.md).
enum class StoreBackend { kSqlite, kMemory, kEtcd };

// --leader-elect: auto is on whenever the store is shared (etcd).
enum class LeaderElect { kAuto, kOn, kOff };

// What an acknowledged write survives (SQLite's synchronous mode): a process
// crash / kill -9 ("normal"), or a power loss too ("full", an fsync per commit).
enum class StoreSync { kNormal, kFull };

struct ServerOptions {
  std::string listen = "127.0.0.1:8080";
  std::string data_dir = "./batchd-data";
  StoreBackend store = StoreBackend::kSqlite;
  StoreSync sync = StoreSync::kNormal;
  // --store etcd (kube-apiserver's flag names): member client URLs, TLS
  // client files, and the key prefix every object lives under.
  std::vector<std::string> etcd_servers;
  std::string etcd_cafile, etcd_certfile, etcd_keyfile;
  std::string etcd_prefix = "/batchd";
  // Leader election for what must run once (controllers, admission, the
  // scheduler, simulated kubelets, compaction and sweepers) through the
  // Lease kube-system/batchd-controller-manager (docs/ha.md).
  LeaderElect leader_elect = LeaderElect::kAuto;
  absl::Duration leader_elect_lease_duration = absl::Seconds(15);
  absl::Duration leader_elect_renew_deadline = absl::Seconds(10);
  absl::Duration leader_elect_retry_period = absl::Seconds(2);
  bool local_node = true;
  // Worker threads per controller.
  int controller_workers = 2;
  std::string config_file;
  // Kubernetes feature gates, "Name=true,Other=false" (feature_gates.h).
  std::string feature_gates;

  // Serving (docs/operations.md#serving-bounds-and-tls). HTTPS with the
  // given certificate and key; without them, with a CA and certificate the
  // server creates in DATA_DIR/pki on first start. Which of plain HTTP and
  // HTTPS `--listen` serves is `serve_https`: kAuto is HTTPS beyond loopback
  // (or when a certificate is given) and plain HTTP on loopback.
  enum class Https { kAuto, kAlways, kNever };
  Https serve_https = Https::kAuto;
  std::string tls_cert_file;
  std::string tls_private_key_file;
  // Client certificates verify against this bundle (default: the generated CA).
  std::string client_ca_file;
  std::vector<std::string> tls_sans;  // Extra names/IPs in the generated certificate.
  // The client certificate remote agents' log ports accept from the server
  // (kube-apiserver's --kubelet-client-certificate/-key); default:
  // DATA_DIR/pki/kubelet-client.{crt,key}, signed by DATA_DIR/pki/ca.crt.
  std::string kubelet_client_certificate;
  std::string kubelet_client_key;
  // Allows plain HTTP beyond loopback (tests inside network namespaces only).
  bool insecure_serve_unauthenticated = false;
  // Bounds (kube-apiserver's flags where one exists).
  int max_connections = 10000;
  int max_requests_inflight = 400;
  int max_mutating_requests_inflight = 200;
  int max_long_running_requests = 1000;
  int request_timeout_seconds = 60;
  // The local node agent's pods (docs/security.md "Pods"): their directories
  // ("" = <data_dir>-pods, beside the data directory, never inside it), the
  // unprivileged user they run as when the server is root, and their pids.max.
  std::string pod_root;
  std::string pod_user = "batchd-pod";
  int64_t pod_pids_limit = 4096;
  // The local node agent's log rotation and disk-pressure eviction
  // (kubelet's containerLogMaxSize/Files, evictionHard nodefs.available,
  // evictionPressureTransitionPeriod; agent/agent.h).
  std::string container_log_max_size = "10Mi";
  int container_log_max_files = 5;
  std::string eviction_hard = "nodefs.available<10%";
  std::string eviction_pressure_transition_period = "5m";
  // Node failure (kube-apiserver's DefaultTolerationSeconds admission and
  // kube-controller-manager's node lifecycle controller).
  int64_t default_not_ready_toleration_seconds = 300;
  int64_t default_unreachable_toleration_seconds = 300;
  double node_eviction_rate = 0.1;
  double secondary_node_eviction_rate = 0.01;
  double unhealthy_zone_threshold = 0.55;
  int large_cluster_size_threshold = 50;
  std::string node_monitor_grace_period = "40s";
  // kube-apiserver's --etcd-compaction-interval: how often the store's
  // revision history is compacted (to the revision one interval ago); 0: never.
  absl::Duration compaction_interval = absl::Minutes(5);
  // kube-apiserver's --event-ttl: Events are deleted this long after their
  // last write; 0: kept.
  absl::Duration event_ttl = absl::Hours(1);
  // Security (docs/security.md). Authentication always runs; the first
  // start writes DATA/admin.token (batchd-admin in system:masters) and the
  // ServiceAccount signing key DATA/pki/sa.key.
  std::string token_auth_file;            // --token-auth-file (Kubernetes' CSV)
  std::string authorization_mode = "RBAC";  // --authorization-mode: RBAC or AlwaysAllow
  bool allow_loopback_admin = false;      // --allow-loopback-admin
  bool anonymous_auth = true;             // --anonymous-auth (false: no credentials is 401)
  std::string audit_log_path;             // --audit-log-path ("-" = stdout)
  int audit_log_maxsize_mb = 100;         // --audit-log-maxsize
  int audit_log_maxbackup = 10;           // --audit-log-maxbackup
  std::string service_account_issuer = "https://batchd.local";  // --service-account-issuer
  // The PEM private key that signs and verifies ServiceAccount and node
  // tokens: RSA (RS256) or EC P-256 (ES256); "" = DATA_DIR/pki/sa.key (an RSA
  // key created on first start). --service-account-key-file.
  std::string service_account_key_file;
  std::vector<std::string> api_audiences;  // --api-audiences (default: the issuer)
};

// The default --pod-root of a server whose data directory is `data_dir`:
// its sibling "<data_dir>-pods".
std::string DefaultPodRoot(const std::string& data_dir);

class Server {
 public:
  static absl::StatusOr<std::unique_ptr<Server>> Create(const ServerOptions& opts);
  ~Server();
  // Starts serving; returns the bound port.
  absl::StatusOr<int> Start();
  // After Start: "http" or "https", and the CA that verifies the serving
  // certificate ("" for plain HTTP or a certificate given by flag).
  const std::string& scheme() const;
  const std::string& ca_file() const;
  // False when the HTTP server left handlers running (a request that did
  // not return after its connection was cut): they may still use what the
  // destructors free, so the process should exit without them.
  bool Stop();

 private:
  Server();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace batchd::cmd
