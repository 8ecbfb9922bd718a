#include "agent/runtime/fence_file.h"

#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace batchd::agent {

namespace {

int64_t BootNanos() {
  struct timespec ts;
  clock_gettime(CLOCK_BOOTTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

}  // namespace

absl::Status WriteFenceDeadline(const std::string& pod_dir, absl::Duration remaining) {
  const std::string path = absl::StrCat(pod_dir, "/", kFenceFileName);
  if (remaining == absl::InfiniteDuration()) {
    if (unlink(path.c_str()) != 0 && errno != ENOENT) {
      return absl::InternalError(absl::StrCat("unlink ", path, ": ", std::strerror(errno)));
    }
    return absl::OkStatus();
  }
  // Saturates: a deadline centuries away is as good as none passing.
  const int64_t left = std::max<int64_t>(
      0, std::min<int64_t>(absl::ToInt64Nanoseconds(remaining), int64_t{1} << 61));
  const std::string text = absl::StrCat(BootNanos() + left, "\n");
  const std::string tmp = path + ".tmp";
  // No fsync: after a power loss the pods are gone anyway.
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    if (errno == ENOENT) return absl::NotFoundError(absl::StrCat("no pod directory ", pod_dir));
    return absl::InternalError(absl::StrCat("open ", tmp, ": ", std::strerror(errno)));
  }
  const ssize_t n = write(fd, text.data(), text.size());
  const int write_errno = errno;
  close(fd);
  if (n != static_cast<ssize_t>(text.size())) {
    unlink(tmp.c_str());
    return absl::InternalError(absl::StrCat("write ", tmp, ": ", std::strerror(write_errno)));
  }
  if (rename(tmp.c_str(), path.c_str()) != 0) {
    const int e = errno;
    unlink(tmp.c_str());
    return absl::InternalError(absl::StrCat("rename ", tmp, ": ", std::strerror(e)));
  }
  return absl::OkStatus();
}

absl::Time ReadFenceDeadline(const std::string& pod_dir, absl::Time now) {
  const std::string path = absl::StrCat(pod_dir, "/", kFenceFileName);
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return absl::InfiniteFuture();
  char buf[64];
  const ssize_t n = read(fd, buf, sizeof(buf) - 1);
  close(fd);
  if (n <= 0) return absl::InfiniteFuture();
  int64_t deadline = 0;
  if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(absl::string_view(buf, n)), &deadline)) {
    return absl::InfiniteFuture();
  }
  return now + absl::Nanoseconds(deadline - BootNanos());
}

}  // namespace batchd::agent
