// The HTTP server's worker threads (http_server.h): a bounded pool that runs
// the blocking request handlers. Header-only: http_server.cc is its one user
// (an object of its own would parse spdlog once more).
#pragma once

#include <deque>
#include <functional>
#include <map>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/logging.h"
#include "common/thread_name.h"

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

inline bool WorkerPool::Submit(std::function<void()> fn) {
  std::vector<std::thread> done;
  bool ok = true;
  {
    absl::MutexLock lock(&mu_);
    done = TakeFinishedLocked();
    if (stopping_) {
      ok = false;
    } else if (idle_ > static_cast<int>(queue_.size()) || live_ >= max_) {
      // An idle worker takes it, or (at the cap) the next one to finish.
      queue_.push_back(std::move(fn));
      cv_.Signal();
    } else if (can_start_ && !can_start_()) {
      ok = false;
    } else {
      int id = next_id_++;
      try {
        threads_.emplace(id, std::thread([this, id] { Loop(id); }));
        ++live_;
        queue_.push_back(std::move(fn));
      } catch (const std::system_error& e) {
        BATCHD_LOG_ERROR("http: cannot start a worker thread ({} running): {}", live_, e.what());
        ok = false;
      }
    }
  }
  for (auto& t : done) t.join();
  return ok;
}

inline void WorkerPool::Stop(bool detach) {
  std::map<int, std::thread> all;
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    cv_.SignalAll();
    all.swap(threads_);
    finished_.clear();
  }
  for (auto& [id, t] : all) detach ? t.detach() : t.join();
}

inline int WorkerPool::live() const {
  absl::MutexLock lock(&mu_);
  return live_;
}

inline void WorkerPool::Loop(int id) {
  SetThreadName("http-worker");
  for (;;) {
    std::function<void()> fn = Take(id);
    if (!fn) return;
    fn();
  }
}

inline std::function<void()> WorkerPool::Take(int id) {
  absl::MutexLock lock(&mu_);
  while (queue_.empty() && !stopping_) {
    ++idle_;
    bool timed_out = cv_.WaitWithTimeout(&mu_, idle_exit_);
    --idle_;
    if (timed_out && queue_.empty() && !stopping_) break;
  }
  if (queue_.empty()) {
    --live_;
    if (!stopping_) finished_.push_back(id);
    return nullptr;
  }
  std::function<void()> fn = std::move(queue_.front());
  queue_.pop_front();
  return fn;
}

inline std::vector<std::thread> WorkerPool::TakeFinishedLocked() {
  std::vector<std::thread> out;
  for (int id : finished_) {
    auto it = threads_.find(id);
    if (it == threads_.end()) continue;
    out.push_back(std::move(it->second));
    threads_.erase(it);
  }
  finished_.clear();
  return out;
}

}  // namespace batchd::apiserver::internal
