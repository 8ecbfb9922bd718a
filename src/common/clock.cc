#include "common/clock.h"

#include "absl/time/clock.h"
#include "common/thread_name.h"

#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>
#include <utility>

namespace batchd {

struct RealClock::Impl {
  std::mutex mu;
  std::condition_variable cv;
  // Keyed by (due time, id) so timers fire in a deterministic order.
  std::map<std::pair<absl::Time, TimerId>, std::function<void()>> timers;
  std::map<TimerId, absl::Time> due_by_id;
  TimerId next_id = 1;
  bool stop = false;
  std::thread thread;

  void Run() {
    std::unique_lock<std::mutex> lock(mu);
    while (!stop) {
      if (timers.empty()) {
        cv.wait(lock);
        continue;
      }
      auto it = timers.begin();
      absl::Time now = absl::Now();
      if (it->first.first > now) {
        cv.wait_for(lock, absl::ToChronoNanoseconds(it->first.first - now));
        continue;
      }
      auto fn = std::move(it->second);
      due_by_id.erase(it->first.second);
      timers.erase(it);
      lock.unlock();
      fn();
      lock.lock();
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
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->stop = true;
  }
  impl_->cv.notify_all();
  impl_->thread.join();
}

absl::Time RealClock::Now() const { return absl::Now(); }

Clock::TimerId RealClock::ScheduleAt(absl::Time when, std::function<void()> fn) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  TimerId id = impl_->next_id++;
  impl_->timers.emplace(std::make_pair(when, id), std::move(fn));
  impl_->due_by_id[id] = when;
  impl_->cv.notify_all();
  return id;
}

bool RealClock::Cancel(TimerId id) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto it = impl_->due_by_id.find(id);
  if (it == impl_->due_by_id.end()) return false;
  impl_->timers.erase({it->second, id});
  impl_->due_by_id.erase(it);
  return true;
}

}  // namespace batchd
