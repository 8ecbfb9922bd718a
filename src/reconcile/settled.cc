#include "reconcile/settled.h"

#include <string_view>

namespace batchd::reconcile {
namespace {

using api::Json;

const Json* Find(const Json& obj, const char* field) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(field);
  return it == obj.end() ? nullptr : &*it;
}

// Not being deleted, and (when `no_finalizers`) no finalizer left.
bool AtRest(const Json& obj, bool no_finalizers) {
  const Json* meta = Find(obj, "metadata");
  if (meta == nullptr) return false;
  if (const Json* d = Find(*meta, "deletionTimestamp"); d != nullptr && !d->is_null()) return false;
  if (no_finalizers) {
    if (const Json* f = Find(*meta, "finalizers"); f != nullptr && f->is_array() && !f->empty()) {
      return false;
    }
  }
  return true;
}

// A condition of one of `types` with status "True".
bool HasTrueCondition(const Json& obj, std::initializer_list<std::string_view> types) {
  const Json* status = Find(obj, "status");
  const Json* conds = status ? Find(*status, "conditions") : nullptr;
  if (conds == nullptr || !conds->is_array()) return false;
  for (const Json& c : *conds) {
    const Json* type = Find(c, "type");
    const Json* st = Find(c, "status");
    if (type == nullptr || st == nullptr || !type->is_string() || !st->is_string() ||
        st->get_ref<const std::string&>() != "True") {
      continue;
    }
    for (std::string_view t : types) {
      if (type->get_ref<const std::string&>() == t) return true;
    }
  }
  return false;
}

bool PodSettled(const Json& pod) {
  const Json* status = Find(pod, "status");
  const Json* phase = status ? Find(*status, "phase") : nullptr;
  if (phase == nullptr || !phase->is_string()) return false;
  const std::string& p = phase->get_ref<const std::string&>();
  return (p == "Succeeded" || p == "Failed") && AtRest(pod, /*no_finalizers=*/true);
}

bool JobSettled(const Json& job) {
  return HasTrueCondition(job, {"Complete", "Failed"}) && AtRest(job, /*no_finalizers=*/true);
}

bool WorkloadSettled(const Json& wl) {
  return HasTrueCondition(wl, {"Finished"}) && AtRest(wl, /*no_finalizers=*/false);
}

}  // namespace

std::function<bool(const Json&)> SettledWhen(const api::KindDef& k) {
  if (k.group.empty() && k.plural == "pods") return PodSettled;
  if (k.group == "batch" && k.plural == "jobs") return JobSettled;
  if (k.group == "kueue.x-k8s.io" && k.plural == "workloads") return WorkloadSettled;
  return {};
}

}  // namespace batchd::reconcile
