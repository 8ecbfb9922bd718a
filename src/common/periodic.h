// PeriodicWorker: runs a function every `interval` of the injected clock, on a
// thread of its own (clock timer callbacks must not block; the function may:
// a compaction, a sweep of expired objects). A run that is still going when
// the next is due is not doubled: the next starts when it ends.
//
// Thread-safety: thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <thread>

#include "absl/time/time.h"
#include "common/clock.h"

namespace batchd {

class PeriodicWorker {
 public:
  PeriodicWorker(Clock& clock, absl::Duration interval, std::function<void()> fn);
  // Stops the schedule and waits for a run in progress.
  ~PeriodicWorker();
  PeriodicWorker(const PeriodicWorker&) = delete;
  PeriodicWorker& operator=(const PeriodicWorker&) = delete;

  // Starts the schedule: the first run one interval from now. Nothing with a
  // zero interval.
  void Start();
  // Runs finished so far.
  int64_t runs() const;
  // Waits (bounded) until `n` runs finished; false on timeout.
  bool WaitForRuns(int64_t n, absl::Duration timeout) const;

 private:
  struct State;
  void Schedule();
  void Loop();

  Clock& clock_;
  const absl::Duration interval_;
  std::function<void()> fn_;
  std::shared_ptr<State> state_;
  std::thread worker_;
};

}  // namespace batchd
