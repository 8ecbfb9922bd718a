#include "api/batch/v1/job_pod_writer.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "api/batch/v1/batch_v1.h"
#include "api/json_access.h"
#include "api/meta/object_meta.h"
#include "common/string_view.h"

namespace batchd::api::batch_v1 {

namespace {

constexpr char kIndexEnv[] = "JOB_COMPLETION_INDEX";

void AddIndexEnv(Json& containers) {
  if (!containers.is_array()) return;
  for (Json& ctr : containers) {
    Json& env = ctr["env"];
    if (!env.is_array()) env = Json::array();
    bool present = false;
    for (const Json& e : env) present |= StringMember(e, "name") == kIndexEnv;
    if (present) continue;
    env.push_back({{"name", kIndexEnv},
                   {"valueFrom",
                    {{"fieldRef",
                      {{"apiVersion", "v1"},
                       {"fieldPath", absl::StrCat("metadata.labels['",
                                                  kJobCompletionIndexAnnotation, "']")}}}}}});
  }
}

}  // namespace

Json NewPodFromTemplate(const Json* pod_template, std::string_view ns,
                        std::string_view generate_name) {
  const Json& tmpl = pod_template != nullptr ? *pod_template : EmptyObject();
  Json pod = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata",
               {{"generateName", std::string(generate_name)}, {"namespace", std::string(ns)}}},
              {"spec", MemberObject(tmpl, "spec")}};
  const Json& tmeta = MemberObject(tmpl, "metadata");
  for (const char* field : {"labels", "annotations", "finalizers"}) {
    // As set, whatever its type: validation of the pod judges it.
    if (auto it = tmeta.find(field); it != tmeta.end()) pod["metadata"][field] = *it;
  }
  return pod;
}

void SetPodCompletionIndex(Json& pod, std::string_view job_name, int index) {
  const std::string ix = std::to_string(index);
  meta::SetAnnotation(pod, kJobCompletionIndexAnnotation, ix);
  meta::SetLabel(pod, kJobCompletionIndexAnnotation, ix);
  Json& spec = MutableObject(pod, "spec");
  spec["hostname"] = absl::StrCat(Sv(job_name), "-", ix);
  if (spec.contains("initContainers")) AddIndexEnv(spec["initContainers"]);
  AddIndexEnv(spec["containers"]);
}

void SetPodIndexFailureCounts(Json& pod, int failures, int ignored_failures) {
  meta::SetAnnotation(pod, kJobIndexFailureCountAnnotation, std::to_string(failures));
  if (ignored_failures > 0) {
    meta::SetAnnotation(pod, kJobIndexIgnoredFailureCountAnnotation,
                        std::to_string(ignored_failures));
  }
}

}  // namespace batchd::api::batch_v1
