// Secret and configMap volumes as the node agent provides them: the
// object's keys (or the listed `items`) become files in a directory of the
// agent's, `<root>/<pod uid>/<volume>/`, owned by the pod's user and group
// with `mode` / `defaultMode` (default 0644), bind-mounted read-only at the
// mount path (or named by $BATCHD_VOLUME_<NAME> without pod isolation).
// Written once, when the pod starts: later changes of the Secret or
// ConfigMap do not reach a running pod (as a subPath mount in Kubernetes).
// `optional: true` makes a missing object an empty volume and a missing
// item key no file. Errors read as the kubelet's FailedMount texts and name
// keys, never values.
//
// Thread-compatible (touches the host file system).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/internal/pod_spec.h"

namespace batchd::agent::internal {

struct ConfigFile {
  std::string path;     // relative to the volume's directory
  std::string content;  // decoded
  int mode = 0644;
};

// True for a volume with a `secret` or `configMap` source.
bool IsConfigVolume(const api::Json& volume);

// The files of volume `v` in namespace `ns`, objects read through `lookup`.
absl::StatusOr<std::vector<ConfigFile>> ConfigVolumeFiles(const api::Json& v,
                                                          const std::string& ns,
                                                          const ObjectLookup& lookup);

// Creates `dir` with `files` (owned by uid:gid; -1 = unchanged), unless it
// exists already (a restarted agent re-adopting the pod: the files stay as
// they were). Written under `dir`.tmp first and renamed, so `dir` is never
// half written. Refuses paths leaving the directory.
absl::Status WriteConfigVolume(const std::string& dir, const std::vector<ConfigFile>& files,
                               int64_t uid, int64_t gid);

}  // namespace batchd::agent::internal
