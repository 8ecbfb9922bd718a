// EventRecorder: the EventSink seam. Controllers report transitions as core/v1
// Events ("Normal"/"Warning", a CamelCase reason, a message) about an object;
// `kubectl describe` and `kubectl get events` show them. The API-backed
// implementation aggregates repeats into `count` as Kubernetes does; tests use
// FakeEventRecorder.
//
// Thread-safety: implementations are thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "api/field_error.h"
#include "client/client.h"
#include "common/clock.h"

namespace batchd::reconcile {

class EventRecorder {
 public:
  virtual ~EventRecorder() = default;
  // `obj` is the involved object (apiVersion, kind, metadata).
  virtual void Event(const api::Json& obj, const std::string& type, const std::string& reason,
                     const std::string& message) = 0;
  // As Event, but one series per (object, type, reason): a repeat with any
  // message counts in the same Event and gives it the new message (the
  // admission decisions of a workload: QuotaReserved, Admitted, Pending).
  virtual void AggregatedEvent(const api::Json& obj, const std::string& type,
                               const std::string& reason, const std::string& message) {
    Event(obj, type, reason, message);
  }
};

// Writes Events through a Client, correlating them as client-go's
// EventCorrelator does (tools/record/events_cache.go), in three steps:
//
// 1. Similar Events combine: Events with the same involved object,
//    component, type and reason but different messages form a group; once a
//    group has seen `similar_max_messages` (10) distinct messages, each
//    spaced at most `similar_window` (10 minutes) from the group's previous
//    Event, any further message joins one Event whose message is
//    "(combined from similar events): <latest message>", its count raised.
//    The first nine messages keep their own Events (their repeats still
//    count there); a quiet `similar_window` resets the group. client-go
//    forgets an arbitrary one of the ten messages at that point; this
//    recorder forgets the newest, so which Events a message joins is
//    deterministic. Groups live in an LRU of at most `max_similar_groups`.
//    AggregatedEvent series already fold every message and skip this step.
// 2. Repeats count: an Event with the same involved object, component,
//    type, reason and message (or the same combined Event of step 1) as one
//    recorded within `aggregation_window` (measured from the last repeat) is
//    the same Event, its `count` raised and `lastTimestamp` moved, not a new
//    object. The recorder keeps the series it knows in a cache of at most
//    `max_series` entries (least recently seen dropped first, as client-go's
//    LRU of 4096); a repeat of a dropped or expired series starts a new
//    Event. Only the changes are written: a repeat is a merge patch of count
//    and lastTimestamp, and after `StartAsync` the repeats of one batch
//    window are one patch, not one each. A patch of an Event that is gone
//    (expired by --event-ttl) creates it again with the count.
// 3. The spam filter: each (component, involved object) has a token bucket
//    of `spam_burst` (25) Events, refilled by one every `spam_refill`
//    (5 minutes); an Event (a repeat too) that finds it empty is not written
//    and is counted in `batchd_events_dropped_total{reason="spam_filter"}`.
//    As in client-go it has still counted in steps 1 and 2: the next Event of
//    its series that is let through writes the count with it. (A write
//    already due, queued in the async sink, stores its series as of the
//    last Event let through, so both modes store the same.) Buckets live in
//    an LRU of at most `max_spam_keys` (one forgotten starts full again).
//    `spam_burst` or `spam_refill` 0 turns the filter off.
//
// All three steps happen in the calling thread under one lock, with the
// injected Clock, before the write or the queueing below, so the
// synchronous and the asynchronous modes decide alike.
//
// Synchronous until `StartAsync()`: each Event call writes before it returns
// (what deterministic tests want). After it, Event only queues and returns,
// as Kubernetes' event broadcaster does, and a sink thread writes whatever is
// queued, new Events with one Client::CreateMany (in-process: one store
// commit for the lot) — Events are best-effort, and a reconcile no longer
// waits for a commit per Event. Up to `max_queue` Events wait; more are
// dropped, logged and counted (batchd_events_dropped_total{reason=
// "queue_full"}). The sink gathers Events for up to `batch_window` after the
// first of a batch (Flush and shutdown cut it short): one wake-up and one
// commit per batch rather than per Event, at the cost of Events appearing
// that much later.
class ApiEventRecorder : public EventRecorder {
 public:
  struct Options {
    absl::Duration aggregation_window = absl::Minutes(10);
    size_t max_series = 4096;
    // Similar Events (step 1); similar_max_messages 0: off.
    size_t similar_max_messages = 10;
    absl::Duration similar_window = absl::Minutes(10);
    size_t max_similar_groups = 4096;
    // The spam filter (step 3); spam_burst 0: off.
    int spam_burst = 25;
    absl::Duration spam_refill = absl::Minutes(5);
    size_t max_spam_keys = 4096;
  };
  // What the recorder did with the Events it was given, and its caches' sizes.
  struct Stats {
    uint64_t combined = 0;            // joined a "(combined from similar events)" Event
    uint64_t dropped_spam = 0;        // over the spam filter
    uint64_t dropped_queue_full = 0;  // over max_queue (async)
    size_t series = 0, similar_groups = 0, spam_keys = 0;
  };
  // The prefix of a combined Event's message (client-go's).
  static constexpr char kCombinedPrefix[] = "(combined from similar events): ";
  ApiEventRecorder(client::Client& client, Clock& clock, std::string component);
  ApiEventRecorder(client::Client& client, Clock& clock, std::string component, Options opts);
  // Writes what is still queued, then stops the sink.
  ~ApiEventRecorder() override;
  void StartAsync(size_t max_queue = 10000, absl::Duration batch_window = absl::Milliseconds(10));
  // Returns once every Event queued before the call is written.
  void Flush();
  void Event(const api::Json& obj, const std::string& type, const std::string& reason,
             const std::string& message) override;
  // As Event, reported by `component` (source.component, reportingComponent)
  // instead of this recorder's own: controllers sharing one sink each name
  // themselves, as Kubernetes' do ("job-controller", "default-scheduler").
  void EventFrom(const std::string& component, const api::Json& obj, const std::string& type,
                 const std::string& reason, const std::string& message,
                 bool aggregate_messages = false);
  void AggregatedEvent(const api::Json& obj, const std::string& type, const std::string& reason,
                       const std::string& message) override;
  // Series in the cache (bounded by Options::max_series).
  size_t CachedSeries() const;
  Stats GetStats() const;
  // batchd_events_dropped_total{reason} and batchd_events_combined_total.
  void AppendPrometheus(std::string* out) const;

 private:
  struct Series;    // One Event object and its repeats (events.cc).
  struct Snapshot;  // A series' count and time, taken for one write.
  struct Cache;     // The LRU of series (events.cc).
  struct Correlator;  // Similar-Event groups and spam buckets (events.cc).
  api::Json Build(const std::string& component, const api::Json& obj, const std::string& type,
                  const std::string& reason, const std::string& message) const;
  // Writes what `series` need (creates in one CreateMany, patches of
  // repeats). REQUIRES write_mu_.
  void Write(const std::vector<std::shared_ptr<Series>>& series)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_) ABSL_LOCKS_EXCLUDED(mu_);
  // A create found an object of the same name: count on from its count.
  void AdoptExisting(const Snapshot& s) ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);
  void Patch(const Snapshot& s) ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);
  void Written(const Snapshot& s) ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);
  // The series `key` joins (a new one when unknown, expired or dropped),
  // its count raised; moves it to the front of the LRU. REQUIRES mu_.
  std::shared_ptr<Series> RecordLocked(const std::string& key, api::Json ev)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Step 1: whether `message` joins its group's combined Event (and the
  // group's state moved on).
  bool SimilarLocked(const std::string& group, const std::string& message, absl::Time now)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Step 3: whether `source`'s bucket has a token (and takes it).
  bool SpamAllowsLocked(const std::string& source, absl::Time now)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void SinkLoop();

  client::Client& client_;
  Clock& clock_;
  std::string component_;
  const Options opts_;
  // Orders this recorder's writes; taken before mu_.
  absl::Mutex write_mu_;

  mutable absl::Mutex mu_;
  absl::CondVar cv_;
  std::unique_ptr<Cache> cache_ ABSL_PT_GUARDED_BY(mu_);
  std::unique_ptr<Correlator> correlator_ ABSL_PT_GUARDED_BY(mu_);
  uint64_t combined_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t dropped_spam_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t dropped_queue_full_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<std::shared_ptr<Series>> queue_ ABSL_GUARDED_BY(mu_);
  size_t max_queue_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Duration batch_window_ ABSL_GUARDED_BY(mu_) = absl::ZeroDuration();
  int flushing_ ABSL_GUARDED_BY(mu_) = 0;  // Flush calls waiting.
  // Event calls queued / written so far.
  uint64_t enqueued_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t written_ ABSL_GUARDED_BY(mu_) = 0;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread sink_;
};

// One component's view of a shared ApiEventRecorder.
class ComponentEventRecorder : public EventRecorder {
 public:
  ComponentEventRecorder(ApiEventRecorder& sink, std::string component)
      : sink_(sink), component_(std::move(component)) {}
  void Event(const api::Json& obj, const std::string& type, const std::string& reason,
             const std::string& message) override {
    sink_.EventFrom(component_, obj, type, reason, message);
  }
  void AggregatedEvent(const api::Json& obj, const std::string& type, const std::string& reason,
                       const std::string& message) override {
    sink_.EventFrom(component_, obj, type, reason, message, /*aggregate_messages=*/true);
  }

 private:
  ApiEventRecorder& sink_;
  const std::string component_;
};

class FakeEventRecorder : public EventRecorder {
 public:
  struct Recorded {
    std::string object;  // "Kind ns/name"
    std::string type, reason, message;
    bool aggregated = false;  // sent with AggregatedEvent
  };
  void Event(const api::Json& obj, const std::string& type, const std::string& reason,
             const std::string& message) override {
    Record(obj, type, reason, message, false);
  }
  void AggregatedEvent(const api::Json& obj, const std::string& type, const std::string& reason,
                       const std::string& message) override {
    Record(obj, type, reason, message, true);
  }
  void Record(const api::Json& obj, const std::string& type, const std::string& reason,
              const std::string& message, bool aggregated) {
    absl::MutexLock lock(&mu_);
    const api::Json& m = obj.contains("metadata") ? obj["metadata"] : api::Json::object();
    events_.push_back({obj.value("kind", "") + " " + m.value("namespace", "") + "/" +
                           m.value("name", ""),
                       type, reason, message, aggregated});
  }
  std::vector<Recorded> events() const {
    absl::MutexLock lock(&mu_);
    return events_;
  }
  std::vector<std::string> Reasons() const {
    absl::MutexLock lock(&mu_);
    std::vector<std::string> r;
    for (const auto& e : events_) r.push_back(e.reason);
    return r;
  }

 private:
  mutable absl::Mutex mu_;
  std::vector<Recorded> events_ ABSL_GUARDED_BY(mu_);
};

}  // namespace batchd::reconcile
