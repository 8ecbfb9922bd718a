// FakeClock: a manually advanced Clock for deterministic tests and the
// simulator. `Advance(d)` moves time forward and fires every timer that
// becomes due, in (due time, sequence number) order, on the calling thread.
// Timers scheduled by a firing callback run in the same `Advance` when due.
//
// Thread-safety: all methods may be called from any thread; callbacks run
// without the internal lock held.
#pragma once

#include <functional>
#include <map>
#include <utility>

#include "absl/synchronization/mutex.h"
#include "common/clock.h"

namespace batchd {

class FakeClock : public Clock {
 public:
  explicit FakeClock(absl::Time start = absl::FromUnixSeconds(1767225600))  // 2026-01-01
      : now_(start) {}

  absl::Time Now() const override {
    absl::MutexLock lock(&mu_);
    return now_;
  }

  TimerId ScheduleAt(absl::Time when, std::function<void()> fn) override {
    absl::MutexLock lock(&mu_);
    TimerId id = next_id_++;
    timers_.emplace(std::make_pair(when, id), std::move(fn));
    due_by_id_[id] = when;
    return id;
  }

  bool Cancel(TimerId id) override {
    absl::MutexLock lock(&mu_);
    auto it = due_by_id_.find(id);
    if (it == due_by_id_.end()) return false;
    timers_.erase({it->second, id});
    due_by_id_.erase(it);
    return true;
  }

  // Moves time forward by `d`, firing due timers in order.
  void Advance(absl::Duration d) { AdvanceTo(Now() + d); }

  void AdvanceTo(absl::Time target) {
    for (;;) {
      std::function<void()> fn;
      {
        absl::MutexLock lock(&mu_);
        auto it = timers_.begin();
        if (it == timers_.end() || it->first.first > target) {
          if (target > now_) now_ = target;
          return;
        }
        if (it->first.first > now_) now_ = it->first.first;
        fn = std::move(it->second);
        due_by_id_.erase(it->first.second);
        timers_.erase(it);
      }
      fn();
    }
  }

  // The due time of the earliest pending timer, or InfiniteFuture.
  absl::Time NextTimer() const {
    absl::MutexLock lock(&mu_);
    return timers_.empty() ? absl::InfiniteFuture() : timers_.begin()->first.first;
  }

  size_t PendingTimers() const {
    absl::MutexLock lock(&mu_);
    return timers_.size();
  }

 private:
  mutable absl::Mutex mu_;
  absl::Time now_ ABSL_GUARDED_BY(mu_);
  TimerId next_id_ ABSL_GUARDED_BY(mu_) = 1;
  std::map<std::pair<absl::Time, TimerId>, std::function<void()>> timers_ ABSL_GUARDED_BY(mu_);
  std::map<TimerId, absl::Time> due_by_id_ ABSL_GUARDED_BY(mu_);
};

}  // namespace batchd
