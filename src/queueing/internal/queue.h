// Per-ClusterQueue pending queue (reference §2.2): an ordered set acting as
// the heap of active workloads (higher priority, then older queue-order
// time, then uid, first) and an inadmissible set that returns to the heap on
// cluster events. O(log n) push/pop/erase.
//
// Thread-safety: none. Ownership: entries are owned by the caller (the core's
// key -> entry map); the queue holds raw pointers.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "queueing/types.h"

namespace batchd::queueing::internal {

struct PendingEntry {
  enum class Where { kNone, kHeap, kInadmissible, kBackoff };
  Workload wl;
  Where where = Where::kNone;
  std::string queued_in;  // CQ name whose queue holds it ("" = none)
  uint64_t signature = 0;  // equal for workloads with identical requirements
  // As `signature` without the priority: equal for workloads that differ at
  // most in priority (and identity). See CqQueue on cross-priority groups.
  uint64_t coarse_signature = 0;
  // The inadmissible group it is in (or was last in): `signature`, or
  // `coarse_signature` when its last NoFit could not depend on its priority.
  uint64_t group = 0;
  // Set while it is out of group `released_from` to be evaluated for it
  // (ReleaseNext): the rest of that group waits on its outcome.
  uint64_t released_from = 0;
  // The last pending decision returned for this workload (to suppress repeats).
  bool has_last = false;
  PendingReason last_reason = PendingReason::kWaitingForQuota;
  std::string last_message;
  // Admission fair sharing: the LocalQueue's weighted usage when queued
  // (lower first); 0 without it. Changed only while out of the queue.
  double afs_key = 0;
};

// Computes the equivalence signature of a workload's scheduling requirements
// (`with_priority` = false: the same but for the priority, and never equal
// to a signature with it).
uint64_t SchedulingSignature(const Workload& wl, bool with_priority = true);

struct EntryOrder {
  bool operator()(const PendingEntry* a, const PendingEntry* b) const;
};

// Inadmissible workloads are grouped by signature, each group in heap order.
// A requeue moves only the first of every group back to the heap; when a
// workload leaves the heap for good (admitted, removed), the next of its
// group follows (ReleaseNext). The heap thus always holds the best of each
// group, so pops stay in global order (a k-way merge), while a burst of
// identical NoFit workloads costs one evaluation per event, not one each.
//
// Cross-priority groups (key `coarse_signature`): a workload whose NoFit
// could not depend on its priority (no preemption candidate at all was found
// for it) implies NoFit, at that moment, for every workload of the same
// requirements and lower priority (or the same priority and newer): their
// candidates are subsets of its (empty) set, and nothing else in an
// evaluation reads the priority. Such workloads share one group, ordered by
// priority, so a finished workload costs one evaluation per group even when
// every pending workload has its own priority. A released first that does
// not return to its group (admitted, removed, or inadmissible for a reason
// that may depend on its priority) releases the next (PushInadmissible,
// ReleaseNext on leaving), so no member waits on a proof that no longer holds.
// The cycle uses them only where skipping evaluations can't reorder
// admissions across ClusterQueues (cycle.cc: Isolated).
class CqQueue {
 public:
  using Heap = std::set<PendingEntry*, EntryOrder>;

  void PushHeap(PendingEntry* e);
  // Into inadmissible group `group` (its fine `signature` by default). An
  // entry released from another group releases that group's next first.
  void PushInadmissible(PendingEntry* e) { PushInadmissible(e, e->signature); }
  void PushInadmissible(PendingEntry* e, uint64_t group);
  // Removes `e` from the heap or its inadmissible group (no-op otherwise).
  void Erase(PendingEntry* e);
  PendingEntry* Head() const { return heap_.empty() ? nullptr : *heap_.begin(); }
  PendingEntry* PopHead();
  // Moves the first of every inadmissible group to the heap; returns how many.
  size_t RequeueInadmissible();
  // Moves the first inadmissible workload of group `group` to the heap.
  void ReleaseNext(uint64_t group);
  // `e` leaves the queue for good (admitted or removed): the next of its
  // fine group, of its cross-priority group and of the group it was released
  // from follow it to the heap.
  void ReleaseAfter(PendingEntry* e);

  size_t heap_size() const { return heap_.size(); }
  size_t inadmissible_size() const { return inadmissible_count_; }
  const Heap& heap() const { return heap_; }
  // Inadmissible workloads in queue order.
  std::vector<PendingEntry*> Inadmissible() const;

 private:
  Heap heap_;
  absl::flat_hash_map<uint64_t, Heap> groups_;
  size_t inadmissible_count_ = 0;
};

}  // namespace batchd::queueing::internal
