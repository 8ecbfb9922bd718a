// EventTtlSweeper: kube-apiserver's `--event-ttl` (default 1 h). Kubernetes
// stores each Event with an etcd lease of that TTL, renewed by every write
// of it; batchd deletes an Event once `ttl` has passed since its last write,
// read from the newest of its metadata.creationTimestamp, firstTimestamp,
// lastTimestamp, eventTime and series.lastObservedTime (the recorder
// updates lastTimestamp on each repeat it aggregates). The sweep runs every
// ttl/10 (at least 1 s, at most 1 min) on the injected clock, straight on the
// registry (server-side, as a lease expiry is), each delete conditional on
// the resourceVersion it judged, so an Event renewed meanwhile survives.
//
// Bound: Events then live at most ttl + one sweep interval.
//
// Thread-safety: thread-safe; sweeps run on the sweeper's own thread.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "common/periodic.h"
#include "registry/registry.h"

namespace batchd::controllers {

class EventTtlSweeper {
 public:
  EventTtlSweeper(registry::Registry& registry, Clock& clock, absl::Duration ttl);

  // Starts the periodic sweep (nothing with a zero ttl).
  void Start() { worker_.Start(); }
  // Deletes every expired Event now; returns how many it deleted.
  int Sweep();
  absl::Duration interval() const { return interval_; }
  int64_t sweeps() const { return worker_.runs(); }
  bool WaitForSweeps(int64_t n, absl::Duration timeout) const {
    return worker_.WaitForRuns(n, timeout);
  }

 private:
  registry::Registry& registry_;
  Clock& clock_;
  const absl::Duration ttl_;
  const absl::Duration interval_;
  absl::Mutex mu_;  // one sweep at a time
  // Hash of the key -> (resourceVersion, last write) of the Events seen: each
  // version is decoded once, not on every sweep. (Hashes, not keys: a long
  // run keeps a hundred thousand Events; two keys with one hash would only
  // cost a decode, their versions differing.)
  std::unordered_map<uint64_t, std::pair<int64_t, absl::Time>> seen_ ABSL_GUARDED_BY(mu_);
  PeriodicWorker worker_;  // last: stopped first
};

}  // namespace batchd::controllers
