// core/v1 Volume with the common volume sources declared (so strategic
// merge patch metadata lookups find them); other sources are kept as given.
#include "api/core/v1/internal/schemas.h"

namespace batchd::api::core_v1::internal {
namespace {

SchemaPtr KeyToPathSchema() {
  static const SchemaPtr s =
      Object(R("KeyToPath"), "Maps a string key to a path within a volume.")
          .Field("key", Str("The key to project.")).Field("mode", Int32("Mode bits."))
          .Field("path", Str("The relative path of the file to map the key to."))
          .Require("key").Require("path").Build();
  return s;
}

SchemaPtr DownwardApiFileSchema() {
  static const SchemaPtr field_ref =
      Object(R("ObjectFieldSelector"), "Selects a field of the pod.")
          .Field("apiVersion", Str("Version of the schema the FieldPath is written in."))
          .Field("fieldPath", Str("Path of the field to select.")).Require("fieldPath").Build();
  static const SchemaPtr resource_ref =
      Object(R("ResourceFieldSelector"), "Selects a resource of the container.")
          .Field("containerName", Str("Container name: required for volumes."))
          .Field("divisor", QuantitySchema("Output format of the exposed resources."))
          .Field("resource", Str("Required: resource to select.")).Require("resource").Build();
  static const SchemaPtr s =
      Object(R("DownwardAPIVolumeFile"), "Information to create the file containing the pod "
                                         "field.")
          .Field("fieldRef", field_ref).Field("mode", Int32("Mode bits."))
          .Field("path", Str("The relative path name of the file to be created."))
          .Field("resourceFieldRef", resource_ref).Require("path").Build();
  return s;
}

SchemaPtr ProjectionSchema() {
  static const SchemaPtr token =
      Object(R("ServiceAccountTokenProjection"), "A projected service account token volume.")
          .Field("audience", Str("Intended audience of the token."))
          .Field("expirationSeconds", Int64("Requested duration of validity."))
          .Field("path", Str("Path relative to the mount point.")).Require("path").Build();
  static const SchemaPtr s =
      Object(R("VolumeProjection"), "A projection that may be projected along with other "
                                    "supported volume types.")
          .Field("configMap", Object(R("ConfigMapProjection"), "ConfigMap projection.")
                                  .Field("items", ArrayOf(KeyToPathSchema()).ListType("atomic"))
                                  .Field("name", Str()).Field("optional", Bool()))
          .Field("downwardAPI", Object(R("DownwardAPIProjection"), "Downward API projection.")
                                    .Field("items", ArrayOf(DownwardApiFileSchema())
                                                        .ListType("atomic")))
          .Field("secret", Object(R("SecretProjection"), "Secret projection.")
                               .Field("items", ArrayOf(KeyToPathSchema()).ListType("atomic"))
                               .Field("name", Str()).Field("optional", Bool()))
          .Field("serviceAccountToken", token)
          .PreserveUnknown()
          .Build();
  return s;
}

}  // namespace

SchemaPtr VolumeSchema() {
  static const SchemaPtr s =
      Object(R("Volume"), "Volume represents a named volume in a pod.")
          .Field("configMap", Object(R("ConfigMapVolumeSource"), "A ConfigMap as a volume.")
                                  .Field("defaultMode", Int32("Mode bits used on created files."))
                                  .Field("items", ArrayOf(KeyToPathSchema()).ListType("atomic"))
                                  .Field("name", Str("Name of the referent."))
                                  .Field("optional", Bool("Whether the ConfigMap must exist.")))
          .Field("csi", Object(R("CSIVolumeSource"), "A CSI volume.")
                            .Field("driver", Str("Name of the CSI driver."))
                            .Field("fsType", Str("Filesystem type to mount."))
                            .Field("nodePublishSecretRef", LocalObjectReferenceSchema())
                            .Field("readOnly", Bool("Read-only configuration."))
                            .Field("volumeAttributes", MapOf(Str(), "Driver-specific properties."))
                            .Require("driver"))
          .Field("downwardAPI", Object(R("DownwardAPIVolumeSource"), "Downward API volume.")
                                    .Field("defaultMode", Int32("Mode bits."))
                                    .Field("items", ArrayOf(DownwardApiFileSchema())
                                                        .ListType("atomic")))
          .Field("emptyDir", Object(R("EmptyDirVolumeSource"), "A temporary directory that "
                                                               "shares a pod's lifetime.")
                                 .Field("medium", Str("\"\" or \"Memory\"."))
                                 .Field("sizeLimit", QuantitySchema("Total amount of local "
                                                                    "storage required.")))
          .Field("ephemeral", AnyValue("A volume handled by a cluster storage driver."))
          .Field("hostPath", Object(R("HostPathVolumeSource"), "A host path mapped into a pod.")
                                 .Field("path", Str("Path of the directory on the host."))
                                 .Field("type", Str("Type for HostPath Volume."))
                                 .Require("path"))
          .Field("name", Str("Name of the volume. Must be a DNS_LABEL and unique within the pod."))
          .Field("nfs", Object(R("NFSVolumeSource"), "An NFS mount.")
                            .Field("path", Str("Path exported by the NFS server."))
                            .Field("readOnly", Bool("Mount read-only."))
                            .Field("server", Str("Hostname or IP of the NFS server."))
                            .Require("server").Require("path"))
          .Field("persistentVolumeClaim",
                 Object(R("PersistentVolumeClaimVolumeSource"), "A reference to a PVC.")
                     .Field("claimName", Str("Name of a PersistentVolumeClaim."))
                     .Field("readOnly", Bool("Force read-only."))
                     .Require("claimName"))
          .Field("projected", Object(R("ProjectedVolumeSource"), "A projected volume.")
                                  .Field("defaultMode", Int32("Mode bits."))
                                  .Field("sources", ArrayOf(ProjectionSchema()).ListType("atomic")))
          .Field("secret", Object(R("SecretVolumeSource"), "A Secret as a volume.")
                               .Field("defaultMode", Int32("Mode bits used on created files."))
                               .Field("items", ArrayOf(KeyToPathSchema()).ListType("atomic"))
                               .Field("optional", Bool("Whether the Secret must exist."))
                               .Field("secretName", Str("Name of the secret.")))
          .PreserveUnknown()
          .Require("name").Build();
  return s;
}

SchemaPtr SeccompProfileSchema() {
  static const SchemaPtr s =
      Object(R("SeccompProfile"), "Defines a pod/container's seccomp profile settings.")
          .Field("localhostProfile", Str("A profile defined in a file on the node."))
          .Field("type", Str("Localhost, RuntimeDefault or Unconfined.")).Require("type").Build();
  return s;
}

SchemaPtr SeLinuxOptionsSchema() {
  static const SchemaPtr s =
      Object(R("SELinuxOptions"), "The labels to be applied to the container.")
          .Field("level", Str("SELinux level label.")).Field("role", Str("SELinux role label."))
          .Field("type", Str("SELinux type label.")).Field("user", Str("SELinux user label."))
          .Build();
  return s;
}

}  // namespace batchd::api::core_v1::internal
