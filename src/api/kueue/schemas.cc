// Schemas of ResourceFlavor, ClusterQueue, LocalQueue, Cohort,
// WorkloadPriorityClass, AdmissionCheck and Topology in both served versions
// (field names as in Kueue's Go types; descriptions are batchd's own).
#include "absl/strings/str_cat.h"
#include "api/core/v1/core_v1.h"
#include "api/core/v1/kind_helpers.h"
#include "api/kueue/internal/schemas.h"

namespace batchd::api::kueue::internal {

std::string SchemaContext::Ref(std::string_view name) const {
  return absl::StrCat("io.x-k8s.kueue.", version, ".", std::string(name));
}

SchemaPtr ResourceListSchema(const std::string& doc) { return MapOf(QuantitySchema(), doc); }
// A quantity users write in a spec: Kueue's CRDs declare these int-or-string,
// so Kubernetes stores them as sent (`nominalQuota: 9` stays a number) and
// re-applying the manifest changes nothing. The format is
// schema_ops::kQuantityAsSentFormat.
namespace {
SchemaBuilder SpecQuantity(std::string doc) {
  return QuantitySchema(std::move(doc)).Format("quantity-as-sent");
}
}  // namespace

SchemaPtr TolerationsSchema(const std::string& doc) {
  return ArrayOf(core_v1::TolerationSchema(), doc).ListType("atomic");
}

namespace {

const std::vector<std::string> kStopPolicies = {"None", "Hold", "HoldAndDrain"};

SchemaPtr ResourceFlavorSchema(const SchemaContext& c) {
  SchemaPtr spec =
      Object(c.Ref("ResourceFlavorSpec"), "The desired state of a ResourceFlavor.")
          .Field("nodeLabels", MapOf(Str(), "Labels of the nodes that provide this flavor; "
                                            "at most 8."))
          .Field("nodeTaints", ArrayOf(core_v1::TaintSchema(),
                                       "Taints of the nodes of this flavor; at most 8.")
                                   .ListType("atomic"))
          .Field("tolerations", TolerationsSchema("Tolerations added to the pods admitted "
                                                  "with this flavor; at most 8."))
          .Field("topologyName", Str("The Topology of a topology-aware flavor."))
          .Field("resourceWeights", MapOf(SpecQuantity(""), "Per-resource multipliers for the "
                                                       "dominant resource share."))
          .Build();
  return core_v1::TopLevel(c.Ref("ResourceFlavor"), "ResourceFlavor is a kind of capacity "
                                                    "(a node group) quotas are given in.")
      .Field("spec", spec)
      .Build();
}

SchemaPtr ResourceQuotaSchema(const SchemaContext& c) {
  return Object(c.Ref("ResourceQuota"), "The quota of one resource in one flavor.")
      .Field("name", Str("Name of the resource."))
      .Field("nominalQuota", SpecQuantity("The quantity available to this queue."))
      .Field("borrowingLimit", SpecQuantity("How much above nominalQuota may be borrowed "
                                            "from the cohort; unlimited when absent."))
      .Field("lendingLimit", SpecQuantity("How much unused nominal quota may be lent to "
                                          "the cohort; all of it when absent."))
      .Require("name").Require("nominalQuota")
      .Build();
}

}  // namespace

SchemaPtr ResourceGroupsSchema(const SchemaContext& c, const std::string& doc) {
  SchemaPtr flavor =
      Object(c.Ref("FlavorQuotas"), "The quotas a flavor provides for a resource group.")
          .Field("name", Str("Name of a ResourceFlavor."))
          .Field("resources", ArrayOf(ResourceQuotaSchema(c), "One quota per covered "
                                                             "resource, in the same order.")
                                  .ListType("map").ListMapKeys({"name"}))
          .Require("name").Require("resources")
          .Build();
  SchemaPtr group =
      Object(c.Ref("ResourceGroup"), "Resources that must be taken from the same flavor.")
          .Field("coveredResources", ArrayOf(Str(), "Resources of this group (1 to 64).")
                                         .ListType("atomic"))
          .Field("flavors", ArrayOf(flavor, "Flavors in order of preference (1 to 64).")
                                .ListType("map").ListMapKeys({"name"}))
          .Require("coveredResources").Require("flavors")
          .Build();
  return ArrayOf(group, doc).ListType("atomic");
}

SchemaPtr FairSharingSchema(const SchemaContext& c) {
  return Object(c.Ref("FairSharing"), "Fair sharing properties of a queue or cohort.")
      .Field("weight", SpecQuantity("Relative advantage when sharing unused quota; 0 means "
                                    "an infinite share."))
      .Build();
}

SchemaPtr FairSharingStatusSchema(const SchemaContext& c) {
  SchemaPtr afs =
      Object(c.Ref("AdmissionFairSharingStatus"), "Admission fair sharing state.")
          .Field("consumedResources", ResourceListSchema("Decayed aggregated usage."))
          .Field("lastUpdate", TimeSchema("When the usage was last updated."))
          .Require("consumedResources").Require("lastUpdate")
          .Build();
  return Object(c.Ref("FairSharingStatus"), "Current fair sharing state.")
      .Field("weightedShare", Int64("Dominant share of usage above nominal, divided by the "
                                    "weight."))
      .Field("admissionFairSharingStatus", afs)
      .Require("weightedShare")
      .Build();
}

namespace {

SchemaPtr FlavorUsageSchema(const SchemaContext& c, bool borrowed) {
  auto usage = Object(c.Ref(borrowed ? "ResourceUsage" : "LocalQueueResourceUsage"),
                      "Quota usage of one resource.")
                   .Field("name", Str("Name of the resource."))
                   .Field("total", QuantitySchema("Total quantity used."));
  if (borrowed) usage.Field("borrowed", QuantitySchema("Quantity used above nominal quota."));
  SchemaPtr u = usage.Require("name").Build();
  return Object(c.Ref(borrowed ? "FlavorUsage" : "LocalQueueFlavorUsage"),
                "Quota usage of one flavor.")
      .Field("name", Str("Name of the flavor."))
      .Field("resources", ArrayOf(u, "Usage per resource.").ListType("map").ListMapKeys({"name"}))
      .Require("name")
      .Build();
}

SchemaPtr ConditionsSchema(const std::string& doc) {
  return ArrayOf(core_v1::ConditionSchema(), doc).MergeKey("type");
}

SchemaPtr FlavorFungibilitySchema(const SchemaContext& c) {
  std::vector<std::string> borrow = {"MayStopSearch", "TryNextFlavor"};
  std::vector<std::string> preempt = {"MayStopSearch", "TryNextFlavor"};
  if (c.v1beta1) {
    borrow.insert(borrow.begin(), "Borrow");
    preempt.insert(preempt.begin(), "Preempt");
  }
  return Object(c.Ref("FlavorFungibility"), "Whether to try the next flavor before borrowing "
                                            "or preempting in the current one.")
      .Field("whenCanBorrow", Str("MayStopSearch (default) or TryNextFlavor.").Enum(borrow))
      .Field("whenCanPreempt", Str("TryNextFlavor (default) or MayStopSearch.").Enum(preempt))
      .Field("preference", Str("BorrowingOverPreemption or PreemptionOverBorrowing; only when "
                               "both policies are TryNextFlavor.")
                               .Enum({"BorrowingOverPreemption", "PreemptionOverBorrowing"}))
      .Build();
}

SchemaPtr PreemptionSchema(const SchemaContext& c) {
  SchemaPtr bwc =
      Object(c.Ref("BorrowWithinCohort"), "Preemption in the cohort while borrowing.")
          .Field("policy", Str("Never (default) or LowerPriority.")
                               .Enum({"Never", "LowerPriority"}))
          .Field("maxPriorityThreshold", Int32("Only workloads with at most this priority may "
                                               "be preempted."))
          .Build();
  return Object(c.Ref("ClusterQueuePreemption"), "Preemption policies of a ClusterQueue.")
      .Field("reclaimWithinCohort", Str("Never (default), LowerPriority or Any.")
                                        .Enum({"Never", "LowerPriority", "Any"}))
      .Field("borrowWithinCohort", bwc)
      .Field("withinClusterQueue", Str("Never (default), LowerPriority or "
                                       "LowerOrNewerEqualPriority.")
                                       .Enum({"Never", "LowerPriority",
                                              "LowerOrNewerEqualPriority"}))
      .Build();
}

SchemaPtr ClusterQueueSpecSchema(const SchemaContext& c) {
  SchemaPtr rule =
      Object(c.Ref("AdmissionCheckStrategyRule"), "Where one AdmissionCheck applies.")
          .Field("name", Str("Name of the AdmissionCheck."))
          .Field("onFlavors", ArrayOf(Str(), "Flavors it applies to; all when empty.")
                                  .ListType("set"))
          .Require("name").Build();
  SchemaPtr strategy =
      Object(c.Ref("AdmissionChecksStrategy"), "Which AdmissionChecks apply to which flavors.")
          .Field("admissionChecks", ArrayOf(rule, "The rules.").ListType("map")
                                        .ListMapKeys({"name"}))
          .Build();
  SchemaPtr scope =
      Object(c.Ref("AdmissionScope"), "Admission fair sharing mode.")
          .Field("admissionMode", Str("UsageBasedAdmissionFairSharing or "
                                      "NoAdmissionFairSharing.")
                                      .Enum({"UsageBasedAdmissionFairSharing",
                                             "NoAdmissionFairSharing"}))
          .Require("admissionMode").Build();
  auto spec = Object(c.Ref("ClusterQueueSpec"), "The desired state of a ClusterQueue.");
  spec.Field("resourceGroups", ResourceGroupsSchema(c, "Groups of resources with their "
                                                       "flavors and quotas; at most 16."));
  if (c.v1beta1) {
    spec.Field("cohort", Str("The cohort this queue borrows from and lends to."));
  } else {
    spec.Field("cohortName", Str("The cohort this queue borrows from and lends to."));
  }
  spec.Field("queueingStrategy", Str("BestEffortFIFO (default) or StrictFIFO.")
                                     .Enum({"StrictFIFO", "BestEffortFIFO"}))
      .Field("namespaceSelector", core_v1::LabelSelectorSchema())
      .Field("flavorFungibility", FlavorFungibilitySchema(c))
      .Field("preemption", PreemptionSchema(c));
  if (c.v1beta1) {
    spec.Field("admissionChecks", ArrayOf(Str(), "AdmissionChecks required by this queue; "
                                                 "not with admissionChecksStrategy."));
  }
  return spec.Field("admissionChecksStrategy", strategy)
      .Field("stopPolicy", Str("None (default), Hold or HoldAndDrain.").Enum(kStopPolicies))
      .Field("fairSharing", FairSharingSchema(c))
      .Field("admissionScope", scope)
      .Build();
}

SchemaPtr ClusterQueueSchema(const SchemaContext& c) {
  auto status = Object(c.Ref("ClusterQueueStatus"), "The observed state of a ClusterQueue.");
  status.Field("conditions", ConditionsSchema("Latest observations (Active)."))
      .Field("flavorsReservation", ArrayOf(FlavorUsageSchema(c, true), "Reserved quota by "
                                                                       "flavor.")
                                       .ListType("map").ListMapKeys({"name"}))
      .Field("flavorsUsage", ArrayOf(FlavorUsageSchema(c, true), "Used quota by flavor.")
                                 .ListType("map").ListMapKeys({"name"}))
      .Field("pendingWorkloads", Int32("Workloads waiting for admission."))
      .Field("reservingWorkloads", Int32("Workloads reserving quota."))
      .Field("admittedWorkloads", Int32("Admitted workloads not yet finished."))
      .Field("fairSharing", FairSharingStatusSchema(c));
  if (c.v1beta1) {
    status.Field("pendingWorkloadsStatus",
                 InlineObject("Deprecated: the head of the queue.").PreserveUnknown());
  }
  return core_v1::TopLevel(c.Ref("ClusterQueue"), "ClusterQueue is a pool of quota with "
                                                  "queueing and preemption policies.")
      .Field("spec", ClusterQueueSpecSchema(c))
      .Field("status", status.Build())
      .Build();
}

SchemaPtr LocalQueueSchema(const SchemaContext& c) {
  SchemaPtr spec =
      Object(c.Ref("LocalQueueSpec"), "The desired state of a LocalQueue.")
          .Field("clusterQueue", Str("The ClusterQueue behind this queue; immutable."))
          .Field("stopPolicy", Str("None (default), Hold or HoldAndDrain.").Enum(kStopPolicies))
          .Field("fairSharing", FairSharingSchema(c))
          .Build();
  auto status = Object(c.Ref("LocalQueueStatus"), "The observed state of a LocalQueue.");
  status.Field("conditions", ConditionsSchema("Latest observations (Active)."))
      .Field("pendingWorkloads", Int32("Workloads not yet admitted."))
      .Field("reservingWorkloads", Int32("Workloads reserving quota."))
      .Field("admittedWorkloads", Int32("Admitted workloads not yet finished."))
      .Field("flavorsReservation", ArrayOf(FlavorUsageSchema(c, false), "Reserved quota by "
                                                                        "flavor.")
                                       .ListType("map").ListMapKeys({"name"}))
      .Field(c.v1beta1 ? "flavorUsage" : "flavorsUsage",
             ArrayOf(FlavorUsageSchema(c, false), "Used quota by flavor.")
                 .ListType("map").ListMapKeys({"name"}))
      .Field("fairSharing", FairSharingStatusSchema(c));
  if (c.v1beta1) {
    status.Field("flavors", ArrayOf(InlineObject("A flavor of the ClusterQueue.")
                                        .PreserveUnknown().Build(),
                                    "Deprecated: flavors of the ClusterQueue."));
  }
  return core_v1::TopLevel(c.Ref("LocalQueue"), "LocalQueue is a namespace's entry point "
                                                "to a ClusterQueue.")
      .Field("spec", spec)
      .Field("status", status.Build())
      .Build();
}

SchemaPtr CohortSchema(const SchemaContext& c) {
  SchemaPtr spec =
      Object(c.Ref("CohortSpec"), "The desired state of a Cohort.")
          .Field("parentName", Str("The parent Cohort; a root cohort when empty."))
          .Field("resourceGroups", ResourceGroupsSchema(c, "Quota shared by the members, on "
                                                           "top of theirs; at most 16."))
          .Field("fairSharing", FairSharingSchema(c))
          .Build();
  SchemaPtr status = Object(c.Ref("CohortStatus"), "The observed state of a Cohort.")
                         .Field("fairSharing", FairSharingStatusSchema(c))
                         .Build();
  return core_v1::TopLevel(c.Ref("Cohort"), "Cohort groups ClusterQueues (and Cohorts) that "
                                            "borrow from each other.")
      .Field("spec", spec)
      .Field("status", status)
      .Build();
}

SchemaPtr WorkloadPriorityClassSchema(const SchemaContext& c) {
  return core_v1::TopLevel(c.Ref("WorkloadPriorityClass"), "WorkloadPriorityClass is a "
                                                           "priority for workloads only.")
      .Field("value", Int32("The priority workloads of this class get."))
      .Field("description", Str("When to use this class; at most 2048 characters."))
      .Require("value")
      .Build();
}

SchemaPtr AdmissionCheckSchema(const SchemaContext& c) {
  SchemaPtr params =
      Object(c.Ref("AdmissionCheckParametersReference"), "The check's parameters object.")
          .Field("apiGroup", Str("API group of the referenced object."))
          .Field("kind", Str("Kind of the referenced object."))
          .Field("name", Str("Name of the referenced object."))
          .Require("apiGroup").Require("kind").Require("name").Build();
  auto spec = Object(c.Ref("AdmissionCheckSpec"), "The desired state of an AdmissionCheck.");
  spec.Field("controllerName", Str("The controller that evaluates this check; immutable."));
  if (c.v1beta1) {
    spec.Field("retryDelayMinutes", Int64("Deprecated: minutes to wait after a failed "
                                          "check."));
  }
  spec.Field("parameters", params).Require("controllerName");
  SchemaPtr status = Object(c.Ref("AdmissionCheckStatus"), "The observed state of an "
                                                           "AdmissionCheck.")
                         .Field("conditions", ConditionsSchema("Latest observations "
                                                               "(Active)."))
                         .Build();
  return core_v1::TopLevel(c.Ref("AdmissionCheck"), "AdmissionCheck is a gate between quota "
                                                    "reservation and admission.")
      .Field("spec", spec.Build())
      .Field("status", status)
      .Build();
}

SchemaPtr TopologySchema(const SchemaContext& c) {
  SchemaPtr level = Object(c.Ref("TopologyLevel"), "One level of a topology.")
                        .Field("nodeLabel", Str("The node label of this level."))
                        .Require("nodeLabel").Build();
  SchemaPtr spec =
      Object(c.Ref("TopologySpec"), "The desired state of a Topology.")
          .Field("levels", ArrayOf(level, "Levels from the highest to the lowest (1 to 16).")
                               .ListType("atomic"))
          .Require("levels").Build();
  return core_v1::TopLevel(c.Ref("Topology"), "Topology is an ordered hierarchy of node "
                                              "labels.")
      .Field("spec", spec)
      .Build();
}

KueueSchemas Build(std::string_view version) {
  SchemaContext c;
  c.version = version == "v1beta1" ? "v1beta1" : "v1beta2";
  c.v1beta1 = c.version == "v1beta1";
  KueueSchemas s;
  s.resource_flavor = ResourceFlavorSchema(c);
  s.cluster_queue = ClusterQueueSchema(c);
  s.local_queue = LocalQueueSchema(c);
  s.cohort = CohortSchema(c);
  s.workload = WorkloadSchema(c);
  s.workload_priority_class = WorkloadPriorityClassSchema(c);
  s.admission_check = AdmissionCheckSchema(c);
  s.topology = TopologySchema(c);
  s.provisioning_request_config = ProvisioningRequestConfigSchema(c);
  s.multikueue_cluster = MultiKueueClusterSchema(c);
  s.multikueue_config = MultiKueueConfigSchema(c);
  return s;
}

}  // namespace

const KueueSchemas& SchemasFor(std::string_view version) {
  static const KueueSchemas v1beta2 = Build("v1beta2");
  static const KueueSchemas v1beta1 = Build("v1beta1");
  return version == "v1beta1" ? v1beta1 : v1beta2;
}

}  // namespace batchd::api::kueue::internal
