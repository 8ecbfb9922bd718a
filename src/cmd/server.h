// The composition root of `batchd server`: builds the store, registry, API
// server and HTTP listener from ServerOptions (STYLE.md practice 14). Later
// layers (controllers, scheduler, node agent) are wired here too.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace batchd::cmd {

// Where the cluster's state lives: the embedded SQLite file in the data
// directory, or memory (lost at exit; for tests and benchmarks).
enum class StoreBackend { kSqlite, kMemory };

// What an acknowledged write survives (SQLite's synchronous mode): a process
// crash / kill -9 ("normal"), or a power loss too ("full", an fsync per commit).
enum class StoreSync { kNormal, kFull };

struct ServerOptions {
  std::string listen = "127.0.0.1:8080";
  std::string data_dir = "./batchd-data";
  StoreBackend store = StoreBackend::kSqlite;
  StoreSync sync = StoreSync::kNormal;
  bool local_node = true;
  // Worker threads per controller.
  int controller_workers = 2;
  std::string config_file;
  // Kubernetes feature gates, "Name=true,Other=false" (feature_gates.h).
  std::string feature_gates;
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
  std::string audit_log_path;             // --audit-log-path ("-" = stdout)
  int audit_log_maxsize_mb = 100;         // --audit-log-maxsize
  int audit_log_maxbackup = 10;           // --audit-log-maxbackup
  std::string service_account_issuer = "https://batchd.local";  // --service-account-issuer
  std::vector<std::string> api_audiences;  // --api-audiences (default: the issuer)
};

class Server {
 public:
  static absl::StatusOr<std::unique_ptr<Server>> Create(const ServerOptions& opts);
  ~Server();
  // Starts serving; returns the bound port.
  absl::StatusOr<int> Start();
  void Stop();

 private:
  Server();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace batchd::cmd
