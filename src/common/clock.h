// Clock: the only source of time in batchd. Nothing calls `now()` or sleeps
// directly; components take a `Clock&` and tests inject `FakeClock`
// (common/testing/fake_clock.h), whose `Advance()` fires timers in
// (due time, sequence) order.
//
// Thread-safety: implementations are thread-safe. Timer callbacks run on a
// thread owned by the clock (RealClock) or on the thread calling `Advance`
// (FakeClock); they must not block.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

#include "absl/time/time.h"

namespace batchd {

class Clock {
 public:
  using TimerId = uint64_t;
  virtual ~Clock() = default;

  virtual absl::Time Now() const = 0;

  // Runs `fn` once at or after `when`. Returns an id for `Cancel`.
  virtual TimerId ScheduleAt(absl::Time when, std::function<void()> fn) = 0;
  TimerId ScheduleAfter(absl::Duration d, std::function<void()> fn) {
    return ScheduleAt(Now() + d, std::move(fn));
  }
  // Cancels a pending timer; returns false when it already ran or is unknown.
  virtual bool Cancel(TimerId id) = 0;
};

// RealClock reads the system clock and runs timers on one background thread.
class RealClock : public Clock {
 public:
  RealClock();
  ~RealClock() override;
  absl::Time Now() const override;
  TimerId ScheduleAt(absl::Time when, std::function<void()> fn) override;
  bool Cancel(TimerId id) override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace batchd
