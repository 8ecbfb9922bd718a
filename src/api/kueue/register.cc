// The KindDefs of kueue.x-k8s.io: names, scope, short names and subresources
// as Kueue's CRDs declare them (v1beta2 kubebuilder markers), wired to the
// schemas, defaults, validation and printers of this package.
#include "api/kueue/internal/printers.h"
#include "api/kueue/internal/schemas.h"
#include "api/kueue/kueue.h"

namespace batchd::api::kueue {
namespace {

struct Names {
  const char* kind;
  const char* plural;
  const char* singular;
  bool namespaced;
  std::vector<std::string> short_names;
  bool status;
};

KindDef Base(const Names& n, std::string_view version, SchemaPtr schema) {
  KindDef k;
  k.group = kGroup;
  k.version = std::string(version);
  k.kind = n.kind;
  k.plural = n.plural;
  k.singular = n.singular;
  k.namespaced = n.namespaced;
  k.short_names = n.short_names;
  k.has_status_subresource = n.status;
  if (n.status) k.subresources = {"status"};
  k.schema = std::move(schema);
  internal::SetPrinter(k);
  return k;
}

// Update validation that also covers the status subresource.
template <typename F>
void SetUpdate(KindDef& k, F f) {
  k.validate_update = f;
  k.validate_status_update = f;
}

}  // namespace

std::vector<KindDef> Kinds(std::string_view version) {
  const internal::KueueSchemas& s = internal::SchemasFor(version);
  std::vector<KindDef> out;

  KindDef rf = Base({"ResourceFlavor", kResourceFlavors, "resourceflavor", false,
                     {"flavor", "flavors", "rf"}, false},
                    version, s.resource_flavor);
  rf.validate_create = ValidateResourceFlavor;
  rf.validate_update = ValidateResourceFlavorUpdate;
  out.push_back(std::move(rf));

  KindDef cq = Base({"ClusterQueue", kClusterQueues, "clusterqueue", false, {"cq"}, true},
                    version, s.cluster_queue);
  cq.set_defaults = SetDefaultsClusterQueue;
  cq.validate_create = ValidateClusterQueue;
  SetUpdate(cq, ValidateClusterQueueUpdate);
  out.push_back(std::move(cq));

  KindDef lq = Base({"LocalQueue", kLocalQueues, "localqueue", true, {"queue", "queues", "lq"},
                     true},
                    version, s.local_queue);
  lq.set_defaults = SetDefaultsLocalQueue;
  lq.validate_create = ValidateLocalQueue;
  SetUpdate(lq, ValidateLocalQueueUpdate);
  out.push_back(std::move(lq));

  KindDef co = Base({"Cohort", kCohorts, "cohort", false, {"co"}, true}, version, s.cohort);
  co.set_defaults = SetDefaultsCohort;
  co.validate_create = ValidateCohort;
  SetUpdate(co, ValidateCohortUpdate);
  out.push_back(std::move(co));

  KindDef wl = Base({"Workload", kWorkloads, "workload", true, {"wl"}, true}, version,
                    s.workload);
  wl.set_defaults = SetDefaultsWorkload;
  wl.validate_create = ValidateWorkload;
  wl.validate_update = ValidateWorkloadUpdate;
  wl.validate_status_update = ValidateWorkloadStatusUpdate;
  out.push_back(std::move(wl));

  KindDef wpc = Base({"WorkloadPriorityClass", kWorkloadPriorityClasses,
                      "workloadpriorityclass", false, {"wpc"}, false},
                     version, s.workload_priority_class);
  wpc.validate_create = ValidateWorkloadPriorityClass;
  wpc.validate_update = ValidateWorkloadPriorityClassUpdate;
  out.push_back(std::move(wpc));

  KindDef ac = Base({"AdmissionCheck", kAdmissionChecks, "admissioncheck", false, {"ac"}, true},
                    version, s.admission_check);
  ac.validate_create = ValidateAdmissionCheck;
  SetUpdate(ac, ValidateAdmissionCheckUpdate);
  out.push_back(std::move(ac));

  KindDef topo = Base({"Topology", kTopologies, "topology", false, {"topo"}, false}, version,
                      s.topology);
  topo.validate_create = ValidateTopology;
  topo.validate_update = ValidateTopologyUpdate;
  out.push_back(std::move(topo));

  KindDef prc = Base({"ProvisioningRequestConfig", kProvisioningRequestConfigs,
                      "provisioningrequestconfig", false, {"prc"}, false},
                     version, s.provisioning_request_config);
  prc.validate_create = ValidateProvisioningRequestConfig;
  prc.validate_update = ValidateProvisioningRequestConfigUpdate;
  out.push_back(std::move(prc));

  KindDef mkc = Base({"MultiKueueCluster", kMultiKueueClusters, "multikueuecluster", false,
                      {"mkc"}, true},
                     version, s.multikueue_cluster);
  mkc.set_defaults = SetDefaultsMultiKueueCluster;
  mkc.validate_create = ValidateMultiKueueCluster;
  SetUpdate(mkc, ValidateMultiKueueClusterUpdate);
  out.push_back(std::move(mkc));

  KindDef mkconf = Base({"MultiKueueConfig", kMultiKueueConfigs, "multikueueconfig", false,
                         {"mkconf"}, false},
                        version, s.multikueue_config);
  mkconf.validate_create = ValidateMultiKueueConfig;
  mkconf.validate_update = ValidateMultiKueueConfigUpdate;
  out.push_back(std::move(mkconf));
  return out;
}

void RegisterKinds(Scheme& scheme) {
  for (KindDef& k : Kinds(kStorageVersion)) scheme.Add(std::move(k));
  for (KindDef& k : Kinds(kV1beta1)) {
    k.storage = scheme.ByResource(kGroup, kStorageVersion, k.plural);
    std::string kind = k.kind;
    k.to_storage = [kind](Json& obj) { ConvertToV1beta2(kind, obj); };
    k.from_storage = [kind](Json& obj) { ConvertToV1beta1(kind, obj); };
    // Only the storage version's hooks run on writes.
    k.set_defaults = nullptr;
    k.validate_create = nullptr;
    k.validate_update = nullptr;
    k.validate_status_update = nullptr;
    scheme.Add(std::move(k));
  }
}

}  // namespace batchd::api::kueue
