// core/v1 Container and the schemas it embeds (env, ports, resources,
// probes, lifecycle, volume mounts).
#include "api/core/v1/internal/schemas.h"

namespace batchd::api::core_v1::internal {
namespace {

SchemaPtr EnvVarSourceSchema() {
  static const SchemaPtr field_ref =
      Object(R("ObjectFieldSelector"), "Selects a field of the pod.")
          .Field("apiVersion", Str("Version of the schema the FieldPath is written in."))
          .Field("fieldPath", Str("Path of the field to select in the specified API version."))
          .Require("fieldPath").Build();
  static const SchemaPtr resource_ref =
      Object(R("ResourceFieldSelector"), "Selects a resource of the container.")
          .Field("containerName", Str("Container name: required for volumes."))
          .Field("divisor", QuantitySchema("Output format of the exposed resources."))
          .Field("resource", Str("Required: resource to select."))
          .Require("resource").Build();
  static const SchemaPtr cm_key =
      Object(R("ConfigMapKeySelector"), "Selects a key from a ConfigMap.")
          .Field("key", Str("The key to select."))
          .Field("name", Str("Name of the referent."))
          .Field("optional", Bool("Specify whether the ConfigMap or its key must be defined."))
          .Require("key").Build();
  static const SchemaPtr secret_key =
      Object(R("SecretKeySelector"), "SecretKeySelector selects a key of a Secret.")
          .Field("key", Str("The key of the secret to select from."))
          .Field("name", Str("Name of the referent."))
          .Field("optional", Bool("Specify whether the Secret or its key must be defined."))
          .Require("key").Build();
  static const SchemaPtr s =
      Object(R("EnvVarSource"), "EnvVarSource represents a source for the value of an EnvVar.")
          .Field("configMapKeyRef", cm_key)
          .Field("fieldRef", field_ref)
          .Field("resourceFieldRef", resource_ref)
          .Field("secretKeyRef", secret_key)
          .Build();
  return s;
}

SchemaPtr EnvVarSchema() {
  static const SchemaPtr s =
      Object(R("EnvVar"), "EnvVar represents an environment variable present in a Container.")
          .Field("name", Str("Name of the environment variable."))
          .Field("value", Str("Variable references $(VAR_NAME) are expanded."))
          .Field("valueFrom", EnvVarSourceSchema())
          .Require("name").Build();
  return s;
}

SchemaPtr EnvFromSourceSchema() {
  static const SchemaPtr cm =
      Object(R("ConfigMapEnvSource"), "Selects a ConfigMap to populate the environment with.")
          .Field("name", Str("Name of the referent."))
          .Field("optional", Bool("Specify whether the ConfigMap must be defined.")).Build();
  static const SchemaPtr secret =
      Object(R("SecretEnvSource"), "Selects a Secret to populate the environment with.")
          .Field("name", Str("Name of the referent."))
          .Field("optional", Bool("Specify whether the Secret must be defined.")).Build();
  static const SchemaPtr s =
      Object(R("EnvFromSource"), "EnvFromSource represents the source of a set of ConfigMaps.")
          .Field("configMapRef", cm)
          .Field("prefix", Str("An optional identifier to prepend to each key."))
          .Field("secretRef", secret)
          .Build();
  return s;
}

SchemaPtr ContainerPortSchema() {
  static const SchemaPtr s =
      Object(R("ContainerPort"), "ContainerPort represents a network port in a single container.")
          .Field("containerPort", Int32("Number of port to expose on the pod's IP address."))
          .Field("hostIP", Str("What host IP to bind the external port to."))
          .Field("hostPort", Int32("Number of port to expose on the host."))
          .Field("name", Str("An IANA_SVC_NAME, unique within the pod."))
          .Field("protocol", Str("Protocol for port: UDP, TCP, or SCTP. Defaults to \"TCP\"."))
          .Require("containerPort").Build();
  return s;
}

SchemaPtr VolumeMountSchema() {
  static const SchemaPtr s =
      Object(R("VolumeMount"), "VolumeMount describes a mounting of a Volume within a container.")
          .Field("mountPath", Str("Path within the container at which the volume should be "
                                  "mounted."))
          .Field("mountPropagation", Str("How mounts are propagated from the host to container."))
          .Field("name", Str("This must match the Name of a Volume."))
          .Field("readOnly", Bool("Mounted read-only if true."))
          .Field("recursiveReadOnly", Str("Whether read-only mounts are handled recursively."))
          .Field("subPath", Str("Path within the volume from which to mount."))
          .Field("subPathExpr", Str("Expanded path within the volume from which to mount."))
          .Require("mountPath").Require("name").Build();
  return s;
}

SchemaPtr VolumeDeviceSchema() {
  static const SchemaPtr s =
      Object(R("VolumeDevice"), "A mapping of a raw block device within a container.")
          .Field("devicePath", Str("Path inside of the container that the device will be mapped to."))
          .Field("name", Str("Must match the name of a persistentVolumeClaim in the pod."))
          .Require("devicePath").Require("name").Build();
  return s;
}

SchemaPtr HttpGetSchema() {
  static const SchemaPtr header =
      Object(R("HTTPHeader"), "HTTPHeader describes a custom header to be used in HTTP probes.")
          .Field("name", Str("The header field name."))
          .Field("value", Str("The header field value."))
          .Require("name").Require("value").Build();
  static const SchemaPtr s =
      Object(R("HTTPGetAction"), "HTTPGetAction describes an action based on HTTP Get requests.")
          .Field("host", Str("Host name to connect to, defaults to the pod IP."))
          .Field("httpHeaders", ArrayOf(header, "Custom headers to set in the request.")
                                    .ListType("atomic"))
          .Field("path", Str("Path to access on the HTTP server."))
          .Field("port", IntOrString("Name or number of the port to access on the container."))
          .Field("scheme", Str("Scheme to use for connecting to the host. Defaults to HTTP."))
          .Require("port").Build();
  return s;
}

SchemaPtr ExecActionSchema() {
  static const SchemaPtr s =
      Object(R("ExecAction"), "ExecAction describes a \"run in container\" action.")
          .Field("command", ArrayOf(Str(), "Command line to execute inside the container.")
                                .ListType("atomic"))
          .Build();
  return s;
}

SchemaPtr TcpSocketSchema() {
  static const SchemaPtr s =
      Object(R("TCPSocketAction"), "TCPSocketAction describes an action based on opening a socket.")
          .Field("host", Str("Optional: Host name to connect to, defaults to the pod IP."))
          .Field("port", IntOrString("Number or name of the port to access on the container."))
          .Require("port").Build();
  return s;
}

SchemaPtr ProbeSchema() {
  static const SchemaPtr grpc =
      Object(R("GRPCAction"), "GRPCAction specifies an action involving a GRPC service.")
          .Field("port", Int32("Port number of the gRPC service."))
          .Field("service", Str("Service is the name of the service to place in the gRPC "
                                "HealthCheckRequest."))
          .Require("port").Build();
  static const SchemaPtr s =
      Object(R("Probe"), "Probe describes a health check to be performed against a container.")
          .Field("exec", ExecActionSchema())
          .Field("failureThreshold", Int32("Minimum consecutive failures for the probe to be "
                                           "considered failed."))
          .Field("grpc", grpc)
          .Field("httpGet", HttpGetSchema())
          .Field("initialDelaySeconds", Int32("Seconds after the container has started before "
                                              "probes are initiated."))
          .Field("periodSeconds", Int32("How often (in seconds) to perform the probe."))
          .Field("successThreshold", Int32("Minimum consecutive successes for the probe to be "
                                           "considered successful."))
          .Field("tcpSocket", TcpSocketSchema())
          .Field("terminationGracePeriodSeconds", Int64("Optional duration in seconds the pod "
                                                        "needs to terminate gracefully."))
          .Field("timeoutSeconds", Int32("Seconds after which the probe times out."))
          .Build();
  return s;
}

SchemaPtr LifecycleSchema() {
  static const SchemaPtr sleep =
      Object(R("SleepAction"), "SleepAction describes a \"sleep\" action.")
          .Field("seconds", Int64("Seconds is the number of seconds to sleep.")).Require("seconds")
          .Build();
  static const SchemaPtr handler =
      Object(R("LifecycleHandler"), "LifecycleHandler defines a specific action that should be "
                                    "taken in a lifecycle hook.")
          .Field("exec", ExecActionSchema())
          .Field("httpGet", HttpGetSchema())
          .Field("sleep", sleep)
          .Field("tcpSocket", TcpSocketSchema())
          .Build();
  static const SchemaPtr s =
      Object(R("Lifecycle"), "Lifecycle describes actions that the management system should take "
                             "in response to container lifecycle events.")
          .Field("postStart", handler)
          .Field("preStop", handler)
          .Field("stopSignal", Str("The signal used to stop the container."))
          .Build();
  return s;
}

SchemaPtr SecurityContextSchema() {
  static const SchemaPtr s =
      Object(R("SecurityContext"), "SecurityContext holds security configuration that will be "
                                   "applied to a container.")
          .Field("allowPrivilegeEscalation", Bool("Whether a process can gain more privileges."))
          .Field("capabilities", Object(R("Capabilities"), "POSIX capabilities to add/drop.")
                                     .Field("add", ArrayOf(Str(), "Added capabilities.")
                                                       .ListType("atomic"))
                                     .Field("drop", ArrayOf(Str(), "Removed capabilities.")
                                                        .ListType("atomic")))
          .Field("procMount", Str("Default or Unmasked."))
          .Field("privileged", Bool("Run container in privileged mode."))
          .Field("readOnlyRootFilesystem", Bool("Whether this container has a read-only root "
                                                "filesystem."))
          .Field("runAsGroup", Int64("The GID to run the entrypoint of the container process."))
          .Field("runAsNonRoot", Bool("Indicates that the container must run as a non-root user."))
          .Field("runAsUser", Int64("The UID to run the entrypoint of the container process."))
          .Field("seLinuxOptions", SeLinuxOptionsSchema())
          .Field("seccompProfile", SeccompProfileSchema())
          .PreserveUnknown()
          .Build();
  return s;
}

SchemaPtr ResizePolicySchema() {
  static const SchemaPtr s =
      Object(R("ContainerResizePolicy"), "ContainerResizePolicy represents resource resize policy "
                                         "for the container.")
          .Field("resourceName", Str("Name of the resource to which this policy applies."))
          .Field("restartPolicy", Str("Restart policy to apply when the resource is resized."))
          .Require("resourceName").Require("restartPolicy").Build();
  return s;
}

}  // namespace

SchemaPtr ResourceRequirementsSchema() {
  static const SchemaPtr claim =
      Object(R("ResourceClaim"), "ResourceClaim references one entry in PodSpec.ResourceClaims.")
          .Field("name", Str("Name of an entry of pod.spec.resourceClaims."))
          .Field("request", Str("Name of the request in the referenced claim."))
          .Require("name").Build();
  static const SchemaPtr s =
      Object(R("ResourceRequirements"), "ResourceRequirements describes the compute resource "
                                        "requirements.")
          .Field("claims", ArrayOf(claim, "Dynamically allocated resources used by this "
                                          "container.").ListType("map").ListMapKeys({"name"}))
          .Field("limits", MapOf(QuantitySchema(), "Maximum amount of compute resources "
                                                   "allowed."))
          .Field("requests", MapOf(QuantitySchema(), "Minimum amount of compute resources "
                                                     "required."))
          .Build();
  return s;
}

SchemaPtr ContainerSchema() {
  static const SchemaPtr s =
      Object(R("Container"), "A single application container that you want to run within a pod.")
          .Field("args", ArrayOf(Str(), "Arguments to the entrypoint.").ListType("atomic"))
          .Field("command", ArrayOf(Str(), "Entrypoint array. Not executed within a shell.")
                                .ListType("atomic"))
          .Field("env", ArrayOf(EnvVarSchema(), "List of environment variables to set in the "
                                                "container.").MergeKey("name"))
          .Field("envFrom", ArrayOf(EnvFromSourceSchema(), "List of sources to populate "
                                                           "environment variables in the "
                                                           "container.").ListType("atomic"))
          .Field("image", Str("Container image name."))
          .Field("imagePullPolicy", Str("Image pull policy: Always, Never, IfNotPresent.")
                                        .Enum({"Always", "IfNotPresent", "Never"}))
          .Field("lifecycle", LifecycleSchema())
          .Field("livenessProbe", ProbeSchema())
          .Field("name", Str("Name of the container specified as a DNS_LABEL."))
          .Field("ports", ArrayOf(ContainerPortSchema(), "List of ports to expose from the "
                                                         "container.")
                              .MergeKey("containerPort")
                              .ListMapKeys({"containerPort", "protocol"}))
          .Field("readinessProbe", ProbeSchema())
          .Field("resizePolicy", ArrayOf(ResizePolicySchema(), "Resources resize policy for the "
                                                               "container.").ListType("atomic"))
          .Field("resources", ResourceRequirementsSchema())
          .Field("restartPolicy", Str("RestartPolicy defines the restart behavior of individual "
                                      "containers in a pod (Always for sidecars)."))
          .Field("securityContext", SecurityContextSchema())
          .Field("startupProbe", ProbeSchema())
          .Field("stdin", Bool("Whether this container should allocate a buffer for stdin."))
          .Field("stdinOnce", Bool("Whether the container runtime should close stdin after one "
                                   "attach."))
          .Field("terminationMessagePath", Str("Path at which the file to which the container's "
                                               "termination message will be written is mounted."))
          .Field("terminationMessagePolicy", Str("How the termination message should be "
                                                 "populated: File or FallbackToLogsOnError.")
                                                 .Enum({"FallbackToLogsOnError", "File"}))
          .Field("tty", Bool("Whether this container should allocate a TTY for itself."))
          .Field("volumeDevices", ArrayOf(VolumeDeviceSchema(), "Block devices to be used by the "
                                                                "container.")
                                      .MergeKey("devicePath"))
          .Field("volumeMounts", ArrayOf(VolumeMountSchema(), "Pod volumes to mount into the "
                                                              "container's filesystem.")
                                     .MergeKey("mountPath"))
          .Field("workingDir", Str("Container's working directory."))
          .Require("name")
          .Build();
  return s;
}

}  // namespace batchd::api::core_v1::internal
