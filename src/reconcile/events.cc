#include "reconcile/events.h"

#include <functional>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "api/json_access.h"
#include "api/meta/time_util.h"
#include "common/logging.h"
#include "common/thread_name.h"

namespace batchd::reconcile {

using api::Json;

ApiEventRecorder::~ApiEventRecorder() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  cv_.SignalAll();
  if (sink_.joinable()) sink_.join();
}

void ApiEventRecorder::StartAsync(size_t max_queue, absl::Duration batch_window) {
  absl::MutexLock lock(&mu_);
  if (sink_.joinable()) return;
  max_queue_ = max_queue;
  batch_window_ = batch_window;
  sink_ = std::thread([this] { SinkLoop(); });
}

void ApiEventRecorder::Flush() {
  absl::MutexLock lock(&mu_);
  const uint64_t target = enqueued_;
  ++flushing_;
  cv_.SignalAll();  // ends the sink's batch window
  while (written_ < target && sink_.joinable()) cv_.Wait(&mu_);
  --flushing_;
}

void ApiEventRecorder::SinkLoop() {
  SetThreadName("event-sink");
  absl::MutexLock lock(&mu_);
  for (;;) {
    while (!stopping_ && queue_.empty()) cv_.Wait(&mu_);
    if (queue_.empty()) return;  // stopping, and everything is written
    // Let the batch fill: producers queue without waking the sink meanwhile.
    const absl::Time window_end = absl::Now() + batch_window_;
    while (!stopping_ && flushing_ == 0 && queue_.size() < max_queue_ / 2 &&
           !cv_.WaitWithDeadline(&mu_, window_end)) {
    }
    std::vector<Json> batch;
    batch.swap(queue_);
    mu_.Unlock();
    const size_t n = batch.size();
    Write(std::move(batch));
    mu_.Lock();
    written_ += n;
    cv_.SignalAll();
  }
}

void ApiEventRecorder::Event(const Json& obj, const std::string& type, const std::string& reason,
                             const std::string& message) {
  EventFrom(component_, obj, type, reason, message);
}

void ApiEventRecorder::AggregatedEvent(const Json& obj, const std::string& type,
                                       const std::string& reason, const std::string& message) {
  EventFrom(component_, obj, type, reason, message, /*aggregate_messages=*/true);
}

void ApiEventRecorder::EventFrom(const std::string& component, const Json& obj,
                                 const std::string& type, const std::string& reason,
                                 const std::string& message, bool aggregate_messages) {
  Json ev = Build(component, obj, type, reason, message, aggregate_messages);
  {
    absl::MutexLock lock(&mu_);
    if (sink_.joinable()) {
      if (queue_.size() >= max_queue_) {
        BATCHD_LOG_WARN("event {} {}: dropped, {} events wait to be written", reason,
                        ev["metadata"].value("name", ""), queue_.size());
        return;
      }
      const bool was_empty = queue_.empty();
      queue_.push_back(std::move(ev));
      ++enqueued_;
      if (was_empty) cv_.SignalAll();
      return;
    }
  }
  std::vector<Json> one;
  one.push_back(std::move(ev));
  Write(std::move(one));
}

Json ApiEventRecorder::Build(const std::string& component, const Json& obj,
                             const std::string& type, const std::string& reason,
                             const std::string& message, bool aggregate_messages) const {
  const Json& m = api::MemberObject(obj, "metadata");  // No copy.
  std::string ns = m.value("namespace", "");
  if (ns.empty()) ns = "default";
  std::string name = m.value("name", "");
  // A stable name per (object, type, reason, message) so repeats aggregate
  // (per (object, type, reason) when messages aggregate too).
  size_t h = std::hash<std::string>{}(absl::StrCat(m.value("uid", ""), component, type, reason,
                                                   aggregate_messages ? "" : message));
  std::string event_name = absl::StrCat(name, ".", absl::Hex(h, absl::kZeroPad16));
  std::string now = api::meta::FormatRfc3339(clock_.Now());
  return {{"apiVersion", "v1"},
          {"kind", "Event"},
          {"metadata", {{"name", event_name}, {"namespace", ns}}},
          {"involvedObject",
           {{"apiVersion", obj.value("apiVersion", "")},
            {"kind", obj.value("kind", "")},
            {"name", name},
            {"namespace", m.value("namespace", "")},
            {"uid", m.value("uid", "")},
            {"resourceVersion", m.value("resourceVersion", "")}}},
          {"reason", reason},
          {"message", message},
          {"type", type},
          {"source", {{"component", component}}},
          {"reportingComponent", component},
          {"firstTimestamp", now},
          {"lastTimestamp", now},
          {"count", 1}};
}

// Most Events are new: create them all first; only a repeat (AlreadyExists,
// also a second copy within `events`) is read and counted.
void ApiEventRecorder::Write(std::vector<Json> events) {
  const api::KindDef& kind = client_.Kind("", "v1", "events");
  struct Ref {
    std::string ns, name, last, message;
  };
  std::vector<Ref> refs;
  std::vector<std::pair<std::string, Json>> objs;
  refs.reserve(events.size());
  objs.reserve(events.size());
  for (Json& ev : events) {
    const Json& m = ev["metadata"];
    refs.push_back({m.value("namespace", ""), m.value("name", ""), ev.value("lastTimestamp", ""),
                    ev.value("message", "")});
    objs.emplace_back(refs.back().ns, std::move(ev));
  }
  std::vector<absl::StatusOr<Json>> r = client_.CreateMany(kind, std::move(objs));
  for (size_t i = 0; i < r.size(); ++i) {
    if (r[i].ok()) continue;
    if (absl::IsAlreadyExists(r[i].status())) {
      Bump(refs[i].ns, refs[i].name, refs[i].last, refs[i].message);
    } else {
      BATCHD_LOG_DEBUG("event {}/{}: {}", refs[i].ns, refs[i].name, r[i].status().ToString());
    }
  }
}

void ApiEventRecorder::Bump(const std::string& ns, const std::string& name,
                            const std::string& last_timestamp, const std::string& message) {
  const api::KindDef& kind = client_.Kind("", "v1", "events");
  absl::MutexLock lock(&bump_mu_);
  auto existing = client_.Get(kind, ns, name);
  if (!existing.ok()) return;
  Json e = *std::move(existing);
  e["count"] = e.value("count", 1) + 1;
  e["lastTimestamp"] = last_timestamp;
  e["message"] = message;  // The same, or the latest of an aggregated reason.
  if (!client_.Update(kind, e).ok()) {
    BATCHD_LOG_DEBUG("event {}/{}: update failed", ns, name);
  }
}

}  // namespace batchd::reconcile
