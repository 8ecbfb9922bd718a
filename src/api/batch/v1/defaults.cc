// SetDefaults_Job, SetDefaults_CronJob and the Job create-time preparation.
#include <cstdint>
#include <limits>

#include "api/batch/v1/batch_v1.h"
#include "api/batch/v1/internal/util.h"
#include "api/core/v1/core_v1.h"
#include "api/json_access.h"

namespace batchd::api::batch_v1 {
namespace {

void DefaultPodTemplate(Json& tmpl) {
  if (!tmpl.is_object()) return;
  Json& pod_spec = tmpl["spec"];
  if (!pod_spec.is_object()) pod_spec = Json::object();
  core_v1::SetDefaultsPodSpec(pod_spec);
}

void DefaultPodFailurePolicy(Json& spec) {
  Json* rules = spec.contains("podFailurePolicy") ? &spec["podFailurePolicy"] : nullptr;
  if (rules == nullptr || !rules->is_object() || !rules->contains("rules")) return;
  for (Json& rule : (*rules)["rules"]) {
    if (!rule.is_object() || !rule.contains("onPodConditions")) continue;
    for (Json& pattern : rule["onPodConditions"]) {
      if (!pattern.is_object()) continue;
      auto it = pattern.find("status");
      if (it == pattern.end() || it->is_null() || *it == "") pattern["status"] = "True";
    }
  }
}

}  // namespace

void SetDefaultsJobSpec(Json& spec) {
  if (!spec.is_object()) spec = Json::object();
  if (!HasMember(spec, "completions") && !HasMember(spec, "parallelism")) {
    spec["completions"] = 1;
    spec["parallelism"] = 1;
  }
  if (!HasMember(spec, "parallelism")) spec["parallelism"] = 1;
  if (!HasMember(spec, "backoffLimit")) {
    spec["backoffLimit"] = !HasMember(spec, "backoffLimitPerIndex")
                               ? int64_t{6}
                               : int64_t{std::numeric_limits<int32_t>::max()};
  }
  if (!HasMember(spec, "completionMode")) spec["completionMode"] = "NonIndexed";
  if (!HasMember(spec, "suspend")) spec["suspend"] = false;
  DefaultPodFailurePolicy(spec);
  if (!HasMember(spec, "podReplacementPolicy")) {
    spec["podReplacementPolicy"] =
        !HasMember(spec, "podFailurePolicy") ? "TerminatingOrFailed" : "Failed";
  }
  if (!HasMember(spec, "manualSelector")) spec["manualSelector"] = false;
  if (spec.contains("template")) DefaultPodTemplate(spec["template"]);
}

void SetDefaultsJob(Json& job) {
  if (!job.is_object()) return;
  Json& spec = job["spec"];
  SetDefaultsJobSpec(spec);
  // An unlabelled Job takes its pod template's labels.
  const Json* tmpl_labels = FindMemberAt(spec, {"template", "metadata", "labels"});
  if (tmpl_labels != nullptr && tmpl_labels->is_object()) {
    const Json* labels = FindMemberAt(job, {"metadata", "labels"});
    if (labels == nullptr || !labels->is_object() || labels->empty()) {
      MutableMemberAt(job, {"metadata", "labels"}) = *tmpl_labels;
    }
  }
}

void SetDefaultsCronJob(Json& cronjob) {
  if (!cronjob.is_object()) return;
  Json& spec = cronjob["spec"];
  if (!spec.is_object()) spec = Json::object();
  if (!HasMember(spec, "concurrencyPolicy") || spec["concurrencyPolicy"] == "") {
    spec["concurrencyPolicy"] = "Allow";
  }
  if (!HasMember(spec, "suspend")) spec["suspend"] = false;
  if (!HasMember(spec, "successfulJobsHistoryLimit")) spec["successfulJobsHistoryLimit"] = 3;
  if (!HasMember(spec, "failedJobsHistoryLimit")) spec["failedJobsHistoryLimit"] = 1;
  Json* tmpl = nullptr;
  if (spec.contains("jobTemplate") && spec["jobTemplate"].is_object() &&
      spec["jobTemplate"].contains("spec") && spec["jobTemplate"]["spec"].is_object() &&
      spec["jobTemplate"]["spec"].contains("template")) {
    tmpl = &spec["jobTemplate"]["spec"]["template"];
  }
  if (tmpl != nullptr) DefaultPodTemplate(*tmpl);
}

void PrepareJobForCreate(Json& job) {
  if (!job.is_object()) return;
  job["status"] = Json::object();
  Json& spec = job["spec"];
  if (!spec.is_object()) spec = Json::object();
  if (AsBool(Member(spec, "manualSelector"))) return;
  const std::string name(AsString(MemberAt(job, {"metadata", "name"})));
  const std::string uid(AsString(MemberAt(job, {"metadata", "uid"})));
  Json& labels = MutableMemberAt(spec, {"template", "metadata", "labels"});
  if (!labels.is_object()) labels = Json::object();
  // A Job restored from a backup (`kubectl get -o yaml`, then `kubectl apply`)
  // carries the selector and template labels generated for the object it was,
  // naming that object's uid. Kubernetes refuses such a create; batchd drops
  // them to generate this object's own (a backup should restore).
  if (const Json* old_uid = FindMemberAt(spec, {"selector", "matchLabels", kControllerUidLabel});
      old_uid != nullptr && old_uid->is_string() && *old_uid != uid) {
    const Json stale = *old_uid;
    Json& match = spec["selector"]["matchLabels"];
    Json* job_labels = FindMutableMemberAt(job, {"metadata", "labels"});
    for (const char* key : {kLegacyControllerUidLabel, kControllerUidLabel}) {
      if (labels.contains(key) && labels[key] == stale) labels.erase(key);
      if (match.contains(key) && match[key] == stale) match.erase(key);
      if (job_labels && job_labels->is_object() && job_labels->contains(key) &&
          (*job_labels)[key] == stale) {
        (*job_labels)[key] = uid;
      }
    }
  }
  // Labels the user already set are kept; validation rejects conflicts.
  for (const char* key : {kLegacyJobNameLabel, kJobNameLabel}) {
    if (!labels.contains(key)) labels[key] = name;
  }
  for (const char* key : {kLegacyControllerUidLabel, kControllerUidLabel}) {
    if (!labels.contains(key)) labels[key] = uid;
  }
  Json& selector = spec["selector"];
  if (!selector.is_object()) selector = Json::object();
  Json& match = selector["matchLabels"];
  if (!match.is_object()) match = Json::object();
  if (!match.contains(kControllerUidLabel)) match[kControllerUidLabel] = uid;
}

}  // namespace batchd::api::batch_v1
