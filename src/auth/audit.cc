#include "auth/audit.h"

#include <sys/stat.h>

#include <filesystem>

#include "absl/strings/str_cat.h"

namespace batchd::auth {

absl::StatusOr<std::unique_ptr<AuditLog>> AuditLog::Open(AuditOptions opts) {
  std::unique_ptr<AuditLog> log(new AuditLog(std::move(opts)));
  absl::MutexLock lock(&log->mu_);
  if (auto st = log->OpenLocked(); !st.ok()) return st;
  return log;
}

AuditLog::~AuditLog() {
  absl::MutexLock lock(&mu_);
  if (f_ && f_ != stdout) std::fclose(f_);
}

absl::Status AuditLog::OpenLocked() {
  if (opts_.path == "-") {
    f_ = stdout;
    return absl::OkStatus();
  }
  std::error_code ec;
  auto parent = std::filesystem::path(opts_.path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  mode_t old = umask(077);
  f_ = std::fopen(opts_.path.c_str(), "a");
  umask(old);
  if (!f_) return absl::InvalidArgumentError("--audit-log-path: cannot open " + opts_.path);
  size_ = static_cast<int64_t>(std::filesystem::file_size(opts_.path, ec));
  if (ec) size_ = 0;
  return absl::OkStatus();
}

void AuditLog::RotateLocked() {
  std::fclose(f_);
  f_ = nullptr;
  std::error_code ec;
  if (opts_.max_backups <= 0) {
    std::filesystem::remove(opts_.path, ec);
  } else {
    std::filesystem::remove(absl::StrCat(opts_.path, ".", opts_.max_backups), ec);
    for (int i = opts_.max_backups - 1; i >= 1; --i) {
      std::filesystem::rename(absl::StrCat(opts_.path, ".", i),
                              absl::StrCat(opts_.path, ".", i + 1), ec);
    }
    std::filesystem::rename(opts_.path, opts_.path + ".1", ec);
  }
  (void)OpenLocked();
}

void AuditLog::Write(const api::Json& event) {
  std::string line = event.dump(-1, ' ', false, api::Json::error_handler_t::replace);
  line.push_back('\n');
  absl::MutexLock lock(&mu_);
  if (!f_) {
    if (!OpenLocked().ok()) return;
  }
  int64_t limit = opts_.max_size_bytes_override > 0 ? opts_.max_size_bytes_override
                                                    : opts_.max_size_mb * (int64_t{1} << 20);
  if (f_ != stdout && limit > 0 && size_ > 0 && size_ + static_cast<int64_t>(line.size()) > limit) {
    RotateLocked();
    if (!f_) return;
  }
  std::fwrite(line.data(), 1, line.size(), f_);
  std::fflush(f_);
  size_ += static_cast<int64_t>(line.size());
}

}  // namespace batchd::auth
