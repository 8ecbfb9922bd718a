// The pods/binding subresource: the only way spec.nodeName changes after
// creation (ordinary updates forbid it, as in Kubernetes). Binding sets
// PodScheduled=True and clears status.nominatedNodeName.
#include "absl/strings/str_cat.h"
#include "api/meta/time_util.h"
#include "registry/errors.h"
#include "registry/internal/conflict_retry.h"
#include "registry/registry.h"

namespace batchd::registry {

using api::Json;

absl::StatusOr<Json> Registry::Bind(std::string_view ns, std::string_view name,
                                    const Json& binding, const WriteOptions& opts) {
  const api::KindDef* pods = scheme_->ByResource("", "v1", "pods");
  std::string node;
  if (binding.is_object() && binding.contains("target") && binding["target"].is_object()) {
    node = binding["target"].value("name", "");
  }
  if (node.empty()) {
    return Invalid(*pods, name, {api::Required(api::Path("target").Child("name"))});
  }
  return internal::RetryOnConflict<Json>(*pods, name, [&](bool) -> internal::Attempt<Json> {
    ObjectPtr current = cache_->Get(StoreKey(*pods, ns, name));
    if (!current) return NotFound(*pods, name);
    Json pod = current->Decode();
    if (pod["metadata"].contains("deletionTimestamp")) {
      return Conflict(*pods, name,
                      absl::StrCat("pod ", std::string(name),
                                   " is being deleted, cannot be assigned to a host"));
    }
    std::string bound = pod["spec"].value("nodeName", "");
    if (!bound.empty()) {
      return Conflict(*pods, name,
                      absl::StrCat("pod ", std::string(name), " is already assigned to node \"",
                                   bound, "\""));
    }
    pod["spec"]["nodeName"] = node;
    Json cond = {{"type", "PodScheduled"}, {"status", "True"},
                 {"lastTransitionTime", api::meta::FormatRfc3339(clock_.Now())}};
    Json& conds = pod["status"]["conditions"];
    if (!conds.is_array()) conds = Json::array();
    bool replaced = false;
    for (auto& c : conds) {
      if (c.value("type", "") == "PodScheduled") {
        c = cond;
        replaced = true;
      }
    }
    if (!replaced) conds.push_back(cond);
    // The nomination has served its purpose once the pod is bound, wherever
    // (Kubernetes' ClearingNominatedNodeNameAfterBinding, on since 1.35).
    pod["status"].erase("nominatedNodeName");
    pod["metadata"].erase("resourceVersion");
    if (opts.dry_run) return pod;
    auto kv = Put(current->key, pod, current->revision);
    if (!kv.ok()) {
      if (kv.status().code() == absl::StatusCode::kAborted) {
        return internal::Attempt<Json>::Retry();  // On the new version.
      }
      return StoreWriteError(*pods, name, kv.status());
    }
    pod["metadata"]["resourceVersion"] = std::to_string(kv->mod_revision);
    return pod;
  });
}

}  // namespace batchd::registry
