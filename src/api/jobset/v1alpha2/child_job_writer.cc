#include "api/jobset/v1alpha2/child_job_writer.h"

#include <cstdio>

#include "absl/strings/str_cat.h"
#include "api/batch/v1/cronjob_writers.h"
#include "api/batch/v1/job_writers.h"
#include "api/core/v1/restart_generation.h"
#include "api/json_access.h"
#include "api/meta/object_meta.h"
#include "boost/uuid/detail/sha1.hpp"
#include "common/string_view.h"

namespace batchd::api::jobset_v1alpha2 {
namespace {

// The position of Job `index` of `rjob` among the Jobs of the replicated
// jobs that `in` accepts, in spec order, and the number of those Jobs.
template <typename Pred>
std::pair<int64_t, int64_t> Position(const JobSetSpecView& spec, std::string_view rjob,
                                     int64_t index, Pred in) {
  int64_t before = 0, total = 0, position = -1;
  for (const ReplicatedJobView& r : spec.replicated_jobs) {
    if (!in(r)) continue;
    if (r.name == rjob) position = before + index;
    before += r.replicas;
    total += r.replicas;
  }
  return {position, total};
}

// Every key both as a label and as an annotation of `meta_holder`
// (a Job or a pod template).
void Inject(Json& meta_holder, const std::vector<std::pair<const char*, std::string>>& entries) {
  for (const auto& [key, value] : entries) {
    meta::SetLabel(meta_holder, key, value);
    meta::SetAnnotation(meta_holder, key, value);
  }
}

// volumeClaimPolicies: a persistentVolumeClaim volume "<claim>-<jobset>"
// named after each claim the pod template mounts (upstream's addVolumes).
void AddClaimVolumes(Json& pod_template, const JobSetView& js) {
  if (js.spec.volume_claims.empty()) return;
  Json& spec = MutableObject(pod_template, "spec");
  for (const VolumeClaimView& claim : js.spec.volume_claims) {
    bool mounted = false;
    for (const char* list : {"initContainers", "containers"}) {
      for (const Json& c : MemberArray(spec, list)) {
        for (const Json& m : MemberArray(c, "volumeMounts")) {
          mounted = mounted || StringMember(m, "name") == claim.name;
        }
      }
    }
    if (!mounted) continue;
    Json& volumes = spec["volumes"];
    if (!volumes.is_array()) volumes = Json::array();
    volumes.push_back({{"name", std::string(claim.name)},
                       {"persistentVolumeClaim",
                        {{"claimName", ClaimName(claim.name, js.meta.name)}}}});
  }
}

}  // namespace

std::string JobKeyHash(std::string_view ns, std::string_view job_name) {
  const std::string input = absl::StrCat(Sv(ns), "/", Sv(job_name));
  boost::uuids::detail::sha1 sha;
  sha.process_bytes(input.data(), input.size());
  boost::uuids::detail::sha1::digest_type digest;
  sha.get_digest(digest);
  char hex[41];
  for (int i = 0; i < 5; ++i) std::snprintf(hex + 8 * i, 9, "%08x", digest[i]);
  return std::string(hex, 40);
}

Json NewChildJob(const Json& jobset, const JobSetView& js, const ReplicatedJobView& rjob,
                 int64_t index) {
  const std::string name = ChildJobName(js.meta.name, rjob.name, index);
  Json job = batch_v1::NewJobFromTemplate(rjob.job_template, name, js.meta.namespace_);
  const auto [global_index, global_replicas] =
      Position(js.spec, rjob.name, index, [](const ReplicatedJobView&) { return true; });
  const auto [group_index, group_replicas] = Position(
      js.spec, rjob.name, index,
      [&](const ReplicatedJobView& r) { return r.group_name == rjob.group_name; });
  std::vector<std::pair<const char*, std::string>> entries = {
      {kJobSetNameKey, std::string(js.meta.name)},
      {kJobSetUidKey, std::string(js.meta.uid)},
      {kReplicatedJobNameKey, std::string(rjob.name)},
      {kRestartsKey, std::to_string(js.status.restarts)},
      {kReplicatedJobReplicasKey, std::to_string(rjob.replicas)},
      {kGlobalReplicasKey, std::to_string(global_replicas)},
      {kJobIndexKey, std::to_string(index)},
      {kJobKey, JobKeyHash(js.meta.namespace_, name)},
      {kJobGlobalIndexKey, std::to_string(global_index)},
      {kGroupNameKey, std::string(rjob.group_name)},
      {kGroupReplicasKey, std::to_string(group_replicas)},
      {kJobGroupIndexKey, std::to_string(group_index)},
  };
  if (js.spec.coordinator) entries.emplace_back(kCoordinatorKey, js.CoordinatorEndpoint());
  Inject(job, entries);
  Json& pod_template = MutableMemberAt(job, {"spec", "template"});
  if (!pod_template.is_object()) pod_template = Json::object();
  Inject(pod_template, entries);
  if (js.spec.enable_dns_hostnames) {
    MutableObject(pod_template, "spec")["subdomain"] = std::string(js.Subdomain());
  }
  // Exclusive placement, as annotations only: the replicated job's own
  // annotation over the JobSet's, each with its level's node-selector
  // strategy annotation.
  const Json none;
  const Json& tmpl_annotations =
      rjob.job_template != nullptr ? MemberAt(*rjob.job_template, {"metadata", "annotations"})
                                   : none;
  for (const Json* annotations :
       {&MemberAt(jobset, {"metadata", "annotations"}), &tmpl_annotations}) {
    if (!annotations->is_object() || !annotations->contains(kExclusiveKey)) continue;
    for (Json* obj : {&job, &pod_template}) {
      meta::SetAnnotation(*obj, kExclusiveKey, StringMember(*annotations, kExclusiveKey));
      if (annotations->contains(kNodeSelectorStrategyKey)) {
        meta::SetAnnotation(*obj, kNodeSelectorStrategyKey,
                            StringMember(*annotations, kNodeSelectorStrategyKey));
      }
    }
  }
  AddClaimVolumes(pod_template, js);
  if (js.spec.InPlaceRestart()) {
    // The node agent re-runs the containers in place when the JobSet
    // controller names a newer generation (api/core/v1/restart_generation.h).
    const std::string attempt = std::to_string(js.status.current_in_place_attempt.value_or(0));
    meta::SetAnnotation(pod_template, core_v1::kRestartGenerationAnnotation, attempt);
    meta::SetAnnotation(pod_template, kInPlaceRestartAttemptKey, attempt);
  }
  if (meta::GetAnnotation(job, kExclusiveKey) && meta::GetAnnotation(job, kNodeSelectorStrategyKey)) {
    // The user labelled each domain's nodes `namespaced-job: <ns>_<job>`
    // and tainted them: the Job's pods select and tolerate exactly those.
    Json& pod_spec = MutableObject(pod_template, "spec");
    MutableObject(pod_spec, "nodeSelector")[kNamespacedJobKey] =
        absl::StrCat(Sv(js.meta.namespace_), "_", name);
    Json& tolerations = pod_spec["tolerations"];
    if (!tolerations.is_array()) tolerations = Json::array();
    tolerations.push_back(
        {{"key", kNoScheduleTaintKey}, {"operator", "Exists"}, {"effect", "NoSchedule"}});
  }
  batch_v1::SetSuspend(job, js.spec.suspend);
  meta::SetOwnerReference(job, meta::NewControllerRef(jobset));
  return job;
}

Json NewHeadlessService(const Json& jobset, const JobSetView& js) {
  Json svc = {{"apiVersion", "v1"},
              {"kind", "Service"},
              {"metadata",
               {{"name", std::string(js.Subdomain())}, {"namespace", std::string(js.meta.namespace_)}}},
              {"spec",
               {{"clusterIP", "None"},
                {"selector", {{kJobSetNameKey, std::string(js.meta.name)}}},
                {"publishNotReadyAddresses", js.spec.publish_not_ready_addresses}}}};
  meta::SetOwnerReference(svc, meta::NewControllerRef(jobset));
  return svc;
}

}  // namespace batchd::api::jobset_v1alpha2
