#include "store/testing/etcd_process.h"

#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace batchd::store::testing {

namespace {

int FreePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  socklen_t len = sizeof(a);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    ::close(fd);
    return 0;
  }
  ::close(fd);
  return ntohs(a.sin_port);
}

bool Answers(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<uint16_t>(port));
  bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0;
  if (ok) {
    // A linearizable read needs a leader: ask /health until it says true.
    std::string req = "GET /health HTTP/1.0\r\n\r\n";
    ok = ::write(fd, req.data(), req.size()) == static_cast<ssize_t>(req.size());
    std::string resp;
    char buf[512];
    ssize_t n;
    while (ok && (n = ::read(fd, buf, sizeof(buf))) > 0) resp.append(buf, n);
    ok = resp.find("\"health\":\"true\"") != std::string::npos;
  }
  ::close(fd);
  return ok;
}

}  // namespace

std::string FindEtcdBinary() {
  if (const char* e = std::getenv("BATCHD_ETCD"); e != nullptr && *e != '\0') {
    return ::access(e, X_OK) == 0 ? e : "";
  }
  const char* path = std::getenv("PATH");
  for (absl::string_view dir :
       absl::StrSplit(path ? path : "/usr/bin:/bin", ':', absl::SkipEmpty())) {
    std::string p = absl::StrCat(dir, "/etcd");
    if (::access(p.c_str(), X_OK) == 0) return p;
  }
  return "";
}

EtcdProcess::~EtcdProcess() {
  Kill();
  if (!dir_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
}

absl::Status EtcdProcess::Start() {
  binary_ = FindEtcdBinary();
  if (binary_.empty()) return absl::NotFoundError("no etcd binary (install etcd-server)");
  char tmpl[] = "/tmp/batchd-etcd-XXXXXX";
  if (::mkdtemp(tmpl) == nullptr) return absl::InternalError("mkdtemp failed");
  dir_ = tmpl;
  return Spawn();
}

absl::Status EtcdProcess::Restart() {
  Kill();
  return Spawn();
}

absl::Status EtcdProcess::Spawn() {
  const bool restart = client_port_ != 0;
  for (int attempt = 0; attempt < 3; ++attempt) {
    // A restart keeps its ports (clients hold the URL).
    const int client = restart ? client_port_ : FreePort();
    const int peer = restart ? peer_port_ : FreePort();
    if (client == 0 || peer == 0 || client == peer) continue;
    client_port_ = client;
    peer_port_ = peer;
    client_url_ = absl::StrCat("http://127.0.0.1:", client);
    peer_url_ = absl::StrCat("http://127.0.0.1:", peer);
    std::vector<std::string> args = {binary_,
                                     "--name", "t",
                                     "--data-dir", dir_ + "/data",
                                     "--listen-client-urls", client_url_,
                                     "--advertise-client-urls", client_url_,
                                     "--listen-peer-urls", peer_url_,
                                     "--initial-advertise-peer-urls", peer_url_,
                                     "--initial-cluster", "t=" + peer_url_,
                                     "--initial-cluster-state", "new",
                                     "--logger", "zap",
                                     "--log-outputs", dir_ + "/etcd.log"};
    pid_ = ::fork();
    if (pid_ == 0) {
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    if (pid_ < 0) return absl::InternalError("fork failed");
    const absl::Time deadline = absl::Now() + absl::Seconds(30);
    while (absl::Now() < deadline) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        break;  // Exited (a port taken meanwhile): try other ports.
      }
      if (Answers(client)) return absl::OkStatus();
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    Kill();
  }
  return absl::UnavailableError("etcd did not become healthy; see " + dir_ + "/etcd.log");
}

void EtcdProcess::Kill() {
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }
}

}  // namespace batchd::store::testing
