// Schemas of scheduling.k8s.io Workload (v1alpha2 and v1alpha1) and PodGroup
// (v1alpha2), with the field documentation `kubectl explain` shows. Fields
// batchd refuses (see validation.cc) are still declared, so a client sending
// them gets a Forbidden error naming the field rather than a silent prune.
#include "api/core/v1/core_v1.h"
#include "api/core/v1/kind_helpers.h"
#include "api/scheduling/v1alpha2/internal/schemas.h"

namespace batchd::api::scheduling_v1alpha2::internal {
namespace {

std::string R(std::string_view version, std::string_view name) {
  return std::string("io.k8s.api.scheduling.") + std::string(version) + "." + std::string(name);
}

SchemaPtr SchedulingPolicySchema(std::string_view version, std::string_view name) {
  SchemaPtr basic = Object(R(version, "BasicSchedulingPolicy"),
                           "Standard Kubernetes scheduling: each pod is placed on its own.")
                        .Build();
  SchemaPtr gang =
      Object(R(version, "GangSchedulingPolicy"),
             "All-or-nothing scheduling: no pod of the group binds until at least minCount of "
             "them can be placed at once.")
          .Field("minCount", Int32("The minimum number of pods that must be schedulable or "
                                   "scheduled at the same time for the group to be admitted. "
                                   "Must be positive."))
          .Require("minCount")
          .Build();
  return Object(R(version, name), "The scheduling policy of a pod group; exactly one of basic "
                                  "and gang must be set.")
      .Field("basic", basic)
      .Field("gang", gang)
      .Build();
}

SchemaPtr TypedLocalObjectReferenceSchema(std::string_view version) {
  return Object(R(version, "TypedLocalObjectReference"),
                "A reference to a typed object in the same namespace.")
      .Field("apiGroup", Str("The group of the referenced resource; empty for the core group."))
      .Field("kind", Str("The kind of the referenced resource."))
      .Field("name", Str("The name of the referenced resource."))
      .Require("kind")
      .Require("name")
      .Build();
}

SchemaPtr SchedulingConstraintsSchema() {
  SchemaPtr topo = Object(R("v1alpha2", "TopologyConstraint"),
                          "A topology domain all pods of the group must share.")
                       .Field("topologyKey", Str("The node label key of the domain."))
                       .Require("topologyKey")
                       .Build();
  return Object(R("v1alpha2", "PodGroupSchedulingConstraints"),
                "Scheduling constraints of a pod group (not supported by batchd).")
      .Field("topologyConstraints",
             ArrayOf(topo, "Topology constraints (at most one).").ListType("atomic"))
      .Build();
}

// The fields a PodGroupTemplate and a PodGroupSpec share besides the policy.
SchemaBuilder& AddGroupOptions(SchemaBuilder& b) {
  return b
      .Field("schedulingConstraints", SchedulingConstraintsSchema())
      .Field("resourceClaims",
             ArrayOf(AnyValue(), "Resource claims shared by the group (not supported by "
                                 "batchd).").ListType("atomic"))
      .Field("disruptionMode", Str("How the group may be disrupted: Pod (each pod alone, the "
                                   "default) or PodGroup (the whole group together; not "
                                   "allowed for the basic policy).")
                                   .Enum({kDisruptionModePod, kDisruptionModePodGroup}))
      .Field("priorityClassName", Str("Priority class for workload-aware preemption (not "
                                      "supported by batchd)."))
      .Field("priority", Int32("Priority for workload-aware preemption (not supported by "
                               "batchd)."));
}

}  // namespace

SchemaPtr WorkloadSchema() {
  static const SchemaPtr s = [] {
    SchemaBuilder tmpl = Object(R("v1alpha2", "PodGroupTemplate"),
                                "A template for a set of pods with one scheduling policy.");
    tmpl.Field("name", Str("Unique name of the template within the Workload; a DNS label. "
                           "Immutable."))
        .Field("schedulingPolicy", SchedulingPolicySchema("v1alpha2", "PodGroupSchedulingPolicy"));
    AddGroupOptions(tmpl).Require("name").Require("schedulingPolicy");
    SchemaPtr spec =
        Object(R("v1alpha2", "WorkloadSpec"), "The desired state of a Workload.")
            .Field("controllerRef", TypedLocalObjectReferenceSchema("v1alpha2"))
            .Field("podGroupTemplates",
                   ArrayOf(tmpl.Build(), "The pod group templates of the Workload (at most 8, "
                                         "unique names). Immutable.")
                       .MergeKey("name"))
            .Require("podGroupTemplates")
            .Build();
    return core_v1::TopLevel("io.k8s.api.scheduling.v1alpha2.Workload",
                             "Workload expresses the scheduling constraints of a workload: its "
                             "pod group templates and their scheduling policies.")
        .Field("spec", spec)
        .Require("spec")
        .Build();
  }();
  return s;
}

SchemaPtr WorkloadV1alpha1Schema() {
  static const SchemaPtr s = [] {
    SchemaPtr group =
        Object(R("v1alpha1", "PodGroup"), "A set of pods with a common scheduling policy.")
            .Field("name", Str("Unique name of the pod group within the Workload; a DNS label."))
            .Field("policy", SchedulingPolicySchema("v1alpha1", "PodGroupPolicy"))
            .Require("name")
            .Require("policy")
            .Build();
    SchemaPtr spec =
        Object(R("v1alpha1", "WorkloadSpec"), "The desired state of a Workload.")
            .Field("controllerRef", TypedLocalObjectReferenceSchema("v1alpha1"))
            .Field("podGroups", ArrayOf(group, "The pod groups of the Workload (at most 8, "
                                               "unique names). Immutable.")
                                    .MergeKey("name"))
            .Require("podGroups")
            .Build();
    return core_v1::TopLevel("io.k8s.api.scheduling.v1alpha1.Workload",
                             "Workload expresses the scheduling constraints of a workload: its "
                             "pod groups and their policies (Kubernetes 1.35 form).")
        .Field("spec", spec)
        .Require("spec")
        .Build();
  }();
  return s;
}

SchemaPtr PodGroupSchema() {
  static const SchemaPtr s = [] {
    SchemaPtr wref =
        Object(R("v1alpha2", "WorkloadPodGroupTemplateReference"),
               "The Workload template a PodGroup was made from.")
            .Field("workloadName", Str("The name of the Workload."))
            .Field("podGroupTemplateName", Str("The template's name within the Workload."))
            .Require("workloadName")
            .Require("podGroupTemplateName")
            .Build();
    SchemaPtr ref = Object(R("v1alpha2", "PodGroupTemplateReference"),
                           "The template a PodGroup was made from; exactly one member is set.")
                        .Field("workload", wref)
                        .Build();
    SchemaBuilder spec = Object(R("v1alpha2", "PodGroupSpec"),
                                "The desired state of a PodGroup. Immutable.");
    spec.Field("podGroupTemplateRef", ref)
        .Field("schedulingPolicy", SchedulingPolicySchema("v1alpha2", "PodGroupSchedulingPolicy"));
    AddGroupOptions(spec).Require("schedulingPolicy");
    SchemaPtr status =
        Object(R("v1alpha2", "PodGroupStatus"), "The observed state of a PodGroup.")
            .Field("conditions",
                   ArrayOf(core_v1::ConditionSchema(),
                           "Conditions of the group; PodGroupScheduled says whether its "
                           "scheduling requirement has been met.")
                       .MergeKey("type"))
            .Build();
    return core_v1::TopLevel("io.k8s.api.scheduling.v1alpha2.PodGroup",
                             "PodGroup is a runtime group of pods scheduled together; pods "
                             "join it with spec.schedulingGroup.podGroupName.")
        .Field("spec", spec.Build())
        .Field("status", status)
        .Require("spec")
        .Build();
  }();
  return s;
}

}  // namespace batchd::api::scheduling_v1alpha2::internal
