#include "agent/internal/security.h"

#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "api/json_access.h"

namespace batchd::agent::internal {

using api::Json;

namespace {

std::optional<int64_t> IntAt(const Json& sc, const char* field) {
  const Json* v = api::FindMember(sc, field);
  if (v == nullptr || !v->is_number_integer()) return std::nullopt;
  return v->get<int64_t>();
}

std::optional<bool> BoolAt(const Json& sc, const char* field) {
  const Json* v = api::FindMember(sc, field);
  if (v == nullptr || !v->is_boolean()) return std::nullopt;
  return v->get<bool>();
}

// The kubelet's suffix: (pod: "<name>_<ns>(<uid>)", container: <c>).
std::string Where(const Json& pod, const Json& container) {
  const Json& m = api::MemberObject(pod, "metadata");
  return absl::StrCat("(pod: \"", api::CopyStringMember(m, "name"), "_",
                      api::CopyStringMember(m, "namespace"), "(",
                      api::CopyStringMember(m, "uid"), ")\", container: ",
                      api::CopyStringMember(container, "name"), ")");
}

void AddGroup(std::vector<int64_t>& groups, int64_t g) {
  if (g >= 0 && std::find(groups.begin(), groups.end(), g) == groups.end()) groups.push_back(g);
}

}  // namespace

std::optional<UserGroups> LookupUserGroups(int64_t uid) {
  if (uid < 0) return std::nullopt;
  struct passwd pw;
  struct passwd* found = nullptr;
  std::vector<char> buf(16384);
  if (getpwuid_r(static_cast<uid_t>(uid), &pw, buf.data(), buf.size(), &found) != 0 ||
      found == nullptr) {
    return std::nullopt;
  }
  UserGroups out{.gid = pw.pw_gid, .groups = {}};
  int n = 64;
  std::vector<gid_t> groups(static_cast<size_t>(n));
  if (getgrouplist(pw.pw_name, pw.pw_gid, groups.data(), &n) < 0 && n > 64 && n <= 65536) {
    groups.resize(static_cast<size_t>(n));
    if (getgrouplist(pw.pw_name, pw.pw_gid, groups.data(), &n) < 0) n = 0;
  }
  for (int i = 0; i < n && i < static_cast<int>(groups.size()); ++i) out.groups.push_back(groups[i]);
  return out;
}

UserGroupsCache::UserGroupsCache(Clock& clock, absl::Duration ttl, Lookup lookup, Stamp stamp,
                                 size_t max_entries)
    : clock_(clock),
      ttl_(ttl),
      lookup_(std::move(lookup)),
      stamp_(std::move(stamp)),
      max_entries_(std::max<size_t>(max_entries, 1)) {}

std::optional<UserGroups> UserGroupsCache::Get(int64_t uid) {
  const std::string stamp = stamp_ ? stamp_() : std::string();
  const absl::Time now = clock_.Now();
  {
    absl::MutexLock lock(&mu_);
    auto it = entries_.find(uid);
    if (it != entries_.end() && it->second.stamp == stamp && now - it->second.fetched < ttl_ &&
        now >= it->second.fetched) {
      return it->second.groups;
    }
  }
  // Looked up outside the lock: NSS may be slow, and two pods asking at
  // once both looking up is harmless.
  std::optional<UserGroups> groups = lookup_(uid);
  absl::MutexLock lock(&mu_);
  if (!entries_.contains(uid) && entries_.size() >= max_entries_) {
    auto oldest = entries_.begin();
    for (auto it = entries_.begin(); it != entries_.end(); ++it) {
      if (it->second.fetched < oldest->second.fetched) oldest = it;
    }
    entries_.erase(oldest);
  }
  entries_[uid] = Entry{.groups = groups, .fetched = now, .stamp = stamp};
  return groups;
}

size_t UserGroupsCache::size() const {
  absl::MutexLock lock(&mu_);
  return entries_.size();
}

std::string PasswdGroupStamp() {
  std::string out;
  for (const char* path : {"/etc/passwd", "/etc/group", "/etc/nsswitch.conf"}) {
    struct stat st {};
    if (stat(path, &st) != 0) {
      absl::StrAppend(&out, "-;");
      continue;
    }
    absl::StrAppend(&out, st.st_mtim.tv_sec, ".", st.st_mtim.tv_nsec, ":", st.st_size, ":",
                    st.st_ino, ";");
  }
  return out;
}

absl::StatusOr<ContainerIdentity> ResolveContainerIdentity(const Json& pod, const Json& container,
                                                           const NodeIdentity& node) {
  const Json& psc = api::MemberObject(api::MemberObject(pod, "spec"), "securityContext");
  const Json& csc = api::MemberObject(container, "securityContext");
  std::optional<int64_t> run_as_user = IntAt(csc, "runAsUser");
  if (!run_as_user) run_as_user = IntAt(psc, "runAsUser");
  std::optional<int64_t> run_as_group = IntAt(csc, "runAsGroup");
  if (!run_as_group) run_as_group = IntAt(psc, "runAsGroup");
  std::optional<bool> non_root = BoolAt(csc, "runAsNonRoot");
  if (!non_root) non_root = BoolAt(psc, "runAsNonRoot");
  const std::optional<int64_t> fs_group = IntAt(psc, "fsGroup");
  std::vector<int64_t> supplemental;
  for (const Json& g : api::MemberArray(psc, "supplementalGroups")) {
    if (g.is_number_integer()) supplemental.push_back(g.get<int64_t>());
  }
  const bool strict = api::StringMember(psc, "supplementalGroupsPolicy") == "Strict";

  ContainerIdentity id;
  const Json& caps = api::MemberObject(csc, "capabilities");
  for (const Json& c : api::MemberArray(caps, "drop")) {
    if (c.is_string() && c.get<std::string>() == "ALL") id.drop_all_capabilities = true;
  }
  id.no_new_privs = BoolAt(csc, "allowPrivilegeEscalation") == std::optional<bool>(false);

  const int64_t effective_uid =
      run_as_user ? *run_as_user : (node.agent_is_root ? node.pod_uid : node.agent_uid);
  if (non_root.value_or(false) && effective_uid == 0) {
    return absl::FailedPreconditionError(
        run_as_user ? absl::StrCat("container's runAsUser breaks non-root policy ",
                                   Where(pod, container))
                    : absl::StrCat("container has runAsNonRoot and image will run as root ",
                                   Where(pod, container)));
  }
  if (!node.agent_is_root && node.agent_uid < 0) return id;  // identity not managed (tests)
  if (!node.agent_is_root) {
    // The agent cannot switch users: anything but its own identity is refused.
    auto refuse = [&](const std::string& what) {
      return absl::FailedPreconditionError(absl::StrCat(
          what, " cannot be honoured: the node agent does not run as root (it runs as uid ",
          node.agent_uid, ", gid ", node.agent_gid, ") and runs every container as itself ",
          Where(pod, container)));
    };
    if (run_as_user && *run_as_user != node.agent_uid) {
      return refuse(absl::StrCat("runAsUser ", *run_as_user));
    }
    if (run_as_group && *run_as_group != node.agent_gid) {
      return refuse(absl::StrCat("runAsGroup ", *run_as_group));
    }
    if (fs_group && *fs_group != node.agent_gid) return refuse(absl::StrCat("fsGroup ", *fs_group));
    for (int64_t g : supplemental) {
      if (g != node.agent_gid) return refuse(absl::StrCat("supplementalGroups ", g));
    }
    return id;  // uid -1: the shim's own
  }
  id.uid = effective_uid;
  std::optional<UserGroups> entry;
  if (!run_as_user) {
    entry = UserGroups{.gid = node.pod_gid, .groups = {}};
    if (node.lookup_uid) {
      if (std::optional<UserGroups> e = node.lookup_uid(node.pod_uid)) entry = e;
    }
  } else if (node.lookup_uid) {
    entry = node.lookup_uid(*run_as_user);
  }
  // Without runAsGroup: the user's primary group when it has a passwd
  // entry, else the pod user's group (never root's group by accident).
  id.gid = run_as_group ? *run_as_group
           : entry      ? entry->gid
           : effective_uid == 0 ? 0
                                : node.pod_gid;
  AddGroup(id.groups, id.gid);
  if (fs_group) AddGroup(id.groups, *fs_group);
  for (int64_t g : supplemental) AddGroup(id.groups, g);
  if (!strict && entry) {
    for (int64_t g : entry->groups) AddGroup(id.groups, g);
  }
  return id;
}

std::pair<int64_t, int64_t> PodOwner(const Json& pod, const NodeIdentity& node) {
  if (!node.agent_is_root) return {-1, -1};
  const Json& spec = api::MemberObject(pod, "spec");
  const Json& psc = api::MemberObject(spec, "securityContext");
  std::optional<int64_t> uid = IntAt(psc, "runAsUser");
  std::optional<int64_t> gid = IntAt(psc, "runAsGroup");
  if (!uid) {
    for (const char* list : {"initContainers", "containers"}) {
      for (const Json& c : api::MemberArray(spec, list)) {
        const Json& csc = api::MemberObject(c, "securityContext");
        if (!uid) {
          uid = IntAt(csc, "runAsUser");
          if (uid && !gid) gid = IntAt(csc, "runAsGroup");
        }
      }
    }
  }
  if (!uid) {
    uid = node.pod_uid;
    if (!gid) gid = node.pod_gid;
  }
  if (!gid && node.lookup_uid) {
    if (std::optional<UserGroups> e = node.lookup_uid(*uid)) gid = e->gid;
  }
  if (const std::optional<int64_t> fs = IntAt(psc, "fsGroup")) gid = fs;
  if (!gid) gid = *uid == 0 ? 0 : node.pod_gid;
  return {*uid, *gid};
}

}  // namespace batchd::agent::internal
