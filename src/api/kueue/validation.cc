// Validation of ResourceFlavor, ClusterQueue, LocalQueue, Cohort,
// WorkloadPriorityClass, AdmissionCheck and Topology: Kueue's CRD limits and
// CEL rules plus its validating webhooks, with Kubernetes field paths.
#include <set>

#include "api/kueue/internal/schemas.h"
#include "api/json_access.h"
#include "api/kueue/internal/util.h"
#include "api/kueue/kueue.h"
#include "api/labels/selector.h"
#include "api/validation/object_meta.h"

namespace batchd::api::kueue {
namespace {

using internal::SchemasFor;

constexpr size_t kMaxResourceGroups = 16;
constexpr size_t kMaxPerGroup = 64;
constexpr size_t kMaxTotalFlavors = 256;

ErrorList SchemaRules(const SchemaPtr& schema, const Json& obj) {
  ErrorList errs;
  for (const char* part : {"spec", "status"}) {
    const Schema* s = schema->Property(part);
    if (s && obj.contains(part)) AppendErrors(errs, internal::ValidateSchemaConstraints(*s, obj[part], Path(part)));
  }
  return errs;
}

void ValidateResourceQuota(const Json& rq, bool has_cohort, const Path& p, ErrorList& errs) {
  internal::ValidateNonNegative(rq, "nominalQuota", p, errs);
  internal::ValidateNonNegative(rq, "borrowingLimit", p, errs);
  internal::ValidateNonNegative(rq, "lendingLimit", p, errs);
  for (const char* limit : {"borrowingLimit", "lendingLimit"}) {
    if (HasMember(rq, limit) && !has_cohort) {
      errs.push_back(Forbidden(p.Child(limit), std::string(limit) + " must be nil when cohort "
                                                                    "is empty"));
    }
  }
  auto nominal = internal::QuantityAt(rq, "nominalQuota");
  auto lending = internal::QuantityAt(rq, "lendingLimit");
  if (nominal && lending && lending->Cmp(*nominal) > 0) {
    errs.push_back(Invalid(p.Child("lendingLimit"), lending->String(),
                           "must be less than or equal to the nominalQuota"));
  }
}

void ValidateFlavorQuotas(const Json& fq, const Json& covered, bool has_cohort, const Path& p,
                          ErrorList& errs) {
  internal::ValidateDNSSubdomain(std::string(StringMember(fq, "name")), p.Child("name"), errs);
  const Json& resources = MemberArray(fq, "resources");
  if (resources.size() != covered.size()) {
    errs.push_back(Invalid(p.Child("resources"), Json(), "must have the same number of "
                                                         "resources as the coveredResources"));
  }
  for (size_t k = 0; k < resources.size(); ++k) {
    Path rp = p.Child("resources").Index(k);
    std::string name(StringMember(resources[k], "name"));
    if (k < covered.size() && covered[k].is_string() && name != covered[k].get<std::string>()) {
      errs.push_back(Invalid(rp.Child("name"), name, "must match the name in coveredResources"));
    }
    ValidateResourceQuota(resources[k], has_cohort, rp, errs);
  }
}

// Shared by ClusterQueue and Cohort: `has_parent` is "cohortName set" for a
// ClusterQueue and "parentName set" for a Cohort.
ErrorList ValidateResourceGroups(const Json& groups, bool has_parent, const Path& path) {
  ErrorList errs;
  internal::ValidateMaxItems(groups, kMaxResourceGroups, path, errs);
  std::set<std::string> resources, flavors;
  size_t total_flavors = 0;
  for (size_t i = 0; i < groups.size(); ++i) {
    Path gp = path.Index(i);
    const Json& covered = MemberArray(groups[i], "coveredResources");
    const Json& fqs = MemberArray(groups[i], "flavors");
    // Absent lists are reported by the schema's required check; empty ones here.
    if (HasMember(groups[i], "coveredResources") && covered.empty()) {
      errs.push_back(Required(gp.Child("coveredResources")));
    }
    if (HasMember(groups[i], "flavors") && fqs.empty()) errs.push_back(Required(gp.Child("flavors")));
    internal::ValidateMaxItems(covered, kMaxPerGroup, gp.Child("coveredResources"), errs);
    internal::ValidateMaxItems(fqs, kMaxPerGroup, gp.Child("flavors"), errs);
    total_flavors += fqs.size();
    for (size_t j = 0; j < covered.size(); ++j) {
      std::string r = covered[j].is_string() ? covered[j].get<std::string>() : "";
      Path rp = gp.Child("coveredResources").Index(j);
      internal::ValidateQualifiedName(r, rp, errs);
      if (!resources.insert(r).second) errs.push_back(Duplicate(rp, r));
    }
    for (size_t j = 0; j < fqs.size(); ++j) {
      Path fp = gp.Child("flavors").Index(j);
      ValidateFlavorQuotas(fqs[j], covered, has_parent, fp, errs);
      std::string f(StringMember(fqs[j], "name"));
      if (!flavors.insert(f).second) errs.push_back(Duplicate(fp.Child("name"), f));
    }
  }
  if (total_flavors > kMaxTotalFlavors) {
    errs.push_back(Invalid(path, total_flavors, "must have at most 256 flavors in total"));
  }
  return errs;
}

}  // namespace

ErrorList ValidateResourceFlavor(const Json& rf) {
  ErrorList errs = internal::ValidateMeta(rf, false);
  AppendErrors(errs, SchemaRules(SchemasFor(kStorageVersion).resource_flavor, rf));
  const Json& spec = MemberObject(rf, "spec");
  Path p("spec");
  internal::ValidateMaxItems(MemberObject(spec, "nodeLabels"), 8, p.Child("nodeLabels"), errs);
  AppendErrors(errs, validation::ValidateLabels(MemberObject(spec, "nodeLabels"), p.Child("nodeLabels")));
  const Json& taints = MemberArray(spec, "nodeTaints");
  internal::ValidateMaxItems(taints, 8, p.Child("nodeTaints"), errs);
  for (size_t i = 0; i < taints.size(); ++i) {
    std::string key(StringMember(taints[i], "key"));
    if (!key.empty()) internal::ValidateQualifiedName(key, p.Child("nodeTaints").Index(i).Child("key"), errs);
  }
  internal::ValidateMaxItems(MemberArray(spec, "tolerations"), 8, p.Child("tolerations"), errs);
  internal::ValidateTolerations(MemberArray(spec, "tolerations"), p.Child("tolerations"), errs);
  if (HasMember(spec, "topologyName")) {
    internal::ValidateDNSSubdomain(std::string(StringMember(spec, "topologyName")), p.Child("topologyName"), errs);
    if (MemberObject(spec, "nodeLabels").empty()) {
      errs.push_back(Invalid(p, Json(), "at least one nodeLabel is required when topology is "
                                        "set"));
    }
  }
  const Json& weights = MemberObject(spec, "resourceWeights");
  internal::ValidateMaxItems(weights, 16, p.Child("resourceWeights"), errs);
  for (const auto& [name, w] : weights.items()) {
    auto q = internal::QuantityAt(weights, name);
    if (q && q->Sign() <= 0) {
      errs.push_back(Invalid(p.Child("resourceWeights").Key(name), q->String(),
                             "must be greater than 0"));
    }
  }
  return errs;
}

ErrorList ValidateResourceFlavorUpdate(const Json& rf, const Json& old) {
  ErrorList errs = ValidateResourceFlavor(rf);
  AppendErrors(errs, internal::ValidateMetaUpdate(rf, old, false));
  if (HasMember(MemberObject(old, "spec"), "topologyName") && MemberObject(rf, "spec") != MemberObject(old, "spec")) {
    errs.push_back(Invalid(Path("spec"), Json(), "resourceFlavorSpec are immutable when "
                                                 "topologyName is set"));
  }
  return errs;
}

namespace {

void ValidateFairSharing(const Json& spec, const Path& p, ErrorList& errs) {
  internal::ValidateNonNegative(MemberObject(spec, "fairSharing"), "weight", p.Child("fairSharing"),
                                errs);
}

void ValidatePolicies(const Json& spec, const Path& p, ErrorList& errs) {
  const Json& pre = MemberObject(spec, "preemption");
  if (StringMember(pre, "reclaimWithinCohort") == "Never" && HasMember(pre, "borrowWithinCohort") &&
      std::string(StringMember(MemberObject(pre, "borrowWithinCohort"), "policy")) != "Never") {
    errs.push_back(Invalid(p.Child("preemption"), Json(), "reclaimWithinCohort=Never and "
                                                          "borrowWithinCohort.Policy!=Never"));
  }
  const Json& ff = MemberObject(spec, "flavorFungibility");
  if (HasMember(ff, "preference") && (StringMember(ff, "whenCanBorrow") != "TryNextFlavor" ||
                                StringMember(ff, "whenCanPreempt") != "TryNextFlavor")) {
    errs.push_back(Invalid(p.Child("flavorFungibility"), Json(),
                           "preference can only be set when both whenCanBorrow and "
                           "whenCanPreempt are TryNextFlavor"));
  }
  const Json& rules = MemberArray(MemberObject(spec, "admissionChecksStrategy"), "admissionChecks");
  Path rp = p.Child("admissionChecksStrategy").Child("admissionChecks");
  internal::ValidateMaxItems(rules, 64, rp, errs);
  std::set<std::string> seen;
  for (size_t i = 0; i < rules.size(); ++i) {
    std::string name(StringMember(rules[i], "name"));
    if (!seen.insert(name).second) errs.push_back(Duplicate(rp.Index(i).Child("name"), name));
    internal::ValidateMaxItems(MemberArray(rules[i], "onFlavors"), 64,
                               rp.Index(i).Child("onFlavors"), errs);
  }
}

}  // namespace

ErrorList ValidateClusterQueue(const Json& cq) {
  ErrorList errs = internal::ValidateMeta(cq, false);
  AppendErrors(errs, SchemaRules(SchemasFor(kStorageVersion).cluster_queue, cq));
  const Json& spec = MemberObject(cq, "spec");
  Path p("spec");
  std::string cohort(StringMember(spec, "cohortName"));
  if (!cohort.empty()) internal::ValidateDNSSubdomain(cohort, p.Child("cohortName"), errs);
  AppendErrors(errs, ValidateResourceGroups(MemberArray(spec, "resourceGroups"), !cohort.empty(),
                                      p.Child("resourceGroups")));
  if (HasMember(spec, "namespaceSelector")) {
    AppendErrors(errs, labels::ValidateLabelSelector(spec["namespaceSelector"],
                                               p.Child("namespaceSelector")));
  }
  ValidatePolicies(spec, p, errs);
  ValidateFairSharing(spec, p, errs);
  return errs;
}

ErrorList ValidateClusterQueueUpdate(const Json& cq, const Json& old) {
  ErrorList errs = ValidateClusterQueue(cq);
  AppendErrors(errs, internal::ValidateMetaUpdate(cq, old, false));
  return errs;
}

ErrorList ValidateLocalQueue(const Json& lq) {
  ErrorList errs = internal::ValidateMeta(lq, true);
  AppendErrors(errs, SchemaRules(SchemasFor(kStorageVersion).local_queue, lq));
  const Json& spec = MemberObject(lq, "spec");
  std::string cq(StringMember(spec, "clusterQueue"));
  if (!cq.empty()) internal::ValidateDNSSubdomain(cq, Path("spec").Child("clusterQueue"), errs);
  ValidateFairSharing(spec, Path("spec"), errs);
  return errs;
}

ErrorList ValidateLocalQueueUpdate(const Json& lq, const Json& old) {
  ErrorList errs = ValidateLocalQueue(lq);
  AppendErrors(errs, internal::ValidateMetaUpdate(lq, old, true));
  AppendErrors(errs, validation::ValidateImmutableField(std::string(StringMember(MemberObject(lq, "spec"), "clusterQueue")),
                                                  std::string(StringMember(MemberObject(old, "spec"), "clusterQueue")),
                                                  Path("spec").Child("clusterQueue")));
  return errs;
}

ErrorList ValidateCohort(const Json& cohort) {
  ErrorList errs = internal::ValidateMeta(cohort, false);
  AppendErrors(errs, SchemaRules(SchemasFor(kStorageVersion).cohort, cohort));
  const Json& spec = MemberObject(cohort, "spec");
  Path p("spec");
  std::string parent(StringMember(spec, "parentName"));
  if (!parent.empty()) {
    internal::ValidateDNSSubdomain(parent, p.Child("parentName"), errs);
    if (parent == std::string(StringMember(MemberObject(cohort, "metadata"), "name"))) {
      errs.push_back(Invalid(p.Child("parentName"), parent, "cannot create self-cycle"));
    }
  }
  AppendErrors(errs, ValidateResourceGroups(MemberArray(spec, "resourceGroups"), !parent.empty(),
                                      p.Child("resourceGroups")));
  ValidateFairSharing(spec, p, errs);
  return errs;
}

ErrorList ValidateCohortUpdate(const Json& cohort, const Json& old) {
  ErrorList errs = ValidateCohort(cohort);
  AppendErrors(errs, internal::ValidateMetaUpdate(cohort, old, false));
  return errs;
}

ErrorList ValidateWorkloadPriorityClass(const Json& wpc) {
  ErrorList errs = internal::ValidateMeta(wpc, false);
  if (!HasMember(wpc, "value")) errs.push_back(Required(Path("value")));
  std::string d(StringMember(wpc, "description"));
  if (d.size() > 2048) errs.push_back(TooLong(Path("description"), d, 2048));
  return errs;
}

ErrorList ValidateWorkloadPriorityClassUpdate(const Json& wpc, const Json& old) {
  ErrorList errs = ValidateWorkloadPriorityClass(wpc);
  AppendErrors(errs, internal::ValidateMetaUpdate(wpc, old, false));
  return errs;
}

ErrorList ValidateAdmissionCheck(const Json& ac) {
  ErrorList errs = internal::ValidateMeta(ac, false);
  AppendErrors(errs, SchemaRules(SchemasFor(kStorageVersion).admission_check, ac));
  const Json& spec = MemberObject(ac, "spec");
  if (HasMember(spec, "controllerName") && StringMember(spec, "controllerName").empty()) {
    errs.push_back(Required(Path("spec").Child("controllerName")));
  }
  return errs;
}

ErrorList ValidateAdmissionCheckUpdate(const Json& ac, const Json& old) {
  ErrorList errs = ValidateAdmissionCheck(ac);
  AppendErrors(errs, internal::ValidateMetaUpdate(ac, old, false));
  AppendErrors(errs, validation::ValidateImmutableField(std::string(StringMember(MemberObject(ac, "spec"), "controllerName")),
                                                  std::string(StringMember(MemberObject(old, "spec"), "controllerName")),
                                                  Path("spec").Child("controllerName")));
  return errs;
}

ErrorList ValidateTopology(const Json& topo) {
  ErrorList errs = internal::ValidateMeta(topo, false);
  AppendErrors(errs, SchemaRules(SchemasFor(kStorageVersion).topology, topo));
  const Json& levels = MemberArray(MemberObject(topo, "spec"), "levels");
  Path p = Path("spec").Child("levels");
  if (HasMember(MemberObject(topo, "spec"), "levels") && levels.empty()) errs.push_back(Required(p));
  internal::ValidateMaxItems(levels, 16, p, errs);
  std::set<std::string> seen;
  for (size_t i = 0; i < levels.size(); ++i) {
    std::string label(StringMember(levels[i], "nodeLabel"));
    internal::ValidateQualifiedName(label, p.Index(i).Child("nodeLabel"), errs);
    if (!seen.insert(label).second) {
      errs.push_back(Invalid(p.Index(i).Child("nodeLabel"), label, "must be unique"));
    }
    if (label == "kubernetes.io/hostname" && i + 1 != levels.size()) {
      errs.push_back(Invalid(p.Index(i).Child("nodeLabel"), label, "the kubernetes.io/hostname label can only be used at "
                                        "the lowest level of topology"));
    }
  }
  return errs;
}

ErrorList ValidateTopologyUpdate(const Json& topo, const Json& old) {
  ErrorList errs = ValidateTopology(topo);
  AppendErrors(errs, internal::ValidateMetaUpdate(topo, old, false));
  const Json& now = MemberArray(MemberObject(topo, "spec"), "levels");
  const Json& was = MemberArray(MemberObject(old, "spec"), "levels");
  auto hostname_lowest = [](const Json& levels) {
    return !levels.empty() && std::string(StringMember(levels.back(), "nodeLabel")) == "kubernetes.io/hostname";
  };
  // Levels may change only while kubernetes.io/hostname stays the lowest level.
  if (now != was && !(hostname_lowest(now) && hostname_lowest(was))) {
    errs.push_back(Invalid(Path("spec").Child("levels"), Json(), "field is immutable"));
  }
  return errs;
}

}  // namespace batchd::api::kueue
