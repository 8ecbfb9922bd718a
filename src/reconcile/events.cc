#include "reconcile/events.h"

#include <algorithm>
#include <functional>
#include <list>
#include <string_view>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/hash/hash.h"
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
  // Recorded (mu_ held): every occurrence, those the spam filter dropped too.
  int64_t count = 1;
  std::string last;   // lastTimestamp of the latest occurrence.
  std::string message;  // Of the latest occurrence (differs only when messages aggregate).
  absl::Time last_seen;
  // What the next write stores: the above as of the latest occurrence the
  // spam filter let through (a dropped one changes what a later write
  // stores, never the one already due).
  int64_t due_count = 0;
  std::string due_last, due_message;
  bool queued = false;        // In queue_ (async).
  uint64_t pending_calls = 0;  // Event calls since it was last taken for a write.
  // Written (write_mu_ held): whether the object exists, and the count
  // stored, less `offset` (a count found on an object created elsewhere).
  bool created = false;
  int64_t written = 0;
  int64_t offset = 0;
  std::string written_message;  // the message stored
};

struct ApiEventRecorder::Snapshot {
  std::shared_ptr<Series> series;
  int64_t count = 0;
  std::string last;
  std::string message;
};

namespace {

// A map of at most `capacity` entries that forgets the least recently used.
template <typename V>
class Lru {
 public:
  explicit Lru(size_t capacity) : capacity_(std::max<size_t>(capacity, 1)) {}
  // The entry of `key`, now the most recently used; nullptr when absent.
  V* Find(const std::string& key) {
    auto it = index_.find(key);
    if (it == index_.end()) return nullptr;
    entries_.splice(entries_.begin(), entries_, it->second);
    return &it->second->second;
  }
  // A new entry for an absent `key`, the most recently used; forgets the
  // least recently used past the capacity.
  V& Add(const std::string& key) {
    entries_.emplace_front(key, V());
    index_[entries_.front().first] = entries_.begin();
    while (entries_.size() > capacity_) {
      index_.erase(entries_.back().first);
      entries_.pop_back();
    }
    return entries_.front().second;
  }
  size_t size() const { return entries_.size(); }

 private:
  using Entry = std::pair<std::string, V>;
  const size_t capacity_;
  std::list<Entry> entries_;  // front: the most recently used
  // Keys view the entries' strings (list nodes do not move).
  absl::flat_hash_map<std::string_view, typename std::list<Entry>::iterator> index_;
};

constexpr char kSep[] = "\x1f";  // between the parts of a key

}  // namespace

// client-go's EventAggregator and EventSourceObjectSpamFilter state.
struct ApiEventRecorder::Correlator {
  // Events of one (object, component, type, reason) with other messages.
  struct Group {
    // Hashes of the distinct messages seen (fewer than similar_max_messages).
    absl::flat_hash_set<size_t> messages;
    absl::Time last;  // the group's latest Event
  };
  // A (component, object)'s token bucket: `credit` / spam_refill tokens.
  struct Bucket {
    absl::Duration credit;
    absl::Time last;  // when `credit` was computed
  };
  Correlator(size_t max_groups, size_t max_buckets) : groups(max_groups), buckets(max_buckets) {}
  Lru<Group> groups;
  Lru<Bucket> buckets;
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
      cache_(std::make_unique<Cache>()),
      correlator_(std::make_unique<Correlator>(opts.max_similar_groups, opts.max_spam_keys)) {}

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

ApiEventRecorder::Stats ApiEventRecorder::GetStats() const {
  absl::MutexLock lock(&mu_);
  Stats st;
  st.combined = combined_;
  st.dropped_spam = dropped_spam_;
  st.dropped_queue_full = dropped_queue_full_;
  st.series = cache_->lru.size();
  st.similar_groups = correlator_->groups.size();
  st.spam_keys = correlator_->buckets.size();
  return st;
}

void ApiEventRecorder::AppendPrometheus(std::string* out) const {
  const Stats st = GetStats();
  absl::StrAppend(
      out,
      "# HELP batchd_events_dropped_total Events the controllers' recorder did not write: over "
      "the per-object spam filter (25 per component and object, then one per 5 minutes) or "
      "over its queue.\n"
      "# TYPE batchd_events_dropped_total counter\n",
      "batchd_events_dropped_total{reason=\"spam_filter\"} ", st.dropped_spam, "\n",
      "batchd_events_dropped_total{reason=\"queue_full\"} ", st.dropped_queue_full, "\n",
      "# HELP batchd_events_combined_total Events counted in a \"(combined from similar "
      "events)\" Event instead of one of their own.\n"
      "# TYPE batchd_events_combined_total counter\n",
      "batchd_events_combined_total ", st.combined, "\n");
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

void ApiEventRecorder::AggregatedEvent(const Json& obj, const std::string& type,
                                       const std::string& reason, const std::string& message) {
  EventFrom(component_, obj, type, reason, message, /*aggregate_messages=*/true);
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
      s->message = ev.value("message", "");
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
  s->message = ev.value("message", "");
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

bool ApiEventRecorder::SimilarLocked(const std::string& group, const std::string& message,
                                     absl::Time now) {
  if (opts_.similar_max_messages == 0) return false;
  Correlator::Group* g = correlator_->groups.Find(group);
  if (g == nullptr) {
    g = &correlator_->groups.Add(group);
  } else if (now - g->last > opts_.similar_window) {
    g->messages.clear();  // quiet for longer than the window: counting starts again
  }
  g->last = now;
  const size_t h = absl::Hash<std::string>{}(message);
  if (g->messages.contains(h)) return false;
  if (g->messages.size() + 1 < opts_.similar_max_messages) {
    g->messages.insert(h);
    return false;
  }
  // The similar_max_messages-th distinct message, or a later one: combined,
  // and not remembered (the set stays at the first ones).
  return true;
}

// A token is `spam_refill` of credit, so the arithmetic is exact: credit
// grows with the time passed, up to `spam_burst` tokens, and an Event takes one.
bool ApiEventRecorder::SpamAllowsLocked(const std::string& source, absl::Time now) {
  if (opts_.spam_burst <= 0 || opts_.spam_refill <= absl::ZeroDuration()) return true;
  const absl::Duration full = opts_.spam_refill * opts_.spam_burst;
  Correlator::Bucket* b = correlator_->buckets.Find(source);
  if (b == nullptr) {
    b = &correlator_->buckets.Add(source);
    b->credit = full;  // a new bucket starts full
  } else if (now > b->last) {
    b->credit = std::min(full, b->credit + (now - b->last));
  }
  b->last = std::max(b->last, now);
  if (b->credit < opts_.spam_refill) return false;
  b->credit -= opts_.spam_refill;
  return true;
}

void ApiEventRecorder::EventFrom(const std::string& component, const Json& obj,
                                 const std::string& type, const std::string& reason,
                                 const std::string& message, bool aggregate_messages) {
  Json ev = Build(component, obj, type, reason, message);
  const Json& m = api::MemberObject(obj, "metadata");
  // The spam filter's key: the component and the involved object.
  const std::string source = absl::StrCat(
      component, kSep, obj.value("apiVersion", ""), kSep, obj.value("kind", ""), kSep,
      m.value("namespace", ""), kSep, m.value("name", ""), kSep, m.value("uid", ""));
  // Similar Events' group: that, the type and the reason.
  const std::string group = absl::StrCat(source, kSep, type, kSep, reason);
  std::shared_ptr<Series> s;
  {
    absl::MutexLock lock(&mu_);
    const absl::Time now = clock_.Now();
    // The series: one per message; one for every message of an
    // AggregatedEvent (\x1e) or of the combined Event (\x1d).
    std::string key;
    if (aggregate_messages) {
      key = absl::StrCat(group, kSep, "\x1e");
    } else if (SimilarLocked(group, message, now)) {
      key = absl::StrCat(group, kSep, "\x1d");
      ev["message"] = absl::StrCat(kCombinedPrefix, message);
      ++combined_;
    } else {
      key = absl::StrCat(group, kSep, message);
    }
    if (sink_.joinable()) {
      auto known = cache_->by_key.find(key);
      const bool needs_slot = known == cache_->by_key.end() || !(*known->second)->queued;
      if (needs_slot && queue_.size() >= max_queue_) {
        ++dropped_queue_full_;
        BATCHD_LOG_WARN("event {} {}: dropped, {} events wait to be written", reason,
                        m.value("name", ""), queue_.size());
        return;
      }
    }
    // Counted even when the spam filter drops it (client-go's order): the
    // series' next write carries it.
    s = RecordLocked(key, std::move(ev));
    if (!SpamAllowsLocked(source, now)) {
      ++dropped_spam_;
      BATCHD_LOG_DEBUG("event {} {}: dropped by the spam filter", reason, m.value("name", ""));
      return;
    }
    s->due_count = s->count;
    s->due_last = s->last;
    s->due_message = s->message;
    if (sink_.joinable()) {
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
      Snapshot snap{s, s->due_count, s->due_last, s->due_message};
      if (!s->created) {
        creates.push_back(std::move(snap));
      } else if (s->written != s->due_count) {
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
      ev["message"] = c.message;
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

void ApiEventRecorder::Written(const Snapshot& s) {
  s.series->written = s.count;
  s.series->written_message = s.message;
}

void ApiEventRecorder::AdoptExisting(const Snapshot& s) {
  Series& series = *s.series;
  const api::KindDef& kind = client_.Kind("", "v1", "events");
  const Json& m = series.event["metadata"];
  auto existing = client_.Get(kind, m.value("namespace", ""), m.value("name", ""));
  if (!existing.ok()) return;
  series.offset = existing->value("count", int64_t{1});
  series.created = true;
  series.written = 0;
  series.written_message = existing->value("message", "");
  Patch(s);
}

void ApiEventRecorder::Patch(const Snapshot& s) {
  Series& series = *s.series;
  const api::KindDef& kind = client_.Kind("", "v1", "events");
  const Json& m = series.event["metadata"];
  const std::string ns = m.value("namespace", ""), name = m.value("name", "");
  Json patch = {{"count", series.offset + s.count}, {"lastTimestamp", s.last}};
  if (s.message != series.written_message) patch["message"] = s.message;
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
    ev["message"] = s.message;
    if (client_.Create(kind, ns, std::move(ev)).ok()) Written(s);
    return;
  }
  BATCHD_LOG_DEBUG("event {}/{}: patch failed: {}", ns, name, r.status().ToString());
}

}  // namespace batchd::reconcile
