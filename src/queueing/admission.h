// AdmissionCore: Kueue's admission algorithm as a pure, single-threaded
// library. It owns the quota tree (ClusterQueues, Cohorts, ResourceFlavors),
// the pending queues (one ordered heap + inadmissible set per ClusterQueue)
// and the usage of admitted workloads; `RunCycle` returns decisions and
// counts admitted workloads' usage at once ("assumed"). It does no I/O and
// never reads a clock: the caller passes `now`.
//
// Unlike Kueue, one cycle admits as many workloads per ClusterQueue as fit
// (StrictFIFO still blocks behind its head; BestEffortFIFO skips).
//
// Thread-safety: none; the caller serializes all calls (one controller thread).
// Ownership: takes copies of every struct passed in.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "queueing/types.h"

namespace batchd::queueing {

namespace internal {
class CoreState;
}

class AdmissionCore {
 public:
  explicit AdmissionCore(Options opts = {});
  ~AdmissionCore();
  AdmissionCore(const AdmissionCore&) = delete;
  AdmissionCore& operator=(const AdmissionCore&) = delete;

  // Configuration. Changes move inadmissible workloads back to their heaps.
  void UpsertResourceFlavor(ResourceFlavor flavor);
  void DeleteResourceFlavor(std::string_view name);
  void UpsertClusterQueue(ClusterQueue cq);
  void DeleteClusterQueue(std::string_view name);
  void UpsertCohort(Cohort cohort);
  void DeleteCohort(std::string_view name);
  // Optional: LocalQueue stop policies and per-LQ counts. Workloads name their
  // ClusterQueue directly, so LQs are not required for admission.
  void UpsertLocalQueue(LocalQueue lq);
  void DeleteLocalQueue(std::string_view namespace_, std::string_view name);

  // Topology-aware scheduling: Topologies (levels over node labels) that
  // ResourceFlavors name in `topology_name`, and the nodes their pods may be
  // placed on (Ready and schedulable only; `free` excludes pods outside TAS).
  // Upserting a node replaces its earlier state. Placement runs once quota
  // fits; see queueing/topology/topology.h.
  void UpsertTopology(Topology topology);
  void DeleteTopology(std::string_view name);
  void UpsertTopologyNode(TopologyNode node);
  void DeleteTopologyNode(std::string_view name);
  // Admitted topology-aware workloads with pods on nodes no longer reported
  // (UpsertTopologyNode) get a repair: a replacement placement within the
  // same domain, applied at once, or none (evict). A workload is reported
  // again only after its admission changes. See TopologyRepair.
  std::vector<TopologyRepair> RepairTopology();

  // Adds or updates a pending workload. If `key` is admitted, it is treated as
  // evicted: its usage is released and it becomes pending.
  void UpsertPending(Workload wl);
  // Records an admitted workload (restart, or an admission applied by the
  // caller). Counts its usage; replaces any earlier state of `key`.
  void SetAdmitted(Workload wl, Admission admission);
  // The workload finished, was deleted or deactivated: releases usage and
  // requeues inadmissible workloads of the affected cohort tree.
  void Remove(std::string_view key);

  // Admission fair sharing (Options::admission_fair_sharing): folds every
  // LocalQueue's current usage into its consumed resources, clears entry
  // penalties and reorders the pending workloads of fair-sharing
  // ClusterQueues. The caller calls it every sampling interval. O(LQs +
  // pending of those ClusterQueues).
  void SampleAdmissionFairSharing(absl::Time now);
  // Restores a LocalQueue's consumed resources (its status, after a restart).
  void RestoreLocalQueueConsumed(std::string_view namespace_, std::string_view name,
                                 std::map<std::string, double> consumed, absl::Time last_update);

  // One scheduling cycle at `now`. Admitted workloads are counted at once.
  // Pending decisions are returned only when a workload's reason or message
  // changed since the last one returned for it.
  std::vector<Decision> RunCycle(absl::Time now);

  // Read side.
  ClusterQueueStatus ClusterQueueStatusOf(std::string_view name) const;
  CohortStatus CohortStatusOf(std::string_view name) const;
  LocalQueueStatus LocalQueueStatusOf(std::string_view namespace_, std::string_view name) const;
  // Pending workloads of a ClusterQueue in queue order (heap first, then
  // inadmissible and backoff), at most `limit`.
  std::vector<std::string> PendingWorkloads(std::string_view cluster_queue, size_t limit) const;
  // Every pending workload of a ClusterQueue (heap, inadmissible and backoff
  // alike) in queue order (priority, queue-order time, uid), as Kueue's
  // visibility API ranks them. O(p log p) for p pending in the queue.
  std::vector<PendingWorkloadInfo> PendingInQueueOrder(std::string_view cluster_queue) const;
  // The earliest `requeue_at` among workloads waiting for their backoff: run
  // a cycle then. nullopt when none waits.
  std::optional<absl::Time> NextRequeueAt() const;
  bool IsAdmitted(std::string_view key) const;
  bool IsPending(std::string_view key) const;
  size_t PendingCount() const;
  size_t AdmittedCount() const;
  // Heads whose flavors were assigned so far (evaluations, re-evaluations
  // included): what a cycle's cost follows. For tests and benchmarks.
  uint64_t HeadsEvaluated() const;
  // Bumps on every change of admitted usage (admit, release, repair): status
  // derived from usage (fair-sharing shares) is stale when it moved.
  uint64_t UsageVersion() const;

  // Every ClusterQueue's usage is within nominal + what borrowing allows, and
  // no cohort lends more than it has. OK or FailedPrecondition naming the node.
  // A quota lowered below current usage is reported too (admitted workloads
  // keep running, as in Kueue); cycles never add to such over-use.
  absl::Status CheckInvariants() const;

 private:
  std::unique_ptr<internal::CoreState> state_;
};

}  // namespace batchd::queueing
