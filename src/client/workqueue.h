// WorkQueue: the rate-limited, de-duplicating queue of keys that drives a
// reconciler, with client-go's semantics:
//  - a key queued twice is processed once;
//  - a key added while being processed is queued again after `Done`, never
//    processed by two workers at once;
//  - `AddAfter` and `AddRateLimited` wait on the injected Clock, so tests
//    and the simulator control time. `AddRateLimited` is client-go's
//    DefaultControllerRateLimiter: the longer of a per-key exponential
//    backoff (5 ms doubling to 1000 s) and an overall token bucket (10 qps,
//    burst 100) shared by every key of the queue;
//  - a key waiting in backoff is handed out at once when it is `Add`ed (an
//    event on its object: the cause may be fixed), and `RetryBackedOff`
//    brings forward every key whose backoff runs past a horizon (the
//    controllers' periodic retry of failures, reconcile/controller.h).
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
  // The overall bucket (0 qps: none).
  double qps = 10;
  int burst = 100;
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
  // Keys that failed (AddRateLimited) and whose retry is due later than
  // `horizon` from now are queued now (their failure counts stay); returns
  // how many.
  int RetryBackedOff(absl::Duration horizon);

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
  // The token bucket: tokens (may go negative: reservations) as of `bucket_at_`.
  double bucket_tokens_ ABSL_GUARDED_BY(mu_);
  absl::Time bucket_at_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  bool shutdown_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace batchd::client
