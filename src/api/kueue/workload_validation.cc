// Workload validation: Kueue's CRD limits and CEL rules and its workload
// webhook (pod set names, counts, minCount, admission consistency, what may
// not change while quota is reserved), with Kubernetes field paths.
#include <map>
#include <set>

#include "api/kueue/internal/schemas.h"
#include "api/kueue/internal/util.h"
#include "api/kueue/kueue.h"
#include "api/validation/names.h"

namespace batchd::api::kueue {
namespace {

using internal::Append;
using internal::GetArr;
using internal::GetObj;
using internal::GetStr;
using internal::Has;

constexpr size_t kMaxPodSets = 8;

int64_t IntAt(const Json& obj, std::string_view key, int64_t def) {
  if (!obj.is_object()) return def;
  auto it = obj.find(std::string(key));
  return it != obj.end() && it->is_number_integer() ? it->get<int64_t>() : def;
}

void ValidateContainers(const Json& pod_spec, const Path& p, ErrorList& errs) {
  for (const char* list : {"initContainers", "containers"}) {
    const Json& cs = GetArr(pod_spec, list);
    for (size_t i = 0; i < cs.size(); ++i) {
      if (Has(GetObj(GetObj(cs[i], "resources"), "requests"), "pods")) {
        errs.push_back(Invalid(p.Child(list).Index(i).Child("resources").Child("requests")
                                   .Key("pods"),
                               "pods", "the key is reserved for internal kueue use"));
      }
    }
  }
}

void ValidatePodSets(const Json& spec, const Path& p, ErrorList& errs) {
  const Json& podsets = GetArr(spec, "podSets");
  Path pp = p.Child("podSets");
  if (podsets.empty()) errs.push_back(Required(pp));
  internal::ValidateMaxItems(podsets, kMaxPodSets, pp, errs);
  std::set<std::string> names;
  int with_min = 0;
  for (size_t i = 0; i < podsets.size(); ++i) {
    const Json& ps = podsets[i];
    Path ip = pp.Index(i);
    std::string name = GetStr(ps, "name");
    for (const auto& m : validation::IsDNS1123Label(name)) {
      errs.push_back(Invalid(ip.Child("name"), name, m));
    }
    if (!names.insert(name).second) errs.push_back(Duplicate(ip.Child("name"), name));
    int64_t count = IntAt(ps, "count", 1);
    if (count < 0) {
      errs.push_back(Invalid(ip.Child("count"), count, "must be greater than or equal to 0"));
    }
    if (Has(ps, "minCount")) {
      ++with_min;
      int64_t min = IntAt(ps, "minCount", 1);
      if (min < 1 || min > count) {
        errs.push_back(Invalid(ip.Child("minCount"), min, "minCount should be positive and "
                                                          "less or equal to count"));
      }
    }
    ValidateContainers(GetObj(GetObj(ps, "template"), "spec"), ip.Child("template").Child("spec"),
                       errs);
  }
  if (with_min > 1) {
    errs.push_back(Invalid(pp, with_min, "at most one podSet can use minCount"));
  }
}

void ValidatePriority(const Json& spec, const Path& p, ErrorList& errs) {
  if (!Has(spec, "priorityClassRef")) return;
  const Json& ref = GetObj(spec, "priorityClassRef");
  Path rp = p.Child("priorityClassRef");
  if (!Has(spec, "priority")) {
    errs.push_back(Required(p.Child("priority"), "priority should not be nil when "
                                                 "priorityClassRef is set"));
  }
  std::string group = GetStr(ref, "group"), kind = GetStr(ref, "kind");
  if (group == "scheduling.k8s.io" && kind != "PriorityClass") {
    errs.push_back(Invalid(rp.Child("kind"), kind, "only the PriorityClass kind is allowed for "
                                                   "the scheduling.k8s.io group"));
  }
  if (group == "kueue.x-k8s.io" && kind != "WorkloadPriorityClass") {
    errs.push_back(Invalid(rp.Child("kind"), kind, "only the WorkloadPriorityClass kind is "
                                                   "allowed for the kueue.x-k8s.io group"));
  }
  std::string name = GetStr(ref, "name");
  if (Has(ref, "name")) internal::ValidateDNSSubdomain(name, rp.Child("name"), errs);
}

void ValidateStatus(const Json& wl, ErrorList& errs) {
  const Json& podsets = GetArr(GetObj(wl, "spec"), "podSets");
  std::map<std::string, int64_t> counts;
  for (const Json& ps : podsets) counts[GetStr(ps, "name")] = IntAt(ps, "count", 1);
  const Json& status = GetObj(wl, "status");
  Path sp("status");
  if (WorkloadConditionTrue(wl, kQuotaReserved) && Has(status, "admission")) {
    const Json& psas = GetArr(GetObj(status, "admission"), "podSetAssignments");
    if (psas.size() != podsets.size()) {
      errs.push_back(Invalid(sp.Child("admission").Child("podSetAssignments"), Json(),
                             "podSetAssignments must have the same number of podSets as the "
                             "spec"));
    }
    for (size_t i = 0; i < psas.size(); ++i) {
      std::string name = GetStr(psas[i], "name");
      if (!counts.contains(name)) {
        FieldError e = Invalid(sp.Child("admission").Child("podSetAssignments").Index(i)
                                   .Child("name"), name, "");
        e.type = FieldError::Type::kNotFound;
        errs.push_back(e);
      }
    }
  }
  const Json& reclaimable = GetArr(status, "reclaimablePods");
  for (const Json& rp : reclaimable) {
    std::string name = GetStr(rp, "name");
    Path p = sp.Child("reclaimablePods").Key(name);
    auto it = counts.find(name);
    if (it == counts.end()) {
      std::vector<std::string> known;
      for (const auto& [n, c] : counts) known.push_back(n);
      errs.push_back(NotSupported(p.Child("name"), name, known));
    } else if (IntAt(rp, "count", 0) > it->second) {
      errs.push_back(Invalid(p.Child("count"), IntAt(rp, "count", 0),
                             "should be less or equal to " + std::to_string(it->second)));
    }
  }
}

}  // namespace

bool WorkloadConditionTrue(const Json& wl, std::string_view type) {
  for (const Json& c : GetArr(GetObj(wl, "status"), "conditions")) {
    if (GetStr(c, "type") == type && GetStr(c, "status") == "True") return true;
  }
  return false;
}

ErrorList ValidateWorkload(const Json& wl) {
  ErrorList errs = internal::ValidateMeta(wl, true);
  const SchemaPtr& schema = internal::SchemasFor(kStorageVersion).workload;
  for (const char* part : {"spec", "status"}) {
    if (wl.contains(part)) {
      Append(errs, internal::ValidateSchemaConstraints(*schema->Property(part), wl[part],
                                                       Path(part)));
    }
  }
  const Json& spec = GetObj(wl, "spec");
  Path p("spec");
  ValidatePodSets(spec, p, errs);
  ValidatePriority(spec, p, errs);
  std::string queue = GetStr(spec, "queueName");
  if (!queue.empty()) internal::ValidateDNSSubdomain(queue, p.Child("queueName"), errs);
  if (Has(spec, "maximumExecutionTimeSeconds") &&
      IntAt(spec, "maximumExecutionTimeSeconds", 1) < 1) {
    errs.push_back(Invalid(p.Child("maximumExecutionTimeSeconds"),
                           IntAt(spec, "maximumExecutionTimeSeconds", 1),
                           "must be greater than or equal to 1"));
  }
  ValidateStatus(wl, errs);
  return errs;
}

ErrorList ValidateWorkloadUpdate(const Json& wl, const Json& old) {
  ErrorList errs = ValidateWorkload(wl);
  Append(errs, internal::ValidateMetaUpdate(wl, old, true));
  const Json& spec = GetObj(wl, "spec");
  const Json& was = GetObj(old, "spec");
  Path p("spec");
  bool old_reserved = WorkloadConditionTrue(old, kQuotaReserved);
  bool new_reserved = WorkloadConditionTrue(wl, kQuotaReserved);
  if (old_reserved) {
    if (GetArr(spec, "podSets") != GetArr(was, "podSets")) {
      errs.push_back(Invalid(p.Child("podSets"), Json(), "field is immutable"));
    }
    if (Has(spec, "priorityClassRef") != Has(was, "priorityClassRef")) {
      errs.push_back(Invalid(p.Child("priorityClassRef"), Json(), "priorityClassRef is "
                                                                  "immutable while workload "
                                                                  "quota reserved"));
    } else if (Has(spec, "priorityClassRef")) {
      const Json& a = GetObj(spec, "priorityClassRef");
      const Json& b = GetObj(was, "priorityClassRef");
      bool pod_class = GetStr(a, "group") == "scheduling.k8s.io";
      for (const char* f : {"group", "kind", "name"}) {
        if (std::string(f) == "name" && !pod_class) continue;
        if (GetStr(a, f) != GetStr(b, f)) {
          errs.push_back(Invalid(p.Child("priorityClassRef").Child(f), GetStr(a, f),
                                 "field is immutable while workload quota reserved"));
        }
      }
    }
  }
  if (old_reserved && new_reserved && Has(spec, "queueName") && Has(was, "queueName") &&
      GetStr(spec, "queueName") != GetStr(was, "queueName")) {
    errs.push_back(Invalid(p.Child("queueName"), GetStr(spec, "queueName"),
                           "queueName is immutable while workload quota reserved"));
  }
  if (WorkloadConditionTrue(old, kAdmitted) && WorkloadConditionTrue(wl, kAdmitted) &&
      IntAt(spec, "maximumExecutionTimeSeconds", 0) != IntAt(was, "maximumExecutionTimeSeconds", 0)) {
    errs.push_back(Invalid(p.Child("maximumExecutionTimeSeconds"),
                           IntAt(spec, "maximumExecutionTimeSeconds", 0),
                           "maximumExecutionTimeSeconds is immutable while workload quota "
                           "reserved"));
  }
  return errs;
}

ErrorList ValidateWorkloadStatusUpdate(const Json& wl, const Json& old) {
  ErrorList errs = ValidateWorkloadUpdate(wl, old);
  const Json& now = GetObj(wl, "status");
  const Json& was = GetObj(old, "status");
  if (Has(now, "admission") && Has(was, "admission") &&
      GetObj(now, "admission") != GetObj(was, "admission")) {
    errs.push_back(Invalid(Path("status").Child("admission"), Json(), "field is immutable"));
  }
  return errs;
}

}  // namespace batchd::api::kueue
