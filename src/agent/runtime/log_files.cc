#include "agent/runtime/log_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace batchd::agent {

namespace {

// The highest suffix ever looked at: bounds the scans below even if the
// settings shrank since the files were made.
constexpr int kMaxSuffix = 64;

}  // namespace

std::vector<std::string> RotatedLogFiles(const std::string& path) {
  std::vector<std::string> out;
  struct stat st;
  for (int i = 1; i <= kMaxSuffix; ++i) {
    std::string p = absl::StrCat(path, ".", i);
    if (stat(p.c_str(), &st) != 0) break;
    out.push_back(std::move(p));
  }
  return out;
}

int64_t LogBytes(const std::string& path) {
  int64_t total = 0;
  struct stat st;
  if (stat(path.c_str(), &st) == 0) total += st.st_size;
  for (const std::string& p : RotatedLogFiles(path)) {
    if (stat(p.c_str(), &st) == 0) total += st.st_size;
  }
  return total;
}

void RemoveLogFiles(const std::string& path) {
  for (const std::string& p : RotatedLogFiles(path)) unlink(p.c_str());
  unlink(path.c_str());
}

RotatingLog::RotatingLog(std::string path, LogRotation rotation, int64_t owner_uid,
                         int64_t owner_gid)
    : path_(std::move(path)), rotation_(rotation), owner_uid_(owner_uid), owner_gid_(owner_gid) {
  rotation_.max_bytes = std::max(rotation_.max_bytes, kMinLogMaxBytes);
  rotation_.max_files = std::clamp(rotation_.max_files, kMinLogMaxFiles, kMaxSuffix);
  (void)Open();
}

RotatingLog::~RotatingLog() {
  if (fd_ >= 0) close(fd_);
}

absl::Status RotatingLog::Open() {
  fd_ = open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd_ < 0) return absl::InternalError(absl::StrCat("open ", path_, ": ", std::strerror(errno)));
  if (owner_uid_ >= 0) {
    (void)!fchown(fd_, static_cast<uid_t>(owner_uid_), static_cast<gid_t>(owner_gid_));
  }
  struct stat st;
  size_ = fstat(fd_, &st) == 0 ? st.st_size : 0;
  return absl::OkStatus();
}

absl::Status RotatingLog::Rotate() {
  // Oldest first: path.(n-1) goes, path.(k) -> path.(k+1), path -> path.1.
  // Each rename is atomic; a reader holding the old file keeps reading it.
  const int last = rotation_.max_files - 1;
  (void)unlink(absl::StrCat(path_, ".", last).c_str());
  for (int i = last - 1; i >= 1; --i) {
    (void)rename(absl::StrCat(path_, ".", i).c_str(), absl::StrCat(path_, ".", i + 1).c_str());
  }
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
  if (rename(path_.c_str(), absl::StrCat(path_, ".1").c_str()) != 0 && errno != ENOENT) {
    const int err = errno;
    (void)Open();
    return absl::InternalError(absl::StrCat("rotate ", path_, ": ", std::strerror(err)));
  }
  ++rotations_;
  return Open();
}

absl::Status RotatingLog::Write(std::string_view data) {
  if (fd_ < 0) {
    if (absl::Status s = Open(); !s.ok()) {
      dropped_ += static_cast<int64_t>(data.size());
      return s;
    }
  }
  while (!data.empty()) {
    const ssize_t n = write(fd_, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      dropped_ += static_cast<int64_t>(data.size());
      return absl::ResourceExhaustedError(
          absl::StrCat("write ", path_, ": ", n < 0 ? std::strerror(errno) : "short write"));
    }
    size_ += n;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return absl::OkStatus();
}

absl::Status RotatingLog::Append(std::string_view data) {
  absl::Status first;
  while (!data.empty()) {
    const int64_t room = rotation_.max_bytes - size_;
    if (static_cast<int64_t>(data.size()) <= room) {
      absl::Status s = Write(data);
      return first.ok() ? s : first;
    }
    // Up to the last newline that fits; a file with nothing in it takes
    // what fits even without one (a line longer than a file is cut).
    std::string_view fits = data.substr(0, static_cast<size_t>(std::max<int64_t>(room, 0)));
    size_t cut = fits.rfind('\n');
    cut = cut == std::string_view::npos ? (size_ == 0 ? fits.size() : 0) : cut + 1;
    if (cut > 0) {
      absl::Status s = Write(data.substr(0, cut));
      if (!s.ok() && first.ok()) first = s;
      data.remove_prefix(cut);
    }
    if (absl::Status s = Rotate(); !s.ok()) {
      // Could not rotate (the directory is gone, the disk is full): what is
      // left goes to whatever file is open, past the size, rather than lost.
      (void)Write(data);
      return first.ok() ? s : first;
    }
  }
  return first;
}

}  // namespace batchd::agent
