// Schemas of batch/v1 Job and CronJob (io.k8s.api.batch.v1.*). Field
// descriptions are short summaries written for batchd.
#include "api/batch/v1/batch_v1.h"
#include "api/core/v1/core_v1.h"
#include "api/core/v1/kind_helpers.h"

namespace batchd::api::batch_v1 {
namespace {

using core_v1::ObjectReferenceSchema;
using core_v1::TopLevel;

SchemaPtr PodFailurePolicySchema() {
  static const SchemaPtr s = [] {
    SchemaPtr on_exit = Object("io.k8s.api.batch.v1.PodFailurePolicyOnExitCodesRequirement",
                               "Requirement on container exit codes.")
        .Field("containerName", Str("Restricts the check to the container with this name."))
        .Field("operator", Str("In or NotIn: how exit codes relate to `values`."))
        .Field("values", ArrayOf(Int32(), "Exit codes (sorted, unique, at most 255).")
                             .ListType("set"))
        .Require("operator").Require("values")
        .Build();
    SchemaPtr on_cond = Object("io.k8s.api.batch.v1.PodFailurePolicyOnPodConditionsPattern",
                               "Pattern matching an actual pod condition type.")
        .Field("type", Str("The pod condition type to match."))
        .Field("status", Str("The required pod condition status (default True)."))
        .Require("type")
        .Build();
    SchemaPtr rule = Object("io.k8s.api.batch.v1.PodFailurePolicyRule",
                            "An action taken on a pod failure when its requirements are met.")
        .Field("action", Str("FailJob, FailIndex, Ignore or Count."))
        .Field("onExitCodes", on_exit)
        .Field("onPodConditions", ArrayOf(on_cond, "Pod condition patterns (at most 20).")
                                      .ListType("atomic"))
        .Require("action")
        .Build();
    return Object("io.k8s.api.batch.v1.PodFailurePolicy",
                  "How failed pods affect the backoff limit.")
        .Field("rules", ArrayOf(rule, "Rules evaluated in order (at most 20).").ListType("atomic"))
        .Require("rules")
        .Build();
  }();
  return s;
}

SchemaPtr SuccessPolicySchema() {
  static const SchemaPtr s = [] {
    SchemaPtr rule = Object("io.k8s.api.batch.v1.SuccessPolicyRule",
                            "A rule that declares an Indexed Job succeeded.")
        .Field("succeededIndexes", Str("Index set like \"1,3-5\" that must all succeed."))
        .Field("succeededCount", Int32("Minimum number of succeeded indexes."))
        .Build();
    return Object("io.k8s.api.batch.v1.SuccessPolicy",
                  "When an Indexed Job can be declared succeeded.")
        .Field("rules", ArrayOf(rule, "Alternative rules (at most 20).").ListType("atomic"))
        .Require("rules")
        .Build();
  }();
  return s;
}

SchemaPtr JobConditionSchema() {
  static const SchemaPtr s =
      Object("io.k8s.api.batch.v1.JobCondition", "Current state of a job.")
          .Field("type", Str("Complete, Failed, Suspended, FailureTarget or SuccessCriteriaMet."))
          .Field("status", Str("True, False or Unknown."))
          .Field("lastProbeTime", TimeSchema("Last time the condition was checked."))
          .Field("lastTransitionTime", TimeSchema("Last time the condition changed status."))
          .Field("reason", Str("(brief) reason for the last transition."))
          .Field("message", Str("Human readable details of the last transition."))
          .Require("type").Require("status")
          .Build();
  return s;
}

}  // namespace

SchemaPtr JobSpecSchema() {
  static const SchemaPtr s =
      Object("io.k8s.api.batch.v1.JobSpec", "JobSpec describes how the job execution will look.")
          .Field("parallelism", Int32("Maximum number of pods running at any time."))
          .Field("completions", Int32("Number of successfully finished pods wanted; unset means "
                                      "a work queue."))
          .Field("activeDeadlineSeconds", Int64("Seconds the job may be active, counted from "
                                                "startTime, before it is terminated."))
          .Field("podFailurePolicy", PodFailurePolicySchema())
          .Field("successPolicy", SuccessPolicySchema())
          .Field("backoffLimit", Int32("Retries before the job is marked failed (default 6)."))
          .Field("backoffLimitPerIndex", Int32("Retries per index of an Indexed Job."))
          .Field("maxFailedIndexes", Int32("Failed indexes tolerated before the job fails."))
          .Field("selector", core_v1::LabelSelectorSchema())
          .Field("manualSelector", Bool("When true the user picks the selector and pod labels."))
          .Field("template", core_v1::PodTemplateSpecSchema())
          .Field("ttlSecondsAfterFinished", Int32("Seconds after finishing before deletion."))
          .Field("completionMode", Str("NonIndexed (default) or Indexed."))
          .Field("suspend", Bool("When true no pods run."))
          .Field("podReplacementPolicy", Str("TerminatingOrFailed or Failed: when replacement "
                                             "pods are created."))
          .Field("managedBy", Str("Controller that manages the job; empty or "
                                  "kubernetes.io/job-controller for the built-in one."))
          .Require("template")
          .Build();
  return s;
}

SchemaPtr JobStatusSchema() {
  static const SchemaPtr s =
      Object("io.k8s.api.batch.v1.JobStatus", "JobStatus is the current state of a job.")
          .Field("conditions", ArrayOf(JobConditionSchema(), "Latest observations of the job.")
                                   .MergeKey("type").ListType("atomic"))
          .Field("startTime", TimeSchema("When the job controller started the job."))
          .Field("completionTime", TimeSchema("When the job completed (successful jobs only)."))
          .Field("active", Int32("Pending and running pods without deletionTimestamp."))
          .Field("succeeded", Int32("Pods in phase Succeeded."))
          .Field("failed", Int32("Pods in phase Failed."))
          .Field("terminating", Int32("Pods terminating (deletionTimestamp, not yet terminal)."))
          .Field("completedIndexes", Str("Completed indexes of an Indexed Job, e.g. \"1,3-5\"."))
          .Field("failedIndexes", Str("Failed indexes when backoffLimitPerIndex is set."))
          .Field("uncountedTerminatedPods",
                 Object("io.k8s.api.batch.v1.UncountedTerminatedPods",
                        "UIDs of terminated pods not yet counted in the status counters.")
                     .Field("succeeded", ArrayOf(Str(), "Succeeded pod UIDs.").ListType("set"))
                     .Field("failed", ArrayOf(Str(), "Failed pod UIDs.").ListType("set")))
          .Field("ready", Int32("Active pods with the Ready condition."))
          .Build();
  return s;
}

SchemaPtr JobTemplateSpecSchema() {
  static const SchemaPtr s =
      Object("io.k8s.api.batch.v1.JobTemplateSpec",
             "The data a Job should have when created from a template.")
          .Field("metadata", core_v1::ObjectMetaSchema())
          .Field("spec", JobSpecSchema())
          .Build();
  return s;
}

SchemaPtr JobSchema() {
  static const SchemaPtr s =
      TopLevel("io.k8s.api.batch.v1.Job", "Job represents the configuration of a single job.")
          .Field("spec", JobSpecSchema())
          .Field("status", JobStatusSchema())
          .Build();
  return s;
}

SchemaPtr CronJobSchema() {
  static const SchemaPtr s = [] {
    SchemaPtr spec =
        Object("io.k8s.api.batch.v1.CronJobSpec", "How the job execution will look and when it "
                                                  "will run.")
            .Field("schedule", Str("The schedule in Cron format."))
            .Field("timeZone", Str("IANA time zone name for the schedule."))
            .Field("startingDeadlineSeconds", Int64("Deadline in seconds for starting a job that "
                                                    "missed its scheduled time."))
            .Field("concurrencyPolicy", Str("Allow (default), Forbid or Replace."))
            .Field("suspend", Bool("When true, subsequent executions are not started."))
            .Field("jobTemplate", JobTemplateSpecSchema())
            .Field("successfulJobsHistoryLimit", Int32("Successful finished jobs to keep "
                                                       "(default 3)."))
            .Field("failedJobsHistoryLimit", Int32("Failed finished jobs to keep (default 1)."))
            .Require("schedule").Require("jobTemplate")
            .Build();
    SchemaPtr status =
        Object("io.k8s.api.batch.v1.CronJobStatus", "The current state of a cron job.")
            .Field("active", ArrayOf(ObjectReferenceSchema(), "Currently running jobs.")
                                 .ListType("atomic"))
            .Field("lastScheduleTime", TimeSchema("Last time the job was successfully scheduled."))
            .Field("lastSuccessfulTime", TimeSchema("Last time the job successfully completed."))
            .Build();
    return TopLevel("io.k8s.api.batch.v1.CronJob", "CronJob represents the configuration of a "
                                                   "single cron job.")
        .Field("spec", spec)
        .Field("status", status)
        .Build();
  }();
  return s;
}

}  // namespace batchd::api::batch_v1
