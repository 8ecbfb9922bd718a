// FakePodRuntime: an in-memory PodRuntime for agent tests. Tests script
// container states with SetStatus / Exit, and read what the agent asked for
// (started specs, stops, removals). Log files a test writes with WriteLog are
// real files in a directory of this runtime's own, removed with it (tests run
// as parallel processes, so no two may share a log path). Thread-safe.
#pragma once

#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "agent/runtime/pod_runtime.h"
#include "common/testing/temp_dir.h"

namespace batchd::agent::testing {

class FakePodRuntime : public PodRuntime {
 public:
  FakePodRuntime() = default;

  absl::Status Start(const PodSandboxSpec& spec) override {
    absl::MutexLock lock(&mu_);
    ++start_calls_;
    if (pods_.count(spec.uid)) return absl::OkStatus();
    Pod& p = pods_[spec.uid];
    p.spec = spec;
    if (spec.fence_remaining != absl::InfiniteDuration()) fences_[spec.uid] = spec.fence_remaining;
    p.status.found = true;
    p.status.supervisor_alive = true;
    for (const auto& c : spec.init_containers) p.status.init.push_back({.name = c.name});
    for (const auto& c : spec.containers) p.status.app.push_back({.name = c.name});
    return absl::OkStatus();
  }
  absl::StatusOr<PodSandboxStatus> Status(const std::string& uid) override {
    absl::MutexLock lock(&mu_);
    auto it = pods_.find(uid);
    if (it == pods_.end()) return PodSandboxStatus{};
    return it->second.status;
  }
  absl::Status Stop(const std::string& uid, absl::Duration grace) override {
    absl::MutexLock lock(&mu_);
    stops_.push_back({uid, grace});
    auto it = pods_.find(uid);
    if (it != pods_.end()) it->second.status.stop_requested = true;
    return absl::OkStatus();
  }
  absl::Status Remove(const std::string& uid) override {
    absl::MutexLock lock(&mu_);
    auto it = pods_.find(uid);
    if (it != pods_.end() && it->second.status.supervisor_alive) {
      return absl::FailedPreconditionError("supervisor alive");
    }
    pods_.erase(uid);
    removed_.push_back(uid);
    return absl::OkStatus();
  }
  absl::Status WriteHosts(const std::string& uid, const std::string& content) override {
    absl::MutexLock lock(&mu_);
    auto it = pods_.find(uid);
    if (it == pods_.end() || it->second.spec.hosts.empty()) {
      return absl::NotFoundError("no hosts file");
    }
    it->second.spec.hosts = content;
    ++hosts_writes_;
    return absl::OkStatus();
  }
  absl::Status SetFence(const std::string& uid, absl::Duration remaining) override {
    absl::MutexLock lock(&mu_);
    if (!pods_.count(uid)) return absl::NotFoundError("no such pod");
    if (remaining == absl::InfiniteDuration()) {
      fences_.erase(uid);
    } else {
      fences_[uid] = remaining;
    }
    ++fence_writes_;
    return absl::OkStatus();
  }
  // The fence deadline last set (Start or SetFence), as the time left then.
  std::optional<absl::Duration> Fence(const std::string& uid) {
    absl::MutexLock lock(&mu_);
    auto it = fences_.find(uid);
    if (it == fences_.end()) return std::nullopt;
    return it->second;
  }
  int fence_writes() {
    absl::MutexLock lock(&mu_);
    return fence_writes_;
  }
  std::vector<std::string> List() override {
    absl::MutexLock lock(&mu_);
    std::vector<std::string> out;
    for (const auto& [uid, p] : pods_) out.push_back(uid);
    return out;
  }
  std::string LogPath(const std::string& uid, const std::string& container,
                      bool previous) override {
    absl::MutexLock lock(&mu_);
    auto it = logs_.find(Key(uid, container, previous));
    return it == logs_.end() ? "" : it->second;
  }

  int64_t LogBytes(const std::string& uid) override {
    absl::MutexLock lock(&mu_);
    auto it = log_bytes_.find(uid);
    return it == log_bytes_.end() ? 0 : it->second;
  }
  absl::Status RemoveLogs(const std::string& uid) override {
    absl::MutexLock lock(&mu_);
    auto it = pods_.find(uid);
    if (it != pods_.end() && it->second.status.supervisor_alive) {
      return absl::FailedPreconditionError("running");
    }
    log_bytes_.erase(uid);
    logs_removed_.push_back(uid);
    return absl::OkStatus();
  }

  std::vector<ContainerUsage> ContainerUsages(const std::string& uid) override {
    absl::MutexLock lock(&mu_);
    auto it = usages_.find(uid);
    return it == usages_.end() ? std::vector<ContainerUsage>{} : it->second;
  }

  // --- Scripting ---
  void SetContainerUsages(const std::string& uid, std::vector<ContainerUsage> u) {
    absl::MutexLock lock(&mu_);
    usages_[uid] = std::move(u);
  }
  void SetLogBytes(const std::string& uid, int64_t bytes) {
    absl::MutexLock lock(&mu_);
    log_bytes_[uid] = bytes;
  }
  std::vector<std::string> logs_removed() {
    absl::MutexLock lock(&mu_);
    return logs_removed_;
  }
  // Replaces the recorded status of a started (or adopted) pod.
  void SetStatus(const std::string& uid, PodSandboxStatus st) {
    absl::MutexLock lock(&mu_);
    pods_[uid].status = std::move(st);
  }
  PodSandboxStatus Get(const std::string& uid) {
    absl::MutexLock lock(&mu_);
    return pods_[uid].status;
  }
  // A sandbox found on disk at start-up (re-adoption tests).
  void AddExisting(const std::string& uid, PodSandboxStatus st) { SetStatus(uid, std::move(st)); }
  void WriteLog(const std::string& uid, const std::string& container, bool previous,
                const std::string& data) {
    std::string path = log_dir_.path() + "/" + uid + "-" + container + (previous ? ".prev" : "") + ".log";
    std::ofstream(path, std::ios::trunc) << data;
    absl::MutexLock lock(&mu_);
    logs_[Key(uid, container, previous)] = path;
  }

  bool Has(const std::string& uid) {
    absl::MutexLock lock(&mu_);
    return pods_.count(uid) > 0;
  }
  PodSandboxSpec SpecOf(const std::string& uid) {
    absl::MutexLock lock(&mu_);
    return pods_[uid].spec;
  }
  std::vector<std::pair<std::string, absl::Duration>> stops() {
    absl::MutexLock lock(&mu_);
    return stops_;
  }
  std::vector<std::string> removed() {
    absl::MutexLock lock(&mu_);
    return removed_;
  }
  int start_calls() {
    absl::MutexLock lock(&mu_);
    return start_calls_;
  }
  // The pod's hosts file as last written (Start, then WriteHosts).
  std::string Hosts(const std::string& uid) {
    absl::MutexLock lock(&mu_);
    return pods_[uid].spec.hosts;
  }
  int hosts_writes() {
    absl::MutexLock lock(&mu_);
    return hosts_writes_;
  }

 private:
  struct Pod {
    PodSandboxSpec spec;
    PodSandboxStatus status;
  };
  static std::string Key(const std::string& uid, const std::string& c, bool prev) {
    return uid + "/" + c + (prev ? "/prev" : "");
  }
  absl::Mutex mu_;
  ScopedTempDir log_dir_{"batchd-fake-runtime"};
  std::map<std::string, Pod> pods_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, absl::Duration> fences_ ABSL_GUARDED_BY(mu_);
  int fence_writes_ ABSL_GUARDED_BY(mu_) = 0;
  std::map<std::string, std::string> logs_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, int64_t> log_bytes_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::vector<ContainerUsage>> usages_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> logs_removed_ ABSL_GUARDED_BY(mu_);
  std::vector<std::pair<std::string, absl::Duration>> stops_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> removed_ ABSL_GUARDED_BY(mu_);
  int start_calls_ ABSL_GUARDED_BY(mu_) = 0;
  int hosts_writes_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace batchd::agent::testing
