// The pod's sandbox as the shim sets it up before its first container:
// emptyDir directories, and — for isolated pods (root agents) — a private
// mount namespace and a UTS namespace of the shim's own (its containers
// inherit them and outlive agent restarts with it): the pod's host name, its
// hosts file bind-mounted over /etc/hosts, tmpfs emptyDirs for medium
// Memory. The network stays the node's.
//
// Thread-safety: called once by the single-threaded shim.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "agent/runtime/pod_files.h"

namespace batchd::agent {

// Creates <pod-dir>/volumes/<name> for every emptyDir volume.
absl::Status PrepareEmptyDirs(const ShimConfig& config, const PodPaths& paths);

// Enters the namespaces of an isolated pod (see above). REQUIRES: the
// calling process is single-threaded and has CAP_SYS_ADMIN.
absl::Status EnterPodNamespaces(const ShimConfig& config, const PodPaths& paths);

// Bytes allocated under `dir` (st_blocks, as `du`), not following symbolic
// links or crossing into other file systems; the walk stops once the count
// passes `stop_above` and at 64 directory levels.
int64_t DirUsage(const std::string& dir, int64_t stop_above);

}  // namespace batchd::agent
