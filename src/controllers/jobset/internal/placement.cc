#include "controllers/jobset/internal/placement.h"

#include "absl/strings/str_cat.h"
#include "api/core/v1/pod_view.h"
#include "api/jobset/v1alpha2/constants.h"
#include "api/json_access.h"
#include "api/meta/object_meta.h"

namespace batchd::controllers::jobset::internal {

namespace js = api::jobset_v1alpha2;
using api::Json;

namespace {

constexpr char kCompletionIndex[] = "batch.kubernetes.io/job-completion-index";
constexpr char kRequired[] = "requiredDuringSchedulingIgnoredDuringExecution";

Json Term(Json expressions, std::string_view topology_key) {
  return {{"labelSelector", {{"matchExpressions", std::move(expressions)}}},
          {"topologyKey", std::string(topology_key)},
          {"namespaceSelector", Json::object()}};
}

void Append(Json& pod, const char* side, Json term) {
  Json& affinity = api::MutableObject(api::MutableObject(pod, "spec"), "affinity");
  Json& terms = api::MutableObject(affinity, side)[kRequired];
  if (!terms.is_array()) terms = Json::array();
  terms.push_back(std::move(term));
}

}  // namespace

bool IsLeaderPod(const Json& pod) {
  return api::meta::GetAnnotation(pod, kCompletionIndex) == "0";
}

std::optional<std::string> LeaderSelector(const Json& follower) {
  const std::optional<std::string> key = api::meta::GetLabel(follower, js::kJobKey);
  if (!key) return std::nullopt;
  return absl::StrCat(js::kJobKey, "=", *key, ",", kCompletionIndex, "=0");
}

void SetExclusiveAffinities(Json& pod, std::string_view topology_key) {
  const std::string job_key = api::meta::GetLabel(pod, js::kJobKey).value_or("");
  const std::string priority = api::meta::GetLabel(pod, js::kPriorityKey).value_or("");
  Append(pod, "podAffinity",
         Term(Json::array({{{"key", js::kJobKey}, {"operator", "In"}, {"values", {job_key}}}}),
              topology_key));
  Append(pod, "podAntiAffinity",
         Term(Json::array({{{"key", js::kJobKey}, {"operator", "Exists"}},
                           {{"key", js::kJobKey}, {"operator", "NotIn"}, {"values", {job_key}}},
                           {{"key", js::kPriorityKey}, {"operator", "In"}, {"values", {priority}}}}),
              topology_key));
}

bool ScheduledExclusiveLeader(const Json& pod) {
  if (!api::meta::GetAnnotation(pod, js::kExclusiveKey) ||
      api::meta::GetAnnotation(pod, js::kNodeSelectorStrategyKey) || !IsLeaderPod(pod) ||
      !api::meta::GetLabel(pod, js::kJobKey) || !api::meta::GetControllerRef(pod)) {
    return false;
  }
  const api::core_v1::PodView v = api::core_v1::PodView::Parse(pod);
  return !v.node_name.empty() && !v.meta.being_deleted() && !v.terminal();
}

}  // namespace batchd::controllers::jobset::internal
