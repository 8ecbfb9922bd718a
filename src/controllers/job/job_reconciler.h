// JobReconciler: the Job controller's Reconcile (batch-apis.md §1), split by
// phase over job_controller.cc (driver, informer handlers), manage_job.cc
// (pod creation/deletion), pod_tracking.cc (finalizers and
// `status.uncountedTerminatedPods`) and sync_job.cc (counting, failure and
// success decisions). Internal to controllers/job; the public entry point
// is job_controller.h.
//
// Thread-safety: Reconcile may run concurrently for different keys; the
// shared bookkeeping (Expectations, PodIndex, BackoffStore) is locked.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "controllers/job/conditions.h"
#include "controllers/job/expectations.h"
#include "controllers/job/failure_policy.h"
#include "controllers/job/indexes.h"
#include "controllers/job/job_controller.h"
#include "controllers/job/job_pod.h"
#include "controllers/job/workload_with_job.h"
#include "reconcile/context.h"

namespace batchd::controllers::job {

inline constexpr int kMaxPodCreateDeletePerSync = 500;
inline constexpr int kMaxUncountedPods = 500;

// Everything one sync of one Job computes.
struct SyncCtx {
  std::string key;
  // The informer's Job, immutable: `spec` and the status at sync start are
  // read from it (views into the working copy would dangle as it is edited).
  client::ObjectRef job_ref;
  api::batch_v1::JobSpecView spec;
  api::batch_v1::JobStatusView status_at_start;  // Parsed once, as `spec`.
  // Working copy; `status` is edited in place (job_status_writer.h). Until
  // the first status write returns the stored Job it has no `spec` (read
  // `spec` or `job_ref` for that).
  api::Json job;
  // The working copy's status.startTime as written (nullopt: unset or
  // unparsable).
  std::optional<absl::Time> start_time;
  absl::Time now;
  std::vector<client::ObjectRef> pod_refs;  // Keeps `pods` alive.
  std::vector<JobPod> pods;                 // Pods this Job controls; not resized during a sync.
  std::vector<const JobPod*> active;        // Into `pods`.
  int terminating = 0;
  int succeeded = 0;
  int failed = 0;
  std::set<std::string> uncounted_succeeded, uncounted_failed;
  std::set<std::string> expected_rm_finalizers;
  // Creation/deletion expectations were met before the pods were snapshotted.
  bool expectations_satisfied = false;
  std::optional<api::meta::Condition> finished;
  bool indexed = false;
  bool per_index = false;
  int completions = -1;  // -1 when unset (work-queue Job).
  OrderedIntervals prev_succeeded_indexes, succeeded_indexes;
  std::optional<OrderedIntervals> failed_indexes;
  std::map<int, const JobPod*> delayed_per_index;  // Into `pods`.
  BackoffRecord new_backoff;
  std::optional<absl::Duration> requeue;
  // WorkloadWithJob: the PodGroup new pods join ("" for none).
  std::string pod_group;
  // Pods CreatePods made, created with the sync's next status write (one
  // chain, pods first) or alone at its end (CreateNewPods).
  std::vector<api::Json> new_pods;

  void RequeueAfter(absl::Duration d) {
    if (!requeue || d < *requeue) requeue = d;
  }
};

class JobReconciler : public reconcile::Reconciler {
 public:
  JobReconciler(reconcile::ControllerContext& ctx, const JobControllerOptions& opts);
  absl::StatusOr<reconcile::Result> Reconcile(const std::string& key) override;

  // Wires informer handlers that enqueue into `controller`.
  void Wire(reconcile::Controller& controller);

 private:
  // sync_job.cc
  absl::StatusOr<reconcile::Result> SyncJob(SyncCtx& c);
  void CountPods(SyncCtx& c);
  void DecideFailure(SyncCtx& c);
  void DecideIndexed(SyncCtx& c);
  // backoffLimitPerIndex: failed indexes, their limits, delayed pods.
  void DecidePerIndex(SyncCtx& c);
  void ApplySuspendCondition(SyncCtx& c);
  // manage_job.cc
  absl::StatusOr<int> ManageJob(SyncCtx& c);
  absl::StatusOr<int> CreatePods(SyncCtx& c, int n, const std::vector<int>& indexes);
  api::Json NewPod(const SyncCtx& c, int index) const;
  // Deletes pods after removing their tracking finalizer (not counted).
  absl::StatusOr<int> DeleteJobPods(SyncCtx& c, const std::vector<const JobPod*>& pods);
  // Deletes pods keeping finalizers (they are counted when terminal).
  absl::StatusOr<int> DeleteActivePods(SyncCtx& c, const std::vector<const JobPod*>& pods);
  // pod_tracking.cc
  absl::Status TrackStatusAndRemoveFinalizers(SyncCtx& c, bool needs_flush);
  absl::Status Flush(SyncCtx& c, const std::vector<const JobPod*>& rm,
                     std::set<std::string, std::less<>>& uids_with_finalizer, bool& needs_flush);
  bool CanRemoveFinalizer(const SyncCtx& c, const JobPod& pod, bool failed) const;
  bool EnactFinished(SyncCtx& c);
  // The Job finishes now with every pod terminal: one status write, then
  // the finalizer removals of `rm`.
  absl::Status FinishInOneWrite(SyncCtx& c, const std::vector<const JobPod*>& rm);
  void RecordFinished(const SyncCtx& c);
  // Removes the tracking finalizer; per-pod success.
  std::vector<bool> RemoveFinalizers(const std::string& key,
                                     const std::vector<const api::Json*>& pods,
                                     absl::Status* err);
  absl::Status WriteStatus(SyncCtx& c);
  // WriteStatus, then the tracking finalizer of `pods` removed, as one
  // Client::WriteChain (one store commit in-process): a pod is released
  // only once the status before it landed. Releases the chain could not
  // make are retried as RemoveFinalizers does; `rm_err` gets their first
  // failure. Fails (releasing nothing) when the status write fails.
  absl::Status WriteStatusThenRelease(SyncCtx& c, const std::vector<const api::Json*>& pods,
                                      absl::Status* rm_err);
  // A status write's result becomes the working copy (and written_rv_).
  void AcceptStatusWrite(SyncCtx& c, api::Json written);
  // Creates c.new_pods, and with `with_status` then writes the status, as
  // one Client::WriteChain (one store commit in-process). A pod that fails
  // stops the chain: the status is not written and the error returned;
  // every pod not created is an expected creation given up.
  absl::Status CreateNewPods(SyncCtx& c, bool with_status);
  // True when the informer's copy of the Job is older than our last status
  // write for `key` (see written_rv_).
  bool CacheBehindOwnWrite(const std::string& key, const api::Json& cached);

  reconcile::ControllerContext& ctx_;
  const api::KindDef& job_kind_;
  const api::KindDef& pod_kind_;
  client::Informer& jobs_;
  client::Informer& pods_;
  // Set when the WorkloadWithJob gate is on.
  std::unique_ptr<PodGroupSource> pod_groups_;
  Expectations expectations_;
  PodIndex index_;
  BackoffStore backoff_;
  // The resourceVersion of each Job's last status write. A sync that reads
  // an older copy from the informer would decide on a status from before its
  // own write (e.g. a succeeded pod whose finalizer is already gone but which
  // the stale status does not count yet, so a replacement is created); it
  // waits for the cache to catch up instead.
  absl::Mutex written_mu_;
  std::map<std::string, int64_t> written_rv_ ABSL_GUARDED_BY(written_mu_);
};

}  // namespace batchd::controllers::job
