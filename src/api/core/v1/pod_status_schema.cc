// core/v1 PodStatus, ContainerStatus and the Pod kind schema.
#include "api/core/v1/core_v1.h"
#include "api/core/v1/internal/schemas.h"

namespace batchd::api::core_v1::internal {
namespace {

SchemaPtr ContainerStateSchema() {
  static const SchemaPtr waiting =
      Object(R("ContainerStateWaiting"), "A waiting state of a container.")
          .Field("message", Str("Message regarding why the container is not yet running."))
          .Field("reason", Str("(brief) reason the container is not yet running.")).Build();
  static const SchemaPtr running =
      Object(R("ContainerStateRunning"), "A running state of a container.")
          .Field("startedAt", TimeSchema("Time at which the container was last (re-)started."))
          .Build();
  static const SchemaPtr terminated =
      Object(R("ContainerStateTerminated"), "A terminated state of a container.")
          .Field("containerID", Str("Container's ID in the format '<type>://<container_id>'."))
          .Field("exitCode", Int32("Exit status from the last termination of the container."))
          .Field("finishedAt", TimeSchema("Time at which the container last terminated."))
          .Field("message", Str("Message regarding the last termination of the container."))
          .Field("reason", Str("(brief) reason from the last termination of the container."))
          .Field("signal", Int32("Signal from the last termination of the container."))
          .Field("startedAt", TimeSchema("Time at which previous execution of the container "
                                         "started."))
          .Require("exitCode").Build();
  static const SchemaPtr s =
      Object(R("ContainerState"), "ContainerState holds a possible state of container. Only one "
                                  "of its members may be specified.")
          .Field("running", running)
          .Field("terminated", terminated)
          .Field("waiting", waiting)
          .Build();
  return s;
}

SchemaPtr ContainerStatusSchema() {
  static const SchemaPtr s =
      Object(R("ContainerStatus"), "ContainerStatus contains details for the current status of "
                                   "this container.")
          .Field("allocatedResources", MapOf(QuantitySchema(), "Resources allocated to the "
                                                               "container."))
          .Field("containerID", Str("Container's ID in the format '<type>://<container_id>'."))
          .Field("image", Str("The image the container is running."))
          .Field("imageID", Str("Image ID of the container's image."))
          .Field("lastState", ContainerStateSchema())
          .Field("name", Str("A DNS_LABEL; each container in a pod has a unique name."))
          .Field("ready", Bool("Whether the container is currently passing its readiness check."))
          .Field("resources", ResourceRequirementsSchema())
          .Field("restartCount", Int32("The number of times the container has been restarted."))
          .Field("started", Bool("Whether the container has finished its postStart hook and "
                                 "passed its startup probe."))
          .Field("state", ContainerStateSchema())
          .Field("user", AnyValue("Identity information for the first process."))
          .Field("volumeMounts", ArrayOf(AnyValue(), "Status of volume mounts.").ListType("atomic"))
          .Require("name").Require("ready").Require("restartCount").Require("image")
          .Require("imageID")
          .Build();
  return s;
}

SchemaPtr PodConditionSchema() {
  static const SchemaPtr s =
      Object(R("PodCondition"), "PodCondition contains details for the current condition of "
                                "this pod.")
          .Field("lastProbeTime", TimeSchema("Last time we probed the condition."))
          .Field("lastTransitionTime", TimeSchema("Last time the condition transitioned."))
          .Field("message", Str("Human-readable message indicating details about last "
                                "transition."))
          .Field("observedGeneration", Int64("The .metadata.generation the condition was set "
                                             "based upon."))
          .Field("reason", Str("Unique, one-word, CamelCase reason for the condition's last "
                               "transition."))
          .Field("status", Str("True, False, or Unknown."))
          .Field("type", Str("Type is the type of the condition."))
          .Require("type").Require("status").Build();
  return s;
}

SchemaPtr PodIpSchema(const char* name, const char* doc) {
  return Object(R(name), doc).Field("ip", Str("The IP address.")).Build();
}

}  // namespace

SchemaPtr PodStatusSchema() {
  static const SchemaPtr s =
      Object(R("PodStatus"), "PodStatus represents information about the status of a pod.")
          .Field("conditions", ArrayOf(PodConditionSchema(), "Current service state of pod.")
                                   .MergeKey("type"))
          .Field("containerStatuses", ArrayOf(ContainerStatusSchema(), "Statuses of the "
                                                                       "containers.")
                                          .ListType("atomic"))
          .Field("ephemeralContainerStatuses", ArrayOf(ContainerStatusSchema(), "Statuses of "
                                                       "ephemeral containers.").ListType("atomic"))
          .Field("hostIP", Str("IP address of the host to which the pod is assigned."))
          .Field("hostIPs", ArrayOf(PodIpSchema("HostIP", "The IP address assigned to the host."),
                                    "IP addresses allocated to the host.")
                                .MergeKey("ip").ListType("atomic"))
          .Field("initContainerStatuses", ArrayOf(ContainerStatusSchema(), "Statuses of the "
                                                  "init containers.").ListType("atomic"))
          .Field("message", Str("A human readable message indicating details about why the pod "
                                "is in this condition."))
          .Field("nominatedNodeName", Str("Set when this pod preempts other pods on the node."))
          .Field("observedGeneration", Int64("The .metadata.generation this status reflects."))
          .Field("phase", Str("Pending, Running, Succeeded, Failed or Unknown."))
          .Field("podIP", Str("IP address allocated to the pod."))
          .Field("podIPs", ArrayOf(PodIpSchema("PodIP", "An IP address allocated to the pod."),
                                   "IP addresses allocated to the pod.").MergeKey("ip"))
          .Field("qosClass", Str("Quality of Service class: Guaranteed, Burstable, BestEffort."))
          .Field("reason", Str("A brief CamelCase message indicating why the pod is in this "
                               "state."))
          .Field("resize", Str("Status of the desired resize of the pod's containers."))
          .Field("resourceClaimStatuses", ArrayOf(AnyValue(), "Resource claim statuses.")
                                              .MergeKey("name"))
          .Field("startTime", TimeSchema("When the pod was acknowledged by the kubelet."))
          .Build();
  return s;
}

SchemaPtr PodSchema() {
  static const SchemaPtr s =
      TopLevel(R("Pod"), "Pod is a collection of containers that can run on a host.")
          .Field("spec", PodSpecSchema())
          .Field("status", PodStatusSchema())
          .Build();
  return s;
}

}  // namespace batchd::api::core_v1::internal
