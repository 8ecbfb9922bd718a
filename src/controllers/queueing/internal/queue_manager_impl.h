// QueueManagerImpl: the state behind QueueManager (queue_manager.h). Split
// over queue_manager.cc (wiring, the cycle), workload_sync.cc (Workload ->
// core, decisions, evictions), status_writes.cc (a cycle's Workload status
// writes in one store batch) and queue_status.cc (ClusterQueue /
// LocalQueue / Cohort status and metric gauges).
//
// Thread-safety: informer handlers touch only the dirty sets (dirty_mu_);
// everything else runs inside Reconcile or the read accessors under mu_.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "api/kueue/queue_views.h"
#include "api/kueue/queue_writers.h"
#include "controllers/queueing/config.h"
#include "controllers/queueing/internal/convert.h"
#include "controllers/queueing/internal/metrics.h"
#include "controllers/queueing/queue_manager.h"
#include "queueing/admission.h"
#include "reconcile/context.h"

namespace batchd::controllers::queueing {

using api::Json;

class QueueManagerImpl : public reconcile::Reconciler {
 public:
  static constexpr char kCycleKey[] = "cycle";
  // Writes per UpdateStatusMany call (SqliteStore commits up to 1,024
  // operations per transaction): bounds one batch's memory and latency.
  static constexpr size_t kMaxStatusBatch = 1000;

  QueueManagerImpl(reconcile::ControllerContext& ctx, QueueingConfig cfg);
  void Wire(reconcile::Controller* controller);

  absl::StatusOr<reconcile::Result> Reconcile(const std::string& key) override;

  // Read side (locks mu_).
  batchd::queueing::ClusterQueueStatus ClusterQueueStatusOf(const std::string& name) const;
  std::vector<std::string> PendingWorkloads(const std::string& cq, size_t limit) const;
  int64_t cycles() const;
  QueueManager::Stats stats() const;
  absl::StatusOr<api::Json> PendingWorkloadsSummary(const std::string& api_version,
                                                    const std::string& ns,
                                                    const std::string& name, int64_t offset,
                                                    int64_t limit) const;
  const internal::QueueMetrics& metrics() const { return metrics_; }
  // QueueManager::DeferQueueStatuses / FlushQueueStatuses / QueueStatusesOwed.
  void DeferQueueStatuses();
  bool FlushQueueStatuses();
  bool QueueStatusesOwed() const;

 private:
  // A status write the manager still owes a Workload.
  struct Eviction {
    std::string reason, message;
    std::string preempted_reason;  // set for preemptions: Preempted=True with this reason
    bool require_admission = true;
    std::string preemptor_cq;  // for kueue_preempted_workloads_total
    std::vector<std::string> unhealthy_nodes;  // NodeFailures: status.unhealthyNodes
  };
  struct PendingNote {
    std::string reason, message;
  };
  // An admission the core decided (and counts), owed to its Workload until
  // its status write lands (status_writes.cc). One cycle's admissions go to
  // the store together, with the cycle's other status writes, in one batch.
  struct OwedAdmission {
    batchd::queueing::Decision decision;  // kAdmit
    Json admission;                       // status.admission
    std::string uid;                      // of the Workload the core admitted
    int64_t generation = 0;               // its spec then (0: unknown)
    std::vector<std::string> checks;      // AdmissionChecks for its flavors
    absl::Time queued;                    // since when it waited (metrics, Events)
    absl::Time decided;
    // An earlier write failed without saying whether it landed: the core
    // keeps the quota held and the write is repeated (it finds its own
    // admission if the first one landed).
    bool in_doubt = false;
  };
  // A workload about to be synced: the object (Current) and its view, parsed
  // once for the sync.
  struct WorkloadToSync {
    std::string key;
    client::ObjectRef obj;          // nullptr: deleted.
    api::kueue::WorkloadView view;  // Of *obj (empty when obj is nullptr).
  };
  // A ClusterQueue as one WriteQueueStatuses pass reads it: parsed once,
  // shared by its status, its gauges and its LocalQueues' statuses.
  struct ClusterQueueInCycle {
    client::ObjectRef obj;
    api::kueue::ClusterQueueView view;      // Of *obj.
    api::kueue::ResourceGroupsView groups;  // Of *obj.
    bool active = false;
    std::string reason, message;  // Of the Active condition.
  };
  using ClusterQueuesInCycle = std::map<std::string, ClusterQueueInCycle, std::less<>>;

  // --- dirty tracking (informer threads) ---
  struct Dirty {
    std::set<std::string> flavors, cohorts, cqs, lqs, workloads;
    std::set<std::string> namespaces;               // label changes
    std::set<std::string> topologies, nodes, pods;  // topology-aware scheduling
  };
  void MarkDirty(std::set<std::string> Dirty::*set, const std::string& key);
  Dirty TakeDirty();

  // --- sync (queue_manager.cc) ---
  void SyncConfig(const Dirty& d) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The workloads a configuration change can affect (index lookups, no walk
  // of every workload): those of the changed namespaces, LocalQueues and
  // ClusterQueues (and of the LocalQueues pointing at a changed ClusterQueue).
  void AddAffectedWorkloads(const Dirty& d, std::set<std::string>* keys) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // --- per-workload indexes and incremental counts (workload_index.cc) ---
  // Records which namespace / LocalQueue the workload names (from its object).
  void IndexWorkload(const std::string& key, std::string_view lq_name)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void UnindexWorkload(const std::string& key) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // wl_cq_ with its reverse index; marks both queues' statuses dirty.
  void SetWorkloadCq(const std::string& key, const std::string& cq) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void ClearWorkloadCq(const std::string& key) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A workload whose queue-visible state may have changed this cycle: its
  // contribution to counts_ is recomputed and its queues' statuses are
  // rewritten at the end of the cycle (if they changed).
  void Touch(const std::string& key) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { touched_.insert(key); }
  void Recount(const std::string& key) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void RecountAll() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void MarkQueueStatus(const std::string& cq, const std::string& lq_key)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // --- topologies and nodes (topology_sync.cc) ---
  struct PodUsage {
    std::string node;
    std::map<std::string, batchd::queueing::Amount> requests;
  };
  // Returns whether any node changed (the repairs below then run).
  bool SyncTopology(const Dirty& d) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Admitted TAS workloads with pods on failed nodes: a new assignment
  // within the same domain, or eviction (NodeFailures).
  void RepairTopology(absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Updates node_usage_ for the pods `keys`; adds the nodes whose usage
  // changed to `touched`.
  void SyncTopologyPods(const std::set<std::string>& keys, std::set<std::string>* touched = nullptr)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void SyncTopologyNodes(const std::set<std::string>& names) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Whether `pod` takes capacity TAS must leave alone (bound, not terminal,
  // not placed by TAS), and where and how much.
  static bool PodCountsForTopology(const Json& pod, std::string* node,
                                   std::map<std::string, batchd::queueing::Amount>* requests);
  // Informer-side filters: only changes that move capacity wake the cycle.
  static bool TopologyRelevantPodChange(const Json& a, const Json& b);
  static bool TopologyRelevantNodeChange(const Json& a, const Json& b);

  // --- workloads (workload_sync.cc) ---
  // Syncs the workload's current object (Current(key), parsed here).
  void SyncWorkload(const std::string& key, absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void SyncWorkload(const WorkloadToSync& wl, absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // `keys` with admitted workloads first, in QuotaReserved order: after a
  // restart the core then ranks preemption candidates by admission time.
  std::vector<WorkloadToSync> SyncOrder(const std::set<std::string>& keys) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void SyncAdmitted(const std::string& key, const Json& wl, const api::kueue::WorkloadView& view,
                    absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void SyncPending(const std::string& key, const Json& wl, const api::kueue::WorkloadView& view)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Forget(const std::string& key) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  client::ObjectRef Current(const std::string& key) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool WriteWorkloadStatus(const std::string& key, api::kueue::StatusUpdate update) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void ApplyDecisions(const std::vector<batchd::queueing::Decision>& ds, absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // --- one cycle's status writes in one store batch (status_writes.cc) ---
  // Records the core's admission of d.key as owed; false (and the core's
  // assumption undone) when the Workload is gone or already admitted.
  bool OweAdmission(const batchd::queueing::Decision& d, absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The write landed (`obj` is the stored Workload): the bookkeeping,
  // metrics and Events of an admission.
  void FinishAdmission(const std::string& key, const OwedAdmission& a, const Json& obj) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The write was refused (the Workload changed, went, or was admitted
  // meanwhile): the core's assumption is undone from the object.
  void UndoAdmission(const batchd::queueing::Decision& d, absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Owed admissions, evictions and pending notes in one UpdateStatusMany
  // (per kMaxStatusBatch), then the replaced slices' Finished writes.
  // Returns false when something is left to retry.
  bool FlushWrites(absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Records the PodsReady timeouts that are due (ready_timeouts_).
  void ProcessDeadlines(absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // --- writes owed outside the core's decisions (owed_writes.cc) ---
  // A PodsReady-timeout eviction or a replaced slice's Finished: the edit,
  // made on the Workload's latest version in FlushWrites' batch.
  struct OwedWrite {
    enum class Kind { kReadyTimeout, kSliceFinish } kind;
    std::string key;
    std::string message;  // kSliceFinish: its Event's
    std::function<absl::Status(Json&)> edit;
  };
  // The owed PodsReady-timeout evictions (with `timeouts`) and the replaced
  // slices' Finished writes whose replacement's admission has landed, less
  // the slices in `sent` (to which those taken are added).
  std::vector<OwedWrite> TakeOwedWrites(absl::Time now, bool timeouts, std::set<std::string>* sent)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // What follows the answer `r` to `w`: its bookkeeping, metrics and Events
  // when it landed; false when it is to be retried (still owed).
  bool OwedWriteDone(const OwedWrite& w, absl::StatusOr<Json>& r) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // `writes` in UpdateStatusMany batches; false when one is left to retry.
  bool SendOwedWrites(std::vector<OwedWrite> writes) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // --- maximumExecutionTimeSeconds (max_execution_time.cc) ---
  void TrackExecutionTime(const std::string& key, const Json& wl,
                          const api::kueue::WorkloadView& view) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void ProcessExecutionDeadlines(absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // --- admission fair sharing (admission_fair_sharing.cc) ---
  static bool AdmissionScopeOn(const Json& cq);
  static double LocalQueueWeight(const Json& lq);
  // A LocalQueue's consumed resources from its status, once per process.
  void RestoreLocalQueueConsumed(const Json& lq) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Samples usage when the interval has passed (marks LocalQueue statuses).
  void SampleFairSharing(absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void SetLocalQueueFairSharing(api::kueue::StatusUpdate& update,
                                const batchd::queueing::LocalQueueStatus& st)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // --- workload slices (workload_slices.cc) ---
  // The core released `old_key` for its replacement `new_key`: it is owed
  // Finished=True (WorkloadSliceReplaced) and never counted again.
  void NoteReplacedSlice(const std::string& old_key, const std::string& new_key)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // True (and out of the core) when `key` is a replaced slice.
  bool SkipReplacedSlice(const std::string& key) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // An admitted slice whose predecessor is still admitted (a restart between
  // the two writes): the predecessor is replaced now.
  void CheckSliceReplacement(const std::string& key, const api::kueue::WorkloadView& view)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void ForgetReplacedSlice(const std::string& key) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // --- status.reclaimablePods (reclaimable_pods.cc) ---
  // Lowers an admitted workload's usage to the pods not yet reclaimable.
  static void ApplyReclaimablePods(const Json& wl, const api::kueue::WorkloadPodSetsView& pod_sets,
                                   batchd::queueing::Admission& admission);
  void CountCheckGatedAdmission(const std::string& key, const std::string& cq,
                                const api::kueue::WorkloadView& view, absl::Time now)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool AdmissionBlocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::optional<absl::Time> NextWake(absl::Time now) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::string PendingMessage(const batchd::queueing::Decision& d, std::string* reason) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // --- queue status (queue_status.cc) ---
  // Recomputes the statuses of the queues marked this cycle (all of them
  // after a configuration change) and writes those that changed.
  // Returns false when a write failed (the queue stays marked).
  bool WriteQueueStatuses(absl::Time now, bool config_changed) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool ClusterQueueActive(const api::kueue::ClusterQueueView& cq,
                          const api::kueue::ResourceGroupsView& groups, std::string* reason,
                          std::string* message) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool WriteClusterQueueStatus(const ClusterQueueInCycle& cq, absl::Time now,
                               std::map<std::string, internal::ClusterQueueGauges>* gauges) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool WriteLocalQueueStatus(const Json& lq, const ClusterQueuesInCycle& cqs, absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool WriteCohortStatus(const Json& cohort) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  reconcile::ControllerContext& ctx_;
  const QueueingConfig cfg_;
  const api::KindDef& rf_kind_;
  const api::KindDef& cq_kind_;
  const api::KindDef& lq_kind_;
  const api::KindDef& cohort_kind_;
  const api::KindDef& wl_kind_;
  const api::KindDef& ns_kind_;
  const api::KindDef& topology_kind_;
  client::Informer& flavors_;
  client::Informer& cqs_;
  client::Informer& lqs_;
  client::Informer& cohorts_;
  client::Informer& workloads_;
  client::Informer& namespaces_;
  client::Informer& topologies_;
  client::Informer& nodes_;
  client::Informer& pods_;
  client::Informer& checks_;  // AdmissionChecks: a ClusterQueue naming a missing/inactive one holds.
  reconcile::Controller* controller_ = nullptr;
  // Some ResourceFlavor names a topology: the node and pod handlers mark work.
  std::atomic<bool> tas_watch_{false};

  absl::Mutex dirty_mu_;
  Dirty dirty_ ABSL_GUARDED_BY(dirty_mu_);

  mutable absl::Mutex mu_;
  batchd::queueing::AdmissionCore core_ ABSL_GUARDED_BY(mu_);
  internal::QueueMetrics metrics_;
  int64_t cycles_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t conversions_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t queue_statuses_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t status_batches_ ABSL_GUARDED_BY(mu_) = 0;
  std::map<std::string, std::string> synced_sig_ ABSL_GUARDED_BY(mu_);      // wl key -> what the core last saw
  std::map<std::string, Json> written_ ABSL_GUARDED_BY(mu_);                // wl key -> our last write (overlay)
  std::map<std::string, absl::Time> ready_deadlines_ ABSL_GUARDED_BY(mu_);  // admitted, waiting for PodsReady
  std::set<std::string> not_ready_ ABSL_GUARDED_BY(mu_);                    // admitted, PodsReady not True
  std::map<std::string, absl::Time> execution_deadlines_ ABSL_GUARDED_BY(mu_);  // admitted with maximumExecutionTimeSeconds
  std::map<std::string, absl::Time> requeue_at_ ABSL_GUARDED_BY(mu_);       // pending with requeueState.requeueAt
  std::map<std::string, Eviction> evictions_ ABSL_GUARDED_BY(mu_);
  // Admitted workloads past their PodsReady timeout -> their uid: owed the
  // eviction (or DeactivationTarget) until its write lands (owed_writes.cc).
  std::map<std::string, std::string> ready_timeouts_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, PendingNote> pending_ ABSL_GUARDED_BY(mu_);
  // Admissions owed (bounded by the workloads the core admitted): written
  // in the cycle that decided them, or retried while in doubt.
  std::map<std::string, OwedAdmission> admissions_ ABSL_GUARDED_BY(mu_);
  // Replaced workload slice -> its replacement, until its Finished write
  // lands and it is synced as Finished (bounded by the admitted workloads).
  std::map<std::string, std::string> replaced_slices_ ABSL_GUARDED_BY(mu_);
  // Admitted workloads already counted in kueue_admitted_workloads_total
  // (bounded by the admitted workloads), and when this process first synced.
  std::set<std::string> admitted_counted_ ABSL_GUARDED_BY(mu_);
  std::optional<absl::Time> started_ ABSL_GUARDED_BY(mu_);
  // Admission fair sharing: the next sample, and the LocalQueues whose
  // status was read back (bounded by the LocalQueues).
  std::optional<absl::Time> next_afs_sample_ ABSL_GUARDED_BY(mu_);
  std::set<std::string> afs_restored_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::string> wl_cq_ ABSL_GUARDED_BY(mu_);           // wl key -> its ClusterQueue
  std::set<std::string> inadmissible_ ABSL_GUARDED_BY(mu_);                 // pending keys with a pending reason
  // Indexes (bounded by the workloads the manager tracks): which workloads a
  // namespace, LocalQueue ("ns/name") or ClusterQueue change can affect.
  std::map<std::string, std::set<std::string>, std::less<>> by_ns_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::set<std::string>, std::less<>> by_lq_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::set<std::string>, std::less<>> by_cq_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::string, std::less<>> wl_lq_ ABSL_GUARDED_BY(mu_);  // wl key -> "ns/lq"
  // What each workload contributes to counts_ now (so a change subtracts it).
  struct Counted {
    std::string cq, lq_key;
    bool outside_core = false;
  };
  std::map<std::string, Counted, std::less<>> counted_ ABSL_GUARDED_BY(mu_);
  std::set<std::string> touched_ ABSL_GUARDED_BY(mu_);  // this cycle's changed workloads
  // Queue statuses to recompute after the cycle; `all` after configuration
  // changes (and at start). Bounded by the queues that exist.
  std::set<std::string, std::less<>> status_cqs_ ABSL_GUARDED_BY(mu_);
  std::set<std::string, std::less<>> status_lqs_ ABSL_GUARDED_BY(mu_);
  bool status_all_ ABSL_GUARDED_BY(mu_) = true;
  uint64_t status_core_version_ ABSL_GUARDED_BY(mu_) = 0;  // fair sharing: shares move with usage
  // DeferQueueStatuses: the cycles only note that statuses are owed (and
  // whether a configuration change made them all owed) until the flush.
  bool defer_statuses_ ABSL_GUARDED_BY(mu_) = false;
  bool statuses_owed_ ABSL_GUARDED_BY(mu_) = false;
  bool owed_config_changed_ ABSL_GUARDED_BY(mu_) = false;
  // Topology-aware scheduling (topology_sync.cc); bounded by pods and nodes.
  bool tas_enabled_ ABSL_GUARDED_BY(mu_) = false;
  std::map<std::string, PodUsage> pod_usage_ ABSL_GUARDED_BY(mu_);  // pod key -> its counted usage
  std::map<std::string, std::map<std::string, batchd::queueing::Amount>> node_usage_
      ABSL_GUARDED_BY(mu_);                                          // node -> sum of pod_usage_
  std::set<std::string> tas_nodes_ ABSL_GUARDED_BY(mu_);            // nodes the core holds
  bool repair_retry_ ABSL_GUARDED_BY(mu_) = false;                  // a repair write failed
  struct PendingCounts {
    int64_t inadmissible = 0;  // pending with a reason (per ClusterQueue)
    int64_t outside_core = 0;  // pending but not in the core (missing LocalQueue/ClusterQueue)
  };
  // Per ClusterQueue name and per "ns/localqueue", kept up to date by Recount.
  std::map<std::string, PendingCounts, std::less<>> counts_ ABSL_GUARDED_BY(mu_);
};

}  // namespace batchd::controllers::queueing
