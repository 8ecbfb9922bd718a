// Resource usage of containers and of the node, as the kubelet's resource
// metrics report it (metrics-server, `kubectl top`): cumulative CPU time and
// the memory working set.
//
//  - A container with a cgroup v2 group (<cgroup_root>/batchd/<uid>/<name>):
//    cpu.stat usage_usec, and memory.current minus memory.stat's
//    inactive_file (cAdvisor's working set) when the memory controller is
//    delegated there.
//  - Otherwise (no writable cgroup2, or no memory controller) its main
//    process from /proc: utime+stime plus its reaped children's
//    (cutime+cstime), and its resident set. Processes it forked and that
//    still run are not counted: a cgroup is what counts them all.
//  - The node: /proc/stat's cpu line (busy time: all but idle and iowait)
//    and /proc/meminfo's MemTotal - MemAvailable.
// Every reader takes the root of the file system it reads (tests give a
// directory of fake files). Thread-safe (stateless).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace batchd::agent {

struct Usage {
  int64_t cpu_usec = -1;      // cumulative CPU time in microseconds; -1 = unknown
  int64_t memory_bytes = -1;  // working set now; -1 = unknown
};

// The group's usage; fields it cannot read stay -1.
Usage ReadCgroupUsage(const std::string& dir);
// Process `pid` under `proc_root` ("/proc"), when it is still the process
// started at `start_ticks` (0: not checked). Both -1 when it is gone.
Usage ReadProcessUsage(const std::string& proc_root, int pid, uint64_t start_ticks);
// The whole machine.
Usage ReadNodeUsage(const std::string& proc_root);

// The cgroup's where it knows, else the process's.
Usage MergeUsage(const Usage& cgroup, const Usage& process);

}  // namespace batchd::agent
