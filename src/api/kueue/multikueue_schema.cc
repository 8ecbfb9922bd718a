// MultiKueueCluster (`mkc`) and MultiKueueConfig (`mkconf`), kueue.x-k8s.io,
// cluster-scoped: the worker clusters of the built-in
// `kueue.x-k8s.io/multikueue` AdmissionCheck and the lists of them an
// AdmissionCheck's parameters name. Field names as in Kueue's Go types:
// v1beta2 nests the connection under `spec.clusterSource`, v1beta1 has
// `spec.kubeConfig` directly (conversion.cc). Limits from the CRD markers.
//
// batchd connects only through a kubeconfig (`locationType: Secret`, the
// Secret's `kubeconfig` key in namespace kueue-system, or `Path`, a file on
// the manager's disk); a `clusterProfileRef` (ClusterInventory API) is
// refused rather than accepted and ignored.
#include <set>

#include "api/core/v1/core_v1.h"
#include "api/core/v1/kind_helpers.h"
#include "api/json_access.h"
#include "api/kueue/internal/schemas.h"
#include "api/kueue/internal/util.h"
#include "api/kueue/kueue.h"
#include "api/validation/object_meta.h"

namespace batchd::api::kueue {
namespace internal {

namespace {

SchemaPtr KubeConfigSchema(const SchemaContext& c) {
  return Object(c.Ref("KubeConfig"), "How to reach the worker cluster.")
      .Field("location", Str("The Secret's name (locationType Secret; the kubeconfig is its "
                             "\"kubeconfig\" key) or the file's path (Path); 1 to 256 "
                             "characters."))
      .Field("locationType", Str("Secret (default) or Path.").Enum({"Secret", "Path"}))
      .Require("location")
      .Build();
}

SchemaPtr ConditionsStatus(const SchemaContext& c, const char* name) {
  return Object(c.Ref(name), "The observed state.")
      .Field("conditions", ArrayOf(core_v1::ConditionSchema(), "Latest observations (Active); at "
                                                                           "most 16.")
                                 .MergeKey("type"))
      .Build();
}

}  // namespace

SchemaPtr MultiKueueClusterSchema(const SchemaContext& c) {
  auto spec = Object(c.Ref("MultiKueueClusterSpec"), "The desired state of a MultiKueueCluster.");
  SchemaPtr profile = Object(c.Ref("ClusterProfileReference"), "A ClusterProfile (not "
                                                                "supported by batchd).")
                          .Field("name", Str("The ClusterProfile's name."))
                          .Build();
  if (c.v1beta1) {
    spec.Field("kubeConfig", KubeConfigSchema(c));
    spec.Field("clusterProfile", profile);
  } else {
    spec.Field("clusterSource",
               Object(c.Ref("ClusterSource"), "Exactly one way to connect to the cluster.")
                   .Field("kubeConfig", KubeConfigSchema(c))
                   .Field("clusterProfileRef", profile)
                   .Build());
  }
  return core_v1::TopLevel(c.Ref("MultiKueueCluster"), "MultiKueueCluster is a worker cluster "
                                                       "of MultiKueue.")
      .Field("spec", spec.Build())
      .Field("status", ConditionsStatus(c, "MultiKueueClusterStatus"))
      .Build();
}

SchemaPtr MultiKueueConfigSchema(const SchemaContext& c) {
  SchemaPtr spec =
      Object(c.Ref("MultiKueueConfigSpec"), "The desired state of a MultiKueueConfig.")
          .Field("clusters", ArrayOf(Str(), "Names of the MultiKueueClusters the workloads are "
                                            "dispatched to; 1 to 20, distinct.")
                                 .ListType("set"))
          .Require("clusters")
          .Build();
  return core_v1::TopLevel(c.Ref("MultiKueueConfig"), "MultiKueueConfig lists the worker "
                                                      "clusters of a MultiKueue AdmissionCheck.")
      .Field("spec", spec)
      .Build();
}

}  // namespace internal

void SetDefaultsMultiKueueCluster(Json& mkc) {
  if (FindMemberAt(mkc, {"spec", "clusterSource", "kubeConfig"}) == nullptr) return;
  Json& kc = mkc["spec"]["clusterSource"]["kubeConfig"];
  if (kc.is_object() && !HasMember(kc, "locationType")) kc["locationType"] = "Secret";
}

ErrorList ValidateMultiKueueCluster(const Json& mkc) {
  ErrorList errs = internal::ValidateMeta(mkc, false);
  const internal::KueueSchemas& s = internal::SchemasFor(kStorageVersion);
  for (const char* part : {"spec", "status"}) {
    const Schema* ss = s.multikueue_cluster->Property(part);
    if (ss != nullptr && mkc.contains(part)) {
      AppendErrors(errs, internal::ValidateSchemaConstraints(*ss, mkc[part], Path(part)));
    }
  }
  const Path src = Path("spec").Child("clusterSource");
  const Json& source = MemberObject(MemberObject(mkc, "spec"), "clusterSource");
  const bool has_kc = HasMember(source, "kubeConfig");
  const bool has_profile = HasMember(source, "clusterProfileRef");
  if (!has_kc && !has_profile) {
    errs.push_back(Required(src, "exactly one of kubeConfig or clusterProfileRef is required"));
  } else if (has_kc && has_profile) {
    errs.push_back(Invalid(src, Member(MemberObject(mkc, "spec"), "clusterSource"),
                           "exactly one of kubeConfig or clusterProfileRef must be set"));
  } else if (has_profile) {
    errs.push_back(Forbidden(src.Child("clusterProfileRef"),
                             "ClusterProfile is not supported by batchd; use kubeConfig"));
  }
  if (has_kc) {
    const Path kp = src.Child("kubeConfig");
    const Json& kc = MemberObject(source, "kubeConfig");
    const std::string loc(StringMember(kc, "location"));
    if (loc.empty()) {
      errs.push_back(Required(kp.Child("location")));
    } else if (loc.size() > 256) {
      errs.push_back(TooLong(kp.Child("location"), loc, 256));
    } else if (StringMember(kc, "locationType") != "Path") {
      for (const std::string& m : validation::IsDNS1123Subdomain(loc)) {
        errs.push_back(Invalid(kp.Child("location"), loc, m));
      }
    }
  }
  const Json& conds = MemberArray(MemberObject(mkc, "status"), "conditions");
  if (conds.size() > 16) {
    errs.push_back(TooMany(Path("status").Child("conditions"), conds.size(), 16));
  }
  return errs;
}

ErrorList ValidateMultiKueueClusterUpdate(const Json& mkc, const Json& old) {
  ErrorList errs = ValidateMultiKueueCluster(mkc);
  AppendErrors(errs, internal::ValidateMetaUpdate(mkc, old, false));
  return errs;
}

ErrorList ValidateMultiKueueConfig(const Json& cfg) {
  ErrorList errs = internal::ValidateMeta(cfg, false);
  const internal::KueueSchemas& s = internal::SchemasFor(kStorageVersion);
  if (const Schema* ss = s.multikueue_config->Property("spec");
      ss != nullptr && cfg.contains("spec")) {
    AppendErrors(errs, internal::ValidateSchemaConstraints(*ss, cfg["spec"], Path("spec")));
  }
  const Path p = Path("spec").Child("clusters");
  if (!HasMember(cfg, "spec")) {
    errs.push_back(Required(Path("spec")));
    return errs;
  }
  const Json& clusters = MemberArray(MemberObject(cfg, "spec"), "clusters");
  if (clusters.empty()) errs.push_back(Required(p, "at least one cluster is required"));
  if (clusters.size() > 20) errs.push_back(TooMany(p, clusters.size(), 20));
  std::set<std::string> seen;
  for (size_t i = 0; i < clusters.size(); ++i) {
    const std::string name(AsString(clusters[i]));
    if (name.empty()) {
      errs.push_back(Required(p.Index(i)));
    } else if (name.size() > 256) {
      errs.push_back(TooLong(p.Index(i), name, 256));
    }
    if (!seen.insert(name).second) errs.push_back(Duplicate(p.Index(i), clusters[i]));
  }
  return errs;
}

ErrorList ValidateMultiKueueConfigUpdate(const Json& cfg, const Json& old) {
  ErrorList errs = ValidateMultiKueueConfig(cfg);
  AppendErrors(errs, internal::ValidateMetaUpdate(cfg, old, false));
  return errs;
}

}  // namespace batchd::api::kueue
