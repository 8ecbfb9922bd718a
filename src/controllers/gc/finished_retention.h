// FinishedRetentionSweeper: deletes objects of one kind whose condition
// `condition` has been True for `after` (its lastTransitionTime), straight on
// the registry, each with a uid precondition and Background propagation.
// Kueue's `objectRetentionPolicies.workloads.afterFinished` is this for
// Workloads and their `Finished` condition; without that setting nothing is
// swept and a finished Workload lives as long as its owner (the garbage
// collector deletes it with the Job). Sweeps every after/10 (1 s to 1 min).
//
// Thread-safety: thread-safe; sweeps run on the sweeper's own thread.
#pragma once

#include <cstdint>
#include <string>

#include "absl/time/time.h"
#include "api/kind.h"
#include "common/clock.h"
#include "common/periodic.h"
#include "registry/registry.h"

namespace batchd::controllers {

class FinishedRetentionSweeper {
 public:
  FinishedRetentionSweeper(registry::Registry& registry, Clock& clock, const api::KindDef& kind,
                           std::string condition, absl::Duration after);
  void Start() { worker_.Start(); }
  // Deletes what is due now; returns how many.
  int Sweep();
  bool WaitForSweeps(int64_t n, absl::Duration timeout) const {
    return worker_.WaitForRuns(n, timeout);
  }

 private:
  registry::Registry& registry_;
  Clock& clock_;
  const api::KindDef& kind_;
  const std::string condition_;
  const absl::Duration after_;
  PeriodicWorker worker_;  // last: stopped first
};

}  // namespace batchd::controllers
