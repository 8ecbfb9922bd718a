// Compactor: compacts a store's revision history on a schedule, as
// kube-apiserver does (`--etcd-compaction-interval`, default 5 minutes, 0 =
// off): each tick compacts to the revision the previous tick saw, so at
// least one interval of history (past revisions for paged lists, watch
// resumption) always survives, and the history's size stays bounded by what
// is written in two intervals.
//
// Thread-safety: thread-safe. Ticks are timers on the injected clock; the
// compaction itself runs on the compactor's own thread (timer callbacks must
// not block).
#pragma once

#include <cstdint>
#include <memory>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "common/periodic.h"
#include "store/store.h"

namespace batchd::store {

class Compactor {
 public:
  Compactor(Store& store, Clock& clock, absl::Duration interval);

  // Starts the schedule (nothing with a zero interval).
  void Start() { worker_.Start(); }

  // One tick: compacts to the revision the previous tick recorded (if any)
  // and records the current one. Returns the revision compacted to, 0 when
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
  absl::Mutex mu_;
  int64_t previous_ ABSL_GUARDED_BY(mu_) = 0;  // the revision the last tick saw
  PeriodicWorker worker_;  // last: stopped first
};

}  // namespace batchd::store
