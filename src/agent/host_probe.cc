#include "agent/host_probe.h"

#include <sys/statvfs.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/strip.h"

namespace batchd::agent {
namespace {

std::string ReadFirstLine(const std::string& path) {
  std::ifstream f(path);
  std::string line;
  std::getline(f, line);
  return line;
}

std::string OsImage() {
  std::ifstream f("/etc/os-release");
  std::string line;
  while (std::getline(f, line)) {
    if (absl::StartsWith(line, "PRETTY_NAME=")) {
      std::string v = line.substr(12);
      if (v.size() >= 2 && v.front() == '"') v = v.substr(1, v.size() - 2);
      return v;
    }
  }
  return "Linux";
}

class SystemHostProbe : public HostProbe {
 public:
  int CpuCount() override {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? static_cast<int>(n) : 1;
  }
  int64_t MemoryBytes() override {
    std::ifstream f("/proc/meminfo");
    std::string key;
    int64_t kb = 0;
    std::string unit;
    while (f >> key >> kb >> unit) {
      if (key == "MemTotal:") return kb * 1024;
    }
    return 0;
  }
  int64_t DiskBytes(const std::string& path) override {
    struct statvfs s;
    if (statvfs(path.empty() ? "." : path.c_str(), &s) != 0) return 0;
    return static_cast<int64_t>(s.f_blocks) * static_cast<int64_t>(s.f_frsize);
  }
  int64_t DiskAvailableBytes(const std::string& path) override {
    struct statvfs s;
    if (statvfs(path.empty() ? "." : path.c_str(), &s) != 0) return -1;
    return static_cast<int64_t>(s.f_bavail) * static_cast<int64_t>(s.f_frsize);
  }
  int GpuCount() override {
    // Runs once at registration; popen's fork cost does not matter here.
    FILE* p = popen("nvidia-smi -L 2>/dev/null", "r");
    if (!p) return 0;
    int n = 0;
    char buf[512];
    while (fgets(buf, sizeof(buf), p)) {
      if (absl::StartsWith(buf, "GPU ")) ++n;
    }
    pclose(p);
    return n;
  }
  NodeFacts Facts() override {
    NodeFacts f;
    char host[256] = {0};
    if (gethostname(host, sizeof(host) - 1) == 0) f.hostname = host;
    struct utsname u;
    if (uname(&u) == 0) {
      f.kernel_version = u.release;
      std::string m = u.machine;
      f.arch = m == "x86_64" ? "amd64" : m == "aarch64" ? "arm64" : m;
    }
    f.os_image = OsImage();
    f.machine_id = ReadFirstLine("/etc/machine-id");
    f.boot_id = ReadFirstLine("/proc/sys/kernel/random/boot_id");
    return f;
  }
};

}  // namespace

std::unique_ptr<HostProbe> NewSystemHostProbe() { return std::make_unique<SystemHostProbe>(); }

}  // namespace batchd::agent
