// The generic job-integration reconciler (Kueue's jobframework
// ReconcileGenericJob): for one queued job, keep exactly one matching
// Workload, start the job when the Workload is admitted, stop it and release
// the reservation when the Workload is evicted, and mark the Workload
// Finished when the job ends. Everything job-specific goes through the
// `JobAdapter`.
//
// Keys are the job's "namespace/name". Thread-safety: the owner index is
// guarded by `mu_`; the work queue never hands one key to two workers.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "controllers/workload/adapter.h"
#include "reconcile/context.h"

namespace batchd::controllers::workload::internal {

class IntegrationReconciler : public reconcile::Reconciler {
 public:
  IntegrationReconciler(reconcile::ControllerContext& ctx,
                        std::shared_ptr<const JobAdapter> adapter, IntegrationOptions options,
                        const api::KindDef& job_kind, const api::KindDef& wl_kind,
                        const api::KindDef& rf_kind);

  // Adds the job and Workload informer handlers that feed `controller`.
  void Wire(reconcile::Controller& controller);
  absl::StatusOr<reconcile::Result> Reconcile(const std::string& key) override;

 private:
  struct Matched {
    // The informer's copy (or, elastic, a Workload just written): read in
    // place, copied only to be written.
    std::shared_ptr<const Json> wl;
    bool requeue = false;  // Workloads were deleted; wait for the events.
  };
  // The job one Reconcile works on: the informer's copy, read in place;
  // copied (Mutable) only when it is to be edited and written, as most
  // reconciles write nothing to it.
  class JobCopy {
   public:
    explicit JobCopy(client::ObjectRef ref) : ref_(std::move(ref)) {}
    const Json& get() const { return owned_ ? *owned_ : *ref_; }
    Json& Mutable() {
      if (!owned_) owned_ = *ref_;
      return *owned_;
    }

   private:
    client::ObjectRef ref_;
    std::optional<Json> owned_;
  };

  // Sets the job's apiVersion and kind when its copy lacks them (the owner
  // reference and the events of a job are made from them).
  void EnsureTypeMeta(Json& job) const;
  std::string OwnerKey(const Json& wl) const;
  std::set<std::string> OwnedNames(const std::string& key);
  bool Suspended(const Json& job) const;
  Json OriginalView(const Json& job) const;

  absl::StatusOr<reconcile::Result> JobGone(const std::string& ns, const std::string& name);
  absl::StatusOr<Matched> EnsureOneWorkload(JobCopy& job);
  // Elastic jobs (elastic_slices.cc): scale-down in place, scale-up through
  // a new Workload slice; the pods' elastic scheduling gate.
  absl::StatusOr<Matched> EnsureElasticWorkloads(Json& job, const std::vector<Json>& podsets);
  absl::Status CreateSlice(const Json& job, const std::vector<Json>& podsets, const Json& old);
  absl::Status DeleteWorkload(const Json& job, const Json& wl, const std::string& why);
  void WireElasticPods();
  absl::Status UngateElasticPods(const Json& job, const Json& wl);
  absl::StatusOr<reconcile::Result> CreateWorkload(const Json& job);
  absl::Status SetPriority(const Json& job, const std::vector<Json>& podsets, Json& wl);
  absl::StatusOr<reconcile::Result> MarkFinished(const Json& job, const Json& wl,
                                                 const FinishedState& fin);
  // `wl` becomes the written Workload when it writes.
  absl::Status SyncPodsReady(const Json& job, std::shared_ptr<const Json>& wl);
  // An elastic job's Workload with `podsets`' counts written in place when
  // only the counts differ and none grew while quota is reserved; nullopt
  // when it doesn't match that way.
  absl::StatusOr<std::optional<Json>> ResizeElastic(const Json& wl,
                                                    const std::vector<Json>& podsets);
  // Writes the adapter's reclaimable pods (each capped at its podSet's count)
  // to status.reclaimablePods when they differ; returns whether it wrote.
  absl::StatusOr<bool> SyncReclaimablePods(const Json& job, const Json& wl);
  absl::StatusOr<reconcile::Result> HandleEviction(Json& job, const Json& wl);
  absl::StatusOr<reconcile::Result> StartJob(Json& job, const Json& wl);
  absl::Status StopJob(Json& job, const std::vector<PodSetInfo>* fallback,
                       const std::string& message);
  // A running Job with no matching Workload is stopped, its pod templates
  // restored from the one stale Workload when there is exactly one.
  absl::Status StopJobWithoutWorkload(Json& job, const std::vector<Json>& stale);
  // Writes `job` (moved into the write) and takes the written job back.
  absl::Status UpdateJob(Json& job, bool status);
  // Writes `wl`'s status (moved into the write); only whether it succeeded.
  absl::Status WriteWorkloadStatus(Json wl);

  reconcile::ControllerContext& ctx_;
  std::shared_ptr<const JobAdapter> adapter_;
  const IntegrationOptions options_;
  const GroupVersionKind gvk_;
  const api::KindDef& job_kind_;
  const api::KindDef& wl_kind_;
  const api::KindDef& rf_kind_;
  client::Informer& jobs_;
  client::Informer& workloads_;
  client::Informer& flavors_;
  const api::KindDef& pod_kind_;
  client::Informer& pods_;
  client::WorkQueue* queue_ = nullptr;  // set by Wire

  absl::Mutex mu_;
  // Job key -> names of Workloads whose controller reference names it.
  std::map<std::string, std::set<std::string>> owned_ ABSL_GUARDED_BY(mu_);
  // Job key -> names of its pods holding the elastic-job scheduling gate
  // (bounded by the pods).
  std::map<std::string, std::set<std::string>> gated_ ABSL_GUARDED_BY(mu_);
  // The last Workload found matching a job's pod sets (EnsureOneWorkload).
  // A job's pod sets follow from its spec (metadata.generation), labels and
  // annotations, a Workload's from its spec (generation): while none of
  // those changed the match holds, and the job's pod sets (a copy of its
  // template) are not built again to compare them. One entry per job key,
  // dropped when the job is gone (bounded by the jobs).
  struct MatchMemo {
    std::string job_uid;
    int64_t job_generation = 0;
    Json labels, annotations;
    std::string wl_uid;
    int64_t wl_generation = 0;
  };
  std::map<std::string, MatchMemo> match_memo_ ABSL_GUARDED_BY(mu_);
};

}  // namespace batchd::controllers::workload::internal
