// Who a pod's containers run as (docs/security.md "Pods"): the kubelet's
// merge of the pod's and each container's securityContext (container wins
// for runAsUser, runAsGroup, runAsNonRoot; supplementalGroups and fsGroup
// are pod-level) over the node's default: a root agent runs pods without
// runAsUser as its dedicated unprivileged pod user; a non-root agent runs
// them as itself and refuses any other identity. runAsNonRoot is checked
// as the kubelet does (CreateContainerConfigError with its message).
//
// Pure functions; thread-compatible.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "api/field_error.h"

namespace batchd::agent::internal {

// A user's primary group and the groups /etc/group lists it in (getgrouplist).
struct UserGroups {
  int64_t gid = -1;
  std::vector<int64_t> groups;
};

struct NodeIdentity {
  // The agent runs as root: it can (and must) switch pods to another user.
  bool agent_is_root = false;
  int64_t agent_uid = -1;
  int64_t agent_gid = -1;
  // The dedicated pod user (root agents): name, uid, primary gid, groups.
  std::string pod_user;
  int64_t pod_uid = -1;
  int64_t pod_gid = -1;
  // The passwd entry of a uid (nullopt when it has none); null = never found.
  std::function<std::optional<UserGroups>(int64_t uid)> lookup_uid;
};

struct ContainerIdentity {
  int64_t uid = -1;  // -1: the shim's own (non-root agent)
  int64_t gid = -1;
  std::vector<int64_t> groups;
  bool no_new_privs = false;
  bool drop_all_capabilities = false;
};

// The host's passwd/group view of `uid` (getpwuid_r + getgrouplist); nullopt
// when it has no passwd entry.
std::optional<UserGroups> LookupUserGroups(int64_t uid);

// The identity of `container` in `pod`. FailedPrecondition with the kubelet's
// text (CreateContainerConfigError) when runAsNonRoot is violated or a
// non-root agent is asked for another identity.
absl::StatusOr<ContainerIdentity> ResolveContainerIdentity(const api::Json& pod,
                                                           const api::Json& container,
                                                           const NodeIdentity& node);

// The owner of the pod's working directory, emptyDirs and logs: the
// pod-level runAsUser, else the first container's user; the group is
// fsGroup when set, else that user's group. -1/-1 for a non-root agent.
std::pair<int64_t, int64_t> PodOwner(const api::Json& pod, const NodeIdentity& node);

}  // namespace batchd::agent::internal
