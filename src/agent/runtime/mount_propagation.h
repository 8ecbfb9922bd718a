// Whether a mount made in a new mount namespace could propagate back to the
// host. The shim makes "/" private (MS_REC | MS_PRIVATE) before it mounts a
// pod's /etc/hosts and tmpfs volumes; in a chroot "/" is not a mount point
// and that call fails (EINVAL). Mounts propagate only through shared mounts,
// so where no mount of the root's device is shared, nothing mounted in the
// pod's namespace can reach the host and the pod may go on. The mount that
// holds a chroot is hidden from the chroot's own mountinfo; init's
// (/proc/1/mountinfo) lists it.
//
// Header-only: the statically linked shim and the agent's start-up probe
// both use it. Not for use after fork() in a multithreaded process.
#pragma once

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace batchd::agent {

// Whether a mount of device `major:minor` in `mountinfo` (the text of
// /proc/PID/mountinfo) is shared, or none of that device is listed.
inline bool DeviceMountsMayPropagate(std::string_view mountinfo, unsigned major,
                                     unsigned minor) {
  bool listed = false;
  std::istringstream lines{std::string(mountinfo)};
  std::string line;
  while (std::getline(lines, line)) {
    // ID PARENT MAJOR:MINOR ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - TYPE SOURCE SUPER
    std::istringstream fields(line);
    std::vector<std::string> f;
    for (std::string w; fields >> w;) f.push_back(std::move(w));
    if (f.size() < 7) continue;
    unsigned ma = 0, mi = 0;
    char tail = 0;
    if (std::sscanf(f[2].c_str(), "%u:%u%c", &ma, &mi, &tail) != 2) continue;
    if (ma != major || mi != minor) continue;
    listed = true;
    for (size_t i = 6; i < f.size() && f[i] != "-"; ++i) {
      if (f[i].rfind("shared:", 0) == 0) return true;
    }
  }
  return !listed;
}

// DeviceMountsMayPropagate for this process's root, from init's mountinfo;
// true when either cannot be read.
inline bool RootMountsMayPropagate() {
  struct stat root {};
  if (stat("/", &root) != 0) return true;
  std::ifstream in("/proc/1/mountinfo");
  std::ostringstream info;
  if (in) info << in.rdbuf();
  if (info.str().empty()) return true;
  return DeviceMountsMayPropagate(info.str(), major(root.st_dev), minor(root.st_dev));
}

}  // namespace batchd::agent
