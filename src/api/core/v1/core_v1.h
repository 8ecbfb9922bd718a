// core/v1 kinds (Namespace, Pod, Node, Event, Service, Secret, ConfigMap) and the shared building blocks
// other groups embed: ObjectMeta, ListMeta, LabelSelector, PodTemplateSpec,
// pod defaulting and validation. Schemas are built once and cached; all
// functions are thread-safe after first use.
#pragma once

#include "api/field_error.h"
#include "api/kind.h"
#include "api/schema.h"

namespace batchd::api::core_v1 {

// metav1 building blocks.
SchemaPtr ObjectMetaSchema();
SchemaPtr LabelSelectorSchema();
SchemaPtr OwnerReferenceSchema();
SchemaPtr ConditionSchema();  // metav1.Condition (type, status, reason, message, lastTransitionTime, observedGeneration)

// Pods.
SchemaPtr PodSpecSchema();
SchemaPtr PodTemplateSpecSchema();
// SetDefaults_PodSpec and its containers (restartPolicy, dnsPolicy, schedulerName,
// terminationGracePeriodSeconds, terminationMessagePath/Policy, imagePullPolicy, ...).
// Requests are defaulted from limits only for Pods (SetDefaultsPod), as in
// Kubernetes, not for templates. `pod_spec` is the spec object.
void SetDefaultsPodSpec(Json& pod_spec);
// SetDefaults_Pod: SetDefaultsPodSpec plus what only pods get (enableServiceLinks,
// container requests defaulted from limits). `pod` is the whole Pod object.
void SetDefaultsPod(Json& pod);
// Validation of a pod template (`metadata` labels/annotations and `spec`) at `path`
// (e.g. Path("spec").Child("template")).
ErrorList ValidatePodTemplateSpec(const Json& tmpl, const Path& path);
ErrorList ValidatePodSpec(const Json& spec, const Path& path);
// "a,b" container names / images of a pod spec, for `-o wide` columns.
std::string ContainerNames(const Json& pod_spec);
std::string ContainerImages(const Json& pod_spec);

// Adds Namespace, Pod, Node, Event, Service, Secret and ConfigMap to `scheme`.
void RegisterKinds(Scheme& scheme);

}  // namespace batchd::api::core_v1

namespace batchd::api::coordination_v1 {
// Adds Lease (coordination.k8s.io/v1).
void RegisterKinds(Scheme& scheme);
}  // namespace batchd::api::coordination_v1

namespace batchd::api::batch_v1 {
// Adds Job and CronJob (batch/v1).
void RegisterKinds(Scheme& scheme);
}  // namespace batchd::api::batch_v1
