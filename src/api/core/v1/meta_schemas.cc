// metav1 building blocks shared by every kind: ObjectMeta, ListMeta,
// LabelSelector, OwnerReference, Condition, and core/v1 ObjectReference.
#include "api/core/v1/core_v1.h"
#include "api/core/v1/internal/schemas.h"
#include "api/schema_ops/schema_ops.h"

namespace batchd::api::core_v1 {

SchemaPtr OwnerReferenceSchema() {
  static const SchemaPtr s =
      Object("io.k8s.apimachinery.pkg.apis.meta.v1.OwnerReference",
             "OwnerReference contains enough information to let you identify an owning object.")
          .Field("apiVersion", Str("API version of the referent."))
          .Field("kind", Str("Kind of the referent."))
          .Field("name", Str("Name of the referent."))
          .Field("uid", Str("UID of the referent."))
          .Field("controller", Bool("If true, this reference points to the managing controller."))
          .Field("blockOwnerDeletion",
                 Bool("If true, the owner cannot be deleted from the key-value store until this "
                      "reference is removed."))
          .Require("apiVersion").Require("kind").Require("name").Require("uid")
          .Build();
  return s;
}

namespace {

SchemaPtr ManagedFieldsEntrySchema() {
  static const SchemaPtr s =
      Object("io.k8s.apimachinery.pkg.apis.meta.v1.ManagedFieldsEntry",
             "ManagedFieldsEntry is a workflow-id, a FieldSet and the group version of the "
             "resource that the fieldset applies to.")
          .Field("apiVersion", Str("The version of the resource this field set applies to."))
          .Field("fieldsType", Str("The type of the fields field; only FieldsV1 is used."))
          .Field("fieldsV1", AnyValue("The field set in FieldsV1 format."))
          .Field("manager", Str("Identifier of the workflow managing these fields."))
          .Field("operation", Str("Operation type that caused this entry: Apply or Update."))
          .Field("subresource", Str("Name of the subresource used to update the object."))
          .Field("time", TimeSchema("Timestamp of when the last operation added these fields."))
          .PreserveUnknown()
          .Build();
  return s;
}

}  // namespace

SchemaPtr ObjectMetaSchema() {
  static const SchemaPtr s =
      Object("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
             "ObjectMeta is metadata that all persisted resources must have.")
          .Field("name", Str("Name must be unique within a namespace."))
          .Field("generateName",
                 Str("Optional prefix used by the server to generate a unique name."))
          .Field("namespace", Str("The namespace the object belongs to."))
          .Field("selfLink", Str("Deprecated; not set by the server."))
          .Field("uid", Str("UID is the unique in time and space value for this object."))
          .Field("resourceVersion",
                 Str("An opaque value that represents the internal version of this object."))
          .Field("generation", Int64("A sequence number representing a specific generation of "
                                     "the desired state."))
          .Field("creationTimestamp", TimeSchema("When this object was created."))
          .Field("deletionTimestamp",
                 TimeSchema("RFC 3339 date and time at which this resource will be deleted."))
          .Field("deletionGracePeriodSeconds",
                 Int64("Seconds allowed for this object to gracefully terminate."))
          .Field("labels", MapOf(Str(), "Map of string keys and values used to organize and "
                                        "categorize objects."))
          .Field("annotations", MapOf(Str(), "Unstructured key value map stored with a resource."))
          .Field("ownerReferences",
                 ArrayOf(OwnerReferenceSchema(), "Objects depended on by this object.")
                     .MergeKey("uid"))
          .Field("finalizers",
                 ArrayOf(Str(), "Must be empty before the object is deleted from the registry.")
                     .ListType("set").PatchStrategy("merge"))
          .Field("managedFields",
                 ArrayOf(ManagedFieldsEntrySchema(), "Maps workflow-id and version to the set of "
                                                     "fields that are managed by that workflow."))
          .Build();
  return s;
}

SchemaPtr LabelSelectorSchema() {
  static const SchemaPtr requirement =
      Object("io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelectorRequirement",
             "A label selector requirement: a key, an operator and values.")
          .Field("key", Str("The label key that the selector applies to."))
          .Field("operator", Str("In, NotIn, Exists or DoesNotExist."))
          .Field("values", ArrayOf(Str(), "An array of string values.").ListType("atomic"))
          .Require("key").Require("operator")
          .Build();
  static const SchemaPtr s =
      Object("io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector",
             "A label selector is a label query over a set of resources.")
          .Field("matchExpressions",
                 ArrayOf(requirement, "A list of label selector requirements; ANDed.")
                     .ListType("atomic"))
          .Field("matchLabels", MapOf(Str(), "A map of {key,value} pairs."))
          .Build();
  return s;
}

SchemaPtr ConditionSchema() {
  static const SchemaPtr s =
      Object("io.k8s.apimachinery.pkg.apis.meta.v1.Condition",
             "Condition contains details for one aspect of the current state of this API "
             "Resource.")
          .Field("type", Str("Type of condition in CamelCase."))
          .Field("status", Str("Status of the condition, one of True, False, Unknown."))
          .Field("observedGeneration",
                 Int64("The .metadata.generation that the condition was set based upon."))
          .Field("lastTransitionTime",
                 TimeSchema("Last time the condition transitioned from one status to another."))
          .Field("reason", Str("A programmatic identifier for the last transition."))
          .Field("message", Str("A human readable message about the transition."))
          .Require("type").Require("status").Require("lastTransitionTime").Require("reason")
          .Require("message")
          .Build();
  return s;
}

namespace internal {

SchemaPtr ObjectReferenceSchema() {
  static const SchemaPtr s =
      Object("io.k8s.api.core.v1.ObjectReference",
             "ObjectReference contains enough information to let you inspect or modify the "
             "referred object.")
          .Field("apiVersion", Str("API version of the referent."))
          .Field("fieldPath", Str("A piece of an object instead of an entire object."))
          .Field("kind", Str("Kind of the referent."))
          .Field("name", Str("Name of the referent."))
          .Field("namespace", Str("Namespace of the referent."))
          .Field("resourceVersion", Str("Specific resourceVersion to which this reference is made."))
          .Field("uid", Str("UID of the referent."))
          .Build();
  return s;
}

SchemaPtr LocalObjectReferenceSchema() {
  static const SchemaPtr s =
      Object("io.k8s.api.core.v1.LocalObjectReference",
             "LocalObjectReference contains enough information to locate the referenced object "
             "inside the same namespace.")
          .Field("name", Str("Name of the referent."))
          .Build();
  return s;
}

SchemaBuilder MicroTimeSchema(std::string doc) {
  SchemaBuilder b = TimeSchema(std::move(doc));
  const_cast<Schema&>(*b.Build()).ref = schema_ops::kMicroTimeRef;
  return b;
}

// The apiVersion/kind/metadata header every top-level kind starts with.
SchemaBuilder TopLevel(const std::string& ref, const std::string& doc) {
  return Object(ref, doc)
      .Field("apiVersion", Str("APIVersion defines the versioned schema of this representation "
                               "of an object."))
      .Field("kind", Str("Kind is a string value representing the REST resource this object "
                         "represents."))
      .Field("metadata", ObjectMetaSchema());
}

}  // namespace internal
}  // namespace batchd::api::core_v1
