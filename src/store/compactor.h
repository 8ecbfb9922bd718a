// Compactor: compacts a store's revision history on a schedule, as
// kube-apiserver does (`--etcd-compaction-interval`, default 5 minutes, 0 =
// off): each tick compacts to the revision the previous tick saw, so at
// least one interval of history (past revisions for paged lists, watch
// resumption) always survives, and the history's size stays bounded by what
// is written in two intervals.
//
// Several processes on one store (replicas on etcd) agree as kube-apiserver's
// replicas do (storage/etcd3/compact.go), through a `CompactAgreement`: each
// tick of each process is one round of compare-and-swap on a shared key's
// version (the "compact time"); only the round's winner compacts, to the
// revision it recorded one interval earlier, and the losers adopt the key's
// version, so one compaction happens per interval however many processes
// run, and any survivor carries on when the winner goes away.
//
// Thread-safety: thread-safe. Ticks are timers on the injected clock; the
// compaction itself runs on the compactor's own thread (timer callbacks must
// not block).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "common/periodic.h"
#include "store/store.h"

namespace batchd::store {

// One round of the agreement: given this process's compact time (the shared
// key's version as it last knew it) and the revision it recorded at its
// previous round (0: none yet), atomically "if the key's version is `time`
// then write `revision` to the key" and, having won, compact to `revision`.
struct CompactRound {
  int64_t time = 0;       // the compact time to use next round
  int64_t revision = 0;   // the store's revision at this round, to compact to next
  int64_t compacted = 0;  // the revision compacted to in this round; 0: none
};
using CompactAgreement =
    std::function<absl::StatusOr<CompactRound>(int64_t time, int64_t revision)>;

class Compactor {
 public:
  // Without `agree`, this process compacts alone (one server, or only the leader).
  Compactor(Store& store, Clock& clock, absl::Duration interval, CompactAgreement agree = nullptr);

  // Starts the schedule (nothing with a zero interval).
  void Start() { worker_.Start(); }

  // One tick: compacts to the revision the previous tick recorded (if any)
  // and records the current one (with an agreement: one round of it). Returns the revision compacted to, 0 when
  // none. What the schedule runs; tests call it directly.
  absl::StatusOr<int64_t> Tick();

  // Ticks run by the schedule so far.
  int64_t ticks() const { return worker_.runs(); }
  // Waits (bounded) until the schedule has run `n` ticks; false on timeout.
  bool WaitForTicks(int64_t n, absl::Duration timeout) const {
    return worker_.WaitForRuns(n, timeout);
  }

 private:
  Store& store_;
  const CompactAgreement agree_;
  absl::Mutex mu_;
  int64_t previous_ ABSL_GUARDED_BY(mu_) = 0;  // the revision the last tick saw
  int64_t time_ ABSL_GUARDED_BY(mu_) = 0;      // the agreement's compact time
  PeriodicWorker worker_;  // last: stopped first
};

}  // namespace batchd::store
