#include "registry/priority_admission.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "api/json_access.h"
#include "api/meta/object_meta.h"
#include "api/scheduling/v1/scheduling_v1.h"
#include "registry/errors.h"

namespace batchd::registry {
namespace {

using api::Json;
using api::scheduling_v1::kPreemptLowerPriority;
using api::scheduling_v1::kSystemClusterCritical;
using api::scheduling_v1::kSystemCriticalPriority;
using api::scheduling_v1::kSystemNodeCritical;

struct Resolved {
  std::string name;  // empty: no class (no default class either)
  int32_t value = 0;
  std::string preemption_policy = kPreemptLowerPriority;
};

Resolved FromClass(const Json& pc) {
  Resolved r;
  r.name = api::meta::GetName(pc);
  const Json& v = api::Member(pc, "value");
  if (v.is_number_integer()) r.value = v.get<int32_t>();
  const Json& p = api::Member(pc, "preemptionPolicy");
  if (p.is_string() && !p.get_ref<const std::string&>().empty()) r.preemption_policy = p.get<std::string>();
  return r;
}

// The global default class among `items` (api::scheduling_v1::GlobalDefault);
// nullopt when there is none.
std::optional<Resolved> DefaultAmong(const std::vector<ObjectPtr>& items) {
  std::vector<std::shared_ptr<const Json>> decoded;  // keeps `classes` alive
  std::vector<const Json*> classes;
  decoded.reserve(items.size());
  classes.reserve(items.size());
  for (const ObjectPtr& o : items) {
    decoded.push_back(o->Shared());
    classes.push_back(decoded.back().get());
  }
  const Json* def = api::scheduling_v1::GlobalDefault(classes);
  if (def == nullptr) return std::nullopt;
  return FromClass(*def);
}

absl::StatusOr<std::optional<Resolved>> DefaultClass(Registry& reg, const api::KindDef& pcs) {
  auto all = reg.List(pcs, "", ListOptions{});
  if (!all.ok()) return all.status();
  return DefaultAmong(all->items);
}

// The default class of the last lookup and the versions of the classes it
// was found among: a pod create decodes the PriorityClasses again only when
// one was added, changed or deleted (a cached version is one shared object,
// so the same pointers mean the same versions). Bound: one list of classes.
class DefaultClassMemo {
 public:
  absl::StatusOr<std::optional<Resolved>> Get(Registry& reg, const api::KindDef& pcs) {
    auto all = reg.List(pcs, "", ListOptions{});
    if (!all.ok()) return all.status();
    {
      absl::MutexLock lock(&mu_);
      if (valid_ && all->items == items_) return result_;
    }
    std::optional<Resolved> r = DefaultAmong(all->items);
    absl::MutexLock lock(&mu_);
    items_ = std::move(all->items);
    result_ = r;
    valid_ = true;
    return r;
  }

 private:
  absl::Mutex mu_;
  bool valid_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<ObjectPtr> items_ ABSL_GUARDED_BY(mu_);
  std::optional<Resolved> result_ ABSL_GUARDED_BY(mu_);
};

absl::Status AdmitPodCreate(Registry& reg, const api::KindDef& pods, const api::KindDef& pcs,
                            DefaultClassMemo& memo, Json& pod) {
  if (!pod.contains("spec") || !pod["spec"].is_object()) return absl::OkStatus();  // invalid anyway
  Json& spec = pod["spec"];
  // Admission runs before a generateName is filled in; Kubernetes' messages
  // then name the prefix.
  std::string pod_name = api::meta::GetName(pod);
  if (pod_name.empty()) {
    const Json& gen = api::Member(api::MemberObject(pod, "metadata"), "generateName");
    pod_name = gen.is_string() ? gen.get<std::string>() : "Unknown";
  }
  const Json& class_name = api::Member(spec, "priorityClassName");
  Resolved r;
  if (!class_name.is_string() || class_name.get_ref<const std::string&>().empty()) {
    auto def = memo.Get(reg, pcs);
    if (!def.ok()) {
      return Internal(absl::StrCat("failed to get default priority class: ", def.status().message()));
    }
    if (*def) {
      r = **def;
      spec["priorityClassName"] = r.name;
    }
  } else {
    const std::string& name = class_name.get_ref<const std::string&>();
    auto pc = reg.Get(pcs, "", name);
    if (!pc.ok()) {
      if (pc.status().code() == absl::StatusCode::kNotFound) {
        return Forbidden(pods, pod_name,
                         absl::StrCat("no PriorityClass with name ", name, " was found"));
      }
      return Internal(absl::StrCat("failed to get PriorityClass with name ", name, ": ",
                                   pc.status().message()));
    }
    r = FromClass(*(*pc)->Shared());
  }
  const Json& given = api::Member(spec, "priority");
  if (!given.is_null() && !(given.is_number_integer() && given.get<int64_t>() == r.value)) {
    return Forbidden(pods, pod_name,
                     absl::StrCat("the integer value of priority (", given.dump(),
                                  ") must not be provided in pod spec; priority admission "
                                  "controller computed ",
                                  r.value, " from the given PriorityClass name"));
  }
  const Json& policy = api::Member(spec, "preemptionPolicy");
  if (!policy.is_null() && !(policy.is_string() && policy == r.preemption_policy)) {
    std::string shown = policy.is_string() ? policy.get<std::string>() : policy.dump();
    return Forbidden(pods, pod_name,
                     absl::StrCat("the string value of PreemptionPolicy (", shown,
                                  ") must not be provided in pod spec; priority admission "
                                  "controller computed ",
                                  r.preemption_policy, " from the given PriorityClass name"));
  }
  spec["priority"] = r.value;
  spec["preemptionPolicy"] = r.preemption_policy;
  return absl::OkStatus();
}

// What this hook set on create stays when an update's body leaves it out.
void KeepOnUpdate(Json& pod, const Json& old) {
  const Json& old_spec = api::MemberObject(old, "spec");
  if (!pod.contains("spec") || !pod["spec"].is_object()) return;
  Json& spec = pod["spec"];
  for (const char* f : {"priority", "preemptionPolicy"}) {
    if (api::Member(spec, f).is_null() && !api::Member(old_spec, f).is_null()) {
      spec[f] = old_spec[f];
    }
  }
}

absl::Status AdmitPriorityClass(Registry& reg, const api::KindDef& pcs, const Json& pc,
                                const Json* old) {
  if (!api::scheduling_v1::IsGlobalDefault(pc)) return absl::OkStatus();
  auto current = DefaultClass(reg, pcs);
  if (!current.ok()) {
    return Internal(
        absl::StrCat("failed to get default priority class: ", current.status().message()));
  }
  if (!*current) return absl::OkStatus();
  const std::string& current_name = (*current)->name;
  const std::string name = api::meta::GetName(pc);
  if (old == nullptr || current_name != name) {
    return Forbidden(pcs, name,
                     absl::StrCat("PriorityClass ", current_name,
                                  " is already marked as default. Only one default can exist"));
  }
  return absl::OkStatus();
}

}  // namespace

void AddPriorityAdmission(Registry& reg) {
  const api::KindDef* pods = reg.scheme().ByResource("", "v1", "pods");
  const api::KindDef* pcs = reg.scheme().ByResource(api::scheduling_v1::kGroup, "v1", "priorityclasses");
  if (pods == nullptr || pcs == nullptr) return;
  auto memo = std::make_shared<DefaultClassMemo>();
  reg.AddMutator(pods->GroupResource(), [&reg, pods, pcs, memo](Json& pod, const Json* old) {
    if (old != nullptr) {
      KeepOnUpdate(pod, *old);
      return absl::OkStatus();
    }
    return AdmitPodCreate(reg, *pods, *pcs, *memo, pod);
  });
  reg.AddMutator(pcs->GroupResource(), [&reg, pcs](Json& pc, const Json* old) {
    return AdmitPriorityClass(reg, *pcs, pc, old);
  });
}

absl::Status EnsureSystemPriorityClasses(Registry& reg) {
  const api::KindDef* pcs = reg.scheme().ByResource(api::scheduling_v1::kGroup, "v1", "priorityclasses");
  if (pcs == nullptr) return absl::OkStatus();
  struct System {
    const char* name;
    int32_t value;
    const char* description;
  };
  for (const System& s : {
           System{kSystemNodeCritical, kSystemCriticalPriority + 1000,
                  "Used for system critical pods that must not be moved from their current "
                  "node."},
           System{kSystemClusterCritical, kSystemCriticalPriority,
                  "Used for system critical pods that must run in the cluster, but can be moved "
                  "to another node if necessary."},
       }) {
    if (reg.Get(*pcs, "", s.name).ok()) continue;
    Json pc = {{"apiVersion", "scheduling.k8s.io/v1"},
               {"kind", "PriorityClass"},
               {"metadata", {{"name", s.name}}},
               {"value", s.value},
               {"description", s.description}};
    auto r = reg.Create(*pcs, "", std::move(pc), WriteOptions{});
    if (!r.ok() && r.status().code() != absl::StatusCode::kAlreadyExists) return r.status();
  }
  return absl::OkStatus();
}

}  // namespace batchd::registry
