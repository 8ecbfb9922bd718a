#include "agent/shim/pod_namespace.h"

#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "agent/runtime/mount_propagation.h"

namespace batchd::agent {
namespace {

absl::Status Errno(const std::string& what) {
  return absl::InternalError(absl::StrCat(what, ": ", std::strerror(errno)));
}

constexpr int kMaxDepth = 64;

void AddUsage(int dir_fd, dev_t dev, int depth, int64_t stop_above, int64_t& total) {
  DIR* d = fdopendir(dir_fd);
  if (d == nullptr) {
    close(dir_fd);
    return;
  }
  while (total <= stop_above) {
    struct dirent* e = readdir(d);
    if (e == nullptr) break;
    if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
    struct stat st;
    if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    total += static_cast<int64_t>(st.st_blocks) * 512;
    if (S_ISDIR(st.st_mode) && st.st_dev == dev && depth < kMaxDepth) {
      int fd = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (fd >= 0) AddUsage(fd, dev, depth + 1, stop_above, total);
    }
  }
  closedir(d);
}

}  // namespace

absl::Status PrepareEmptyDirs(const ShimConfig& config, const PodPaths& paths) {
  const PodSandboxSpec& pod = config.pod;
  const uid_t uid = static_cast<uid_t>(pod.owner_uid);  // -1: unchanged
  const gid_t gid = static_cast<gid_t>(pod.owner_gid);
  // The working directory: the pod user's alone.
  if (mkdir(paths.Work().c_str(), 0700) != 0 && errno != EEXIST) {
    return Errno(absl::StrCat("mkdir ", paths.Work()));
  }
  if ((pod.owner_uid >= 0 || pod.owner_gid >= 0) && chown(paths.Work().c_str(), uid, gid) != 0) {
    return Errno(absl::StrCat("chown ", paths.Work()));
  }
  if (chmod(paths.Work().c_str(), 0700) != 0) return Errno(absl::StrCat("chmod ", paths.Work()));
  for (const VolumeSpec& v : pod.volumes) {
    if (v.type != VolumeSpec::Type::kEmptyDir) continue;
    if (absl::Status s = MakeDirs(paths.Volume(v.name)); !s.ok()) return s;
    if (pod.owner_uid >= 0 || pod.owner_gid >= 0) (void)!chown(paths.Volume(v.name).c_str(), uid, gid);
    chmod(paths.Volume(v.name).c_str(), 0777);  // emptyDirs are world-writable, as the kubelet's
  }
  return absl::OkStatus();
}

absl::Status EnterPodNamespaces(const ShimConfig& config, const PodPaths& paths) {
  if (unshare(CLONE_NEWNS | CLONE_NEWUTS) != 0) return Errno("unshare(mount, uts)");
  // Nothing mounted from here on propagates back to the host.
  if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
    // In a chroot "/" is not a mount point (EINVAL): go on only if nothing
    // can propagate (agent/runtime/mount_propagation.h).
    const int err = errno;
    if (err != EINVAL || RootMountsMayPropagate()) {
      errno = err;
      return Errno("make / private");
    }
  }
  const std::string& host = config.pod.hostname;
  if (!host.empty() && sethostname(host.data(), host.size()) != 0) return Errno("sethostname");
  if (config.has_hosts &&
      mount(paths.Hosts().c_str(), "/etc/hosts", nullptr, MS_BIND, nullptr) != 0) {
    return Errno(absl::StrCat("bind ", paths.Hosts(), " over /etc/hosts"));
  }
  for (const VolumeSpec& v : config.pod.volumes) {
    if (v.type != VolumeSpec::Type::kEmptyDir || !v.memory) continue;
    std::string opts = "mode=1777";
    if (v.size_limit_bytes > 0) absl::StrAppend(&opts, ",size=", v.size_limit_bytes);
    if (mount("tmpfs", paths.Volume(v.name).c_str(), "tmpfs", MS_NOSUID | MS_NODEV,
              opts.c_str()) != 0) {
      return Errno(absl::StrCat("tmpfs for volume ", v.name));
    }
  }
  return absl::OkStatus();
}

int64_t DirUsage(const std::string& dir, int64_t stop_above) {
  struct stat st;
  if (lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return 0;
  int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return 0;
  int64_t total = 0;
  AddUsage(fd, st.st_dev, 0, stop_above, total);
  return total;
}

}  // namespace batchd::agent
