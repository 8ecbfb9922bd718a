// Workload validation: Kueue's CRD limits and CEL rules and its workload
// webhook (pod set names, counts, minCount, admission consistency, what may
// not change while quota is reserved), with Kubernetes field paths.
#include <map>
#include <set>

#include "api/kueue/internal/schemas.h"
#include "api/json_access.h"
#include "api/kueue/internal/util.h"
#include "api/kueue/kueue.h"
#include "api/meta/conditions.h"
#include "api/meta/object_meta.h"
#include "api/validation/names.h"

namespace batchd::api::kueue {
namespace {


constexpr size_t kMaxPodSets = 8;

void ValidateContainers(const Json& pod_spec, const Path& p, ErrorList& errs) {
  for (const char* list : {"initContainers", "containers"}) {
    const Json& cs = MemberArray(pod_spec, list);
    for (size_t i = 0; i < cs.size(); ++i) {
      if (HasMember(MemberObject(MemberObject(cs[i], "resources"), "requests"), "pods")) {
        errs.push_back(Invalid(p.Child(list).Index(i).Child("resources").Child("requests")
                                   .Key("pods"),
                               "pods", "the key is reserved for internal kueue use"));
      }
    }
  }
}

// A pod set's topologyRequest (Kueue's workload webhook and CRD rules):
// slice fields together and positive, multi-layer slices (at most 3, sizes
// positive and each dividing the one before, levels distinct) instead of
// the single layer, a group only with a required or preferred level and no
// slices, subGroupIndexLabel and subGroupCount together with a count that
// divides the pod set's.
void ValidateTopologyRequest(const Json& tr, int64_t count, const Path& p, ErrorList& errs) {
  if (HasMember(tr, "podSetSliceRequiredTopology")) {
    if (!HasMember(tr, "podSetSliceSize")) {
      errs.push_back(Required(p.Child("podSetSliceSize"),
                              "must be set when podSetSliceRequiredTopology is specified"));
    } else if (IntMember(tr, "podSetSliceSize", 0) <= 0) {
      errs.push_back(Invalid(p.Child("podSetSliceSize"), IntMember(tr, "podSetSliceSize", 0),
                             "must be greater than 0"));
    }
  } else if (HasMember(tr, "podSetSliceSize")) {
    errs.push_back(Forbidden(p.Child("podSetSliceSize"),
                             "may not be set when podSetSliceRequiredTopology is not specified"));
  }
  const Json& layers = MemberArray(tr, "podsetSliceRequiredTopologyConstraints");
  const Path lp = p.Child("podsetSliceRequiredTopologyConstraints");
  internal::ValidateMaxItems(layers, 3, lp, errs);
  if (!layers.empty() && HasMember(tr, "podSetSliceRequiredTopology")) {
    errs.push_back(Forbidden(lp, "may not be set when podSetSliceRequiredTopology is specified"));
  }
  std::set<std::string> levels;
  for (size_t i = 0; i < layers.size(); ++i) {
    const std::string level(StringMember(layers[i], "topology"));
    const int64_t size = IntMember(layers[i], "size", 0);
    if (level.empty()) errs.push_back(Required(lp.Index(i).Child("topology")));
    if (!level.empty() && !levels.insert(level).second) {
      errs.push_back(Duplicate(lp.Index(i).Child("topology"), level));
    }
    if (size <= 0) {
      errs.push_back(Invalid(lp.Index(i).Child("size"), size, "must be greater than 0"));
    } else if (i > 0 && IntMember(layers[i - 1], "size", 0) % size != 0) {
      errs.push_back(Invalid(lp.Index(i).Child("size"), size,
                             "must evenly divide the parent layer size " +
                                 std::to_string(IntMember(layers[i - 1], "size", 0))));
    }
  }
  if (HasMember(tr, "podSetGroupName")) {
    const Path gp = p.Child("podSetGroupName");
    const std::string_view group = StringMember(tr, "podSetGroupName");
    if (group.size() > 256) {
      errs.push_back(TooLong(gp, std::string(group), 256));
    }
    if (!HasMember(tr, "required") && !HasMember(tr, "preferred")) {
      errs.push_back(Forbidden(gp, "may not be set without required or preferred"));
    }
    if (HasMember(tr, "podSetSliceRequiredTopology") || !layers.empty()) {
      errs.push_back(Forbidden(gp, "may not be set with slices"));
    }
  }
  const bool has_label = HasMember(tr, "subGroupIndexLabel");
  const bool has_count = HasMember(tr, "subGroupCount");
  if (has_label != has_count) {
    errs.push_back(Required(p.Child(has_label ? "subGroupCount" : "subGroupIndexLabel"),
                            "subGroupIndexLabel and subGroupCount are set together"));
  } else if (has_count) {
    const int64_t groups = IntMember(tr, "subGroupCount", 0);
    if (groups <= 0) {
      errs.push_back(Invalid(p.Child("subGroupCount"), groups, "must be greater than 0"));
    } else if (count % groups != 0) {
      errs.push_back(Invalid(p.Child("subGroupCount"), groups,
                             "must divide the pod set count " + std::to_string(count)));
    }
  }
}

// Pod sets naming one podSetGroupName (placed together, one flavor): at
// most two, and of two one has a single pod, both asking for the same
// required or preferred level (Kueue's ValidatePodSetGroupingTopology).
void ValidatePodSetGroups(const Json& podsets, const Path& pp, ErrorList& errs) {
  std::map<std::string, std::vector<size_t>> groups;
  std::vector<std::string> order;
  for (size_t i = 0; i < podsets.size(); ++i) {
    const Json& tr = MemberObject(podsets[i], "topologyRequest");
    if (!HasMember(tr, "podSetGroupName")) continue;
    std::string g(StringMember(tr, "podSetGroupName"));
    if (!groups.contains(g)) order.push_back(g);
    groups[g].push_back(i);
  }
  for (const std::string& g : order) {
    const std::vector<size_t>& members = groups[g];
    auto path = [&](size_t i) { return pp.Index(i).Child("topologyRequest").Child("podSetGroupName"); };
    if (members.size() > 2) {
      for (size_t i : members) {
        errs.push_back(Invalid(path(i), g, "can only define groups of at most 2 pod sets, got: " +
                                               std::to_string(members.size()) + " pod set(s)"));
      }
      continue;
    }
    if (members.size() < 2) continue;
    const Json& a = podsets[members[0]];
    const Json& b = podsets[members[1]];
    if (IntMember(a, "count", 1) != 1 && IntMember(b, "count", 1) != 1) {
      for (size_t i : members) {
        errs.push_back(Invalid(path(i), g, "can only define groups where at least one pod set "
                                           "has only 1 replica"));
      }
    }
    const Json& ta = MemberObject(a, "topologyRequest");
    const Json& tb = MemberObject(b, "topologyRequest");
    if (StringMember(ta, "required") != StringMember(tb, "required") ||
        StringMember(ta, "preferred") != StringMember(tb, "preferred")) {
      for (size_t i : members) {
        errs.push_back(Invalid(path(i), g, "pod sets of a group must request the same required "
                                           "or preferred topology level"));
      }
    }
  }
}

void ValidatePodSets(const Json& spec, const Path& p, ErrorList& errs) {
  const Json& podsets = MemberArray(spec, "podSets");
  Path pp = p.Child("podSets");
  if (podsets.empty()) errs.push_back(Required(pp));
  internal::ValidateMaxItems(podsets, kMaxPodSets, pp, errs);
  std::set<std::string> names;
  int with_min = 0;
  for (size_t i = 0; i < podsets.size(); ++i) {
    const Json& ps = podsets[i];
    Path ip = pp.Index(i);
    std::string name(StringMember(ps, "name"));
    for (const auto& m : validation::IsDNS1123Label(name)) {
      errs.push_back(Invalid(ip.Child("name"), name, m));
    }
    if (!names.insert(name).second) errs.push_back(Duplicate(ip.Child("name"), name));
    int64_t count = IntMember(ps, "count", 1);
    ValidateTopologyRequest(MemberObject(ps, "topologyRequest"), count,
                            ip.Child("topologyRequest"), errs);
    if (count < 0) {
      errs.push_back(Invalid(ip.Child("count"), count, "must be greater than or equal to 0"));
    }
    if (HasMember(ps, "minCount")) {
      ++with_min;
      int64_t min = IntMember(ps, "minCount", 1);
      if (min < 1 || min > count) {
        errs.push_back(Invalid(ip.Child("minCount"), min, "minCount should be positive and "
                                                          "less or equal to count"));
      }
    }
    ValidateContainers(MemberObject(MemberObject(ps, "template"), "spec"), ip.Child("template").Child("spec"),
                       errs);
  }
  if (with_min > 1) {
    errs.push_back(Invalid(pp, with_min, "at most one podSet can use minCount"));
  }
  ValidatePodSetGroups(podsets, pp, errs);
}

void ValidatePriority(const Json& spec, const Path& p, ErrorList& errs) {
  if (!HasMember(spec, "priorityClassRef")) return;
  const Json& ref = MemberObject(spec, "priorityClassRef");
  Path rp = p.Child("priorityClassRef");
  if (!HasMember(spec, "priority")) {
    errs.push_back(Required(p.Child("priority"), "priority should not be nil when "
                                                 "priorityClassRef is set"));
  }
  std::string group = std::string(StringMember(ref, "group")), kind = std::string(StringMember(ref, "kind"));
  if (group == "scheduling.k8s.io" && kind != "PriorityClass") {
    errs.push_back(Invalid(rp.Child("kind"), kind, "only the PriorityClass kind is allowed for "
                                                   "the scheduling.k8s.io group"));
  }
  if (group == "kueue.x-k8s.io" && kind != "WorkloadPriorityClass") {
    errs.push_back(Invalid(rp.Child("kind"), kind, "only the WorkloadPriorityClass kind is "
                                                   "allowed for the kueue.x-k8s.io group"));
  }
  std::string name(StringMember(ref, "name"));
  if (HasMember(ref, "name")) internal::ValidateDNSSubdomain(name, rp.Child("name"), errs);
}

void ValidateStatus(const Json& wl, ErrorList& errs) {
  const Json& podsets = MemberArray(MemberObject(wl, "spec"), "podSets");
  std::map<std::string, int64_t> counts;
  for (const Json& ps : podsets) counts[std::string(StringMember(ps, "name"))] = IntMember(ps, "count", 1);
  const Json& status = MemberObject(wl, "status");
  Path sp("status");
  if (meta::IsConditionTrue(wl, kQuotaReserved) && HasMember(status, "admission")) {
    const Json& psas = MemberArray(MemberObject(status, "admission"), "podSetAssignments");
    if (psas.size() != podsets.size()) {
      errs.push_back(Invalid(sp.Child("admission").Child("podSetAssignments"), Json(),
                             "podSetAssignments must have the same number of podSets as the "
                             "spec"));
    }
    for (size_t i = 0; i < psas.size(); ++i) {
      std::string name(StringMember(psas[i], "name"));
      if (!counts.contains(name)) {
        FieldError e = Invalid(sp.Child("admission").Child("podSetAssignments").Index(i)
                                   .Child("name"), name, "");
        e.type = FieldError::Type::kNotFound;
        errs.push_back(e);
      }
    }
  }
  const Json& reclaimable = MemberArray(status, "reclaimablePods");
  for (const Json& rp : reclaimable) {
    std::string name(StringMember(rp, "name"));
    Path p = sp.Child("reclaimablePods").Key(name);
    auto it = counts.find(name);
    if (it == counts.end()) {
      std::vector<std::string> known;
      for (const auto& [n, c] : counts) known.push_back(n);
      errs.push_back(NotSupported(p.Child("name"), name, known));
    } else if (IntMember(rp, "count", 0) > it->second) {
      errs.push_back(Invalid(p.Child("count"), IntMember(rp, "count", 0),
                             "should be less or equal to " + std::to_string(it->second)));
    }
  }
}

}  // namespace

ErrorList ValidateWorkload(const Json& wl) {
  ErrorList errs = internal::ValidateMeta(wl, true);
  const SchemaPtr& schema = internal::SchemasFor(kStorageVersion).workload;
  for (const char* part : {"spec", "status"}) {
    if (wl.contains(part)) {
      AppendErrors(errs, internal::ValidateSchemaConstraints(*schema->Property(part), wl[part],
                                                       Path(part)));
    }
  }
  const Json& spec = MemberObject(wl, "spec");
  Path p("spec");
  ValidatePodSets(spec, p, errs);
  ValidatePriority(spec, p, errs);
  std::string queue(StringMember(spec, "queueName"));
  if (!queue.empty()) internal::ValidateDNSSubdomain(queue, p.Child("queueName"), errs);
  if (HasMember(spec, "maximumExecutionTimeSeconds") &&
      IntMember(spec, "maximumExecutionTimeSeconds", 1) < 1) {
    errs.push_back(Invalid(p.Child("maximumExecutionTimeSeconds"),
                           IntMember(spec, "maximumExecutionTimeSeconds", 1),
                           "must be greater than or equal to 1"));
  }
  ValidateStatus(wl, errs);
  return errs;
}

ErrorList ValidateWorkloadUpdate(const Json& wl, const Json& old) {
  ErrorList errs = ValidateWorkload(wl);
  AppendErrors(errs, internal::ValidateMetaUpdate(wl, old, true));
  const Json& spec = MemberObject(wl, "spec");
  const Json& was = MemberObject(old, "spec");
  Path p("spec");
  bool old_reserved = meta::IsConditionTrue(old, kQuotaReserved);
  bool new_reserved = meta::IsConditionTrue(wl, kQuotaReserved);
  if (old_reserved) {
    // An elastic workload (Kueue's ElasticJobsViaWorkloadSlices, annotation
    // kueue.x-k8s.io/elastic-job: "true") may lower its pod sets' counts in
    // place: a scale-down releases quota at once.
    auto counts_lowered_only = [&]() {
      if (meta::GetAnnotation(wl, "kueue.x-k8s.io/elastic-job").value_or("") != "true") {
        return false;
      }
      const Json& now_sets = MemberArray(spec, "podSets");
      const Json& was_sets = MemberArray(was, "podSets");
      if (now_sets.size() != was_sets.size()) return false;
      for (size_t i = 0; i < now_sets.size(); ++i) {
        Json a = now_sets[i], b = was_sets[i];
        if (IntMember(a, "count", 1) > IntMember(b, "count", 1)) return false;
        a.erase("count");
        b.erase("count");
        if (a != b) return false;
      }
      return true;
    };
    if (MemberArray(spec, "podSets") != MemberArray(was, "podSets") && !counts_lowered_only()) {
      errs.push_back(Invalid(p.Child("podSets"), Json(), "field is immutable"));
    }
    if (HasMember(spec, "priorityClassRef") != HasMember(was, "priorityClassRef")) {
      errs.push_back(Invalid(p.Child("priorityClassRef"), Json(), "priorityClassRef is "
                                                                  "immutable while workload "
                                                                  "quota reserved"));
    } else if (HasMember(spec, "priorityClassRef")) {
      const Json& a = MemberObject(spec, "priorityClassRef");
      const Json& b = MemberObject(was, "priorityClassRef");
      bool pod_class = StringMember(a, "group") == "scheduling.k8s.io";
      for (const char* f : {"group", "kind", "name"}) {
        if (std::string(f) == "name" && !pod_class) continue;
        if (StringMember(a, f) != StringMember(b, f)) {
          errs.push_back(Invalid(p.Child("priorityClassRef").Child(f), std::string(StringMember(a, f)),
                                 "field is immutable while workload quota reserved"));
        }
      }
    }
  }
  if (old_reserved && new_reserved && HasMember(spec, "queueName") && HasMember(was, "queueName") &&
      StringMember(spec, "queueName") != StringMember(was, "queueName")) {
    errs.push_back(Invalid(p.Child("queueName"), std::string(StringMember(spec, "queueName")),
                           "queueName is immutable while workload quota reserved"));
  }
  if (meta::IsConditionTrue(old, kAdmitted) && meta::IsConditionTrue(wl, kAdmitted) &&
      IntMember(spec, "maximumExecutionTimeSeconds", 0) != IntMember(was, "maximumExecutionTimeSeconds", 0)) {
    errs.push_back(Invalid(p.Child("maximumExecutionTimeSeconds"),
                           IntMember(spec, "maximumExecutionTimeSeconds", 0),
                           "maximumExecutionTimeSeconds is immutable while workload quota "
                           "reserved"));
  }
  return errs;
}

// status.admission without the pod sets' topology assignments: those may be
// rewritten when a node of a topology-aware workload fails (Kueue's
// TASFailedNodeReplacement); nothing else of an admission changes.
Json WithoutTopologyAssignments(const Json& admission) {
  Json out = admission;
  if (Json* sets = FindMutableMemberAt(out, {"podSetAssignments"}); sets && sets->is_array()) {
    for (Json& psa : *sets) {
      if (psa.is_object()) psa.erase("topologyAssignment");
    }
  }
  return out;
}

ErrorList ValidateWorkloadStatusUpdate(const Json& wl, const Json& old) {
  ErrorList errs = ValidateWorkloadUpdate(wl, old);
  const Json& now = MemberObject(wl, "status");
  const Json& was = MemberObject(old, "status");
  if (HasMember(now, "admission") && HasMember(was, "admission") &&
      MemberObject(now, "admission") != MemberObject(was, "admission") &&
      WithoutTopologyAssignments(MemberObject(now, "admission")) !=
          WithoutTopologyAssignments(MemberObject(was, "admission"))) {
    errs.push_back(Invalid(Path("status").Child("admission"), Json(), "field is immutable"));
  }
  return errs;
}

}  // namespace batchd::api::kueue
