// kueue.x-k8s.io: Kueue's API objects served as Kueue's CRDs serve them —
// ResourceFlavor, ClusterQueue, LocalQueue, Cohort, Workload,
// WorkloadPriorityClass, AdmissionCheck, Topology, ProvisioningRequestConfig,
// MultiKueueCluster and MultiKueueConfig, stored as v1beta2 and
// also served as v1beta1 (converted at the API boundary). Field names are
// exactly Kueue's, so code elsewhere reads these JSON documents by Kueue's
// v1beta2 field names. Defaults and validation follow Kueue's CRD defaults,
// CEL rules and webhooks, with Kubernetes-style field paths.
//
// Everything here is stateless and thread-safe; schemas are built once.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "api/field_error.h"
#include "api/kind.h"
#include "api/schema.h"

namespace batchd::api::kueue {

inline constexpr char kGroup[] = "kueue.x-k8s.io";
inline constexpr char kStorageVersion[] = "v1beta2";
inline constexpr char kV1beta1[] = "v1beta1";

// Labels and annotations Kueue defines on jobs.
inline constexpr char kQueueNameLabel[] = "kueue.x-k8s.io/queue-name";
inline constexpr char kQueueNameAnnotation[] = "kueue.x-k8s.io/queue-name";
inline constexpr char kPriorityClassLabel[] = "kueue.x-k8s.io/priority-class";
inline constexpr char kResourceInUseFinalizer[] = "kueue.x-k8s.io/resource-in-use";

// Workload condition types.
inline constexpr char kQuotaReserved[] = "QuotaReserved";
inline constexpr char kAdmitted[] = "Admitted";
inline constexpr char kFinished[] = "Finished";

// Plural resource names (use with Scheme::ByResource(kGroup, kStorageVersion, ...)).
inline constexpr char kResourceFlavors[] = "resourceflavors";
inline constexpr char kClusterQueues[] = "clusterqueues";
inline constexpr char kLocalQueues[] = "localqueues";
inline constexpr char kCohorts[] = "cohorts";
inline constexpr char kWorkloads[] = "workloads";
inline constexpr char kWorkloadPriorityClasses[] = "workloadpriorityclasses";
inline constexpr char kAdmissionChecks[] = "admissionchecks";
inline constexpr char kTopologies[] = "topologies";
inline constexpr char kProvisioningRequestConfigs[] = "provisioningrequestconfigs";
inline constexpr char kMultiKueueClusters[] = "multikueueclusters";
inline constexpr char kMultiKueueConfigs[] = "multikueueconfigs";

// Defaulting (CRD defaults + mutating webhooks) on v1beta2 objects.
void SetDefaultsClusterQueue(Json& cq);
void SetDefaultsLocalQueue(Json& lq);
void SetDefaultsCohort(Json& cohort);
void SetDefaultsWorkload(Json& wl);
void SetDefaultsMultiKueueCluster(Json& mkc);

// Validation (CEL rules + validating webhooks) on v1beta2 objects.
ErrorList ValidateResourceFlavor(const Json& rf);
ErrorList ValidateResourceFlavorUpdate(const Json& rf, const Json& old);
ErrorList ValidateClusterQueue(const Json& cq);
ErrorList ValidateClusterQueueUpdate(const Json& cq, const Json& old);
ErrorList ValidateLocalQueue(const Json& lq);
ErrorList ValidateLocalQueueUpdate(const Json& lq, const Json& old);
ErrorList ValidateCohort(const Json& cohort);
ErrorList ValidateCohortUpdate(const Json& cohort, const Json& old);
ErrorList ValidateWorkload(const Json& wl);
ErrorList ValidateWorkloadUpdate(const Json& wl, const Json& old);
ErrorList ValidateWorkloadStatusUpdate(const Json& wl, const Json& old);
ErrorList ValidateWorkloadPriorityClass(const Json& wpc);
ErrorList ValidateWorkloadPriorityClassUpdate(const Json& wpc, const Json& old);
ErrorList ValidateAdmissionCheck(const Json& ac);
ErrorList ValidateAdmissionCheckUpdate(const Json& ac, const Json& old);
ErrorList ValidateTopology(const Json& topo);
ErrorList ValidateTopologyUpdate(const Json& topo, const Json& old);
ErrorList ValidateProvisioningRequestConfig(const Json& prc);
ErrorList ValidateProvisioningRequestConfigUpdate(const Json& prc, const Json& old);
ErrorList ValidateMultiKueueCluster(const Json& mkc);
ErrorList ValidateMultiKueueClusterUpdate(const Json& mkc, const Json& old);
ErrorList ValidateMultiKueueConfig(const Json& cfg);
ErrorList ValidateMultiKueueConfigUpdate(const Json& cfg, const Json& old);

// Conversion between the stored v1beta2 and the served v1beta1 shape of
// `kind` ("ClusterQueue", ...), in place; both rewrite `apiVersion`. Kinds
// whose shape is identical in both versions only get apiVersion rewritten.
// Deprecated v1beta1-only fields with no v1beta2 equivalent are dropped
// (ClusterQueue status.pendingWorkloadsStatus, LocalQueue status.flavors,
// AdmissionCheck spec.retryDelayMinutes), as Kueue's conversion drops them.
void ConvertToV1beta2(std::string_view kind, Json& obj);
void ConvertToV1beta1(std::string_view kind, Json& obj);

// The KindDefs RegisterKinds adds, for one version ("v1beta2" or "v1beta1").
std::vector<KindDef> Kinds(std::string_view version);

// Adds every kind in v1beta2 (storage, registered first) and v1beta1
// (served; KindDef::storage points at the v1beta2 KindDef, conversion via
// ConvertToV1beta2 / ConvertToV1beta1).
void RegisterKinds(Scheme& scheme);

}  // namespace batchd::api::kueue
