// Per-ClusterQueue pending queue (reference §2.2): an ordered set acting as
// the heap of active workloads (higher priority, then older queue-order
// time, then uid, first) and an inadmissible set that returns to the heap in
// bulk on cluster events. O(log n) push/pop/erase.
//
// Thread-safety: none. Ownership: entries are owned by the caller (the core's
// key -> entry map); the queue holds raw pointers.
#pragma once

#include <cstdint>
#include <set>
#include <string>

#include "absl/container/flat_hash_set.h"
#include "queueing/types.h"

namespace batchd::queueing::internal {

struct PendingEntry {
  enum class Where { kNone, kHeap, kInadmissible, kBackoff };
  Workload wl;
  Where where = Where::kNone;
  std::string queued_in;  // CQ name whose queue holds it ("" = none)
  uint64_t signature = 0;  // equal for workloads with identical requirements
  // The last pending decision returned for this workload (to suppress repeats).
  bool has_last = false;
  PendingReason last_reason = PendingReason::kWaitingForQuota;
  std::string last_message;
};

// Computes the equivalence signature of a workload's scheduling requirements.
uint64_t SchedulingSignature(const Workload& wl);

struct EntryOrder {
  bool operator()(const PendingEntry* a, const PendingEntry* b) const;
};

class CqQueue {
 public:
  using Heap = std::set<PendingEntry*, EntryOrder>;

  void PushHeap(PendingEntry* e);
  void PushInadmissible(PendingEntry* e);
  // Removes `e` from the heap or the inadmissible set (no-op otherwise).
  void Erase(PendingEntry* e);
  PendingEntry* Head() const { return heap_.empty() ? nullptr : *heap_.begin(); }
  PendingEntry* PopHead();
  // Moves every inadmissible entry back to the heap; returns how many.
  size_t RequeueInadmissible();

  size_t heap_size() const { return heap_.size(); }
  size_t inadmissible_size() const { return inadmissible_.size(); }
  const Heap& heap() const { return heap_; }
  const absl::flat_hash_set<PendingEntry*>& inadmissible() const { return inadmissible_; }

 private:
  Heap heap_;
  absl::flat_hash_set<PendingEntry*> inadmissible_;
};

}  // namespace batchd::queueing::internal
