// QueueManagerImpl: the state behind QueueManager (queue_manager.h). Split
// over queue_manager.cc (wiring, the cycle), workload_sync.cc (Workload ->
// core, evictions, status writes) and queue_status.cc (ClusterQueue /
// LocalQueue / Cohort status and metric gauges).
//
// Thread-safety: informer handlers touch only the dirty sets (dirty_mu_);
// everything else runs inside Reconcile or the read accessors under mu_.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "controllers/queueing/config.h"
#include "controllers/queueing/internal/convert.h"
#include "controllers/queueing/internal/metrics.h"
#include "queueing/admission.h"
#include "reconcile/context.h"

namespace batchd::controllers::queueing {

using api::Json;

class QueueManagerImpl : public reconcile::Reconciler {
 public:
  static constexpr char kCycleKey[] = "cycle";

  QueueManagerImpl(reconcile::ControllerContext& ctx, QueueingConfig cfg);
  void Wire(reconcile::Controller* controller);

  absl::StatusOr<reconcile::Result> Reconcile(const std::string& key) override;

  // Read side (locks mu_).
  batchd::queueing::ClusterQueueStatus ClusterQueueStatusOf(const std::string& name) const;
  std::vector<std::string> PendingWorkloads(const std::string& cq, size_t limit) const;
  int64_t cycles() const;
  const internal::QueueMetrics& metrics() const { return metrics_; }

 private:
  // A status write the manager still owes a Workload.
  struct Eviction {
    std::string reason, message;
    std::string preempted_reason;  // set for preemptions: Preempted=True with this reason
    bool require_admission = true;
    std::string preemptor_cq;  // for kueue_preempted_workloads_total
  };
  struct PendingNote {
    std::string reason, message;
  };

  // --- dirty tracking (informer threads) ---
  struct Dirty {
    std::set<std::string> flavors, cohorts, cqs, lqs, workloads;
    bool all_workloads = false;
  };
  void MarkDirty(std::set<std::string> Dirty::*set, const std::string& key,
                 bool all_workloads = false);
  Dirty TakeDirty();

  // --- sync (queue_manager.cc) ---
  void SyncConfig(const Dirty& d);
  void SyncAllWorkloads();

  // --- workloads (workload_sync.cc) ---
  void SyncWorkload(const std::string& key, absl::Time now);
  // `keys` with admitted workloads first, in QuotaReserved order: after a
  // restart the core then ranks preemption candidates by admission time.
  std::vector<std::string> SyncOrder(const std::set<std::string>& keys) const;
  void SyncAdmitted(const std::string& key, const Json& wl, absl::Time now);
  void SyncPending(const std::string& key, const Json& wl);
  void Forget(const std::string& key);
  client::ObjectRef Current(const std::string& key) const;
  bool WriteWorkloadStatus(const std::string& key, Json obj);
  void ApplyDecisions(const std::vector<batchd::queueing::Decision>& ds, absl::Time now);
  bool Admit(const batchd::queueing::Decision& d, absl::Time now);
  void ProcessDeadlines(absl::Time now);
  void EvictForPodsReadyTimeout(const std::string& key, const Json& wl, absl::Time now);
  bool FlushWrites(absl::Time now);
  bool FlushEviction(const std::string& key, const Eviction& ev, absl::Time now);
  bool FlushPending(const std::string& key, const PendingNote& note, absl::Time now);
  bool AdmissionBlocked() const;
  std::optional<absl::Time> NextWake(absl::Time now) const;
  std::string PendingMessage(const batchd::queueing::Decision& d, std::string* reason) const;

  // --- queue status (queue_status.cc) ---
  void WriteQueueStatuses(absl::Time now);
  bool ClusterQueueActive(const Json& cq, std::string* reason, std::string* message) const;
  void WriteClusterQueueStatus(const Json& cq, absl::Time now,
                               std::map<std::string, internal::ClusterQueueGauges>* gauges);
  void WriteLocalQueueStatus(const Json& lq, absl::Time now);
  void WriteCohortStatus(const Json& cohort);

  reconcile::ControllerContext& ctx_;
  const QueueingConfig cfg_;
  const api::KindDef& rf_kind_;
  const api::KindDef& cq_kind_;
  const api::KindDef& lq_kind_;
  const api::KindDef& cohort_kind_;
  const api::KindDef& wl_kind_;
  const api::KindDef& ns_kind_;
  client::Informer& flavors_;
  client::Informer& cqs_;
  client::Informer& lqs_;
  client::Informer& cohorts_;
  client::Informer& workloads_;
  client::Informer& namespaces_;
  reconcile::Controller* controller_ = nullptr;

  std::mutex dirty_mu_;
  Dirty dirty_;

  mutable std::mutex mu_;
  batchd::queueing::AdmissionCore core_;
  internal::QueueMetrics metrics_;
  int64_t cycles_ = 0;
  std::map<std::string, std::string> synced_sig_;      // wl key -> what the core last saw
  std::map<std::string, Json> written_;                // wl key -> our last write (overlay)
  std::map<std::string, absl::Time> ready_deadlines_;  // admitted, waiting for PodsReady
  std::set<std::string> not_ready_;                    // admitted, PodsReady not True
  std::map<std::string, absl::Time> requeue_at_;       // pending with requeueState.requeueAt
  std::map<std::string, Eviction> evictions_;
  std::map<std::string, PendingNote> pending_;
  std::map<std::string, std::string> wl_cq_;           // wl key -> its ClusterQueue
  std::set<std::string> inadmissible_;                 // pending keys with a pending reason
  struct PendingCounts {
    int64_t inadmissible = 0;  // pending with a reason (per ClusterQueue)
    int64_t outside_core = 0;  // pending but not in the core (missing LocalQueue/ClusterQueue)
  };
  // Per ClusterQueue name and per "ns/localqueue", rebuilt each WriteQueueStatuses.
  std::map<std::string, PendingCounts> counts_;
};

}  // namespace batchd::controllers::queueing
