// Process identity that survives pid reuse and reboots: a pid means the
// process the runtime recorded only when the boot is the same
// (/proc/sys/kernel/random/boot_id) and the process at that pid started at
// the recorded time (/proc/PID/stat field 22, clock ticks since boot). The
// runtime signals a recorded process (group) only after both checks, through
// a pidfd where it can, and prefers a pod's cgroup (`cgroup.kill`, cgroup v2)
// to any pid: after a reboot nothing recorded before it is signalled.
//
// Tests point `BATCHD_BOOT_ID_FILE` at a file of their own to simulate a
// reboot (the shim inherits it from the agent).
//
// Thread-safety: free functions, no shared state.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"

namespace batchd::agent {

inline constexpr char kBootIdFileEnv[] = "BATCHD_BOOT_ID_FILE";

// This boot's id ("" when unreadable): the file named by $BATCHD_BOOT_ID_FILE,
// else /proc/sys/kernel/random/boot_id.
std::string BootId();
// Field 22 (starttime) of /proc/<pid>/stat; nullopt when there is no such process.
std::optional<uint64_t> ProcessStartTicks(int pid);
// Parses the content of a /proc/<pid>/stat file (the command may hold spaces
// and parentheses).
std::optional<uint64_t> ParseStartTicks(const std::string& stat);

// A process as recorded when it was started.
struct ProcessIdentity {
  int pid = 0;
  uint64_t start_ticks = 0;  // 0 = not recorded
  std::string boot_id;       // "" = not recorded
};

// The identity of a running process (pid > 0) in this boot.
ProcessIdentity IdentityOf(int pid);

// Signals the process `id` names (group: the process group it leads), only
// when it is verifiably that process: FailedPrecondition (nothing signalled)
// when the boot differs, nothing was recorded, or the pid now belongs to a
// process started at another time; NotFound when it is gone. A group whose
// leader is gone is signalled when the boot is the same (its members keep
// the group id allocated, so no new process can have taken it).
absl::Status SignalRecorded(const ProcessIdentity& id, int sig, bool group);

// Writes "1" to `<cgroup_dir>/cgroup.kill` (cgroup v2, Linux 5.14+): SIGKILL
// to every process in the group and its descendants. NotFound when there is
// no such group (e.g. after a reboot); Unimplemented without cgroup.kill.
absl::Status KillCgroup(const std::string& cgroup_dir);

}  // namespace batchd::agent
