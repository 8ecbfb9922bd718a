// core/v1 PodSpec, PodStatus, Pod and PodTemplateSpec schemas, with the
// scheduling pieces (affinity, tolerations, topology spread).
#include "api/core/v1/core_v1.h"
#include "api/core/v1/internal/schemas.h"

namespace batchd::api::core_v1 {
namespace internal {
namespace {

SchemaPtr NodeSelectorRequirementSchema() {
  static const SchemaPtr s =
      Object(R("NodeSelectorRequirement"), "A node selector requirement: a key, an operator "
                                           "and values.")
          .Field("key", Str("The label key that the selector applies to."))
          .Field("operator", Str("In, NotIn, Exists, DoesNotExist, Gt or Lt."))
          .Field("values", ArrayOf(Str(), "An array of string values.").ListType("atomic"))
          .Require("key").Require("operator").Build();
  return s;
}

SchemaPtr NodeSelectorTermSchema() {
  static const SchemaPtr s =
      Object(R("NodeSelectorTerm"), "A null or empty node selector term matches no objects.")
          .Field("matchExpressions", ArrayOf(NodeSelectorRequirementSchema(),
                                             "Node selector requirements by node's labels.")
                                         .ListType("atomic"))
          .Field("matchFields", ArrayOf(NodeSelectorRequirementSchema(),
                                        "Node selector requirements by node's fields.")
                                    .ListType("atomic"))
          .Build();
  return s;
}

SchemaPtr PodAffinityTermSchema() {
  static const SchemaPtr s =
      Object(R("PodAffinityTerm"), "Defines a set of pods that this pod should be co-located "
                                   "(affinity) or not co-located (anti-affinity) with.")
          .Field("labelSelector", LabelSelectorSchema())
          .Field("matchLabelKeys", ArrayOf(Str(), "Pod label keys to select the pods.")
                                       .ListType("atomic"))
          .Field("mismatchLabelKeys", ArrayOf(Str(), "Pod label keys to select the pods.")
                                          .ListType("atomic"))
          .Field("namespaceSelector", LabelSelectorSchema())
          .Field("namespaces", ArrayOf(Str(), "Namespaces the term applies to.").ListType("atomic"))
          .Field("topologyKey", Str("The node label key that defines co-location."))
          .Require("topologyKey").Build();
  return s;
}

SchemaPtr PodAffinityLikeSchema(const char* name, const char* doc) {
  SchemaPtr weighted =
      Object(R("WeightedPodAffinityTerm"), "The weights of all matched pod affinity terms are "
                                           "added per-node.")
          .Field("podAffinityTerm", PodAffinityTermSchema())
          .Field("weight", Int32("Weight in the range 1-100."))
          .Require("podAffinityTerm").Require("weight").Build();
  return Object(R(name), doc)
      .Field("preferredDuringSchedulingIgnoredDuringExecution",
             ArrayOf(weighted, "Preferred terms.").ListType("atomic"))
      .Field("requiredDuringSchedulingIgnoredDuringExecution",
             ArrayOf(PodAffinityTermSchema(), "Required terms.").ListType("atomic"))
      .Build();
}

SchemaPtr TopologySpreadSchema() {
  static const SchemaPtr s =
      Object(R("TopologySpreadConstraint"), "How to spread matching pods among the given "
                                            "topology.")
          .Field("labelSelector", LabelSelectorSchema())
          .Field("matchLabelKeys", ArrayOf(Str(), "Pod label keys.").ListType("atomic"))
          .Field("maxSkew", Int32("The degree to which pods may be unevenly distributed."))
          .Field("minDomains", Int32("Minimum number of eligible domains."))
          .Field("nodeAffinityPolicy", Str("Honor or Ignore."))
          .Field("nodeTaintsPolicy", Str("Honor or Ignore."))
          .Field("topologyKey", Str("The key of node labels."))
          .Field("whenUnsatisfiable", Str("DoNotSchedule or ScheduleAnyway."))
          .Require("maxSkew").Require("topologyKey").Require("whenUnsatisfiable").Build();
  return s;
}

SchemaPtr PodSecurityContextSchema() {
  static const SchemaPtr s =
      Object(R("PodSecurityContext"), "Pod-level security attributes and common container "
                                      "settings.")
          .Field("fsGroup", Int64("A special supplemental group that applies to all containers."))
          .Field("runAsGroup", Int64("The GID to run the entrypoint of the container process."))
          .Field("runAsNonRoot", Bool("Indicates that the container must run as a non-root user."))
          .Field("runAsUser", Int64("The UID to run the entrypoint of the container process."))
          .Field("fsGroupChangePolicy", Str("OnRootMismatch or Always."))
          .Field("seLinuxOptions", SeLinuxOptionsSchema())
          .Field("seccompProfile", SeccompProfileSchema())
          .Field("supplementalGroups", ArrayOf(Int64(), "Groups added to the first process.")
                                           .ListType("atomic"))
          .Field("supplementalGroupsPolicy", Str("Merge or Strict."))
          .Field("sysctls", ArrayOf(Object(R("Sysctl"), "A kernel parameter to be set.")
                                        .Field("name", Str("Name of a property to set."))
                                        .Field("value", Str("Value of a property to set."))
                                        .Require("name").Require("value").Build(),
                                    "Namespaced sysctls used for the pod.").ListType("atomic"))
          .PreserveUnknown()
          .Build();
  return s;
}

SchemaPtr PodDnsConfigSchema() {
  static const SchemaPtr opt =
      Object(R("PodDNSConfigOption"), "Defines DNS resolver options of a pod.")
          .Field("name", Str("Name of the option.")).Field("value", Str("Value of the option."))
          .Build();
  static const SchemaPtr s =
      Object(R("PodDNSConfig"), "DNS parameters of a pod in addition to those generated from "
                                "DNSPolicy.")
          .Field("nameservers", ArrayOf(Str(), "DNS name server IP addresses.").ListType("atomic"))
          .Field("options", ArrayOf(opt, "DNS resolver options.").ListType("atomic"))
          .Field("searches", ArrayOf(Str(), "DNS search domains.").ListType("atomic"))
          .Build();
  return s;
}

SchemaPtr SchedulingGateSchema() {
  static const SchemaPtr s =
      Object(R("PodSchedulingGate"), "A gate that must be removed before the pod is scheduled.")
          .Field("name", Str("Name of the scheduling gate.")).Require("name").Build();
  return s;
}

// The pod's scheduling group (1.36): the PodGroup it belongs to.
SchemaPtr PodSchedulingGroupSchema() {
  static const SchemaPtr s =
      Object(R("PodSchedulingGroup"), "The runtime scheduling group a pod belongs to; the "
                                      "scheduler applies the group's policy (e.g. gang). "
                                      "Immutable.")
          .Field("podGroupName", Str("The name of the PodGroup (scheduling.k8s.io) in the "
                                     "pod's namespace."))
          .Build();
  return s;
}

// The pod's Workload pod group (1.35, scheduling.k8s.io/v1alpha1).
SchemaPtr WorkloadReferenceSchema() {
  static const SchemaPtr s =
      Object(R("WorkloadReference"), "The Workload pod group a pod belongs to (Kubernetes "
                                     "1.35 form). Immutable.")
          .Field("name", Str("The name of the Workload in the pod's namespace."))
          .Field("podGroup", Str("The name of the pod group within the Workload."))
          .Field("podGroupReplicaKey", Str("Separates replicas of one pod group: the policy "
                                           "applies to each (workload, podGroup, replica key) "
                                           "on its own."))
          .Require("name")
          .Require("podGroup")
          .Build();
  return s;
}

SchemaPtr PodResourceClaimSchema() {
  static const SchemaPtr s =
      Object(R("PodResourceClaim"), "References exactly one ResourceClaim.")
          .Field("name", Str("Uniquely identifies this resource claim inside the pod."))
          .Field("resourceClaimName", Str("Name of a ResourceClaim object in the same namespace."))
          .Field("resourceClaimTemplateName", Str("Name of a ResourceClaimTemplate object."))
          .Require("name").Build();
  return s;
}

}  // namespace

SchemaPtr NodeSelectorSchema() {
  static const SchemaPtr s =
      Object(R("NodeSelector"), "A node selector represents the union of the results of one or "
                                "more label queries.")
          .Field("nodeSelectorTerms", ArrayOf(NodeSelectorTermSchema(), "Required. A list of node "
                                                                        "selector terms; ORed.")
                                          .ListType("atomic"))
          .Require("nodeSelectorTerms").Build();
  return s;
}

SchemaPtr AffinitySchema() {
  static const SchemaPtr preferred =
      Object(R("PreferredSchedulingTerm"), "An empty preferred scheduling term matches all "
                                           "objects with implicit weight 0.")
          .Field("preference", NodeSelectorTermSchema())
          .Field("weight", Int32("Weight in the range 1-100."))
          .Require("preference").Require("weight").Build();
  static const SchemaPtr node_affinity =
      Object(R("NodeAffinity"), "Node affinity scheduling rules for the pod.")
          .Field("preferredDuringSchedulingIgnoredDuringExecution",
                 ArrayOf(preferred, "Preferred terms.").ListType("atomic"))
          .Field("requiredDuringSchedulingIgnoredDuringExecution", NodeSelectorSchema())
          .Build();
  static const SchemaPtr s =
      Object(R("Affinity"), "Affinity is a group of affinity scheduling rules.")
          .Field("nodeAffinity", node_affinity)
          .Field("podAffinity", PodAffinityLikeSchema("PodAffinity", "Pod affinity rules."))
          .Field("podAntiAffinity",
                 PodAffinityLikeSchema("PodAntiAffinity", "Pod anti-affinity rules."))
          .Build();
  return s;
}

SchemaPtr TolerationSchema() {
  static const SchemaPtr s =
      Object(R("Toleration"), "The pod this Toleration is attached to tolerates any taint that "
                              "matches the triple <key,value,effect>.")
          .Field("effect", Str("Taint effect to match: NoSchedule, PreferNoSchedule, NoExecute."))
          .Field("key", Str("The taint key that the toleration applies to."))
          .Field("operator", Str("Exists or Equal. Defaults to Equal."))
          .Field("tolerationSeconds", Int64("Period of time the toleration tolerates the taint."))
          .Field("value", Str("The taint value the toleration matches to."))
          .Build();
  return s;
}

}  // namespace internal

using namespace internal;  // NOLINT: file-local convenience.

SchemaPtr PodSpecSchema() {
  static const SchemaPtr host_alias =
      Object(R("HostAlias"), "An entry to be injected into the pod's hosts file.")
          .Field("hostnames", ArrayOf(Str(), "Hostnames for the above IP address.").ListType("atomic"))
          .Field("ip", Str("IP address of the host file entry.")).Require("ip").Build();
  static const SchemaPtr os =
      Object(R("PodOS"), "The OS parameters of a pod.")
          .Field("name", Str("The name of the operating system: linux or windows."))
          .Require("name").Build();
  static const SchemaPtr readiness_gate =
      Object(R("PodReadinessGate"), "A pod condition type for readiness.")
          .Field("conditionType", Str("A condition in the pod's condition list."))
          .Require("conditionType").Build();
  static const SchemaPtr s =
      Object(R("PodSpec"), "PodSpec is a description of a pod.")
          .Field("activeDeadlineSeconds", Int64("Duration in seconds the pod may be active."))
          .Field("affinity", AffinitySchema())
          .Field("automountServiceAccountToken", Bool("Whether a service account token should "
                                                      "be automatically mounted."))
          .Field("containers", ArrayOf(ContainerSchema(), "List of containers belonging to the "
                                                          "pod.").MergeKey("name"))
          .Field("dnsConfig", PodDnsConfigSchema())
          .Field("dnsPolicy", Str("DNS policy for the pod.")
                                  .Enum({"ClusterFirst", "ClusterFirstWithHostNet", "Default",
                                         "None"}))
          .Field("enableServiceLinks", Bool("Whether service environment variables are "
                                            "injected."))
          .Field("ephemeralContainers", ArrayOf(AnyValue(), "Ephemeral containers.")
                                            .MergeKey("name"))
          .Field("hostAliases", ArrayOf(host_alias, "Hosts file entries.").MergeKey("ip"))
          .Field("hostIPC", Bool("Use the host's ipc namespace."))
          .Field("hostNetwork", Bool("Host networking requested for this pod."))
          .Field("hostPID", Bool("Use the host's pid namespace."))
          .Field("hostUsers", Bool("Use the host's user namespace."))
          .Field("hostname", Str("The hostname of the Pod."))
          .Field("imagePullSecrets", ArrayOf(LocalObjectReferenceSchema(), "Secrets for pulling "
                                                                           "images.")
                                         .MergeKey("name"))
          .Field("initContainers", ArrayOf(ContainerSchema(), "Initialization containers.")
                                       .MergeKey("name"))
          .Field("nodeName", Str("Request to schedule this pod onto a specific node."))
          .Field("nodeSelector", MapOf(Str(), "Labels a node must have for the pod to fit."))
          .Field("os", os)
          .Field("overhead", MapOf(QuantitySchema(), "Resource overhead of the pod sandbox."))
          .Field("preemptionPolicy", Str("Never or PreemptLowerPriority."))
          .Field("priority", Int32("The priority value."))
          .Field("priorityClassName", Str("The pod's priority class."))
          .Field("readinessGates", ArrayOf(readiness_gate, "Pod readiness gates.")
                                       .ListType("atomic"))
          .Field("resourceClaims", ArrayOf(PodResourceClaimSchema(), "Resource claims.")
                                       .MergeKey("name"))
          .Field("resources", ResourceRequirementsSchema())
          .Field("restartPolicy", Str("Restart policy for all containers within the pod.")
                                      .Enum({"Always", "Never", "OnFailure"}))
          .Field("runtimeClassName", Str("RuntimeClass used to run this pod."))
          .Field("schedulerName", Str("The scheduler that dispatches the pod."))
          .Field("schedulingGates", ArrayOf(SchedulingGateSchema(), "Scheduling gates.")
                                        .MergeKey("name"))
          .Field("schedulingGroup", PodSchedulingGroupSchema())
          .Field("securityContext", PodSecurityContextSchema())
          .Field("serviceAccount", Str("Deprecated alias for serviceAccountName."))
          .Field("serviceAccountName", Str("The service account used to run this pod."))
          .Field("setHostnameAsFQDN", Bool("The pod's hostname is its FQDN."))
          .Field("shareProcessNamespace", Bool("Share a single process namespace between all "
                                               "containers."))
          .Field("subdomain", Str("The subdomain of the pod's hostname."))
          .Field("terminationGracePeriodSeconds", Int64("Duration in seconds the pod needs to "
                                                        "terminate gracefully."))
          .Field("tolerations", ArrayOf(TolerationSchema(), "The pod's tolerations.")
                                    .ListType("atomic"))
          .Field("topologySpreadConstraints",
                 ArrayOf(TopologySpreadSchema(), "How pods spread across topology domains.")
                     .MergeKey("topologyKey")
                     .ListMapKeys({"topologyKey", "whenUnsatisfiable"}))
          .Field("workloadRef", WorkloadReferenceSchema())
          .Field("volumes", ArrayOf(VolumeSchema(), "Volumes that can be mounted by containers.")
                                .MergeKey("name")
                                .PatchStrategy("merge,retainKeys"))
          .Require("containers")
          .Build();
  return s;
}

SchemaPtr PodTemplateSpecSchema() {
  static const SchemaPtr s =
      Object(R("PodTemplateSpec"), "PodTemplateSpec describes the data a pod should have when "
                                   "created from a template.")
          .Field("metadata", ObjectMetaSchema())
          .Field("spec", PodSpecSchema())
          .Build();
  return s;
}

}  // namespace batchd::api::core_v1
