// EtcdProcess: a real single-member `etcd` (Debian's etcd-server) started on
// free loopback ports in a temporary directory, for tests of EtcdStore and
// what runs on it. Killed (SIGKILL) and its directory removed on destruction.
//
// Thread-safety: test-only; one thread.
#pragma once

#include <sys/types.h>

#include <string>

#include "absl/status/status.h"

namespace batchd::store::testing {

// The etcd binary ($BATCHD_ETCD, else `etcd` on PATH), or "" when absent.
std::string FindEtcdBinary();

class EtcdProcess {
 public:
  EtcdProcess() = default;
  ~EtcdProcess();
  EtcdProcess(const EtcdProcess&) = delete;
  EtcdProcess& operator=(const EtcdProcess&) = delete;

  // Starts etcd and waits (bounded) until it answers a range.
  absl::Status Start();
  // kill -9, keeping the data directory and ports (Restart reuses them).
  void Kill();
  absl::Status Restart();

  const std::string& client_url() const { return client_url_; }

 private:
  absl::Status Spawn();
  std::string binary_, dir_, client_url_, peer_url_;
  int client_port_ = 0, peer_port_ = 0;
  pid_t pid_ = -1;
};

}  // namespace batchd::store::testing
