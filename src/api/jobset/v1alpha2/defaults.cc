// SetDefaultsJobSet: upstream's webhook Default plus the CRD defaults.
#include <string>

#include "api/jobset/v1alpha2/jobset_v1alpha2.h"
#include "api/json_access.h"

namespace batchd::api::jobset_v1alpha2 {
namespace {

bool Unset(const Json& obj, std::string_view key) {
  const Json* v = FindMember(obj, key);
  return v == nullptr || v->is_null();
}

void SetIfUnset(Json& obj, std::string_view key, Json value) {
  if (Unset(obj, key)) obj[std::string(key)] = std::move(value);
}

void DefaultReplicatedJob(Json& rjob) {
  if (!rjob.is_object()) return;
  SetIfUnset(rjob, "groupName", "default");
  SetIfUnset(rjob, "replicas", 1);
  Json& tmpl = rjob["template"];
  if (!tmpl.is_object()) tmpl = Json::object();
  Json& job_spec = tmpl["spec"];
  if (!job_spec.is_object()) job_spec = Json::object();
  SetIfUnset(job_spec, "completionMode", "Indexed");
  Json& pod_tmpl = job_spec["template"];
  if (!pod_tmpl.is_object()) pod_tmpl = Json::object();
  Json& pod_spec = pod_tmpl["spec"];
  if (!pod_spec.is_object()) pod_spec = Json::object();
  if (StringMember(pod_spec, "restartPolicy").empty()) pod_spec["restartPolicy"] = "OnFailure";
}

}  // namespace

void SetDefaultsJobSet(Json& js) {
  if (!js.is_object()) return;
  Json& spec = js["spec"];
  if (!spec.is_object()) spec = Json::object();
  SetIfUnset(spec, "successPolicy", Json{{"operator", kOperatorAll}});
  SetIfUnset(spec, "startupPolicy", Json{{"startupPolicyOrder", kAnyOrder}});
  if (Json* rjobs = FindMutableMemberAt(spec, {"replicatedJobs"}); rjobs && rjobs->is_array()) {
    for (Json& rjob : *rjobs) DefaultReplicatedJob(rjob);
  }
  Json& network = spec["network"];
  if (!network.is_object()) network = Json::object();
  SetIfUnset(network, "enableDNSHostnames", true);
  SetIfUnset(network, "publishNotReadyAddresses", true);
  // Upstream's webhook: a claim policy without a retention policy deletes
  // its claims with the JobSet.
  if (Json* vcps = FindMutableMemberAt(spec, {"volumeClaimPolicies"}); vcps && vcps->is_array()) {
    for (Json& p : *vcps) {
      if (!p.is_object()) continue;
      Json& retention = p["retentionPolicy"];
      if (!retention.is_object()) retention = Json::object();
      SetIfUnset(retention, "whenDeleted", kRetentionDelete);
    }
  }
  if (Json* policy = FindMutableMemberAt(spec, {"failurePolicy"}); policy && policy->is_object()) {
    if (StringMember(*policy, "restartStrategy").empty()) (*policy)["restartStrategy"] = kRecreate;
    if (Json* rules = FindMutableMemberAt(*policy, {"rules"}); rules && rules->is_array()) {
      for (size_t i = 0; i < rules->size(); ++i) {
        Json& rule = (*rules)[i];
        if (rule.is_object() && StringMember(rule, "name").empty()) {
          rule["name"] = "failurePolicyRule" + std::to_string(i);
        }
      }
    }
  }
}

}  // namespace batchd::api::jobset_v1alpha2
