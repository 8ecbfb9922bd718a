// ScopedTempDir: a fresh directory of its own for one test, removed with
// everything in it when the object goes. Tests run as parallel processes
// (ctest -j), so a test that writes files must never share a fixed path
// under the system temp dir with another.
#pragma once

#include <stdlib.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <system_error>

namespace batchd {

class ScopedTempDir {
 public:
  // `prefix` names the directory for whoever finds it left behind after a
  // crash: <tmp>/<prefix>.XXXXXX.
  explicit ScopedTempDir(const std::string& prefix = "batchd-test") {
    std::error_code ec;
    std::filesystem::path base = std::filesystem::temp_directory_path(ec);
    if (ec) base = "/tmp";
    std::string tmpl = (base / (prefix + ".XXXXXX")).string();
    if (mkdtemp(tmpl.data()) == nullptr) {
      std::perror(("mkdtemp " + tmpl).c_str());
      std::abort();
    }
    path_ = std::move(tmpl);
  }
  ~ScopedTempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  ScopedTempDir(const ScopedTempDir&) = delete;
  ScopedTempDir& operator=(const ScopedTempDir&) = delete;

  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace batchd
