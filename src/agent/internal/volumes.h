// A pod's volumes as the node agent provides them (docs/api.md "Volumes"):
// emptyDir (a directory in the pod's sandbox, deleted with the pod; medium
// Memory is a tmpfs where the pod is isolated; sizeLimit enforced by the
// shim), hostPath (the host path itself, with the kubelet's type checks:
// DirectoryOrCreate and FileOrCreate create it), and persistentVolumeClaim
// (a node-local directory per claim, `<claims_root>/<namespace>/<claimName>`,
// created on first use and kept after the pod), secret and configMap
// (files written when the pod starts, config_volumes.h). Every other volume
// type is refused by the API, and an error here otherwise.
//
// Thread-compatible: the checks touch the host file system (creating
// DirectoryOrCreate / FileOrCreate paths and claim directories).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/internal/pod_spec.h"
#include "agent/runtime/pod_runtime.h"
#include "api/field_error.h"

namespace batchd::agent::internal {

struct PodVolumes {
  std::vector<VolumeSpec> volumes;
  // Container name -> its mounts (init and app containers).
  std::map<std::string, std::vector<MountSpec>> mounts;
  bool any_mount() const;
};

// The kubelet's hostPath type check of `path` for `type` ("" checks
// nothing); creates the path for DirectoryOrCreate / FileOrCreate, owned by
// `uid`:`gid` (the pod's user; -1 = unchanged) so a non-root pod can use
// what it asked to be created (the kubelet leaves it root's: pods there
// usually run as root).
// FailedPrecondition "hostPath type check failed: PATH is not a directory"
// (..."a file", "a socket file", ...).
absl::Status CheckHostPath(const std::string& path, const std::string& type, int64_t uid = -1,
                           int64_t gid = -1);

// The volumes and mounts of `pod` (REQUIRES: a Pod object). Errors read as
// the kubelet's FailedMount messages: `MountVolume.SetUp failed for volume
// "x" : hostPath type check failed: /p is not a directory`.
// New claim directories (and the hostPaths it creates) go to `uid`:`gid`
// (the pod's owner; -1 = unchanged), claim directories with mode 0770.
// Secret and configMap volumes (config_volumes.h) are written under
// `config->dir`/<volume name> and mounted read-only; without `config` they
// are refused.
struct ConfigVolumes {
  std::string dir;  // <config volumes root>/<pod uid>
  ObjectLookup lookup;
};
absl::StatusOr<PodVolumes> ResolveVolumes(const api::Json& pod, const std::string& claims_root,
                                          int64_t uid = -1, int64_t gid = -1,
                                          const ConfigVolumes* config = nullptr);

// Removes the directories of `pod`'s persistentVolumeClaim volumes under
// `claims_root` (api/core/v1/claim_deletion.h); missing ones are fine.
absl::Status DeleteClaimDirectories(const api::Json& pod, const std::string& claims_root);

}  // namespace batchd::agent::internal
