// Container log files with size-based rotation (kubelet's containerLogMaxSize
// / containerLogMaxFiles). A container's stdout and stderr go to a pipe that
// its shim reads (the shim owns the only writer of the log file), so the shim
// rotates by renaming and opening a new file between two writes: nothing is
// copied or truncated, and a fast writer loses nothing (it blocks on the full
// pipe while the shim rotates).
//
//   <pod-dir>/<container>.<run>.log      the current file (what `kubectl logs` reads)
//   <pod-dir>/<container>.<run>.log.1    the one before it, ... up to .log.<max_files-1>
//
// Each file holds whole lines where it can: a chunk that would pass the size
// is split after its last newline that fits, and a line longer than a whole
// file is cut at the size. A run's files hold at most max_files x max_bytes.
//
// Thread-safety: RotatingLog is single-threaded (the shim's loop); the free
// functions have no shared state.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"

namespace batchd::agent {

struct LogRotation {
  int64_t max_bytes = 10 << 20;  // kubelet's containerLogMaxSize (10Mi)
  int max_files = 5;             // kubelet's containerLogMaxFiles (current file included)
};
// The smallest settings accepted (the agent's flags are checked against these).
inline constexpr int64_t kMinLogMaxBytes = 1024;
inline constexpr int kMinLogMaxFiles = 2;

// The rotated files of `path` that exist, newest first (path.1, path.2, ...).
std::vector<std::string> RotatedLogFiles(const std::string& path);
// Bytes in `path` and its rotated files (0 for what does not exist).
int64_t LogBytes(const std::string& path);
// Removes `path` and its rotated files.
void RemoveLogFiles(const std::string& path);

class RotatingLog {
 public:
  // Files are created mode 0600 (never through a symlink) and, when
  // owner_uid >= 0, given to that user and group: the pod's own output.
  RotatingLog(std::string path, LogRotation rotation, int64_t owner_uid = -1,
              int64_t owner_gid = -1);
  ~RotatingLog();
  RotatingLog(const RotatingLog&) = delete;
  RotatingLog& operator=(const RotatingLog&) = delete;

  // Appends `data`, rotating as needed. On an error (a full disk) the data
  // that could not be written is dropped and counted: the writer is never
  // blocked by the file.
  absl::Status Append(std::string_view data);
  int64_t dropped_bytes() const { return dropped_; }
  int rotations() const { return rotations_; }

 private:
  absl::Status Open();
  absl::Status Write(std::string_view data);
  absl::Status Rotate();

  std::string path_;
  LogRotation rotation_;
  int64_t owner_uid_ = -1;
  int64_t owner_gid_ = -1;
  int fd_ = -1;
  int64_t size_ = 0;
  int64_t dropped_ = 0;
  int rotations_ = 0;
};

}  // namespace batchd::agent
