// SetDefaults_Job, SetDefaults_CronJob and the Job create-time preparation.
#include <cstdint>
#include <limits>

#include "api/batch/v1/batch_v1.h"
#include "api/batch/v1/internal/util.h"
#include "api/core/v1/core_v1.h"

namespace batchd::api::batch_v1 {
namespace {

using internal::Find;

bool Missing(const Json& obj, const char* key) {
  auto it = obj.find(key);
  return it == obj.end() || it->is_null();
}

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
  if (Missing(spec, "completions") && Missing(spec, "parallelism")) {
    spec["completions"] = 1;
    spec["parallelism"] = 1;
  }
  if (Missing(spec, "parallelism")) spec["parallelism"] = 1;
  if (Missing(spec, "backoffLimit")) {
    spec["backoffLimit"] = Missing(spec, "backoffLimitPerIndex")
                               ? int64_t{6}
                               : int64_t{std::numeric_limits<int32_t>::max()};
  }
  if (Missing(spec, "completionMode")) spec["completionMode"] = "NonIndexed";
  if (Missing(spec, "suspend")) spec["suspend"] = false;
  DefaultPodFailurePolicy(spec);
  if (Missing(spec, "podReplacementPolicy")) {
    spec["podReplacementPolicy"] =
        Missing(spec, "podFailurePolicy") ? "TerminatingOrFailed" : "Failed";
  }
  if (Missing(spec, "manualSelector")) spec["manualSelector"] = false;
  if (spec.contains("template")) DefaultPodTemplate(spec["template"]);
}

void SetDefaultsJob(Json& job) {
  if (!job.is_object()) return;
  Json& spec = job["spec"];
  SetDefaultsJobSpec(spec);
  // An unlabelled Job takes its pod template's labels.
  const Json* tmpl_labels = Find(spec, {"template", "metadata", "labels"});
  if (tmpl_labels != nullptr && tmpl_labels->is_object()) {
    const Json* labels = Find(job, {"metadata", "labels"});
    if (labels == nullptr || !labels->is_object() || labels->empty()) {
      internal::Ensure(job, {"metadata", "labels"}) = *tmpl_labels;
    }
  }
}

void SetDefaultsCronJob(Json& cronjob) {
  if (!cronjob.is_object()) return;
  Json& spec = cronjob["spec"];
  if (!spec.is_object()) spec = Json::object();
  if (Missing(spec, "concurrencyPolicy") || spec["concurrencyPolicy"] == "") {
    spec["concurrencyPolicy"] = "Allow";
  }
  if (Missing(spec, "suspend")) spec["suspend"] = false;
  if (Missing(spec, "successfulJobsHistoryLimit")) spec["successfulJobsHistoryLimit"] = 3;
  if (Missing(spec, "failedJobsHistoryLimit")) spec["failedJobsHistoryLimit"] = 1;
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
  if (internal::FindBool(spec, {"manualSelector"})) return;
  const std::string name = internal::FindStr(job, {"metadata", "name"});
  const std::string uid = internal::FindStr(job, {"metadata", "uid"});
  Json& labels = internal::Ensure(spec, {"template", "metadata", "labels"});
  if (!labels.is_object()) labels = Json::object();
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
