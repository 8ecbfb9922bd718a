#include "agent/internal/volumes.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "agent/internal/config_volumes.h"
#include "api/json_access.h"
#include "api/resource/quantity.h"
#include "common/string_view.h"

namespace batchd::agent::internal {
namespace {

namespace fs = std::filesystem;
using api::Json;

absl::Status TypeCheckFailed(const std::string& path, const char* what) {
  return absl::FailedPreconditionError(
      absl::StrCat("hostPath type check failed: ", path, " is not ", what));
}

absl::Status MountFailed(std::string_view volume, const absl::Status& why) {
  return absl::FailedPreconditionError(
      absl::StrCat("MountVolume.SetUp failed for volume \"", Sv(volume), "\" : ", why.message()));
}

// A claim directory name: a DNS subdomain (as the API checks), never a path.
bool SafeName(std::string_view s) {
  if (s.empty() || s == "." || s == "..") return false;
  for (char c : s) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.')) return false;
  }
  return true;
}

// Gives what the agent created for a pod to the pod's user (-1: unchanged).
void GiveTo(const std::string& path, int64_t uid, int64_t gid) {
  if (uid < 0 && gid < 0) return;
  (void)!lchown(path.c_str(), static_cast<uid_t>(uid), static_cast<gid_t>(gid));
}

absl::StatusOr<VolumeSpec> Resolve(const Json& v, std::string_view ns,
                                   const std::string& claims_root, int64_t uid, int64_t gid,
                                   const ConfigVolumes* config) {
  VolumeSpec out;
  out.name = std::string(api::StringMember(v, "name"));
  if (IsConfigVolume(v) && config != nullptr) {
    if (!SafeName(out.name)) {
      return MountFailed(out.name, absl::InvalidArgumentError("invalid volume name"));
    }
    absl::StatusOr<std::vector<ConfigFile>> files =
        ConfigVolumeFiles(v, std::string(ns), config->lookup);
    if (!files.ok()) return MountFailed(out.name, files.status());
    out.type = VolumeSpec::Type::kHost;
    out.host_path = absl::StrCat(config->dir, "/", out.name);
    if (absl::Status s = WriteConfigVolume(out.host_path, *files, uid, gid); !s.ok()) {
      return MountFailed(out.name, s);
    }
    return out;
  }
  if (const Json* ed = api::FindMember(v, "emptyDir"); ed != nullptr && ed->is_object()) {
    out.type = VolumeSpec::Type::kEmptyDir;
    out.memory = api::StringMember(*ed, "medium") == "Memory";
    if (const Json* limit = api::FindMember(*ed, "sizeLimit"); limit && !limit->is_null()) {
      absl::StatusOr<api::Quantity> q = api::Quantity::FromJson(*limit);
      if (!q.ok()) return MountFailed(out.name, q.status());
      out.size_limit_bytes = q->Value();
      out.size_limit_text = q->String();
    }
    return out;
  }
  if (const Json* hp = api::FindMember(v, "hostPath"); hp != nullptr && hp->is_object()) {
    out.type = VolumeSpec::Type::kHost;
    out.host_path = std::string(api::StringMember(*hp, "path"));
    if (absl::Status s = CheckHostPath(out.host_path, std::string(api::StringMember(*hp, "type")),
                                       uid, gid);
        !s.ok()) {
      return MountFailed(out.name, s);
    }
    return out;
  }
  if (const Json* pvc = api::FindMember(v, "persistentVolumeClaim");
      pvc != nullptr && pvc->is_object()) {
    const std::string claim(api::StringMember(*pvc, "claimName"));
    if (!SafeName(claim) || !SafeName(ns)) {
      return MountFailed(out.name, absl::InvalidArgumentError("invalid claim name " + claim));
    }
    out.type = VolumeSpec::Type::kHost;
    out.host_path = absl::StrCat(claims_root, "/", Sv(ns), "/", claim);
    std::error_code ec;
    const bool existed = fs::exists(out.host_path, ec);
    fs::create_directories(out.host_path, ec);
    if (ec) return MountFailed(out.name, absl::InternalError(ec.message()));
    // A new claim directory (or one a root-run pod of an older release
    // left) belongs to the pod's user and group (fsGroup when set).
    struct stat st;
    if (!existed || (uid > 0 && stat(out.host_path.c_str(), &st) == 0 && st.st_uid == 0)) {
      GiveTo(out.host_path, uid, gid);
      if (uid >= 0) chmod(out.host_path.c_str(), 0770);
    }
    return out;
  }
  return MountFailed(out.name, absl::UnimplementedError("this volume type is not supported by "
                                                        "batchd"));
}

}  // namespace

bool PodVolumes::any_mount() const {
  for (const auto& [c, m] : mounts) {
    if (!m.empty()) return true;
  }
  return false;
}

absl::Status CheckHostPath(const std::string& path, const std::string& type, int64_t uid,
                           int64_t gid) {
  struct stat st;
  const bool exists = stat(path.c_str(), &st) == 0;
  if (type.empty()) return absl::OkStatus();
  if (type == "DirectoryOrCreate") {
    if (!exists) {
      std::error_code ec;
      fs::create_directories(path, ec);
      if (ec) return absl::InternalError(absl::StrCat("mkdir ", path, ": ", ec.message()));
      chmod(path.c_str(), 0755);
      GiveTo(path, uid, gid);
      return absl::OkStatus();
    }
    return S_ISDIR(st.st_mode) ? absl::OkStatus() : TypeCheckFailed(path, "a directory");
  }
  if (type == "FileOrCreate") {
    if (!exists) {
      int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
      if (fd < 0) {
        return absl::InternalError(absl::StrCat("create ", path, ": ", std::strerror(errno)));
      }
      close(fd);
      GiveTo(path, uid, gid);
      return absl::OkStatus();
    }
    return S_ISREG(st.st_mode) ? absl::OkStatus() : TypeCheckFailed(path, "a file");
  }
  if (type == "Directory") {
    return exists && S_ISDIR(st.st_mode) ? absl::OkStatus() : TypeCheckFailed(path, "a directory");
  }
  if (type == "File") {
    return exists && S_ISREG(st.st_mode) ? absl::OkStatus() : TypeCheckFailed(path, "a file");
  }
  if (type == "Socket") {
    return exists && S_ISSOCK(st.st_mode) ? absl::OkStatus()
                                          : TypeCheckFailed(path, "a socket file");
  }
  if (type == "CharDevice") {
    return exists && S_ISCHR(st.st_mode) ? absl::OkStatus()
                                         : TypeCheckFailed(path, "a character device");
  }
  if (type == "BlockDevice") {
    return exists && S_ISBLK(st.st_mode) ? absl::OkStatus()
                                         : TypeCheckFailed(path, "a block device");
  }
  return absl::InvalidArgumentError(absl::StrCat("hostPath type \"", type, "\" is not known"));
}

absl::StatusOr<PodVolumes> ResolveVolumes(const Json& pod, const std::string& claims_root,
                                          int64_t uid, int64_t gid, const ConfigVolumes* config) {
  PodVolumes out;
  const Json& spec = api::MemberObject(pod, "spec");
  const std::string_view ns = api::StringMember(api::MemberObject(pod, "metadata"), "namespace");
  std::map<std::string, bool> claim_read_only;  // Volume name -> persistentVolumeClaim.readOnly.
  for (const Json& v : api::MemberArray(spec, "volumes")) {
    absl::StatusOr<VolumeSpec> r = Resolve(v, ns, claims_root, uid, gid, config);
    if (!r.ok()) return r.status();
    if (const Json* pvc = api::FindMember(v, "persistentVolumeClaim"); pvc && pvc->is_object()) {
      claim_read_only[r->name] = api::BoolMember(*pvc, "readOnly");
    }
    if (IsConfigVolume(v)) claim_read_only[r->name] = true;  // as the kubelet mounts them
    out.volumes.push_back(*std::move(r));
  }
  for (const char* list : {"initContainers", "containers"}) {
    for (const Json& c : api::MemberArray(spec, list)) {
      std::vector<MountSpec>& mounts = out.mounts[std::string(api::StringMember(c, "name"))];
      for (const Json& m : api::MemberArray(c, "volumeMounts")) {
        MountSpec ms;
        ms.volume = std::string(api::StringMember(m, "name"));
        ms.mount_path = std::string(api::StringMember(m, "mountPath"));
        ms.sub_path = std::string(api::StringMember(m, "subPath"));
        ms.read_only = api::BoolMember(m, "readOnly") || claim_read_only[ms.volume];
        mounts.push_back(std::move(ms));
      }
    }
  }
  return out;
}

absl::Status DeleteClaimDirectories(const Json& pod, const std::string& claims_root) {
  const std::string_view ns = api::StringMember(api::MemberObject(pod, "metadata"), "namespace");
  for (const Json& v : api::MemberArray(api::MemberObject(pod, "spec"), "volumes")) {
    const Json* pvc = api::FindMember(v, "persistentVolumeClaim");
    if (pvc == nullptr || !pvc->is_object()) continue;
    const std::string_view claim = api::StringMember(*pvc, "claimName");
    if (!SafeName(claim) || !SafeName(ns)) continue;
    std::error_code ec;
    fs::remove_all(absl::StrCat(claims_root, "/", Sv(ns), "/", Sv(claim)), ec);
    if (ec) return absl::InternalError(absl::StrCat("deleting claim ", Sv(claim), ": ", ec.message()));
  }
  return absl::OkStatus();
}

}  // namespace batchd::agent::internal
