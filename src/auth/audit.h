// The audit log: one audit.k8s.io/v1 Event JSON object per line, written at
// Metadata level (who, verb, objectRef, response code, source IPs, stage
// ResponseComplete, timestamps; never request or response bodies, so Secret
// values and issued tokens never reach it). Bounded: the file is rotated when
// it would exceed `max_size_mb` (to PATH.1, PATH.2, ... up to `max_backups`
// files; the oldest is deleted). PATH "-" writes to stdout, unrotated.
//
// Thread-safety: Write is thread-safe (one mutex; lines never interleave).
#pragma once

#include <cstdio>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "api/field_error.h"

namespace batchd::auth {

struct AuditOptions {
  std::string path;
  int64_t max_size_mb = 100;  // --audit-log-maxsize (0: never rotate)
  int max_backups = 10;       // --audit-log-maxbackup (0: keep none)
  // Tests: rotate at this many bytes instead of max_size_mb MiB.
  int64_t max_size_bytes_override = 0;
};

class AuditLog {
 public:
  static absl::StatusOr<std::unique_ptr<AuditLog>> Open(AuditOptions opts);
  ~AuditLog();
  // Appends `event` as one line (flushed).
  void Write(const api::Json& event);

 private:
  explicit AuditLog(AuditOptions opts) : opts_(std::move(opts)) {}
  void RotateLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status OpenLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  AuditOptions opts_;
  absl::Mutex mu_;
  std::FILE* f_ ABSL_GUARDED_BY(mu_) = nullptr;
  int64_t size_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace batchd::auth
