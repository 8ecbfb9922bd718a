// The pods/binding subresource: the only way spec.nodeName changes after
// creation (ordinary updates forbid it, as in Kubernetes). Binding sets
// PodScheduled=True and clears status.nominatedNodeName.
#include "absl/strings/str_cat.h"
#include "api/codec/codec.h"
#include "api/meta/time_util.h"
#include "registry/errors.h"
#include "registry/internal/conflict_retry.h"
#include "registry/registry.h"

namespace batchd::registry {

using api::Json;

namespace {

std::string BindingTarget(const Json& binding) {
  if (binding.is_object() && binding.contains("target") && binding["target"].is_object()) {
    return binding["target"].value("name", "");
  }
  return "";
}

// `pod` (a decoded copy of the current object) assigned to `node`: the
// binding's edits, or Conflict when it is being deleted or already bound.
absl::Status AssignPod(const api::KindDef& pods, std::string_view name, const std::string& node,
                       absl::Time now, Json& pod) {
  if (pod["metadata"].contains("deletionTimestamp")) {
    return Conflict(pods, name,
                    absl::StrCat("pod ", std::string(name),
                                 " is being deleted, cannot be assigned to a host"));
  }
  std::string bound = pod["spec"].value("nodeName", "");
  if (!bound.empty()) {
    return Conflict(pods, name,
                    absl::StrCat("pod ", std::string(name), " is already assigned to node \"",
                                 bound, "\""));
  }
  pod["spec"]["nodeName"] = node;
  Json cond = {{"type", "PodScheduled"}, {"status", "True"},
               {"lastTransitionTime", api::meta::FormatRfc3339(now)}};
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
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Json> Registry::Bind(std::string_view ns, std::string_view name,
                                    const Json& binding, const WriteOptions& opts) {
  const api::KindDef* pods = scheme_->ByResource("", "v1", "pods");
  std::string node = BindingTarget(binding);
  if (node.empty()) {
    return Invalid(*pods, name, {api::Required(api::Path("target").Child("name"))});
  }
  return internal::RetryOnConflict<Json>(*pods, name, [&](bool) -> internal::Attempt<Json> {
    ObjectPtr current = cache_->Get(StoreKey(*pods, ns, name));
    if (!current) return NotFound(*pods, name);
    Json pod = current->Decode();
    if (absl::Status st = AssignPod(*pods, name, node, clock_.Now(), pod); !st.ok()) return st;
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

std::vector<absl::StatusOr<Json>> Registry::BindMany(const std::vector<BindRequest>& binds,
                                                     const WriteOptions& opts) {
  const api::KindDef* pods = scheme_->ByResource("", "v1", "pods");
  std::vector<absl::StatusOr<Json>> out(binds.size(), absl::UnknownError("not bound"));
  if (opts.dry_run) {
    for (size_t i = 0; i < binds.size(); ++i) {
      out[i] = Bind(binds[i].ns, binds[i].name, binds[i].binding, opts);
    }
    return out;
  }
  // Each pod is assigned on the version in the cache; all the writes go to
  // the store in one UpdateMany (one commit). A pod written meanwhile
  // (Aborted) goes through Bind's retry on its new version.
  std::vector<size_t> batched;
  std::vector<Json> assigned;
  std::vector<store::Store::UpdateOp> ops;
  std::vector<WatchCache::DecodedOffer> offers;
  const absl::Time now = clock_.Now();
  for (size_t i = 0; i < binds.size(); ++i) {
    const BindRequest& b = binds[i];
    std::string node = BindingTarget(b.binding);
    if (node.empty()) {
      out[i] = Invalid(*pods, b.name, {api::Required(api::Path("target").Child("name"))});
      continue;
    }
    ObjectPtr current = cache_->Get(StoreKey(*pods, b.ns, b.name));
    if (!current) {
      out[i] = NotFound(*pods, b.name);
      continue;
    }
    Json pod = current->Decode();
    if (absl::Status st = AssignPod(*pods, b.name, node, now, pod); !st.ok()) {
      out[i] = st;
      continue;
    }
    std::string bytes = api::DumpCompact(pod);
    offers.push_back(OfferWritten(current->key, bytes, pod, opts.version_only));
    ops.push_back({current->key, std::move(bytes), current->revision});
    batched.push_back(i);
    assigned.push_back(std::move(pod));
  }
  std::vector<absl::StatusOr<store::KeyValue>> written = store_.UpdateMany(std::move(ops));
  offers.clear();
  for (size_t j = 0; j < batched.size(); ++j) {
    const size_t i = batched[j];
    if (written[j].ok()) {
      assigned[j]["metadata"]["resourceVersion"] = std::to_string(written[j]->mod_revision);
      out[i] = std::move(assigned[j]);
    } else if (written[j].status().code() == absl::StatusCode::kAborted) {
      out[i] = Bind(binds[i].ns, binds[i].name, binds[i].binding, opts);
    } else {
      out[i] = StoreWriteError(*pods, binds[i].name, written[j].status());
    }
  }
  return out;
}

}  // namespace batchd::registry
