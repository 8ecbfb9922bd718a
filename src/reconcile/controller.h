// The reconciler runtime (DESIGN.md "one clock, one loop"). A controller is a
// Reconciler — `Reconcile(key) -> {requeue_after}` over informer caches —
// plus a WorkQueue of keys. Informer handlers enqueue keys; `Controller`
// pops them and reconciles, retrying failures with client-go's default
// controller rate limiter (per key 5 ms doubling to 1000 s, and 10 qps /
// burst 100 overall: client/workqueue.h) and honouring requeue_after through
// the injected Clock.
//
// Recovery: a failing key comes back at once on any event of its object or
// of what its reconciler watches (the informer handlers Add it), and, in
// server mode, every `retry_failures_every` (30 s) each key whose backoff
// would run longer than that is retried: so a Job whose cause of failure
// was fixed (without an event) recovers within ~30 s, never 1000 s later,
// while a still-failing key costs at most one reconcile per 30 s.
//
// Server mode: `Start(workers)` runs worker threads. Simulate mode and tests:
// `ProcessOne()` / `Manager::RunUntilIdle()` on one thread, deterministic.
//
// Thread-safety: one key is never reconciled by two workers at once (the
// WorkQueue guarantees it); Reconcilers must tolerate concurrent calls for
// different keys.
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "client/informer.h"
#include "client/workqueue.h"
#include "common/clock.h"

namespace batchd::reconcile {

struct Result {
  std::optional<absl::Duration> requeue_after;
  static Result Done() { return {}; }
  static Result After(absl::Duration d) { return {d}; }
};

class Reconciler {
 public:
  virtual ~Reconciler() = default;
  virtual absl::StatusOr<Result> Reconcile(const std::string& key) = 0;
};

class Controller {
 public:
  Controller(std::string name, Reconciler& reconciler, Clock& clock, client::RateLimit limit = {});
  ~Controller();

  const std::string& name() const { return name_; }
  client::WorkQueue& queue() { return queue_; }
  // Enqueues the object's "ns/name" key.
  void Enqueue(const api::Json& obj) { queue_.Add(client::Informer::KeyOf(obj)); }

  // Reconciles one ready key; false when none was ready.
  bool ProcessOne();
  // Keys reconciled by ProcessOne so far (simulate mode: the summary's
  // per-controller counts).
  int64_t processed() const { return processed_; }
  void Start(int workers);
  // The periodic retry of backed-off keys (server mode; see above).
  static constexpr absl::Duration kRetryFailuresEvery = absl::Seconds(30);
  void Stop();

 private:
  void Finish(const std::string& key, const absl::StatusOr<Result>& r);

  std::string name_;
  Reconciler& reconciler_;
  Clock& clock_;
  client::WorkQueue queue_;
  int64_t processed_ = 0;  // ProcessOne's, on its one thread.
  std::atomic<bool> stop_{false};
  std::vector<std::thread> workers_;
};

// Owns the informers and controllers of one process and drives them.
class Manager {
 public:
  explicit Manager(Clock& clock) : clock_(clock) {}
  ~Manager();

  client::Informer& AddInformer(std::unique_ptr<client::Informer> inf);
  Controller& AddController(std::unique_ptr<Controller> c);

  // Server mode: informers watch on their threads, controllers on workers.
  absl::Status Start(int workers_per_controller = 2);
  // Start in two steps: a standby replica (leader election) keeps its
  // informers synced and watching, their handlers filling the controllers'
  // queues, and starts the controllers' workers only when it leads, so
  // leading starts without a relist (docs/ha.md). Each step runs once.
  absl::Status StartInformers();
  void StartControllers(int workers_per_controller = 2);
  // Stops the controllers (a reconcile in progress finishes), then the
  // informers, all of them together.
  void Stop();

  // Simulate mode / tests: sync informers once (no threads).
  absl::Status SyncAll();
  // The informers ("group/version/plural") whose cache has not synced (all of
  // them before Start); for /readyz.
  std::vector<std::string> UnsyncedInformers() const;
  // Pumps informers and reconciles until nothing is ready; returns the
  // number of reconciles. Bounded by `max_steps` to catch livelocks.
  int RunUntilIdle(int max_steps = 1000000);
  // Each controller's name and ProcessOne count, in the order they were added.
  std::vector<std::pair<std::string, int64_t>> ProcessedByController() const;

 private:
  Clock& clock_;
  std::vector<std::unique_ptr<client::Informer>> informers_;
  std::vector<std::unique_ptr<Controller>> controllers_;
  bool started_ = false;
  size_t informers_started_ = 0;  // informers_[0, n) started
};

}  // namespace batchd::reconcile
