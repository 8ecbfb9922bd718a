#include "agent/internal/config_volumes.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "api/json_access.h"

namespace batchd::agent::internal {

namespace {

namespace fs = std::filesystem;
using api::Json;

// Each file's path: relative, no "..", no empty or "." parts.
bool SafeRelativePath(const std::string& p) {
  if (p.empty() || p.front() == '/') return false;
  for (absl::string_view part : absl::StrSplit(p, '/')) {
    if (part.empty() || part == "." || part == "..") return false;
  }
  return true;
}

int ModeOf(const Json* mode, int fallback) {
  if (mode == nullptr || !mode->is_number_integer()) return fallback;
  const int64_t m = mode->get<int64_t>();
  return m >= 0 && m <= 0777 ? static_cast<int>(m) : fallback;
}

absl::Status Errno(const std::string& what, const std::string& path) {
  return absl::InternalError(absl::StrCat(what, " ", path, ": ", std::strerror(errno)));
}

}  // namespace

bool IsConfigVolume(const Json& volume) {
  for (const char* src : {"secret", "configMap"}) {
    const Json* s = api::FindMember(volume, src);
    if (s != nullptr && s->is_object()) return true;
  }
  return false;
}

absl::StatusOr<std::vector<ConfigFile>> ConfigVolumeFiles(const Json& v, const std::string& ns,
                                                          const ObjectLookup& lookup) {
  const Json* secret_src = api::FindMember(v, "secret");
  const bool secret = secret_src != nullptr && secret_src->is_object();
  const Json& src = secret ? *secret_src : api::MemberObject(v, "configMap");
  const std::string name = api::CopyStringMember(src, secret ? "secretName" : "name");
  const bool optional = api::BoolMember(src, "optional");
  const int default_mode = ModeOf(api::FindMember(src, "defaultMode"), 0644);
  std::vector<ConfigFile> out;
  absl::StatusOr<std::optional<Json>> obj =
      lookup ? lookup(secret ? "secrets" : "configmaps", ns, name)
             : absl::StatusOr<std::optional<Json>>(std::optional<Json>());
  if (!obj.ok()) return obj.status();
  if (!obj->has_value()) {
    if (optional) return out;
    return absl::NotFoundError(absl::StrCat(secret ? "secret" : "configmap", " \"", name,
                                            "\" not found"));
  }
  // key -> decoded value.
  std::map<std::string, std::string> data;
  auto add_base64 = [&](const Json& m) -> absl::Status {
    for (auto it = m.begin(); it != m.end(); ++it) {
      std::string decoded;
      if (!it->is_string() || !absl::Base64Unescape(it->get<std::string>(), &decoded)) {
        return absl::InvalidArgumentError(absl::StrCat("key ", it.key(), " of ", name,
                                                       " is not base64"));
      }
      data[it.key()] = std::move(decoded);
    }
    return absl::OkStatus();
  };
  const Json& o = **obj;
  if (secret) {
    if (absl::Status s = add_base64(api::MemberObject(o, "data")); !s.ok()) return s;
  } else {
    const Json& d = api::MemberObject(o, "data");
    for (auto it = d.begin(); it != d.end(); ++it) {
      if (it->is_string()) data[it.key()] = it->get<std::string>();
    }
    if (absl::Status s = add_base64(api::MemberObject(o, "binaryData")); !s.ok()) return s;
  }
  const Json& items = api::MemberArray(src, "items");
  if (items.empty()) {
    for (auto& [k, value] : data) out.push_back({k, std::move(value), default_mode});
  } else {
    for (const Json& item : items) {
      const std::string key = api::CopyStringMember(item, "key");
      auto it = data.find(key);
      if (it == data.end()) {
        if (optional) continue;
        return absl::NotFoundError(
            secret ? absl::StrCat("references non-existent secret key: ", key)
                   : absl::StrCat("configmap references non-existent config key: ", key));
      }
      out.push_back({api::CopyStringMember(item, "path"), it->second,
                     ModeOf(api::FindMember(item, "mode"), default_mode)});
    }
  }
  for (const ConfigFile& f : out) {
    if (!SafeRelativePath(f.path)) {
      return absl::InvalidArgumentError(absl::StrCat("invalid path ", f.path));
    }
  }
  return out;
}

absl::Status WriteConfigVolume(const std::string& dir, const std::vector<ConfigFile>& files,
                               int64_t uid, int64_t gid) {
  std::error_code ec;
  if (fs::exists(dir, ec)) return absl::OkStatus();
  const fs::path final_dir(dir);
  fs::create_directories(final_dir.parent_path(), ec);
  if (ec) return absl::InternalError(absl::StrCat("mkdir ", final_dir.parent_path().string(), ": ",
                                                  ec.message()));
  // The pod's directory: reachable, not listable, by the pod's user.
  chmod(final_dir.parent_path().c_str(), 0711);
  const std::string tmp = dir + ".tmp";
  fs::remove_all(tmp, ec);
  auto own = [&](const std::string& p) {
    if (uid >= 0 || gid >= 0) (void)!lchown(p.c_str(), static_cast<uid_t>(uid), static_cast<gid_t>(gid));
  };
  if (mkdir(tmp.c_str(), 0750) != 0) return Errno("mkdir", tmp);
  own(tmp);
  for (const ConfigFile& f : files) {
    if (!SafeRelativePath(f.path)) return absl::InvalidArgumentError("invalid path " + f.path);
    const fs::path p = fs::path(tmp) / f.path;
    // Parent directories of nested paths ("a/b"), the pod's.
    fs::path parent = p.parent_path();
    std::vector<fs::path> made;
    for (fs::path q = parent; q != fs::path(tmp) && !fs::exists(q, ec); q = q.parent_path()) {
      made.push_back(q);
    }
    for (auto it = made.rbegin(); it != made.rend(); ++it) {
      if (mkdir(it->c_str(), 0755) != 0 && errno != EEXIST) return Errno("mkdir", it->string());
      own(it->string());
    }
    int fd = open(p.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) return Errno("create", p.string());
    size_t done = 0;
    while (done < f.content.size()) {
      ssize_t n = write(fd, f.content.data() + done, f.content.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        close(fd);
        return Errno("write", p.string());
      }
      done += static_cast<size_t>(n);
    }
    if (uid >= 0 || gid >= 0) (void)!fchown(fd, static_cast<uid_t>(uid), static_cast<gid_t>(gid));
    if (fchmod(fd, static_cast<mode_t>(f.mode)) != 0) {
      close(fd);
      return Errno("chmod", p.string());
    }
    close(fd);
  }
  if (rename(tmp.c_str(), dir.c_str()) != 0) return Errno("rename", tmp);
  return absl::OkStatus();
}

}  // namespace batchd::agent::internal
