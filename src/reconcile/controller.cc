#include "reconcile/controller.h"

#include "common/logging.h"
#include "common/thread_name.h"

namespace batchd::reconcile {

Controller::Controller(std::string name, Reconciler& reconciler, Clock& clock,
                       client::RateLimit limit)
    : name_(std::move(name)), reconciler_(reconciler), clock_(clock), queue_(clock, limit) {}

Controller::~Controller() { Stop(); }

void Controller::Finish(const std::string& key, const absl::StatusOr<Result>& r) {
  if (!r.ok()) {
    BATCHD_LOG_DEBUG("{}: reconcile {} failed: {}", name_, key, r.status().ToString());
    queue_.AddRateLimited(key);
  } else {
    queue_.Forget(key);
    if (r->requeue_after) queue_.AddAfter(key, *r->requeue_after);
  }
  queue_.Done(key);
}

bool Controller::ProcessOne() {
  std::string key;
  if (!queue_.TryGet(&key)) return false;
  ++processed_;
  Finish(key, reconciler_.Reconcile(key));
  return true;
}

void Controller::Start(int workers) {
  for (int i = 0; i < workers; ++i) {
    workers_.emplace_back([this, first = i == 0] {
      SetThreadName(name_);
      std::string key;
      absl::Time next_retry = clock_.Now() + kRetryFailuresEvery;
      while (!stop_) {
        if (first && clock_.Now() >= next_retry) {
          const int n = queue_.RetryBackedOff(kRetryFailuresEvery);
          if (n > 0) BATCHD_LOG_DEBUG("{}: retrying {} backed-off keys", name_, n);
          next_retry = clock_.Now() + kRetryFailuresEvery;
        }
        if (!queue_.Get(&key, absl::Milliseconds(500))) continue;
        absl::StatusOr<Result> r;
        try {
          r = reconciler_.Reconcile(key);
        } catch (const std::exception& e) {
          // A reconciler bug must not take the server down; retry with backoff.
          BATCHD_LOG_ERROR("{}: reconcile {} threw: {}", name_, key, e.what());
          r = absl::InternalError(e.what());
        }
        Finish(key, r);
      }
    });
  }
}

void Controller::Stop() {
  stop_ = true;
  queue_.ShutDown();
  for (auto& t : workers_) {
    if (t.joinable()) t.join();
  }
  workers_.clear();
}

Manager::~Manager() { Stop(); }

client::Informer& Manager::AddInformer(std::unique_ptr<client::Informer> inf) {
  informers_.push_back(std::move(inf));
  return *informers_.back();
}

Controller& Manager::AddController(std::unique_ptr<Controller> c) {
  controllers_.push_back(std::move(c));
  return *controllers_.back();
}

absl::Status Manager::Start(int workers) {
  if (auto st = StartInformers(); !st.ok()) return st;
  StartControllers(workers);
  return absl::OkStatus();
}

absl::Status Manager::StartInformers() {
  // Resumes after the last informer that started (a failed Start may be retried).
  for (; informers_started_ < informers_.size(); ++informers_started_) {
    if (auto st = informers_[informers_started_]->Start(); !st.ok()) return st;
  }
  return absl::OkStatus();
}

void Manager::StartControllers(int workers) {
  if (started_) return;
  for (auto& c : controllers_) c->Start(workers);
  started_ = true;
}

void Manager::Stop() {
  for (auto& c : controllers_) c->Stop();
  // Each informer's thread notices a stop within its 200 ms wait for an
  // event: all are asked first, so the server's 30 or so end together
  // rather than one after another (seconds at exit).
  for (auto& i : informers_) i->RequestStop();
  for (auto& i : informers_) i->Stop();
}

std::vector<std::string> Manager::UnsyncedInformers() const {
  std::vector<std::string> out;
  for (const auto& i : informers_) {
    if (!i->HasSynced()) out.push_back(i->kind().ApiVersion() + "/" + i->kind().plural);
  }
  return out;
}

absl::Status Manager::SyncAll() {
  for (auto& i : informers_) {
    if (auto st = i->Sync(); !st.ok()) return st;
  }
  return absl::OkStatus();
}

std::vector<std::pair<std::string, int64_t>> Manager::ProcessedByController() const {
  std::vector<std::pair<std::string, int64_t>> out;
  for (const auto& c : controllers_) out.emplace_back(c->name(), c->processed());
  return out;
}

int Manager::RunUntilIdle(int max_steps) {
  int steps = 0;
  for (;;) {
    bool progress = false;
    for (auto& i : informers_) progress |= i->Pump() > 0;
    for (auto& c : controllers_) {
      while (steps < max_steps && c->ProcessOne()) {
        ++steps;
        progress = true;
        for (auto& i : informers_) i->Pump();
      }
    }
    if (!progress || steps >= max_steps) return steps;
  }
}

}  // namespace batchd::reconcile
