#include "common/periodic.h"

#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace batchd {

// Shared with timer callbacks, which may outlive the worker by a moment.
struct PeriodicWorker::State {
  mutable absl::Mutex mu;
  bool due ABSL_GUARDED_BY(mu) = false;
  bool stopping ABSL_GUARDED_BY(mu) = false;
  Clock::TimerId timer ABSL_GUARDED_BY(mu) = 0;
  int64_t runs ABSL_GUARDED_BY(mu) = 0;
};

PeriodicWorker::PeriodicWorker(Clock& clock, absl::Duration interval, std::function<void()> fn)
    : clock_(clock), interval_(interval), fn_(std::move(fn)), state_(std::make_shared<State>()) {}

PeriodicWorker::~PeriodicWorker() {
  {
    absl::MutexLock lock(&state_->mu);
    state_->stopping = true;
    if (state_->timer != 0) clock_.Cancel(state_->timer);
  }
  if (worker_.joinable()) worker_.join();
}

void PeriodicWorker::Start() {
  if (interval_ <= absl::ZeroDuration() || worker_.joinable()) return;
  worker_ = std::thread([this] { Loop(); });
  Schedule();
}

void PeriodicWorker::Schedule() {
  std::weak_ptr<State> weak = state_;
  Clock* clock = &clock_;
  const absl::Duration interval = interval_;
  absl::MutexLock lock(&state_->mu);
  if (state_->stopping) return;
  // The callback re-arms itself through `weak`, never through `this`.
  struct Rearm {
    static void Fire(std::weak_ptr<State> weak, Clock* clock, absl::Duration interval) {
      std::shared_ptr<State> s = weak.lock();
      if (!s) return;
      absl::MutexLock l(&s->mu);
      if (s->stopping) return;
      s->due = true;
      s->timer = clock->ScheduleAfter(
          interval, [weak, clock, interval] { Fire(weak, clock, interval); });
    }
  };
  state_->timer = clock->ScheduleAfter(
      interval, [weak, clock, interval] { Rearm::Fire(weak, clock, interval); });
}

void PeriodicWorker::Loop() {
  State& s = *state_;
  for (;;) {
    {
      absl::MutexLock lock(&s.mu);
      auto ready = [&s]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu) { return s.due || s.stopping; };
      s.mu.Await(absl::Condition(&ready));
      if (s.stopping) return;
      s.due = false;
    }
    fn_();
    absl::MutexLock lock(&s.mu);
    ++s.runs;
  }
}

int64_t PeriodicWorker::runs() const {
  absl::MutexLock lock(&state_->mu);
  return state_->runs;
}

bool PeriodicWorker::WaitForRuns(int64_t n, absl::Duration timeout) const {
  State& s = *state_;
  absl::MutexLock lock(&s.mu);
  auto done = [&s, n]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu) { return s.runs >= n; };
  return s.mu.AwaitWithTimeout(absl::Condition(&done), timeout);
}

}  // namespace batchd
