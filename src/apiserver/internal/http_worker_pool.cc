#include "apiserver/internal/http_worker_pool.h"

#include <system_error>
#include <utility>

#include "common/logging.h"
#include "common/thread_name.h"

namespace batchd::apiserver::internal {

bool WorkerPool::Submit(std::function<void()> fn) {
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

void WorkerPool::Stop(bool detach) {
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

int WorkerPool::live() const {
  absl::MutexLock lock(&mu_);
  return live_;
}

void WorkerPool::Loop(int id) {
  SetThreadName("http-worker");
  for (;;) {
    std::function<void()> fn = Take(id);
    if (!fn) return;
    fn();
  }
}

std::function<void()> WorkerPool::Take(int id) {
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

std::vector<std::thread> WorkerPool::TakeFinishedLocked() {
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
