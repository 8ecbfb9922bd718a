#include "agent/runtime/proc_identity.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace batchd::agent {

namespace {

// Reads a small file whole ("" on error).
std::string ReadSmall(const std::string& path, bool* ok) {
  *ok = false;
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  std::string out;
  char buf[4096];
  for (;;) {
    const ssize_t n = read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      close(fd);
      return "";
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
    if (out.size() > (1 << 16)) break;
  }
  close(fd);
  *ok = true;
  return out;
}

int PidfdOpen(int pid) {
#ifdef SYS_pidfd_open
  return static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
#else
  errno = ENOSYS;
  return -1;
#endif
}

int PidfdSendSignal(int pidfd, int sig) {
#ifdef SYS_pidfd_send_signal
  return static_cast<int>(syscall(SYS_pidfd_send_signal, pidfd, sig, nullptr, 0));
#else
  errno = ENOSYS;
  return -1;
#endif
}

}  // namespace

std::string BootId() {
  const char* file = std::getenv(kBootIdFileEnv);
  bool ok = false;
  std::string text = ReadSmall(file != nullptr && *file != '\0'
                                   ? std::string(file)
                                   : std::string("/proc/sys/kernel/random/boot_id"),
                               &ok);
  return ok ? std::string(absl::StripAsciiWhitespace(text)) : "";
}

std::optional<uint64_t> ParseStartTicks(const std::string& stat) {
  const size_t close_paren = stat.rfind(')');
  if (close_paren == std::string::npos) return std::nullopt;
  // After "pid (comm) ": field 3 (state) onward; starttime is field 22.
  std::vector<std::string> f =
      absl::StrSplit(stat.substr(close_paren + 1), ' ', absl::SkipEmpty());
  uint64_t ticks = 0;
  if (f.size() < 20 || !absl::SimpleAtoi(f[19], &ticks)) return std::nullopt;
  return ticks;
}

std::optional<uint64_t> ProcessStartTicks(int pid) {
  if (pid <= 0) return std::nullopt;
  bool ok = false;
  const std::string stat = ReadSmall(absl::StrCat("/proc/", pid, "/stat"), &ok);
  if (!ok) return std::nullopt;
  return ParseStartTicks(stat);
}

ProcessIdentity IdentityOf(int pid) {
  return ProcessIdentity{.pid = pid, .start_ticks = ProcessStartTicks(pid).value_or(0),
                         .boot_id = BootId()};
}

absl::Status SignalRecorded(const ProcessIdentity& id, int sig, bool group) {
  if (id.pid <= 0) return absl::InvalidArgumentError("no pid recorded");
  if (id.boot_id.empty() || id.start_ticks == 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("pid ", id.pid, ": no boot id or start time recorded; not signalled"));
  }
  const std::string boot = BootId();
  if (boot.empty() || boot != id.boot_id) {
    return absl::FailedPreconditionError(
        absl::StrCat("pid ", id.pid, " was recorded in another boot (", id.boot_id,
                     "); not signalled"));
  }
  // The pidfd pins the process from here on: a check of its start time
  // holds for what we signal through it.
  const int pidfd = PidfdOpen(id.pid);
  if (pidfd < 0 && errno == ESRCH) {
    if (!group) return absl::NotFoundError(absl::StrCat("pid ", id.pid, " is gone"));
    // The leader is gone; what is left of its group (if anything) is its.
    if (kill(-id.pid, sig) != 0) {
      return errno == ESRCH ? absl::NotFoundError(absl::StrCat("group ", id.pid, " is gone"))
                            : absl::InternalError(absl::StrCat("kill -", id.pid, ": ",
                                                               std::strerror(errno)));
    }
    return absl::OkStatus();
  }
  const std::optional<uint64_t> ticks = ProcessStartTicks(id.pid);
  if (!ticks) {
    if (pidfd >= 0) close(pidfd);
    return absl::NotFoundError(absl::StrCat("pid ", id.pid, " is gone"));
  }
  if (*ticks != id.start_ticks) {
    if (pidfd >= 0) close(pidfd);
    return absl::FailedPreconditionError(absl::StrCat(
        "pid ", id.pid, " now belongs to another process (started at tick ", *ticks,
        ", recorded ", id.start_ticks, "); not signalled"));
  }
  int rc;
  if (group) {
    rc = kill(-id.pid, sig);
  } else if (pidfd >= 0) {
    rc = PidfdSendSignal(pidfd, sig);
    if (rc != 0 && errno == ENOSYS) rc = kill(id.pid, sig);
  } else {
    rc = kill(id.pid, sig);
  }
  const int err = errno;
  if (pidfd >= 0) close(pidfd);
  if (rc != 0) {
    return err == ESRCH ? absl::NotFoundError(absl::StrCat("pid ", id.pid, " is gone"))
                        : absl::InternalError(absl::StrCat("signal ", id.pid, ": ",
                                                           std::strerror(err)));
  }
  return absl::OkStatus();
}

absl::Status KillCgroup(const std::string& cgroup_dir) {
  if (cgroup_dir.empty()) return absl::NotFoundError("no cgroup");
  const std::string path = cgroup_dir + "/cgroup.kill";
  const int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT && access(cgroup_dir.c_str(), F_OK) == 0) {
      return absl::UnimplementedError(absl::StrCat(path, ": no cgroup.kill (Linux < 5.14)"));
    }
    return absl::NotFoundError(absl::StrCat(path, ": ", std::strerror(errno)));
  }
  const ssize_t n = write(fd, "1", 1);
  const int err = errno;
  close(fd);
  if (n != 1) return absl::InternalError(absl::StrCat("write ", path, ": ", std::strerror(err)));
  return absl::OkStatus();
}

}  // namespace batchd::agent
