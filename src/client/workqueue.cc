#include "client/workqueue.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"

#include <algorithm>
#include <vector>

namespace batchd::client {

WorkQueue::WorkQueue(Clock& clock, RateLimit limit)
    : clock_(clock), limit_(limit), bucket_tokens_(limit.burst) {}

WorkQueue::~WorkQueue() {
  ShutDown();
  absl::MutexLock lock(&mu_);
  for (const auto& [key, id] : timers_) clock_.Cancel(id);
}

void WorkQueue::Add(const std::string& key) {
  absl::MutexLock lock(&mu_);
  if (shutdown_ || dirty_.count(key)) return;
  dirty_.insert(key);
  if (processing_.count(key)) return;  // Re-queued by Done.
  queue_.push_back(key);
  cv_.Signal();
}

void WorkQueue::AddAfter(const std::string& key, absl::Duration delay) {
  if (delay <= absl::ZeroDuration()) {
    Add(key);
    return;
  }
  absl::MutexLock lock(&mu_);
  if (shutdown_) return;
  absl::Time due = clock_.Now() + delay;
  auto it = timer_due_.find(key);
  if (it != timer_due_.end()) {
    if (it->second <= due) return;  // An earlier wake-up is already pending.
    clock_.Cancel(timers_[key]);
  }
  timer_due_[key] = due;
  timers_[key] = clock_.ScheduleAt(due, [this, key] {
    {
      absl::MutexLock l(&mu_);
      timers_.erase(key);
      timer_due_.erase(key);
    }
    Add(key);
  });
}

void WorkQueue::AddRateLimited(const std::string& key) {
  int n;
  absl::Duration bucket_wait = absl::ZeroDuration();
  {
    absl::MutexLock lock(&mu_);
    n = failures_[key]++;
    if (limit_.qps > 0) {
      // A reservation on the bucket (golang.org/x/time/rate): refill since
      // the last one, take a token, wait until it would have been there.
      const absl::Time now = clock_.Now();
      if (bucket_at_ != absl::InfinitePast()) {
        bucket_tokens_ = std::min<double>(
            limit_.burst, bucket_tokens_ + absl::ToDoubleSeconds(now - bucket_at_) * limit_.qps);
      }
      bucket_at_ = now;
      bucket_tokens_ -= 1;
      if (bucket_tokens_ < 0) bucket_wait = absl::Seconds(-bucket_tokens_ / limit_.qps);
    }
  }
  absl::Duration d = limit_.base;
  for (int i = 0; i < n && d < limit_.max; ++i) d *= 2;
  AddAfter(key, std::max(std::min(d, limit_.max), bucket_wait));
}

int WorkQueue::RetryBackedOff(absl::Duration horizon) {
  std::vector<std::string> due;
  {
    absl::MutexLock lock(&mu_);
    const absl::Time limit = clock_.Now() + horizon;
    for (const auto& [key, failures] : failures_) {
      auto t = timer_due_.find(key);
      if (failures == 0 || t == timer_due_.end() || t->second <= limit) continue;
      clock_.Cancel(timers_[key]);
      timers_.erase(key);
      timer_due_.erase(t);
      due.push_back(key);
    }
  }
  for (const std::string& key : due) Add(key);
  return static_cast<int>(due.size());
}

void WorkQueue::Forget(const std::string& key) {
  absl::MutexLock lock(&mu_);
  failures_.erase(key);
}

int WorkQueue::Failures(const std::string& key) const {
  absl::MutexLock lock(&mu_);
  auto it = failures_.find(key);
  return it == failures_.end() ? 0 : it->second;
}

bool WorkQueue::PopLocked(std::string* key) {
  if (queue_.empty()) return false;
  *key = std::move(queue_.front());
  queue_.pop_front();
  dirty_.erase(*key);
  processing_.insert(*key);
  return true;
}

bool WorkQueue::Get(std::string* key, absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  const absl::Time deadline = absl::Now() + timeout;
  while (queue_.empty() && !shutdown_ && !cv_.WaitWithDeadline(&mu_, deadline)) {
  }
  if (shutdown_) return false;
  return PopLocked(key);
}

bool WorkQueue::TryGet(std::string* key) {
  absl::MutexLock lock(&mu_);
  if (shutdown_) return false;
  return PopLocked(key);
}

void WorkQueue::Done(const std::string& key) {
  absl::MutexLock lock(&mu_);
  processing_.erase(key);
  if (dirty_.count(key) && !shutdown_) {
    queue_.push_back(key);
    cv_.Signal();
  }
}

size_t WorkQueue::Len() const {
  absl::MutexLock lock(&mu_);
  return queue_.size();
}

void WorkQueue::ShutDown() {
  absl::MutexLock lock(&mu_);
  shutdown_ = true;
  cv_.SignalAll();
}

}  // namespace batchd::client
