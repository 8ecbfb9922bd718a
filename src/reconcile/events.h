// EventRecorder: the EventSink seam. Controllers report transitions as core/v1
// Events ("Normal"/"Warning", a CamelCase reason, a message) about an object;
// `kubectl describe` and `kubectl get events` show them. The API-backed
// implementation aggregates repeats into `count` as Kubernetes does; tests use
// FakeEventRecorder.
//
// Thread-safety: implementations are thread-safe.
#pragma once

#include <cstdint>
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
  // As Event, but one Event object per (object, type, reason): a repeat
  // with any message bumps its `count` and takes the new message (the
  // admission decisions of a workload: QuotaReserved, Admitted, Pending).
  virtual void AggregatedEvent(const api::Json& obj, const std::string& type,
                               const std::string& reason, const std::string& message) {
    Event(obj, type, reason, message);
  }
};

// Writes Events through a Client; a repeat of (object, type, reason,
// message) bumps `count` and `lastTimestamp` of the existing Event.
//
// Synchronous until `StartAsync()`: each Event call writes before it returns
// (what deterministic tests want). After it, Event only queues and returns,
// as Kubernetes' event broadcaster does, and a sink thread writes whatever is
// queued with one Client::CreateMany (in-process: one store commit for the
// lot) — Events are best-effort, and a reconcile no longer waits for a commit
// per Event. Up to `max_queue` Events wait; more are dropped and logged.
// The sink gathers Events for up to `batch_window` after the first of a
// batch (Flush and shutdown cut it short): one wake-up and one commit per
// batch rather than per Event, at the cost of Events appearing that much later.
class ApiEventRecorder : public EventRecorder {
 public:
  ApiEventRecorder(client::Client& client, Clock& clock, std::string component)
      : client_(client), clock_(clock), component_(std::move(component)) {}
  // Writes what is still queued, then stops the sink.
  ~ApiEventRecorder() override;
  void StartAsync(size_t max_queue = 10000, absl::Duration batch_window = absl::Milliseconds(10));
  // Returns once every Event queued before the call is written.
  void Flush();
  void Event(const api::Json& obj, const std::string& type, const std::string& reason,
             const std::string& message) override;
  void AggregatedEvent(const api::Json& obj, const std::string& type, const std::string& reason,
                       const std::string& message) override;
  // As Event, reported by `component` (source.component, reportingComponent)
  // instead of this recorder's own: controllers sharing one sink each name
  // themselves, as Kubernetes' do ("job-controller", "default-scheduler").
  void EventFrom(const std::string& component, const api::Json& obj, const std::string& type,
                 const std::string& reason, const std::string& message,
                 bool aggregate_messages = false);

 private:
  api::Json Build(const std::string& component, const api::Json& obj, const std::string& type,
                  const std::string& reason, const std::string& message,
                  bool aggregate_messages = false) const;
  void Write(std::vector<api::Json> events);
  // A repeat: count + 1 and lastTimestamp on the stored Event.
  void Bump(const std::string& ns, const std::string& name, const std::string& last_timestamp,
            const std::string& message);
  void SinkLoop();

  client::Client& client_;
  Clock& clock_;
  std::string component_;
  absl::Mutex bump_mu_;  // orders this recorder's count updates

  absl::Mutex mu_;
  absl::CondVar cv_;
  std::vector<api::Json> queue_ ABSL_GUARDED_BY(mu_);
  size_t max_queue_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Duration batch_window_ ABSL_GUARDED_BY(mu_) = absl::ZeroDuration();
  int flushing_ ABSL_GUARDED_BY(mu_) = 0;  // Flush calls waiting.
  // Events queued / written so far.
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
