// jobset.x-k8s.io/v1alpha2 names shared by the API package, the typed view
// and the JobSet controller: the group, the labels and annotations JobSet
// puts on its child Jobs and their pods, condition types, reasons and
// messages, enum values — spelt as upstream JobSet spells them
// (api/jobset/v1alpha2/jobset_types.go, pkg/constants/constants.go).
// Header-only, no dependencies.
#pragma once

namespace batchd::api::jobset_v1alpha2 {

inline constexpr char kGroup[] = "jobset.x-k8s.io";
inline constexpr char kVersion[] = "v1alpha2";
inline constexpr char kApiVersion[] = "jobset.x-k8s.io/v1alpha2";
inline constexpr char kKind[] = "JobSet";
inline constexpr char kPlural[] = "jobsets";

// Set both as a label and as an annotation on child Jobs and pod templates.
inline constexpr char kJobSetNameKey[] = "jobset.sigs.k8s.io/jobset-name";
inline constexpr char kJobSetUidKey[] = "jobset.sigs.k8s.io/jobset-uid";
inline constexpr char kReplicatedJobNameKey[] = "jobset.sigs.k8s.io/replicatedjob-name";
inline constexpr char kReplicatedJobReplicasKey[] = "jobset.sigs.k8s.io/replicatedjob-replicas";
inline constexpr char kGlobalReplicasKey[] = "jobset.sigs.k8s.io/global-replicas";
inline constexpr char kJobIndexKey[] = "jobset.sigs.k8s.io/job-index";
inline constexpr char kJobGlobalIndexKey[] = "jobset.sigs.k8s.io/job-global-index";
inline constexpr char kJobKey[] = "jobset.sigs.k8s.io/job-key";
inline constexpr char kRestartsKey[] = "jobset.sigs.k8s.io/restart-attempt";
inline constexpr char kGroupNameKey[] = "jobset.sigs.k8s.io/group-name";
inline constexpr char kGroupReplicasKey[] = "jobset.sigs.k8s.io/group-replicas";
inline constexpr char kJobGroupIndexKey[] = "jobset.sigs.k8s.io/job-group-index";
inline constexpr char kCoordinatorKey[] = "jobset.sigs.k8s.io/coordinator";

// volumeClaimPolicies with retentionPolicy Delete: the JobSet's finalizer
// (its claims are emptied before it goes), the annotation listing the nodes
// its pods ran on (where claim directories may exist), and the label of the
// pods that empty them.
inline constexpr char kVolumeClaimsFinalizer[] = "batchd.io/jobset-volume-claims";
inline constexpr char kClaimNodesAnnotation[] = "batchd.io/volume-claim-nodes";
inline constexpr char kClaimCleanupLabel[] = "batchd.io/volume-claim-cleanup";

// In-place restart: the attempt a pod's containers run, on the pod.
inline constexpr char kInPlaceRestartAttemptKey[] = "jobset.sigs.k8s.io/in-place-restart-attempt";
inline constexpr char kInPlaceRestartReason[] = "InPlaceRestart";

// Exclusive placement: the annotation naming the node label whose domains
// each get one child Job (on the JobSet or a replicated job template, copied
// to the Jobs and pods as an annotation), and the one that says the user has
// labelled and tainted the nodes for the node-selector strategy instead.
inline constexpr char kExclusiveKey[] = "alpha.jobset.sigs.k8s.io/exclusive-topology";
inline constexpr char kNodeSelectorStrategyKey[] = "alpha.jobset.sigs.k8s.io/node-selector";
// Node-selector strategy: the node label naming the Job (`<ns>_<job>`) and
// the taint its pods tolerate.
inline constexpr char kNamespacedJobKey[] = "alpha.jobset.sigs.k8s.io/namespaced-job";
inline constexpr char kNoScheduleTaintKey[] = "alpha.jobset.sigs.k8s.io/no-schedule";
// The pod label holding spec.priority, so exclusive placement repels only
// pods of the same priority (upstream issue 1057).
inline constexpr char kPriorityKey[] = "jobset.sigs.k8s.io/priority";
// Exclusive placement violations: the DisruptionTarget reason and message
// of a follower pod deleted because it is outside its leader's domain.
inline constexpr char kExclusivePlacementViolationReason[] = "ExclusivePlacementViolation";
inline constexpr char kExclusivePlacementViolationMessage[] =
    "Pod violated JobSet exclusive placement policy";

// spec.managedBy: the value (or absence) that means "this controller".
inline constexpr char kJobSetControllerName[] = "jobset.sigs.k8s.io/jobset-controller";

// Condition types.
inline constexpr char kConditionCompleted[] = "Completed";
inline constexpr char kConditionFailed[] = "Failed";
inline constexpr char kConditionSuspended[] = "Suspended";
inline constexpr char kConditionRestarting[] = "RestartingJobSet";
inline constexpr char kConditionStartupInProgress[] = "StartupPolicyInProgress";
inline constexpr char kConditionStartupCompleted[] = "StartupPolicyCompleted";

// Condition / event reasons and messages.
inline constexpr char kReachedMaxRestartsReason[] = "ReachedMaxRestarts";
inline constexpr char kReachedMaxRestartsMessage[] =
    "jobset failed due to reaching max number of restarts";
inline constexpr char kFailedJobsReason[] = "FailedJobs";
inline constexpr char kFailedJobsMessage[] = "jobset failed due to one or more job failures";
inline constexpr char kAllJobsCompletedReason[] = "AllJobsCompleted";
inline constexpr char kAllJobsCompletedMessage[] = "jobset completed successfully";
inline constexpr char kJobCreationFailedReason[] = "JobCreationFailed";
inline constexpr char kHeadlessServiceCreationFailedReason[] = "HeadlessServiceCreationFailed";
inline constexpr char kInOrderInProgressReason[] = "InOrderStartupPolicyInProgress";
inline constexpr char kInOrderInProgressMessage[] = "in order startup policy is in progress";
inline constexpr char kInOrderCompletedReason[] = "InOrderStartupPolicyCompleted";
inline constexpr char kInOrderCompletedMessage[] = "in order startup policy has completed";
inline constexpr char kRestartingDefaultFailurePolicyReason[] = "DefaultFailurePolicy";
inline constexpr char kRestartingFailurePolicyReasonPrefix[] = "FailurePolicy_";
inline constexpr char kRestartingJobsReadyReason[] = "JobsReady";
inline constexpr char kRestartingJobsReadyMessage[] = "all jobs are ready";
inline constexpr char kRestartingJobSetFailedReason[] = "JobSetFailed";
inline constexpr char kRestartingJobSetFailedMessage[] = "jobset failed";
inline constexpr char kRestartingJobSetCompletedReason[] = "JobSetCompleted";
inline constexpr char kRestartingJobSetSuspendedReason[] = "JobSetSuspended";
inline constexpr char kSuspendedReason[] = "SuspendedJobs";
inline constexpr char kSuspendedMessage[] = "jobset is suspended";
inline constexpr char kResumedReason[] = "ResumeJobs";
inline constexpr char kResumedMessage[] = "jobset is resumed";
inline constexpr char kFailJobSetActionReason[] = "FailJobSetFailurePolicyAction";
inline constexpr char kFailJobSetActionMessage[] = "applying FailJobSet failure policy action";
inline constexpr char kRestartJobSetActionReason[] = "RestartJobSetFailurePolicyAction";
inline constexpr char kRestartJobSetActionMessage[] =
    "applying RestartJobSet failure policy action";
inline constexpr char kRestartIgnoreMaxActionReason[] =
    "RestartJobSetAndIgnoreMaxRestartsFailurePolicyAction";
inline constexpr char kRestartIgnoreMaxActionMessage[] =
    "applying RestartJobSetAndIgnoreMaxRestarts failure policy action";

// Enum values.
inline constexpr char kOperatorAll[] = "All";
inline constexpr char kOperatorAny[] = "Any";
inline constexpr char kFailJobSet[] = "FailJobSet";
inline constexpr char kRestartJobSet[] = "RestartJobSet";
inline constexpr char kRestartJobSetAndIgnoreMaxRestarts[] = "RestartJobSetAndIgnoreMaxRestarts";
inline constexpr char kRestartJob[] = "RestartJob";
inline constexpr char kRestartJobAndIgnoreMaxRestarts[] = "RestartJobAndIgnoreMaxRestarts";
inline constexpr char kRecreate[] = "Recreate";
inline constexpr char kBlockingRecreate[] = "BlockingRecreate";
inline constexpr char kInPlaceRestart[] = "InPlaceRestart";
inline constexpr char kAnyOrder[] = "AnyOrder";
inline constexpr char kInOrder[] = "InOrder";
inline constexpr char kDependencyReady[] = "Ready";
inline constexpr char kDependencyComplete[] = "Complete";
inline constexpr char kRetentionDelete[] = "Delete";
inline constexpr char kRetentionRetain[] = "Retain";
inline constexpr char kTerminalCompleted[] = "Completed";
inline constexpr char kTerminalFailed[] = "Failed";

}  // namespace batchd::api::jobset_v1alpha2
