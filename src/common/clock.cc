#include "common/clock.h"

#include <map>
#include <thread>
#include <utility>

#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "common/thread_name.h"

namespace batchd {

struct RealClock::Impl {
  absl::Mutex mu;
  absl::CondVar cv;
  // Keyed by (due time, id) so timers fire in a deterministic order.
  std::map<std::pair<absl::Time, TimerId>, std::function<void()>> timers ABSL_GUARDED_BY(mu);
  std::map<TimerId, absl::Time> due_by_id ABSL_GUARDED_BY(mu);
  TimerId next_id ABSL_GUARDED_BY(mu) = 1;
  bool stop ABSL_GUARDED_BY(mu) = false;
  std::thread thread;

  void Run() {
    absl::MutexLock lock(&mu);
    while (!stop) {
      if (timers.empty()) {
        cv.Wait(&mu);
        continue;
      }
      auto it = timers.begin();
      if (it->first.first > absl::Now()) {
        cv.WaitWithDeadline(&mu, it->first.first);
        continue;
      }
      auto fn = std::move(it->second);
      due_by_id.erase(it->first.second);
      timers.erase(it);
      mu.Unlock();
      fn();
      mu.Lock();
    }
  }
};

RealClock::RealClock() : impl_(std::make_unique<Impl>()) {
  impl_->thread = std::thread([this] {
    SetThreadName("clock");
    impl_->Run();
  });
}

RealClock::~RealClock() {
  {
    absl::MutexLock lock(&impl_->mu);
    impl_->stop = true;
  }
  impl_->cv.SignalAll();
  impl_->thread.join();
}

absl::Time RealClock::Now() const { return absl::Now(); }

Clock::TimerId RealClock::ScheduleAt(absl::Time when, std::function<void()> fn) {
  absl::MutexLock lock(&impl_->mu);
  TimerId id = impl_->next_id++;
  impl_->timers.emplace(std::make_pair(when, id), std::move(fn));
  impl_->due_by_id[id] = when;
  impl_->cv.SignalAll();
  return id;
}

bool RealClock::Cancel(TimerId id) {
  absl::MutexLock lock(&impl_->mu);
  auto it = impl_->due_by_id.find(id);
  if (it == impl_->due_by_id.end()) return false;
  impl_->timers.erase({it->second, id});
  impl_->due_by_id.erase(it);
  return true;
}

}  // namespace batchd
