// The queue manager: Kueue's scheduler loop around the admission core
// (src/queueing). It watches ResourceFlavors, ClusterQueues, LocalQueues,
// Cohorts, Workloads and Namespaces, keeps an AdmissionCore in sync with them,
// runs scheduling cycles from one reconcile key ("cycle"), and applies the
// decisions as Workload status writes, as Kueue's scheduler and workload
// controller do:
//   admit    -> status.admission + QuotaReserved=True + Admitted=True (one write)
//   pending  -> QuotaReserved=False reason Pending (or Inadmissible for a
//               missing/stopped LocalQueue or ClusterQueue) with the message
//   preempt  -> Evicted=True reason Preempted + Preempted=True (InClusterQueue, ...)
//   evict    -> Evicted=True reason ClusterQueueStopped / LocalQueueStopped
//               (HoldAndDrain), Deactivated (spec.active=false), PodsReadyTimeout
//               (waitForPodsReady, with requeueState backoff and deactivation
//               after backoffLimitCount).
// One cycle's Workload status writes go to the store together, as status
// patches computed on each Workload's latest version, in one batch
// (Client::UpdateStatusMany: one SQLite transaction); each succeeds or fails
// on its own, and an admission whose write fails without an answer keeps
// its quota held and is written again (status_writes.cc).
// It never clears an admission: the job integration does that once the job
// is suspended, and quota is released when it does (or when the Workload
// finishes or is deleted). ClusterQueue, LocalQueue and Cohort status are
// written after each cycle, only when they changed. Metrics use Kueue's names.
//
// Thread-safety: informer handlers only record which objects changed and
// enqueue the cycle key; all core access happens in the single cycle
// reconcile, under one mutex. Read accessors and AppendPrometheus are safe
// from any thread.
// Ownership: AddQueueManager registers a controller with ctx.manager; the
// returned object must outlive the manager's run (the lead keeps it).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "controllers/queueing/config.h"
#include "queueing/types.h"
#include "reconcile/context.h"

namespace batchd::controllers::queueing {

class QueueManagerImpl;

class QueueManager {
 public:
  explicit QueueManager(std::unique_ptr<QueueManagerImpl> impl);
  ~QueueManager();

  // Prometheus text (HELP/TYPE lines and samples) of the kueue_* metrics.
  void AppendPrometheus(std::string* out) const;

  // Read access for batchctl / status pages (a copy, taken under the lock).
  batchd::queueing::ClusterQueueStatus ClusterQueueStatus(const std::string& name) const;
  std::vector<std::string> PendingWorkloads(const std::string& cluster_queue,
                                            size_t limit) const;
  // Kueue's visibility API (visibility.kueue.x-k8s.io, `api_version` its
  // v1beta2 or v1beta1): the pending workloads of ClusterQueue `name` (`ns`
  // empty) or of LocalQueue ns/name as a PendingWorkloadsSummary, items
  // [offset, offset + limit) in queue order with positionInClusterQueue /
  // positionInLocalQueue. NotFound when the queue does not exist. Costs
  // O(p log p) for the p pending workloads of the ClusterQueue.
  absl::StatusOr<api::Json> PendingWorkloadsSummary(const std::string& api_version,
                                                    const std::string& ns,
                                                    const std::string& name, int64_t offset,
                                                    int64_t limit) const;

  // Reconciles of the cycle key run so far (tests, debugging).
  int64_t cycles() const;
  // Work counters (tests, benchmarks): how much of the manager's work a
  // change caused.
  struct Stats {
    int64_t cycles = 0;
    int64_t conversions = 0;     // Workloads converted into the core (UpsertPending / SetAdmitted)
    int64_t queue_statuses = 0;  // ClusterQueue + LocalQueue statuses recomputed
    // Workload status batches written (Client::UpdateStatusMany calls; one
    // store batch each, up to 1,000 writes): a cycle's admissions,
    // evictions and pending messages go out together.
    int64_t status_batches = 0;
  };
  Stats stats() const;

  // For `batchd simulate`, where one virtual instant runs many cycles: the
  // ClusterQueue, LocalQueue and Cohort statuses are no longer written after
  // every cycle but by FlushQueueStatuses, which the simulator calls once
  // the controllers have settled at an instant. It writes what the instant's
  // last cycle would have (a status reflects the state after the cycle, at
  // the same virtual time) and skips the intermediate versions.
  void DeferQueueStatuses();
  // Writes the statuses owed; false when a write failed (they stay owed).
  bool FlushQueueStatuses();
  bool QueueStatusesOwed() const;

 private:
  std::unique_ptr<QueueManagerImpl> impl_;
};

// Registers the queue manager's informers and its "cycle" controller with
// ctx. Call once per manager, before it starts.
std::shared_ptr<QueueManager> AddQueueManager(reconcile::ControllerContext& ctx,
                                              const QueueingConfig& config);

}  // namespace batchd::controllers::queueing
