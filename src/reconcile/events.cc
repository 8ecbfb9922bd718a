#include "reconcile/events.h"

#include <functional>
#include <list>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "api/json_access.h"
#include "api/meta/time_util.h"
#include "common/logging.h"
#include "common/thread_name.h"

namespace batchd::reconcile {

using api::Json;

struct ApiEventRecorder::Series {
  std::string key;    // The aggregation key (object, component, type, reason, message).
  Json event;         // As first built (count 1); its name and namespace never change.
  // Recorded (mu_ held).
  int64_t count = 1;
  std::string last;   // lastTimestamp of the latest occurrence.
  absl::Time last_seen;
  bool queued = false;        // In queue_ (async).
  uint64_t pending_calls = 0;  // Event calls since it was last taken for a write.
  // Written (write_mu_ held): whether the object exists, and the count
  // stored, less `offset` (a count found on an object created elsewhere).
  bool created = false;
  int64_t written = 0;
  int64_t offset = 0;
};

struct ApiEventRecorder::Snapshot {
  std::shared_ptr<Series> series;
  int64_t count = 0;
  std::string last;
};

struct ApiEventRecorder::Cache {
  // Front: the most recently seen.
  std::list<std::shared_ptr<Series>> lru;
  absl::flat_hash_map<std::string, std::list<std::shared_ptr<Series>>::iterator> by_key;
};

ApiEventRecorder::ApiEventRecorder(client::Client& client, Clock& clock, std::string component)
    : ApiEventRecorder(client, clock, std::move(component), Options()) {}

ApiEventRecorder::ApiEventRecorder(client::Client& client, Clock& clock, std::string component,
                                   Options opts)
    : client_(client),
      clock_(clock),
      component_(std::move(component)),
      opts_(opts),
      cache_(std::make_unique<Cache>()) {}

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

size_t ApiEventRecorder::CachedSeries() const {
  absl::MutexLock lock(&mu_);
  return cache_->lru.size();
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
    std::vector<std::shared_ptr<Series>> batch;
    batch.swap(queue_);
    uint64_t calls = 0;
    for (const auto& s : batch) {
      s->queued = false;
      calls += s->pending_calls;
      s->pending_calls = 0;
    }
    mu_.Unlock();
    {
      absl::MutexLock write(&write_mu_);
      Write(batch);
    }
    mu_.Lock();
    written_ += calls;
    cv_.SignalAll();
  }
}

void ApiEventRecorder::Event(const Json& obj, const std::string& type, const std::string& reason,
                             const std::string& message) {
  EventFrom(component_, obj, type, reason, message);
}

std::shared_ptr<ApiEventRecorder::Series> ApiEventRecorder::RecordLocked(const std::string& key,
                                                                        Json ev) {
  const absl::Time now = clock_.Now();
  Cache& c = *cache_;
  auto it = c.by_key.find(key);
  if (it != c.by_key.end()) {
    std::shared_ptr<Series> s = *it->second;
    if (now - s->last_seen <= opts_.aggregation_window) {
      ++s->count;
      s->last = ev.value("lastTimestamp", "");
      s->last_seen = now;
      c.lru.splice(c.lru.begin(), c.lru, it->second);  // most recently seen
      return s;
    }
    c.lru.erase(it->second);  // expired: a new series (and Event) begins
    c.by_key.erase(it);
  }
  auto s = std::make_shared<Series>();
  s->key = key;
  s->last = ev.value("lastTimestamp", "");
  s->last_seen = now;
  // A name of its own per series: the object's name and a hash of the key
  // and the time the series began (Kubernetes: name.<unix nanos in hex>).
  const size_t h = std::hash<std::string>{}(
      absl::StrCat(key, "@", absl::ToUnixNanos(now)));
  ev["metadata"]["name"] =
      absl::StrCat(ev["involvedObject"].value("name", ""), ".", absl::Hex(h, absl::kZeroPad16));
  s->event = std::move(ev);
  c.lru.push_front(s);
  c.by_key[key] = c.lru.begin();
  while (c.lru.size() > std::max<size_t>(opts_.max_series, 1)) {
    // Least recently seen first. A queued series is still written (the
    // queue holds it); a later repeat starts a new Event.
    c.by_key.erase(c.lru.back()->key);
    c.lru.pop_back();
  }
  return s;
}

void ApiEventRecorder::EventFrom(const std::string& component, const Json& obj,
                                 const std::string& type, const std::string& reason,
                                 const std::string& message) {
  Json ev = Build(component, obj, type, reason, message);
  const Json& m = api::MemberObject(obj, "metadata");
  std::string key = absl::StrCat(obj.value("kind", ""), "\x1f", m.value("namespace", ""), "\x1f",
                                 m.value("name", ""), "\x1f", m.value("uid", ""), "\x1f",
                                 component, "\x1f", type, "\x1f", reason, "\x1f", message);
  std::shared_ptr<Series> s;
  {
    absl::MutexLock lock(&mu_);
    if (sink_.joinable()) {
      auto known = cache_->by_key.find(key);
      const bool needs_slot = known == cache_->by_key.end() || !(*known->second)->queued;
      if (needs_slot && queue_.size() >= max_queue_) {
        BATCHD_LOG_WARN("event {} {}: dropped, {} events wait to be written", reason,
                        m.value("name", ""), queue_.size());
        return;
      }
      s = RecordLocked(key, std::move(ev));
      ++s->pending_calls;
      ++enqueued_;
      if (!s->queued) {
        s->queued = true;
        const bool was_empty = queue_.empty();
        queue_.push_back(s);
        if (was_empty) cv_.SignalAll();
      }
      return;
    }
    s = RecordLocked(key, std::move(ev));
  }
  absl::MutexLock write(&write_mu_);
  Write({s});
}

Json ApiEventRecorder::Build(const std::string& component, const Json& obj,
                             const std::string& type, const std::string& reason,
                             const std::string& message) const {
  const Json& m = api::MemberObject(obj, "metadata");  // No copy.
  std::string ns = m.value("namespace", "");
  if (ns.empty()) ns = "default";
  std::string name = m.value("name", "");
  std::string now = api::meta::FormatRfc3339(clock_.Now());
  return {{"apiVersion", "v1"},
          {"kind", "Event"},
          {"metadata", {{"name", name}, {"namespace", ns}}},
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

// New series are created together (one CreateMany); a series already
// written gets one merge patch of its count and lastTimestamp however many
// repeats it gathered; a series with nothing new costs nothing.
void ApiEventRecorder::Write(const std::vector<std::shared_ptr<Series>>& series) {
  std::vector<Snapshot> creates, patches;
  {
    absl::MutexLock lock(&mu_);
    for (const auto& s : series) {
      Snapshot snap{s, s->count, s->last};
      if (!s->created) {
        creates.push_back(std::move(snap));
      } else if (s->written != s->count) {
        patches.push_back(std::move(snap));
      }
    }
  }
  const api::KindDef& kind = client_.Kind("", "v1", "events");
  if (!creates.empty()) {
    std::vector<std::pair<std::string, Json>> objs;
    objs.reserve(creates.size());
    for (const Snapshot& c : creates) {
      Json ev = c.series->event;
      ev["count"] = c.count;
      ev["lastTimestamp"] = c.last;
      std::string ns = ev["metadata"].value("namespace", "");
      objs.emplace_back(std::move(ns), std::move(ev));
    }
    std::vector<absl::StatusOr<Json>> r = client_.CreateMany(kind, std::move(objs));
    for (size_t i = 0; i < r.size() && i < creates.size(); ++i) {
      if (r[i].ok()) {
        creates[i].series->created = true;
        Written(creates[i]);
      } else if (absl::IsAlreadyExists(r[i].status())) {
        AdoptExisting(creates[i]);
      } else {
        BATCHD_LOG_DEBUG("event {}: {}", creates[i].series->event["metadata"].value("name", ""),
                         r[i].status().ToString());
      }
    }
  }
  for (const Snapshot& p : patches) Patch(p);
}

void ApiEventRecorder::Written(const Snapshot& s) { s.series->written = s.count; }

void ApiEventRecorder::AdoptExisting(const Snapshot& s) {
  Series& series = *s.series;
  const api::KindDef& kind = client_.Kind("", "v1", "events");
  const Json& m = series.event["metadata"];
  auto existing = client_.Get(kind, m.value("namespace", ""), m.value("name", ""));
  if (!existing.ok()) return;
  series.offset = existing->value("count", int64_t{1});
  series.created = true;
  series.written = 0;
  Patch(s);
}

void ApiEventRecorder::Patch(const Snapshot& s) {
  Series& series = *s.series;
  const api::KindDef& kind = client_.Kind("", "v1", "events");
  const Json& m = series.event["metadata"];
  const std::string ns = m.value("namespace", ""), name = m.value("name", "");
  Json patch = {{"count", series.offset + s.count}, {"lastTimestamp", s.last}};
  auto r = client_.MergePatch(kind, ns, name, patch, /*status=*/false);
  if (r.ok()) {
    Written(s);
    return;
  }
  if (absl::IsNotFound(r.status())) {
    // Gone (expired or deleted): the series goes on in a new object, as
    // client-go creates an Event whose patch found nothing.
    Json ev = series.event;
    ev["count"] = series.offset + s.count;
    ev["lastTimestamp"] = s.last;
    if (client_.Create(kind, ns, std::move(ev)).ok()) Written(s);
    return;
  }
  BATCHD_LOG_DEBUG("event {}/{}: patch failed: {}", ns, name, r.status().ToString());
}

}  // namespace batchd::reconcile
