// The JobSet schema: upstream's field names and list semantics
// (jobset_types.go); the descriptions are batchd's own.
#include "api/batch/v1/batch_v1.h"
#include "api/core/v1/core_v1.h"
#include "api/core/v1/kind_helpers.h"
#include "api/jobset/v1alpha2/jobset_v1alpha2.h"

namespace batchd::api::jobset_v1alpha2 {
namespace {

std::string Ref(const char* name) { return std::string("io.x-k8s.jobset.v1alpha2.") + name; }

SchemaPtr StringList(std::string doc) { return ArrayOf(Str(), std::move(doc)).ListType("atomic"); }

SchemaPtr ReplicatedJobSchema() {
  SchemaPtr depends_on =
      Object(Ref("DependsOn"), "A dependency on the status of an earlier replicated job.")
          .Field("name", Str("Name of an earlier replicated job."))
          .Field("status", Str("Ready or Complete.").Enum({kDependencyReady,
                                                          kDependencyComplete}))
          .Require("name").Require("status")
          .Build();
  return Object(Ref("ReplicatedJob"), "A group of identical Jobs.")
      .Field("name", Str("Name of the replicated job; child Jobs are named "
                         "<jobset>-<name>-<index>."))
      .Field("groupName", Str("Group this replicated job belongs to (default \"default\")."))
      .Field("template", batch_v1::JobTemplateSpecSchema())
      .Field("replicas", Int32("Number of Jobs created from the template (default 1)."))
      .Field("dependsOn", ArrayOf(depends_on, "The earlier replicated job whose status this one "
                                              "waits for before its Jobs are created (one "
                                              "entry; not on the first replicated job).")
                              .MergeKey("name"))
      .Require("name").Require("template")
      .Build();
}

SchemaPtr NetworkSchema() {
  return Object(Ref("Network"), "Networking options of the JobSet.")
      .Field("enableDNSHostnames", Bool("Pods are reachable by their hostnames "
                                        "<jobset>-<rjob>-<jobIndex>-<podIndex>.<subdomain> "
                                        "(default true)."))
      .Field("subdomain", Str("The pods' subdomain and headless Service name (default: the "
                              "JobSet name)."))
      .Field("publishNotReadyAddresses", Bool("Publish pod addresses before they are ready "
                                              "(default true)."))
      .Build();
}

SchemaPtr SuccessPolicySchema() {
  return Object(Ref("SuccessPolicy"), "When the JobSet is declared succeeded.")
      .Field("operator", Str("All: every Job of the targeted replicated jobs succeeds; Any: one "
                             "does.").Enum({kOperatorAll, kOperatorAny}))
      .Field("targetReplicatedJobs", StringList("Replicated jobs the operator applies to; empty "
                                                "means all."))
      .Require("operator")
      .Build();
}

SchemaPtr FailurePolicySchema() {
  SchemaPtr rule =
      Object(Ref("FailurePolicyRule"), "An action for child Job failures that match.")
          .Field("name", Str("Name of the rule (default failurePolicyRule<index>)."))
          .Field("action", Str("FailJobSet, RestartJobSet or RestartJobSetAndIgnoreMaxRestarts.")
                               .Enum({kFailJobSet, kRestartJobSet,
                                      kRestartJobSetAndIgnoreMaxRestarts, kRestartJob,
                                      kRestartJobAndIgnoreMaxRestarts}))
          .Field("onJobFailureReasons", StringList("Reasons of the Job's Failed condition that "
                                                   "match; empty matches any."))
          .Field("onJobFailureMessagePatterns", StringList("RE2 patterns of the Job's Failed "
                                                           "condition message; empty matches "
                                                           "any."))
          .Field("targetReplicatedJobs", StringList("Replicated jobs the rule applies to; empty "
                                                    "means all."))
          .Require("name").Require("action")
          .Build();
  return Object(Ref("FailurePolicy"), "When the JobSet is restarted or declared failed.")
      .Field("maxRestarts", Int32("How many restarts count before the JobSet fails."))
      .Field("restartStrategy", Str("Recreate (default) or BlockingRecreate.")
                                    .Enum({kRecreate, kBlockingRecreate, kInPlaceRestart}))
      .Field("rules", ArrayOf(rule, "Rules, checked in order; the first matching one acts. "
                                    "Without a match the JobSet restarts.")
                          .ListType("atomic"))
      .Build();
}

SchemaPtr VolumeClaimPolicySchema() {
  // A PersistentVolumeClaim template: claims are node-local directories in
  // batchd; validation refuses the fields that bind or fill a volume.
  SchemaPtr claim = SchemaBuilder(Schema::Type::kObject)
                        .Doc("A PersistentVolumeClaim template: the claim <name>-<jobset>, a "
                             "node-local directory on each node that runs the JobSet's pods.")
                        .PreserveUnknown()
                        .Build();
  SchemaPtr retention = Object(Ref("VolumeRetentionPolicy"), "Lifecycle of the claims.")
                            .Field("whenDeleted", Str("Delete or Retain.").Enum({"Delete",
                                                                                 "Retain"}))
                            .Build();
  return Object(Ref("VolumeClaimPolicy"), "Volume claims shared by the JobSet's pods.")
      .Field("templates", ArrayOf(claim, "Claim templates.").ListType("atomic"))
      .Field("retentionPolicy", retention)
      .Build();
}

SchemaPtr JobSetSpecSchema() {
  return Object(Ref("JobSetSpec"), "The desired state of a JobSet.")
      .Field("replicatedJobs", ArrayOf(ReplicatedJobSchema(), "The groups of Jobs of the set.")
                                   .MergeKey("name"))
      .Field("network", NetworkSchema())
      .Field("successPolicy", SuccessPolicySchema())
      .Field("failurePolicy", FailurePolicySchema())
      .Field("startupPolicy",
             Object(Ref("StartupPolicy"), "Order in which replicated jobs start (deprecated "
                                          "in favour of dependsOn).")
                 .Field("startupPolicyOrder", Str("AnyOrder (default) or InOrder.")
                                                  .Enum({kAnyOrder, kInOrder}))
                 .Require("startupPolicyOrder"))
      .Field("suspend", Bool("Suspends all child Jobs when true."))
      .Field("coordinator",
             Object(Ref("Coordinator"), "The pod whose stable endpoint is published to all Jobs "
                                        "and pods.")
                 .Field("replicatedJob", Str("Replicated job of the coordinator pod."))
                 .Field("jobIndex", Int64("Job index of the coordinator pod."))
                 .Field("podIndex", Int64("Completion index of the coordinator pod."))
                 .Require("replicatedJob"))
      .Field("managedBy", Str("The controller that reconciles this JobSet; any value but "
                              "jobset.sigs.k8s.io/jobset-controller makes batchd skip it."))
      .Field("ttlSecondsAfterFinished", Int32("Seconds after finishing before the JobSet is "
                                              "deleted."))
      .Field("volumeClaimPolicies", ArrayOf(VolumeClaimPolicySchema(), "Shared volume claims.")
                                        .ListType("atomic"))
      .Build();
}

SchemaPtr JobSetStatusSchema() {
  SchemaPtr rjob_status =
      Object(Ref("ReplicatedJobStatus"), "Counts of the child Jobs of one replicated job.")
          .Field("name", Str("Name of the replicated job."))
          .Field("ready", Int32("Jobs whose ready and succeeded pods reach min(parallelism, "
                                "completions)."))
          .Field("succeeded", Int32("Jobs that completed."))
          .Field("failed", Int32("Jobs that failed."))
          .Field("active", Int32("Jobs with a pending or running pod."))
          .Field("suspended", Int32("Jobs that are suspended."))
          .Field("jobRestarts", ArrayOf(Int32(), "Per-Job restarts.").ListType("atomic"))
          .Field("jobRestartsCountTowardsMax",
                 ArrayOf(Int32(), "Per-Job restarts counted towards maxRestarts.")
                     .ListType("atomic"))
          .Require("name").Require("ready").Require("succeeded").Require("failed")
          .Require("active").Require("suspended")
          .Build();
  return Object(Ref("JobSetStatus"), "The observed state of a JobSet.")
      .Field("conditions", ArrayOf(core_v1::ConditionSchema(), "Conditions of the JobSet.")
                               .MergeKey("type"))
      .Field("restarts", Int32("Times the JobSet was restarted."))
      .Field("restartsCountTowardsMax", Int32("Restarts counted towards maxRestarts."))
      .Field("terminalState", Str("Completed or Failed once the JobSet finished."))
      .Field("replicatedJobsStatus", ArrayOf(rjob_status, "Per replicated job counts.")
                                         .MergeKey("name"))
      .Field("previousInPlaceRestartAttempt",
             Int32("In-place restart: the attempt the pods last left (restarted in place)."))
      .Field("currentInPlaceRestartAttempt",
             Int32("In-place restart: the attempt every pod of the JobSet runs."))
      .Build();
}

}  // namespace

SchemaPtr JobSetSchema() {
  static const SchemaPtr s =
      core_v1::TopLevel(Ref("JobSet"), "JobSet: a group of Jobs run, restarted and finished "
                                       "together.")
          .Field("spec", JobSetSpecSchema())
          .Field("status", JobSetStatusSchema())
          .Build();
  return s;
}

}  // namespace batchd::api::jobset_v1alpha2
