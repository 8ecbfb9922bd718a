// HostProbe: what the node agent learns about its machine (the seam tests
// fake): CPUs, memory, disk of the data dir, GPUs (`nvidia-smi -L`), and the
// facts shown in Node.status.nodeInfo. SystemHostProbe reads /proc, statvfs
// and uname. Thread-safety: implementations are thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace batchd::agent {

struct NodeFacts {
  std::string hostname;
  std::string arch = "amd64";  // GOARCH spelling.
  std::string kernel_version;
  std::string os_image;
  std::string machine_id;
  std::string boot_id;
  // Set by the agent (not the probe): the node filesystem is past the
  // eviction threshold (Node condition DiskPressure).
  bool disk_pressure = false;
};

class HostProbe {
 public:
  virtual ~HostProbe() = default;
  virtual int CpuCount() = 0;
  virtual int64_t MemoryBytes() = 0;
  virtual int64_t DiskBytes(const std::string& path) = 0;
  // Bytes available to unprivileged writers on the filesystem of `path`
  // (statvfs f_bavail); -1 when unknown (no disk-pressure checks).
  virtual int64_t DiskAvailableBytes(const std::string& path) {
    (void)path;
    return -1;
  }
  virtual int GpuCount() = 0;
  virtual NodeFacts Facts() = 0;
};

std::unique_ptr<HostProbe> NewSystemHostProbe();

}  // namespace batchd::agent
