#include "controllers/gc/event_ttl.h"

#include <algorithm>
#include <functional>
#include <unordered_set>
#include <vector>

#include "api/meta/time_util.h"
#include "common/logging.h"

namespace batchd::controllers {

using api::Json;

namespace {

constexpr int64_t kSweepPage = 1000;

uint64_t KeyHash(const std::string& key) { return std::hash<std::string>{}(key); }

absl::Duration SweepInterval(absl::Duration ttl) {
  return std::clamp(ttl / 10, absl::Seconds(1), absl::Minutes(1));
}

// The newest timestamp an Event carries: when it was last written.
absl::Time LastWrite(const Json& ev) {
  absl::Time last = absl::InfinitePast();
  auto take = [&](const Json* v) {
    if (v == nullptr || !v->is_string()) return;
    absl::StatusOr<absl::Time> t = api::meta::ParseRfc3339(v->get<std::string>());
    if (t.ok()) last = std::max(last, *t);
  };
  const Json& meta = ev.contains("metadata") ? ev["metadata"] : Json::object();
  take(meta.contains("creationTimestamp") ? &meta["creationTimestamp"] : nullptr);
  for (const char* f : {"firstTimestamp", "lastTimestamp", "eventTime"}) {
    take(ev.contains(f) ? &ev[f] : nullptr);
  }
  if (ev.contains("series") && ev["series"].is_object() &&
      ev["series"].contains("lastObservedTime")) {
    take(&ev["series"]["lastObservedTime"]);
  }
  return last;
}

}  // namespace

EventTtlSweeper::EventTtlSweeper(registry::Registry& registry, Clock& clock, absl::Duration ttl)
    : registry_(registry),
      clock_(clock),
      ttl_(ttl),
      interval_(SweepInterval(ttl)),
      worker_(clock, ttl > absl::ZeroDuration() ? interval_ : absl::ZeroDuration(),
              [this] { Sweep(); }) {}

int EventTtlSweeper::Sweep() {
  const api::KindDef* events = registry_.scheme().ByResource("", "v1", "events");
  if (events == nullptr || ttl_ <= absl::ZeroDuration()) return 0;
  absl::MutexLock lock(&mu_);
  const absl::Time now = clock_.Now();
  std::unordered_set<uint64_t> present;
  int deleted = 0;
  // In pages: the watch cache does not keep Events, so a list reads them
  // from the store, and one page at a time bounds what that holds.
  registry::ListOptions page;
  page.limit = kSweepPage;
  for (;;) {
    auto list = registry_.List(*events, "", page);
    if (!list.ok()) {
      BATCHD_LOG_WARN("event ttl: listing events failed: {}", list.status().ToString());
      return deleted;  // seen_ is pruned after a whole sweep only
    }
    for (const registry::ObjectPtr& o : list->items) {
      const uint64_t h = KeyHash(o->key);
      present.insert(h);
      auto it = seen_.find(h);
      absl::Time last;
      if (it != seen_.end() && it->second.first == o->revision) {
        last = it->second.second;
      } else {
        // An Event with no readable timestamp counts from when it was first seen.
        last = LastWrite(*o->Shared());
        if (last == absl::InfinitePast()) last = now;
        seen_[h] = {o->revision, last};
      }
      if (now - last < ttl_) continue;
      Json ev = o->Decode();
      const Json& meta = ev["metadata"];
      registry::DeleteOptions d;
      d.precondition_resource_version = std::to_string(o->revision);
      auto r = registry_.Delete(*events, meta.value("namespace", ""), meta.value("name", ""), d);
      if (r.ok()) {
        ++deleted;
        seen_.erase(h);
        present.erase(h);
      }
      // A conflict (renewed meanwhile) or NotFound: judged again next sweep.
    }
    if (list->continue_token.empty()) break;
    page.continue_token = std::move(list->continue_token);
  }
  for (auto it = seen_.begin(); it != seen_.end();) {
    it = present.count(it->first) ? std::next(it) : seen_.erase(it);
  }
  return deleted;
}

}  // namespace batchd::controllers
