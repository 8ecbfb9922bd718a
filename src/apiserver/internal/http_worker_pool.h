// The HTTP server's worker threads (http_server.h): a bounded pool that runs
// the blocking request handlers.
#pragma once

#include <deque>
#include <functional>
#include <map>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace batchd::apiserver::internal {

// Threads are started on demand up to `max` and exit after `idle_exit`
// without work. Thread-safe.
class WorkerPool {
 public:
  // `can_start`, when set, may refuse a new thread (tests: as std::thread
  // does when the system is out of threads).
  WorkerPool(int max, absl::Duration idle_exit, std::function<bool()> can_start)
      : max_(max), idle_exit_(idle_exit), can_start_(std::move(can_start)) {}
  ~WorkerPool() { Stop(); }

  // False when no thread could take `fn` (starting one failed) or the pool
  // is stopped.
  bool Submit(std::function<void()> fn);
  // Joins every thread; with `detach`, leaves them instead (a handler that
  // does not return; the pool must then outlive them: it is never freed).
  void Stop(bool detach = false);
  int live() const;

 private:
  void Loop(int id);
  // The next task, or an empty function when this worker should exit.
  std::function<void()> Take(int id);
  std::vector<std::thread> TakeFinishedLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const int max_;
  const absl::Duration idle_exit_;
  const std::function<bool()> can_start_;
  mutable absl::Mutex mu_;
  absl::CondVar cv_;
  std::deque<std::function<void()>> queue_ ABSL_GUARDED_BY(mu_);
  std::map<int, std::thread> threads_ ABSL_GUARDED_BY(mu_);
  std::vector<int> finished_ ABSL_GUARDED_BY(mu_);
  int next_id_ ABSL_GUARDED_BY(mu_) = 0;
  int live_ ABSL_GUARDED_BY(mu_) = 0;
  int idle_ ABSL_GUARDED_BY(mu_) = 0;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace batchd::apiserver::internal
