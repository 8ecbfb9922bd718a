#include "controllers/nodelifecycle/default_tolerations.h"

#include "api/core/v1/taint.h"
#include "controllers/nodelifecycle/nodelifecycle.h"
#include "registry/registry.h"

namespace batchd::controllers {

using api::Json;
using api::core_v1::Taint;
using api::core_v1::TaintEffect;

bool AddDefaultTolerations(Json& pod, const DefaultTolerationOptions& opts) {
  if (!pod.is_object()) return false;
  Json& spec = pod["spec"];
  if (!spec.is_object()) return false;
  const std::vector<api::core_v1::Toleration> have =
      api::core_v1::ParseTolerationList(spec.value("tolerations", Json::array()));
  bool added = false;
  for (const auto& [key, seconds] : {std::pair{kNotReadyTaint, opts.not_ready_seconds},
                                     std::pair{kUnreachableTaint, opts.unreachable_seconds}}) {
    // Any toleration that tolerates the taint counts (as the plugin checks).
    if (api::core_v1::Tolerated(have, Taint{key, "", TaintEffect::kNoExecute, ""})) continue;
    if (!spec.contains("tolerations") || !spec["tolerations"].is_array()) {
      spec["tolerations"] = Json::array();
    }
    spec["tolerations"].push_back({{"key", key},
                                   {"operator", "Exists"},
                                   {"effect", "NoExecute"},
                                   {"tolerationSeconds", seconds}});
    added = true;
  }
  return added;
}

absl::Status AddDefaultTolerationSeconds(registry::Registry& registry,
                                         DefaultTolerationOptions opts) {
  const api::KindDef* pods = registry.scheme().ByResource("", "v1", "pods");
  if (pods == nullptr) return absl::FailedPreconditionError("v1 pods are not served");
  registry.AddMutator(pods->GroupResource(), [opts](Json& pod, const Json* old) {
    if (old == nullptr) AddDefaultTolerations(pod, opts);
    return absl::OkStatus();
  });
  return absl::OkStatus();
}

}  // namespace batchd::controllers
