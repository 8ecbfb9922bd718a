// Who a pod's containers run as (docs/security.md "Pods"): the kubelet's
// merge of the pod's and each container's securityContext (container wins
// for runAsUser, runAsGroup, runAsNonRoot; supplementalGroups and fsGroup
// are pod-level) over the node's default: a root agent runs pods without
// runAsUser as its dedicated unprivileged pod user; a non-root agent runs
// them as itself and refuses any other identity. runAsNonRoot is checked
// as the kubelet does (CreateContainerConfigError with its message).
//
// Pure functions (thread-compatible), but for UserGroupsCache (thread-safe).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "api/field_error.h"
#include "common/clock.h"

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

// What LookupUserGroups answered, kept for the next pod (#16: through
// nss-systemd's varlink call it cost a sixth of the agent thread's CPU per
// pod start). An answer is reused while the host's account files keep their
// change stamp (PasswdGroupStamp: /etc/passwd, /etc/group,
// /etc/nsswitch.conf) and for at most `ttl`, so an edit of the files is seen
// by the next pod and a change through another NSS source (systemd-userdb,
// LDAP) within `ttl`, as a runtime that resolves the user at each container
// start would see it. At most `max_entries` uids (the pod user, and pods'
// runAsUser values): when full, the oldest answer goes. Thread-safe.
class UserGroupsCache {
 public:
  using Lookup = std::function<std::optional<UserGroups>(int64_t uid)>;
  using Stamp = std::function<std::string()>;
  UserGroupsCache(Clock& clock, absl::Duration ttl, Lookup lookup, Stamp stamp,
                  size_t max_entries = 64);
  std::optional<UserGroups> Get(int64_t uid);
  size_t size() const;

 private:
  struct Entry {
    std::optional<UserGroups> groups;
    absl::Time fetched;
    std::string stamp;
  };
  Clock& clock_;
  const absl::Duration ttl_;
  const Lookup lookup_;
  const Stamp stamp_;
  const size_t max_entries_;
  mutable absl::Mutex mu_;
  std::map<int64_t, Entry> entries_ ABSL_GUARDED_BY(mu_);
};

// The modification times (ns) and sizes of /etc/passwd, /etc/group and
// /etc/nsswitch.conf, as one string: what UserGroupsCache compares.
std::string PasswdGroupStamp();

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
