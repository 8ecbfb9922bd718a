// The Workload schema in both served versions. v1beta1 differs in
// spec.priorityClassSource/priorityClassName (v1beta2: priorityClassRef), the
// topology assignment format (levels + domains vs levels + slices) and the
// misspelt status.accumulatedPastExexcutionTimeSeconds.
#include "api/core/v1/core_v1.h"
#include "api/core/v1/kind_helpers.h"
#include "api/kueue/internal/schemas.h"

namespace batchd::api::kueue::internal {
namespace {

SchemaPtr TopologyRequestSchema(const SchemaContext& c) {
  return Object(c.Ref("PodSetTopologyRequest"), "The topology request of a PodSet.")
      .Field("required", Str("Topology level all pods must share."))
      .Field("preferred", Str("Topology level the pods should share if possible."))
      .Field("unconstrained", Bool("Place the pods anywhere with free capacity."))
      .Field("podIndexLabel", Str("Label holding the pod index."))
      .Field("subGroupIndexLabel", Str("Label holding the replicated-job index."))
      .Field("subGroupCount", Int32("Number of replicated jobs in the PodSet."))
      .Field("podSetGroupName", Str("PodSets in one group get the same flavor."))
      .Field("podSetSliceRequiredTopology", Str("Topology level each slice must share."))
      .Field("podSetSliceSize", Int32("Pods per slice."))
      .Field("podsetSliceRequiredTopologyConstraints",
             ArrayOf(Object(c.Ref("PodsetSliceRequiredTopologyConstraint"),
                            "One layer of slices: each group of `size` pods in one domain "
                            "of `topology`.")
                         .Field("topology", Str("Topology level of the layer's slices."))
                         .Field("size", Int32("Pods per slice of this layer."))
                         .Build(),
                     "Slice layers, outermost first (at most 3).")
                 .ListType("atomic"))
      .Build();
}

SchemaPtr PodSetSchema(const SchemaContext& c) {
  return Object(c.Ref("PodSet"), "A set of identical pods.")
      .Field("name", Str("Name of the PodSet (a DNS label; default main)."))
      .Field("template", core_v1::PodTemplateSpecSchema())
      .Field("count", Int32("Number of pods (default 1)."))
      .Field("minCount", Int32("Fewest pods acceptable under partial admission."))
      .Field("topologyRequest", TopologyRequestSchema(c))
      .Require("template")
      .Build();
}

SchemaPtr WorkloadSpecSchema(const SchemaContext& c) {
  auto spec = Object(c.Ref("WorkloadSpec"), "The desired state of a Workload.");
  spec.Field("podSets", ArrayOf(PodSetSchema(c), "The PodSets (1 to 8).")
                            .ListType("map").ListMapKeys({"name"}))
      .Field("queueName", Str("The LocalQueue of this workload."));
  if (c.v1beta1) {
    spec.Field("priorityClassName", Str("Name of the priority class."))
        .Field("priorityClassSource", Str("kueue.x-k8s.io/workloadpriorityclass, "
                                          "scheduling.k8s.io/priorityclass or empty.")
                                          .Enum({"kueue.x-k8s.io/workloadpriorityclass",
                                                 "scheduling.k8s.io/priorityclass", ""}));
  } else {
    SchemaPtr ref =
        Object(c.Ref("PriorityClassRef"), "A priority class in a given API group.")
            .Field("group", Str("kueue.x-k8s.io or scheduling.k8s.io.")
                                .Enum({"kueue.x-k8s.io", "scheduling.k8s.io"}))
            .Field("kind", Str("WorkloadPriorityClass or PriorityClass.")
                               .Enum({"WorkloadPriorityClass", "PriorityClass"}))
            .Field("name", Str("Name of the priority class."))
            .Require("group").Require("kind").Require("name").Build();
    spec.Field("priorityClassRef", ref);
  }
  return spec.Field("priority", Int32("The priority; higher is admitted first."))
      .Field("active", Bool("Whether the workload may be admitted (default true)."))
      .Field("maximumExecutionTimeSeconds", Int32("Deactivate after this many admitted "
                                                  "seconds."))
      .Build();
}

SchemaPtr TopologyAssignmentSchema(const SchemaContext& c) {
  auto a = Object(c.Ref("TopologyAssignment"), "Pods per topology domain.");
  a.Field("levels", ArrayOf(Str(), "Node label keys from the highest level to the lowest.")
                        .ListType("atomic"));
  if (c.v1beta1) {
    SchemaPtr domain = Object(c.Ref("TopologyDomainAssignment"), "Pods in one domain.")
                           .Field("values", ArrayOf(Str(), "Node label values per level.")
                                                .ListType("atomic"))
                           .Field("count", Int32("Number of pods in this domain."))
                           .Require("values").Require("count").Build();
    a.Field("domains", ArrayOf(domain, "The domains.").ListType("atomic"));
  } else {
    SchemaPtr values =
        Object(c.Ref("TopologyAssignmentSliceLevelValues"), "Values of one level.")
            .Field("prefix", Str("Common prefix.")).Field("suffix", Str("Common suffix."))
            .Field("roots", ArrayOf(Str(), "Values without prefix and suffix.")
                                .ListType("atomic"))
            .Field("universalValue", Str("The value of every domain.")).Build();
    SchemaPtr slice =
        Object(c.Ref("TopologyAssignmentSlice"), "Assignment of a subset of the pods.")
            .Field("domainCount", Int32("Number of domains in the slice."))
            .Field("valuesPerLevel", ArrayOf(values, "One entry per level.").ListType("atomic"))
            .Field("podCounts", ArrayOf(Int32(), "Pods per domain.").ListType("atomic"))
            .Field("universalPodCount", Int32("Pods in every domain."))
            .Require("domainCount").Require("valuesPerLevel").Build();
    a.Field("slices", ArrayOf(slice, "The slices.").ListType("atomic"));
  }
  return a.Build();
}

SchemaPtr AdmissionSchema(const SchemaContext& c) {
  SchemaPtr psa =
      Object(c.Ref("PodSetAssignment"), "The admission of one PodSet.")
          .Field("name", Str("Name of the PodSet."))
          .Field("flavors", MapOf(Str(), "Flavor per resource."))
          .Field("resourceUsage", ResourceListSchema("Total resources of the PodSet's pods."))
          .Field("count", Int32("Pods counted at admission."))
          .Field("topologyAssignment", TopologyAssignmentSchema(c))
          .Field("delayedTopologyRequest", Str("Pending or Ready.").Enum({"Pending", "Ready"}))
          .Build();
  return Object(c.Ref("Admission"), "Where and how the workload was admitted.")
      .Field("clusterQueue", Str("The ClusterQueue that admitted the workload."))
      .Field("podSetAssignments", ArrayOf(psa, "One per PodSet.").ListType("map")
                                      .ListMapKeys({"name"}))
      .Build();
}

SchemaPtr AdmissionCheckStateSchema(const SchemaContext& c) {
  SchemaPtr update =
      Object(c.Ref("PodSetUpdate"), "Changes an AdmissionCheck asks for on a PodSet.")
          .Field("name", Str("Name of the PodSet."))
          .Field("labels", MapOf(Str(), "Labels to add."))
          .Field("annotations", MapOf(Str(), "Annotations to add."))
          .Field("nodeSelector", MapOf(Str(), "Node selector entries to add."))
          .Field("tolerations", TolerationsSchema("Tolerations to add."))
          .Require("name").Build();
  return Object(c.Ref("AdmissionCheckState"), "The state of one admission check.")
      .Field("name", Str("Name of the AdmissionCheck."))
      .Field("state", Str("Pending, Ready, Retry or Rejected.")
                          .Enum({"Pending", "Ready", "Retry", "Rejected"}))
      .Field("lastTransitionTime", TimeSchema("When the state last changed."))
      .Field("message", Str("Human-readable details."))
      .Field("podSetUpdates", ArrayOf(update, "Suggested PodSet changes.").ListType("atomic"))
      .Field("retryCount", Int32("Times the check was retried."))
      .Field("requeueAfterSeconds", Int32("Delay before the next retry."))
      .Require("name").Require("state").Require("lastTransitionTime").Require("message")
      .Build();
}

SchemaPtr WorkloadStatusSchema(const SchemaContext& c) {
  SchemaPtr requeue = Object(c.Ref("RequeueState"), "The requeue state after eviction.")
                          .Field("count", Int32("Times the workload was requeued."))
                          .Field("requeueAt", TimeSchema("When it will be requeued."))
                          .Build();
  SchemaPtr reclaimable = Object(c.Ref("ReclaimablePod"), "Pods that no longer need quota.")
                              .Field("name", Str("Name of the PodSet."))
                              .Field("count", Int32("Number of such pods."))
                              .Require("name").Require("count").Build();
  SchemaPtr request = Object(c.Ref("PodSetRequest"), "Resources a PodSet requested.")
                          .Field("name", Str("Name of the PodSet."))
                          .Field("resources", ResourceListSchema("Total requests."))
                          .Require("name").Build();
  SchemaPtr eviction =
      Object(c.Ref("WorkloadSchedulingStatsEviction"), "Evictions for one reason.")
          .Field("reason", Str("Eviction reason.")).Field("underlyingCause", Str("Finer cause."))
          .Field("count", Int32("Number of evictions.")).Build();
  SchemaPtr stats = Object(c.Ref("SchedulingStats"), "Scheduling statistics.")
                        .Field("evictions", ArrayOf(eviction, "Evictions by reason.")
                                                .ListType("map")
                                                .ListMapKeys({"reason", "underlyingCause"}))
                        .Build();
  SchemaPtr node = Object(c.Ref("UnhealthyNode"), "A failed node.")
                       .Field("name", Str("Node name.")).Require("name").Build();
  return Object(c.Ref("WorkloadStatus"), "The observed state of a Workload.")
      .Field("conditions", ArrayOf(core_v1::ConditionSchema(), "Latest observations "
                                                               "(QuotaReserved, Admitted, "
                                                               "Finished, Evicted, ...).")
                               .MergeKey("type"))
      .Field("admission", AdmissionSchema(c))
      .Field("requeueState", requeue)
      .Field("reclaimablePods", ArrayOf(reclaimable, "Reclaimable pods per PodSet.")
                                    .ListType("map").ListMapKeys({"name"}))
      .Field("admissionChecks", ArrayOf(AdmissionCheckStateSchema(c), "States of the "
                                                                      "admission checks.")
                                    .MergeKey("name"))
      .Field("resourceRequests", ArrayOf(request, "Requests of a non-admitted workload.")
                                     .ListType("map").ListMapKeys({"name"}))
      .Field(c.v1beta1 ? "accumulatedPastExexcutionTimeSeconds"
                       : "accumulatedPastExecutionTimeSeconds",
             Int32("Seconds admitted in earlier admit/evict cycles."))
      .Field("schedulingStats", stats)
      .Field("nominatedClusterNames", ArrayOf(Str(), "Clusters nominated (MultiKueue).")
                                          .ListType("atomic"))
      .Field("clusterName", Str("The cluster the workload is assigned to (MultiKueue)."))
      .Field("unhealthyNodes", ArrayOf(node, "Failed nodes running its pods.")
                                   .ListType("map").ListMapKeys({"name"}))
      .Build();
}

}  // namespace

SchemaPtr WorkloadSchema(const SchemaContext& c) {
  return core_v1::TopLevel(c.Ref("Workload"), "Workload is the unit of admission: pod sets "
                                              "with counts and requests.")
      .Field("spec", WorkloadSpecSchema(c))
      .Field("status", WorkloadStatusSchema(c))
      .Build();
}

}  // namespace batchd::api::kueue::internal
