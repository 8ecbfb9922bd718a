#include "agent/runtime/cgroup.h"

#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"

namespace batchd::agent {
namespace {

constexpr long kCgroup2Magic = 0x63677270;

// Writes `value` to a cgroup control file (best effort for optional knobs).
bool WriteKnob(const std::string& path, const std::string& value) {
  std::ofstream out(path);
  if (!out) return false;
  out << value;
  out.flush();
  return static_cast<bool>(out);
}

}  // namespace

std::string CpuMaxValue(int64_t cpu_limit_millis) {
  if (cpu_limit_millis <= 0) return "max 100000";
  return absl::StrCat(cpu_limit_millis * 100, " 100000");
}

absl::StatusOr<Cgroups> Cgroups::Open(const std::string& root) {
  if (root.empty()) return absl::FailedPreconditionError("cgroups disabled");
  struct statfs fs;
  if (statfs(root.c_str(), &fs) != 0 || static_cast<long>(fs.f_type) != kCgroup2Magic) {
    return absl::FailedPreconditionError(absl::StrCat(root, " is not a cgroup2 mount"));
  }
  if (access(root.c_str(), W_OK) != 0) {
    return absl::FailedPreconditionError(absl::StrCat(root, " is not writable"));
  }
  return Cgroups(root);
}

absl::StatusOr<std::string> Cgroups::CreateContainer(const std::string& uid,
                                                     const std::string& container,
                                                     int64_t cpu_limit_millis,
                                                     int64_t memory_limit_bytes) const {
  const std::string batchd = root_ + "/batchd";
  const std::string pod = PodDir(uid);
  const std::string dir = pod + "/" + container;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return absl::InternalError(absl::StrCat("cgroup mkdir ", dir, ": ", ec.message()));
  // Delegate the controllers down the tree; harmless when already enabled.
  for (const std::string& parent : {root_, batchd, pod}) {
    WriteKnob(parent + "/cgroup.subtree_control", "+cpu +memory");
    WriteKnob(parent + "/cgroup.subtree_control", "+pids");  // separately: may be absent
  }
  if (cpu_limit_millis > 0 && !WriteKnob(dir + "/cpu.max", CpuMaxValue(cpu_limit_millis))) {
    return absl::InternalError(absl::StrCat("cannot write ", dir, "/cpu.max"));
  }
  if (memory_limit_bytes > 0) {
    if (!WriteKnob(dir + "/memory.max", std::to_string(memory_limit_bytes))) {
      return absl::InternalError(absl::StrCat("cannot write ", dir, "/memory.max"));
    }
    WriteKnob(dir + "/memory.swap.max", "0");
  }
  return dir;
}

bool Cgroups::HasPids() const {
  std::ifstream in(root_ + "/cgroup.controllers");
  std::string c;
  while (in >> c) {
    if (c == "pids") return true;
  }
  return false;
}

absl::Status Cgroups::SetPodPidsMax(const std::string& uid, int64_t pids_max) const {
  const std::string pod = PodDir(uid);
  std::error_code ec;
  std::filesystem::create_directories(pod, ec);
  if (ec) return absl::InternalError(absl::StrCat("cgroup mkdir ", pod, ": ", ec.message()));
  for (const std::string& parent : {root_, root_ + "/batchd"}) {
    WriteKnob(parent + "/cgroup.subtree_control", "+pids");
  }
  if (!WriteKnob(pod + "/pids.max", std::to_string(pids_max))) {
    return absl::InternalError(absl::StrCat("cannot write ", pod, "/pids.max"));
  }
  return absl::OkStatus();
}

absl::StatusOr<PidsV1> PidsV1::Find() {
  std::ifstream in("/proc/self/mounts");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream f(line);
    std::string dev, dir, type, opts;
    if (!(f >> dev >> dir >> type >> opts) || type != "cgroup") continue;
    bool pids = false;
    std::istringstream o(opts);
    for (std::string opt; std::getline(o, opt, ',');) pids |= opt == "pids";
    if (!pids) continue;
    if (access(dir.c_str(), W_OK) != 0) {
      return absl::FailedPreconditionError(absl::StrCat(dir, " is not writable"));
    }
    return PidsV1(dir);
  }
  return absl::FailedPreconditionError("no cgroup v1 pids hierarchy is mounted");
}

absl::StatusOr<std::string> PidsV1::CreatePod(const std::string& uid, int64_t pids_max) const {
  const std::string dir = PodDir(uid);
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return absl::InternalError(absl::StrCat("cgroup mkdir ", dir, ": ", ec.message()));
  if (!WriteKnob(dir + "/pids.max", std::to_string(pids_max))) {
    return absl::InternalError(absl::StrCat("cannot write ", dir, "/pids.max"));
  }
  return dir;
}

void PidsV1::RemovePod(const std::string& uid) const { rmdir(PodDir(uid).c_str()); }

int64_t Cgroups::OomKills(const std::string& dir) {
  std::ifstream in(dir + "/memory.events");
  std::string key;
  int64_t value = 0;
  while (in >> key >> value) {
    if (key == "oom_kill") return value;
  }
  return 0;
}

void Cgroups::RemovePod(const std::string& uid) const {
  const std::string pod = PodDir(uid);
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(pod, ec)) {
    if (entry.is_directory(ec)) rmdir(entry.path().c_str());
  }
  rmdir(pod.c_str());
}

}  // namespace batchd::agent
