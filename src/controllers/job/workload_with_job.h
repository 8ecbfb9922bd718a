// WorkloadWithJob (KEP-5547; Kubernetes 1.36 alpha, gate WorkloadWithJob):
// the Job controller gives an Indexed Job with parallelism == completions > 1
// a gang. Before the Job's first pods it creates a scheduling.k8s.io/v1alpha2
// Workload (spec.controllerRef = the Job, one pod group template with
// `gang.minCount` = parallelism) and a PodGroup from that template, both
// owned by the Job (controller ownerReference; the PodGroup also names the
// Workload), so the garbage collector deletes them with it. Every pod the Job
// creates then carries `spec.schedulingGroup.podGroupName` and the scheduler
// binds them all or none. Creation order: Workload, PodGroup, pods.
//
// Skipped (pods are scheduled one by one, as without the gate):
//  - Jobs whose pod template names a scheduling group itself (the user's own
//    Workload/PodGroup, or a higher-level controller's);
//  - Jobs controlled by another object (a JobSet: the higher-level
//    controller owns the workload); a CronJob's Jobs are standalone, as the
//    KEP says, and do get a gang;
//  - Jobs that already ran pods without one (created before the gate), and
//    Jobs whose Workload or PodGroup is ambiguous (several reference the Job)
//    or was not created by the Job controller.
// Suspended Jobs (Kueue's queued Jobs) create no pods, so they get their
// Workload and PodGroup when they are first unsuspended; they keep them
// across suspensions.
//
// The gate also refuses changes of spec.parallelism of such Jobs (the
// PodGroup's minCount is immutable): `ValidateParallelismUpdate`.
//
// Thread-safety: `PodGroupSource` is used from the Job controller's
// reconciles, which may run concurrently for different Jobs; it keeps no
// state besides its informers.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "api/batch/v1/job_view.h"
#include "api/field_error.h"
#include "reconcile/context.h"
#include "registry/registry.h"

namespace batchd::controllers::job {

// Whether `job` gets a gang: Indexed, parallelism > 1, completions ==
// parallelism, no scheduling group in its pod template, and no controller
// other than a CronJob.
bool IsGangCandidate(const api::batch_v1::JobSpecView& spec, const api::Json& job);

// Deterministic names: "<job>-<hash of the Job's uid>", the template
// "<job>-pgt-0" (a DNS label) and "<workload>-<template>-<hash>". Names
// are for people; discovery goes by reference (controllerRef,
// podGroupTemplateRef), as in the KEP.
std::string WorkloadNameForJob(std::string_view job_name, std::string_view job_uid);
std::string PodGroupTemplateNameForJob(std::string_view job_name);
std::string PodGroupNameFor(std::string_view workload, std::string_view template_name);

// The objects created for `job` (a Job as stored, with its uid).
api::Json NewWorkloadForJob(const api::Json& job);
api::Json NewPodGroupForWorkload(const api::Json& job, const api::Json& workload);

// `pod` joins PodGroup `pod_group`.
void SetPodSchedulingGroup(api::Json& pod, std::string_view pod_group);

// The refusal of a parallelism change of a gang-candidate Job (before or
// after the update), with Kubernetes' field path; empty when allowed.
api::ErrorList ValidateParallelismUpdate(const api::Json& job, const api::Json& old);

// Refuses those updates at the API (422 Invalid, the registry's admission
// hook on jobs.batch), as Kubernetes' Job validation does with the gate on.
absl::Status AddParallelismValidation(registry::Registry& registry);

// Finds or creates the PodGroup of a Job being synced.
class PodGroupSource {
 public:
  // Creates the Workload and PodGroup informers on `ctx.informers`.
  explicit PodGroupSource(reconcile::ControllerContext& ctx);

  // The PodGroup the next pods of `job` join, "" when the Job is scheduled
  // pod by pod. `has_started`: the Job has (or had) pods, or counted
  // completions or failures; a Job that started without a gang gets none.
  // Errors are the API's (the sync is retried).
  absl::StatusOr<std::string> EnsurePodGroup(const api::batch_v1::JobSpecView& spec,
                                             const api::Json& job, bool has_started);

 private:
  // The Job's Workload: the one whose controllerRef names the Job, created
  // when there is none and the Job has not started. `*skip` when the Job is
  // to be scheduled pod by pod (see the file comment).
  absl::StatusOr<api::Json> EnsureWorkload(const api::Json& job, bool has_started, bool* skip);
  // The name of the PodGroup made from `workload`'s template, created when
  // there is none; "" when it is not the Job controller's.
  absl::StatusOr<std::string> EnsurePodGroupOf(const api::Json& job, const api::Json& workload);

  reconcile::ControllerContext& ctx_;
  const api::KindDef& workload_kind_;
  const api::KindDef& pod_group_kind_;
  client::Informer& workloads_;
  client::Informer& pod_groups_;
};

}  // namespace batchd::controllers::job
