// WorkQueue: the rate-limited, de-duplicating queue of keys that drives a
// reconciler, with client-go's semantics:
//  - a key queued twice is processed once;
//  - a key added while being processed is queued again after `Done`, never
//    processed by two workers at once;
//  - `AddAfter` and `AddRateLimited` (per-key exponential backoff) wait on
//    the injected Clock, so tests and the simulator control time.
//
// Thread-safety: all methods are thread-safe. `Get` blocks (server mode);
// `TryGet` does not (single-threaded simulate mode).
#pragma once

#include <deque>
#include <map>
#include <set>
#include <string>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock.h"

namespace batchd::client {

struct RateLimit {
  absl::Duration base = absl::Milliseconds(5);
  absl::Duration max = absl::Seconds(1000);
};

class WorkQueue {
 public:
  explicit WorkQueue(Clock& clock, RateLimit limit = {});
  ~WorkQueue();

  void Add(const std::string& key);
  void AddAfter(const std::string& key, absl::Duration delay);
  // Adds after this key's next backoff step (base * 2^failures, capped).
  void AddRateLimited(const std::string& key);
  // Resets the key's backoff.
  void Forget(const std::string& key);
  int Failures(const std::string& key) const;

  // Blocks up to `timeout` for a key; false on timeout or shutdown.
  bool Get(std::string* key, absl::Duration timeout);
  bool TryGet(std::string* key);
  // Marks `key` processed; re-queues it if it was added meanwhile.
  void Done(const std::string& key);

  size_t Len() const;
  void ShutDown();

 private:
  bool PopLocked(std::string* key) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  Clock& clock_;
  const RateLimit limit_;
  mutable absl::Mutex mu_;
  absl::CondVar cv_;
  std::deque<std::string> queue_ ABSL_GUARDED_BY(mu_);
  std::set<std::string> dirty_ ABSL_GUARDED_BY(mu_);       // Queued (or to be re-queued after Done).
  std::set<std::string> processing_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, int> failures_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, Clock::TimerId> timers_ ABSL_GUARDED_BY(mu_);  // Pending AddAfter, earliest only.
  std::map<std::string, absl::Time> timer_due_ ABSL_GUARDED_BY(mu_);
  bool shutdown_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace batchd::client
