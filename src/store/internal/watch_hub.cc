#include "store/internal/watch_hub.h"

#include <algorithm>
#include <atomic>
#include <thread>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/logging.h"

namespace batchd::store::internal {

// One watcher. `mu` is held while a live callback runs, so taking it waits
// for an in-flight one; until `replayed` turns true the replay thread alone
// calls back, and live events wait in `pending`.
struct Subscriber {
  std::string prefix;
  int64_t after = 0;
  WatchCallback cb;
  std::atomic<bool> active{true};
  absl::Mutex mu;
  bool replayed ABSL_GUARDED_BY(mu) = false;
  std::vector<std::shared_ptr<const Event>> pending ABSL_GUARDED_BY(mu);

  bool Matches(const Event& e) const {
    return e.revision() > after && absl::StartsWith(e.kv.key, prefix);
  }
};

namespace {

size_t EventBytes(const Event& e) {
  return sizeof(Event) + e.kv.key.size() + e.kv.value.size() + e.prev.key.size() +
         e.prev.value.size();
}

// Stops the callbacks of one subscriber; see `Store::Watch`'s contract.
// Must not be destroyed from inside its own callback (that would deadlock).
class HubWatchHandle : public WatchHandle {
 public:
  HubWatchHandle(std::shared_ptr<Subscriber> sub, std::thread replay)
      : sub_(std::move(sub)), replay_(std::move(replay)) {}
  ~HubWatchHandle() override {
    sub_->active.store(false, std::memory_order_release);
    { absl::MutexLock wait_for_callback(&sub_->mu); }
    if (replay_.joinable()) replay_.join();
  }

 private:
  std::shared_ptr<Subscriber> sub_;
  std::thread replay_;
};

// Delivers, on the replay thread, the live events that queued up during the
// replay, until none is left; then live delivery takes over.
void DrainPending(Subscriber& sub) {
  for (;;) {
    std::vector<std::shared_ptr<const Event>> batch;
    {
      absl::MutexLock lock(&sub.mu);
      if (sub.pending.empty() || !sub.active.load(std::memory_order_acquire)) {
        sub.pending.clear();
        sub.replayed = true;
        return;
      }
      batch.swap(sub.pending);
    }
    for (const auto& e : batch) {
      if (!sub.active.load(std::memory_order_acquire)) break;
      sub.cb(*e);
    }
  }
}

// Delivers the events of one `Publish` that match `sub`, holding its mutex
// once for the whole batch (or queues them while its replay runs).
void Deliver(Subscriber& sub, const std::vector<std::shared_ptr<const Event>>& events) {
  absl::MutexLock lock(&sub.mu);
  for (const auto& e : events) {
    if (!sub.Matches(*e)) continue;
    if (!sub.active.load(std::memory_order_acquire)) break;
    if (!sub.replayed) {
      sub.pending.push_back(e);
    } else {
      sub.cb(*e);
    }
  }
}

}  // namespace

WatchHub::WatchHub(int64_t start_revision, WatchHubOptions options)
    : options_(options), revision_(start_revision), oldest_(start_revision) {}

WatchHub::WatchHub(int64_t start_revision, WatchHubOptions options, HistorySource* source,
                   int64_t compacted)
    : options_(options),
      revision_(start_revision),
      oldest_(start_revision),
      source_(source),
      source_compacted_(compacted) {}

WatchHub::~WatchHub() = default;

void WatchHub::Publish(std::vector<Event> events) {
  if (events.empty()) return;
  absl::MutexLock publish_lock(&publish_mu_);
  std::vector<EventPtr> batch;
  batch.reserve(events.size());
  std::vector<std::shared_ptr<Subscriber>> subs;
  {
    absl::MutexLock lock(&mu_);
    for (Event& e : events) {
      revision_ = e.revision();
      auto ptr = std::make_shared<const Event>(std::move(e));
      history_bytes_ += EventBytes(*ptr);
      history_.push_back(ptr);
      batch.push_back(std::move(ptr));
    }
    TrimLocked();
    subs_.erase(std::remove_if(subs_.begin(), subs_.end(),
                               [](const auto& s) { return !s->active.load(); }),
                subs_.end());
    subs = subs_;
  }
  for (const auto& sub : subs) Deliver(*sub, batch);
}

void WatchHub::DropFrontLocked() {
  history_bytes_ -= EventBytes(*history_.front());
  oldest_ = std::max(oldest_, history_.front()->revision());
  history_.pop_front();
}

void WatchHub::TrimLocked() {
  while (!history_.empty() &&
         (history_.size() > options_.max_events || history_bytes_ > options_.max_bytes)) {
    DropFrontLocked();
  }
}

absl::StatusOr<std::unique_ptr<WatchHandle>> WatchHub::Watch(std::string_view prefix,
                                                             int64_t after_revision,
                                                             WatchCallback cb) {
  if (!cb) return absl::InvalidArgumentError("watch callback is empty");
  if (after_revision < -1) {
    return absl::InvalidArgumentError(absl::StrCat("invalid watch revision ", after_revision));
  }
  auto sub = std::make_shared<Subscriber>();
  sub->prefix = std::string(prefix);
  sub->cb = std::move(cb);
  std::vector<EventPtr> replay;
  bool from_source = false;
  int64_t source_upto = 0;
  {
    absl::MutexLock lock(&mu_);
    int64_t after = after_revision == -1 ? revision_ : after_revision;
    const int64_t oldest = source_ ? source_compacted_ : oldest_;
    if (after < oldest) {
      return absl::OutOfRangeError(
          absl::StrCat("required revision has been compacted: watch after revision ", after,
                       ", oldest watchable revision is ", oldest));
    }
    sub->after = after;
    if (source_ && after < oldest_) {
      // The ring starts after `oldest_`: the rest comes from the source, and
      // no compaction may pass `after` until it has been read.
      from_source = true;
      source_upto = oldest_;
      replay_floors_.insert(after);
    }
    auto it = std::upper_bound(history_.begin(), history_.end(), after,
                               [](int64_t rev, const EventPtr& e) { return rev < e->revision(); });
    for (; it != history_.end(); ++it) {
      if (sub->Matches(**it)) replay.push_back(*it);
    }
    subs_.push_back(sub);
  }
  std::thread replay_thread;
  if (replay.empty() && !from_source) {
    absl::MutexLock lock(&sub->mu);
    sub->replayed = true;
  } else {
    replay_thread = std::thread([this, sub, from_source, source_upto,
                                 events = std::move(replay)] {
      if (from_source) {
        absl::Status st = source_->ReadHistory(sub->prefix, sub->after, source_upto,
                                               [&](const Event& e) {
                                                 if (!sub->active.load()) return false;
                                                 sub->cb(e);
                                                 return true;
                                               });
        {
          absl::MutexLock lock(&mu_);
          replay_floors_.erase(replay_floors_.find(sub->after));
        }
        if (!st.ok()) {
          // The watcher cannot get its history: end its stream rather than
          // deliver a gap.
          BATCHD_LOG_ERROR("watch replay from revision {} failed: {}", sub->after,
                           st.ToString());
          sub->active.store(false);
        }
      }
      for (const auto& e : events) {
        if (!sub->active.load(std::memory_order_acquire)) break;
        sub->cb(*e);
      }
      DrainPending(*sub);
    });
  }
  return std::make_unique<HubWatchHandle>(std::move(sub), std::move(replay_thread));
}

absl::StatusOr<std::vector<std::shared_ptr<const Event>>> WatchHub::EventsAfter(
    int64_t revision) const {
  absl::MutexLock lock(&mu_);
  if (revision < oldest_) {
    return absl::OutOfRangeError(absl::StrCat("required revision has been compacted: revision ",
                                              revision, ", compacted revision ", oldest_));
  }
  auto it = std::upper_bound(history_.begin(), history_.end(), revision,
                             [](int64_t rev, const EventPtr& e) { return rev < e->revision(); });
  return std::vector<EventPtr>(it, history_.end());
}

int64_t WatchHub::ReserveCompaction(int64_t revision) {
  absl::MutexLock lock(&mu_);
  if (!replay_floors_.empty()) revision = std::min(revision, *replay_floors_.begin());
  source_compacted_ = std::max(source_compacted_, revision);
  return source_compacted_;
}

absl::Status WatchHub::Compact(int64_t revision) {
  absl::MutexLock lock(&mu_);
  if (revision > revision_) {
    return absl::OutOfRangeError(absl::StrCat("required revision ", revision,
                                              " is a future revision (current ", revision_, ")"));
  }
  while (!history_.empty() && history_.front()->revision() <= revision) DropFrontLocked();
  oldest_ = std::max(oldest_, revision);
  return absl::OkStatus();
}

int64_t WatchHub::Revision() const {
  absl::MutexLock lock(&mu_);
  return revision_;
}

int64_t WatchHub::OldestWatchableRevision() const {
  absl::MutexLock lock(&mu_);
  return source_ ? source_compacted_ : oldest_;
}

}  // namespace batchd::store::internal
