// batch/v1: Job and CronJob as JSON documents — schemas, Kubernetes'
// defaulting (SetDefaults_Job / SetDefaults_CronJob), the API server's
// create-time preparation (selector generation), validation with Kubernetes'
// field paths and messages, and `kubectl get` table cells. `RegisterKinds`
// (declared in api/core/v1/core_v1.h) wires these into KindDefs.
//
// JobSet and the controllers reuse the JobSpec pieces: `JobTemplateSpecSchema`,
// `SetDefaultsJobSpec`, `ValidateJobTemplateSpec`, the label constants and
// the condition helpers. Schemas are built once and immutable; every
// function is stateless and thread-safe.
#pragma once

#include <string_view>

#include "absl/strings/string_view.h"
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "api/field_error.h"
#include "api/kind.h"
#include "api/schema.h"

namespace batchd::api::batch_v1 {

// Labels and annotations Kubernetes defines for Jobs.
inline constexpr char kJobNameLabel[] = "batch.kubernetes.io/job-name";
inline constexpr char kLegacyJobNameLabel[] = "job-name";
inline constexpr char kControllerUidLabel[] = "batch.kubernetes.io/controller-uid";
inline constexpr char kLegacyControllerUidLabel[] = "controller-uid";
inline constexpr char kJobCompletionIndexAnnotation[] = "batch.kubernetes.io/job-completion-index";
inline constexpr char kJobTrackingFinalizer[] = "batch.kubernetes.io/job-tracking";
inline constexpr char kJobIndexFailureCountAnnotation[] =
    "batch.kubernetes.io/job-index-failure-count";
inline constexpr char kJobIndexIgnoredFailureCountAnnotation[] =
    "batch.kubernetes.io/job-index-ignored-failure-count";
inline constexpr char kCronJobScheduledTimestampAnnotation[] =
    "batch.kubernetes.io/cronjob-scheduled-timestamp";
inline constexpr char kJobControllerName[] = "kubernetes.io/job-controller";

// Schemas (OpenAPI names io.k8s.api.batch.v1.*).
SchemaPtr JobSpecSchema();
SchemaPtr JobStatusSchema();
SchemaPtr JobTemplateSpecSchema();
SchemaPtr JobSchema();
SchemaPtr CronJobSchema();

// SetDefaults_Job minus the metadata part: completions/parallelism,
// backoffLimit, completionMode, suspend, manualSelector, podReplacementPolicy,
// podFailurePolicy pattern status, and the pod template's pod spec defaults.
// `spec` is a JobSpec object.
void SetDefaultsJobSpec(Json& spec);
// SetDefaults_Job on a whole Job: SetDefaultsJobSpec plus copying the pod
// template's labels to an unlabelled Job.
void SetDefaultsJob(Json& job);
// SetDefaults_CronJob plus the job template's pod spec defaults (JobSpec-level
// defaults are not applied to templates, as in Kubernetes).
void SetDefaultsCronJob(Json& cronjob);

// The API server's PrepareForCreate for Jobs: generates the selector and the
// template's `controller-uid` / `job-name` labels (both the
// `batch.kubernetes.io/` and the legacy keys) unless `spec.manualSelector` is
// true, and clears `status`. REQUIRES: `metadata.uid` and `metadata.name` set.
void PrepareJobForCreate(Json& job);

// ValidateJob (create): metadata name, generated selector, spec.
ErrorList ValidateJob(const Json& job);
// ValidateJob + ValidateJobUpdate: immutability and the mutable-while-
// suspended-and-never-started scheduling directives of the template.
ErrorList ValidateJobUpdate(const Json& job, const Json& old);
// ValidateJobUpdateStatus with the JobManagedBy-era transition rules.
ErrorList ValidateJobStatusUpdate(const Json& job, const Json& old);
// ValidateJobTemplateSpec (CronJob's jobTemplate, JobSet's replicated job
// templates): the JobSpec checks, no selector, no manualSelector.
// `path` is where the template sits, e.g. Path("spec").Child("jobTemplate").
ErrorList ValidateJobTemplateSpec(const Json& tmpl, const Path& path);

ErrorList ValidateCronJobCreate(const Json& cronjob);
ErrorList ValidateCronJobUpdate(const Json& cronjob, const Json& old);

// Table columns after Name and the matching cells, as Kubernetes' printers.
std::vector<TableColumn> JobColumns();
std::vector<Json> JobRowCells(const Json& job, absl::Time now);
std::vector<TableColumn> CronJobColumns();
std::vector<Json> CronJobRowCells(const Json& cronjob, absl::Time now);

// True when `job.status.conditions` has `type` with status "True".
bool JobConditionTrue(const Json& job, std::string_view type);
// Complete=True or Failed=True.
bool IsJobFinished(const Json& job);

// The KindDefs RegisterKinds adds (exposed for tests and tools).
KindDef JobKind();
KindDef CronJobKind();

}  // namespace batchd::api::batch_v1
