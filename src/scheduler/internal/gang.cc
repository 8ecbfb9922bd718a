#include "scheduler/internal/gang.h"

#include "absl/strings/str_cat.h"
#include "api/json_access.h"
#include "api/meta/object_meta.h"

namespace batchd::scheduler::internal {

using api::Json;

std::string PodGroupPolicyKey(const std::string& ns, const std::string& name) {
  return absl::StrCat("pg/", ns, "/", name);
}

std::string WorkloadPolicyKey(const std::string& ns, const std::string& name) {
  return absl::StrCat("wl/", ns, "/", name);
}

std::string GroupKeyOf(const Json& pod) {
  const Json& spec = api::Member(pod, "spec");
  const Json* group = api::FindMember(spec, "schedulingGroup");
  if (group != nullptr && group->is_object()) {
    std::string name = api::CopyStringMember(*group, "podGroupName");
    if (!name.empty()) return PodGroupPolicyKey(api::meta::GetNamespace(pod), name);
  }
  const Json* ref = api::FindMember(spec, "workloadRef");
  if (ref != nullptr && ref->is_object()) {
    std::string name = api::CopyStringMember(*ref, "name");
    if (!name.empty()) {
      // '/' is in none of the names, so the key is unambiguous.
      return absl::StrCat(WorkloadPolicyKey(api::meta::GetNamespace(pod), name), "/",
                          api::CopyStringMember(*ref, "podGroup"), "/",
                          api::CopyStringMember(*ref, "podGroupReplicaKey"));
    }
  }
  return "";
}

std::optional<GroupPolicy> PolicyOf(const GroupState& g,
                                    const absl::flat_hash_map<std::string, PolicyObject>& objects) {
  auto it = objects.find(g.policy_key);
  if (it == objects.end()) return std::nullopt;
  if (g.is_pod_group) return it->second.pod_group;
  auto t = it->second.templates.find(g.pod_group);
  if (t == it->second.templates.end()) return std::nullopt;
  return t->second;
}

GangAttempt PlaceGang(Cache& cache, const std::vector<std::shared_ptr<const PodInfo>>& members,
                      int bound, int min_count) {
  GangAttempt a;
  for (const auto& pod : members) {
    ScheduleResult r = cache.Schedule(*pod);
    if (r.node.empty()) {
      if (a.fit_message.empty()) a.fit_message = r.error.Message();
      a.unplaced.push_back(pod);
      continue;
    }
    cache.AddPod(*pod, r.node, /*assumed=*/true);
    a.placed.emplace_back(pod, r.node);
  }
  a.placeable = static_cast<int>(a.placed.size());
  a.admitted = min_count <= 0 || a.placeable + bound >= min_count;
  if (!a.admitted) {
    for (const auto& [pod, node] : a.placed) {
      cache.ForgetAssumed(pod->key);
      a.unplaced.push_back(pod);
    }
    a.placed.clear();
  }
  return a;
}

std::string GangShortfallMessage(int placeable, int bound, int total, int min_count) {
  return absl::StrCat(placeable + bound, " of ", total, " pods can be placed, minCount is ",
                      min_count);
}

std::string FormatGoDuration(absl::Duration d) {
  if (d < absl::Seconds(1) || d != absl::Trunc(d, absl::Seconds(1))) {
    return absl::FormatDuration(d);
  }
  const int64_t total = absl::ToInt64Seconds(d);
  const int64_t h = total / 3600, m = (total % 3600) / 60, s = total % 60;
  if (h > 0) return absl::StrCat(h, "h", m, "m", s, "s");
  if (m > 0) return absl::StrCat(m, "m", s, "s");
  return absl::StrCat(s, "s");
}

std::string GangTimeoutMessage(absl::Duration timeout) {
  return absl::StrCat("rejected due to timeout after waiting ", FormatGoDuration(timeout),
                      " at plugin GangScheduling");
}

}  // namespace batchd::scheduler::internal
