// CoreState: everything AdmissionCore owns (configuration, compiled
// ClusterQueues, the quota tree, pending and admitted workloads) and the
// scheduling cycle. admission.cc holds configuration/bookkeeping, cycle.cc
// the cycle.
//
// Thread-safety: none (AdmissionCore's caller serializes).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/time/time.h"
#include "queueing/internal/flavor_assigner.h"
#include "queueing/internal/preemption.h"
#include "queueing/internal/tas.h"
#include "queueing/internal/state.h"
#include "queueing/types.h"

namespace batchd::queueing::internal {

struct LqCounters {
  int64_t pending = 0;
  int64_t admitted = 0;
  std::map<std::pair<std::string, std::string>, Amount> usage;  // (flavor, resource)
  // Admission fair sharing (types.h AdmissionFairSharing), by resource.
  std::map<std::string, double> consumed, penalty;
  std::optional<absl::Time> last_update;
};

class CoreState {
 public:
  explicit CoreState(Options opts)
      : opts_(std::move(opts)), tas_(opts_.topology_profile) {}

  // Configuration (admission.cc).
  void UpsertFlavor(ResourceFlavor f);
  void DeleteFlavor(const std::string& name);
  void UpsertCq(ClusterQueue cq);
  void DeleteCq(const std::string& name);
  void UpsertCohort(Cohort c);
  void DeleteCohort(const std::string& name);
  void UpsertLq(LocalQueue lq);
  void DeleteLq(const std::string& ns, const std::string& name);
  // Topology-aware scheduling (admission.cc).
  void UpsertTopology(Topology t);
  void DeleteTopology(const std::string& name);
  void UpsertTopologyNode(TopologyNode n);
  void DeleteTopologyNode(const std::string& name);
  std::vector<TopologyRepair> RepairTopology();

  // Workloads (admission.cc).
  void UpsertPending(Workload wl);
  void SetAdmitted(Workload wl, Admission admission);
  void Remove(const std::string& key);

  // Admission fair sharing (admission_fair_sharing.cc).
  void SampleAfs(absl::Time now);
  void RestoreLqConsumed(const std::string& key, std::map<std::string, double> consumed,
                         absl::Time last_update);
  // The ordering key of `wl` in its ClusterQueue (0 unless it uses AFS).
  double AfsKey(const Workload& wl) const;
  double LqWeightedUsage(const std::string& lq_key) const;
  // After an admission in `cq`: the entry penalty, and `wl`'s LocalQueue's
  // pending workloads in `cq` move to their new places.
  void AfsAdmitted(CqInfo& cq, const Workload& wl, const FlavorResourceAmounts& usage);
  // Re-keys the pending workloads of `cq` (of LocalQueue `lq_key`, or all).
  void AfsRekey(CqInfo& cq, const std::string* lq_key);
  double AfsAlpha() const;

  // The cycle (cycle.cc).
  std::vector<Decision> RunCycle(absl::Time now);

  // Read side (admission.cc).
  ClusterQueueStatus CqStatus(const std::string& name);
  CohortStatus CohortStatusOf(const std::string& name);
  LocalQueueStatus LqStatus(const std::string& ns, const std::string& name) const;
  std::vector<std::string> PendingOf(const std::string& cq, size_t limit);
  std::vector<PendingWorkloadInfo> PendingInQueueOrder(const std::string& cq) const;
  bool IsAdmitted(const std::string& key) const { return admitted_.contains(key); }
  std::optional<absl::Time> NextRequeueAt() const {
    if (backoff_.empty()) return std::nullopt;
    return backoff_.begin()->first;
  }
  bool IsPending(const std::string& key) const { return pending_.contains(key); }
  size_t PendingCount() const { return pending_.size(); }
  size_t AdmittedCount() const { return admitted_.size(); }
  uint64_t heads_evaluated() const { return heads_evaluated_; }
  uint64_t UsageVersion() const { return version_; }
  std::string CheckInvariants();

 private:
  friend class CycleRunner;

  CqInfo& CqFor(const std::string& name);
  void EnsureBuilt();
  void Rebuild();
  void ActivateCqs(const std::set<std::string>& cyclic);
  void CompileCq(CqInfo& cq);
  void MarkDirty() { dirty_ = true; }
  // Queue placement of a pending entry (heap, backoff, or none).
  void Enqueue(PendingEntry* e);
  void Dequeue(PendingEntry* e);
  // Moves inadmissible workloads back to the heaps of every CQ in n's tree.
  void RequeueTree(NodeId n);
  void RequeueAll();
  void FlushRequeues();  // at the start of a cycle
  void ReleaseAdmitted(const std::string& key);
  FlavorResourceAmounts UsageOf(const Admission& a);
  LqCounters& LqOf(const Workload& wl) { return lq_counters_[wl.namespace_ + "/" + wl.local_queue]; }
  void CountLqUsage(const AdmittedEntry& a, int sign);

  // The TAS snapshots, up to date (called where a cycle or a usage change
  // needs them).
  TasState& Tas() {
    tas_.EnsureBuilt(flavors_, admitted_);
    return tas_;
  }

  Options opts_;
  TasState tas_;
  FlavorResourceTable flavor_resources_;
  std::unique_ptr<QuotaTree> tree_;
  bool dirty_ = true;
  absl::flat_hash_map<std::string, ResourceFlavor> flavors_;
  std::map<std::string, Cohort> cohorts_;
  absl::flat_hash_map<std::string, NodeId> cohort_nodes_;
  absl::flat_hash_map<std::string, std::unique_ptr<CqInfo>> cqs_;
  std::vector<CqInfo*> cq_of_node_;
  std::map<std::pair<std::string, std::string>, LocalQueue> lqs_;
  absl::flat_hash_map<std::string, LqCounters> lq_counters_;
  absl::flat_hash_map<std::string, std::unique_ptr<PendingEntry>> pending_;
  absl::flat_hash_map<std::string, std::unique_ptr<AdmittedEntry>> admitted_;
  std::set<std::pair<absl::Time, std::string>> backoff_;
  absl::flat_hash_map<std::string, int64_t> backoff_per_cq_;
  absl::flat_hash_set<NodeId> requeue_roots_;
  bool requeue_all_ = false;
  uint64_t admit_seq_ = 0;
  uint64_t version_ = 0;  // bumps on every committed usage change
  uint64_t heads_evaluated_ = 0;
};

}  // namespace batchd::queueing::internal
