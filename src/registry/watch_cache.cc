#include "registry/watch_cache.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "common/logging.h"

namespace batchd::registry {

using api::Json;

std::string StoreKey(const api::KindDef& k, std::string_view ns, std::string_view name) {
  std::string key = absl::StrCat("/registry/", k.group.empty() ? "core" : k.group, "/", k.plural,
                                 "/");
  if (k.namespaced && !ns.empty()) absl::StrAppend(&key, std::string(ns), "/");
  absl::StrAppend(&key, std::string(name));
  return key;
}

std::string CollectionPrefix(const api::KindDef& k, std::string_view ns) {
  return StoreKey(k, ns, "");
}

namespace {

// Finds the offset just after the `{` opening the top-level "metadata" object,
// or npos. Scans tokens, skipping strings, tracking depth.
size_t FindTopLevelMetadata(const std::string& s) {
  int depth = 0;
  size_t i = 0;
  const size_t n = s.size();
  while (i < n) {
    char c = s[i];
    if (c == '"') {
      size_t start = i + 1;
      ++i;
      while (i < n && s[i] != '"') i += (s[i] == '\\') ? 2 : 1;
      size_t end = i;
      ++i;
      if (depth == 1 && end - start == 8 && s.compare(start, 8, "metadata") == 0) {
        size_t j = i;
        while (j < n && (s[j] == ' ' || s[j] == ':' || s[j] == '\n')) ++j;
        if (j < n && s[j] == '{') return j + 1;
      }
      continue;
    }
    if (c == '{' || c == '[') ++depth;
    if (c == '}' || c == ']') --depth;
    ++i;
  }
  return std::string::npos;
}

}  // namespace

std::string SpliceResourceVersion(const std::string& json, int64_t rv) {
  size_t at = FindTopLevelMetadata(json);
  if (at == std::string::npos) return json;
  std::string field = absl::StrCat("\"resourceVersion\":\"", rv, "\"");
  bool empty = at < json.size() && json[at] == '}';
  std::string out;
  out.reserve(json.size() + field.size() + 1);
  out.append(json, 0, at);
  out.append(field);
  if (!empty) out.push_back(',');
  out.append(json, at, std::string::npos);
  return out;
}

Json CachedObject::Decode() const {
  std::shared_ptr<const Json> d;
  {
    absl::MutexLock lock(&decoded_mu_);
    d = decoded_.lock();
  }
  return d ? *d : Json::parse(json, nullptr, false);
}

std::shared_ptr<const Json> CachedObject::SharedLocked() const {
  std::shared_ptr<const Json> d = decoded_.lock();
  if (!d) {
    d = std::make_shared<const Json>(Json::parse(json, nullptr, false));
    decoded_ = d;
  }
  return d;
}

void CachedObject::ExtractLocked() const {
  if (extracted_) return;
  std::shared_ptr<const Json> d = SharedLocked();
  const Json& j = *d;
  if (j.is_object() && j.contains("metadata") && j["metadata"].is_object()) {
    const Json& m = j["metadata"];
    if (m.contains("labels") && m["labels"].is_object()) {
      for (const auto& [k, v] : m["labels"].items()) {
        if (v.is_string()) labels_[k] = v.get<std::string>();
      }
    }
    fields_["metadata.name"] = m.value("name", "");
    fields_["metadata.namespace"] = m.value("namespace", "");
    if (kind && kind->field_value) {
      for (const auto& f : kind->selectable_fields) fields_[f] = kind->field_value(j, f);
    }
  }
  extracted_ = true;
}

const std::map<std::string, std::string>& CachedObject::labels() const {
  absl::MutexLock lock(&decoded_mu_);
  ExtractLocked();
  return labels_;
}

const std::map<std::string, std::string>& CachedObject::fields() const {
  absl::MutexLock lock(&decoded_mu_);
  ExtractLocked();
  return fields_;
}

std::shared_ptr<const Json> CachedObject::Shared() const {
  absl::MutexLock lock(&decoded_mu_);
  return SharedLocked();
}

std::shared_ptr<const Json> CachedObject::TakeHeld() const {
  absl::MutexLock lock(&decoded_mu_);
  std::shared_ptr<const Json> d = held_;
  if (d && --held_readers_ <= 0) held_.reset();
  return d;
}

WatchCache::DecodedOffer::DecodedOffer(DecodedOffer&& o) noexcept
    : cache_(o.cache_), entry_(std::move(o.entry_)) {
  o.cache_ = nullptr;
}

WatchCache::DecodedOffer& WatchCache::DecodedOffer::operator=(DecodedOffer&& o) noexcept {
  if (this != &o) {
    Withdraw();
    cache_ = o.cache_;
    entry_ = std::move(o.entry_);
    o.cache_ = nullptr;
  }
  return *this;
}

WatchCache::DecodedOffer::~DecodedOffer() { Withdraw(); }

void WatchCache::DecodedOffer::Withdraw() {
  if (!cache_ || !entry_) return;
  absl::MutexLock lock(&cache_->offers_mu_);
  auto [lo, hi] = cache_->offers_.equal_range(entry_->key);
  for (auto it = lo; it != hi; ++it) {
    if (it->second == entry_.get()) {
      cache_->offers_.erase(it);
      break;
    }
  }
  entry_.reset();
}

WatchCache::DecodedOffer WatchCache::OfferDecoded(const std::string& key,
                                                  const std::string& bytes,
                                                  const Json& decoded) {
  if (!WantsDecoded(key)) return DecodedOffer();
  return Offer(key, bytes, decoded);
}

WatchCache::DecodedOffer WatchCache::OfferDecoded(const std::string& key,
                                                  const std::string& bytes, Json&& decoded) {
  if (!WantsDecoded(key)) return DecodedOffer();
  return Offer(key, bytes, std::move(decoded));
}

bool WatchCache::WantsDecoded(const std::string& key) const {
  absl::MutexLock lock(&mu_);
  return DecodingSubscribersLocked(key) > 0;
}

WatchCache::DecodedOffer WatchCache::Offer(const std::string& key, const std::string& bytes,
                                           Json decoded) {
  DecodedOffer offer;
  offer.cache_ = this;
  offer.entry_ =
      std::make_unique<DecodedOffer::Entry>(DecodedOffer::Entry{key, bytes, std::move(decoded)});
  absl::MutexLock lock(&offers_mu_);
  offers_.emplace(key, offer.entry_.get());
  return offer;
}

int WatchCache::DecodingSubscribersLocked(const std::string& key) const {
  return static_cast<int>(std::count_if(subs_.begin(), subs_.end(), [&](const Subscription* s) {
    return s->decodes_ && absl::StartsWith(key, s->prefix_);
  }));
}

std::optional<Json> WatchCache::TakeOffer(const std::string& key, const std::string& bytes) {
  absl::MutexLock lock(&offers_mu_);
  auto [lo, hi] = offers_.equal_range(key);
  for (auto it = lo; it != hi; ++it) {
    if (it->second->bytes == bytes) {
      std::optional<Json> d(std::move(it->second->decoded));
      offers_.erase(it);  // the offer's Withdraw no longer finds it
      return d;
    }
  }
  return std::nullopt;
}

WatchCache::Subscription::~Subscription() {
  if (cache_) cache_->Unsubscribe(this);
}

bool WatchCache::Subscription::Next(CacheEvent* ev, absl::Duration timeout) {
  taken_decoded_.reset();  // the consumer is done with the previous event
  if (taken_.empty()) {
    if (timeout <= absl::ZeroDuration() && !ready_.load(std::memory_order_acquire)) return false;
    // Takes everything queued at once: a consumer that fell behind then
    // drains without locking against the writers for each event.
    absl::MutexLock lock(&mu_);
    const absl::Time deadline =
        timeout > absl::ZeroDuration() ? absl::Now() + timeout : absl::InfinitePast();
    // A zero timeout (single-threaded pumps: tests, `batchd simulate`) does
    // not wait at all: a timed futex wait costs ~100 us even when past due.
    while (queue_.empty() && !closed_ && timeout > absl::ZeroDuration() &&
           !cv_.WaitWithDeadline(&mu_, deadline)) {
    }
    if (queue_.empty()) return false;
    taken_.swap(queue_);
    ready_.store(closed_, std::memory_order_release);
  }
  *ev = std::move(taken_.front());
  taken_.pop_front();
  last_rev_ = std::max(last_rev_, ev->revision);
  if (decodes_ && ev->object) {
    taken_decoded_ = ev->object->TakeHeld();
  }
  return true;
}

int64_t WatchCache::Subscription::BookmarkRevision() const {
  if (!taken_.empty()) return last_rev_;
  WatchCache* cache = nullptr;
  {
    absl::MutexLock lock(&mu_);
    if (!queue_.empty() || closed_ || store_fed_) return last_rev_;
    cache = cache_;
  }
  if (cache == nullptr) return last_rev_;
  // Lock order: the cache's, then ours. With nothing queued for us under the
  // cache's lock, every change up to its revision has been returned.
  absl::MutexLock cache_lock(&cache->mu_);
  absl::MutexLock lock(&mu_);
  if (!queue_.empty() || closed_) return last_rev_;
  return std::max(last_rev_, cache->revision_);
}

bool WatchCache::Subscription::closed() const {
  if (!ready_.load(std::memory_order_acquire)) return false;  // Open (and nothing queued).
  absl::MutexLock lock(&mu_);
  return closed_ && queue_.empty() && taken_.empty();
}

// One WaitForRevision call. Shared with its timer, which may fire after the
// call returned; it only touches this (never the cache).
struct WatchCache::RevisionWaiter {
  absl::Mutex mu;
  absl::CondVar cv;
  bool reached ABSL_GUARDED_BY(mu) = false;
  bool expired ABSL_GUARDED_BY(mu) = false;
};

WatchCache::WatchCache(store::Store& store, std::shared_ptr<const api::Scheme> scheme,
                       size_t ring_capacity, size_t max_queue, size_t ring_bytes)
    : store_(store), scheme_(std::move(scheme)), ring_capacity_(ring_capacity),
      max_queue_(max_queue), ring_max_bytes_(ring_bytes) {}

WatchCache::~WatchCache() {
  handle_.reset();
  absl::MutexLock lock(&mu_);
  for (Subscription* s : subs_) {
    absl::MutexLock slock(&s->mu_);
    s->closed_ = true;
    s->ready_.store(true, std::memory_order_release);
    s->cache_ = nullptr;
    s->cv_.SignalAll();
  }
}

const api::KindDef* WatchCache::KindForKey(const std::string& key) const {
  // /registry/<group>/<plural>/...
  if (!absl::StartsWith(key, "/registry/")) return nullptr;
  size_t g0 = 10;
  size_t g1 = key.find('/', g0);
  if (g1 == std::string::npos) return nullptr;
  size_t p1 = key.find('/', g1 + 1);
  if (p1 == std::string::npos) return nullptr;
  std::string_view group(key.data() + g0, g1 - g0);
  std::string_view plural(key.data() + g1 + 1, p1 - g1 - 1);
  if (group == "core") group = "";
  for (const auto& k : scheme_->All()) {
    if (k->group == group && k->plural == plural) return k.get();
  }
  return nullptr;
}

ObjectPtr WatchCache::MakeObject(const std::string& key, std::string json,
                                 int64_t revision) const {
  return NewObject(key, json, revision);
}

std::shared_ptr<CachedObject> WatchCache::NewObject(const std::string& key,
                                                    const std::string& json,
                                                    int64_t revision) const {
  auto obj = std::make_shared<CachedObject>();
  obj->key = key;
  obj->revision = revision;
  obj->kind = KindForKey(key);
  obj->json = SpliceResourceVersion(json, revision);
  return obj;
}

bool WatchCache::Cached(std::string_view key) {
  return !key.starts_with("/registry/core/events/");
}

size_t WatchCache::RingCost(const CacheEvent& ev) {
  // An object's bytes, key and record (a small Event's record is half its size).
  auto cost = [](const CachedObject& o) { return sizeof(o) + o.key.size() + o.json.size(); };
  size_t n = cost(*ev.object);
  if (ev.prev && !Cached(ev.object->key)) n += cost(*ev.prev);
  return n;
}

absl::Status WatchCache::Start() {
  auto range = store_.Range("/registry/", "", 0);
  if (!range.ok()) return range.status();
  {
    absl::MutexLock lock(&mu_);
    for (auto& kv : range->kvs) {
      if (!Cached(kv.key)) continue;
      objects_[kv.key] = MakeObject(kv.key, std::move(kv.value), kv.mod_revision);
    }
    revision_ = range->revision;
    oldest_ = range->revision;
  }
  auto h = store_.Watch("/registry/", range->revision,
                        [this](const store::Event& e) { OnStoreEvent(e); });
  if (!h.ok()) return h.status();
  handle_ = std::move(*h);
  return absl::OkStatus();
}

void WatchCache::OnStoreEvent(const store::Event& e) {
  CacheEvent ev;
  ev.revision = e.revision();
  std::shared_ptr<CachedObject> obj = NewObject(e.kv.key, e.kv.value, e.kv.mod_revision);
  ev.object = obj;
  // A write's decoding, offered by the registry (a delete's too, when its
  // last state is a final write).
  std::optional<Json> offered = TakeOffer(e.kv.key, e.kv.value);
  const bool cached = Cached(e.kv.key);
  if (!offered && e.type != store::Event::Type::kPut && cached && e.kv.value == e.prev.value) {
    // A plain delete's last state is the version before it: while a reader
    // still holds that version's decoding, it is copied rather than the
    // bytes parsed again for every watcher's delete event.
    ObjectPtr last;
    {
      absl::MutexLock lock(&mu_);
      auto it = objects_.find(e.kv.key);
      if (it != objects_.end() && DecodingSubscribersLocked(e.kv.key) > 0) last = it->second;
    }
    if (last) {
      std::shared_ptr<const Json> d;
      {
        absl::MutexLock obj_lock(&last->decoded_mu_);
        d = last->decoded_.lock();
      }
      if (d) offered = *d;
    }
  }
  if (!cached && !e.prev.key.empty()) {
    // Not kept: the previous state comes with the store's event.
    ev.prev = NewObject(e.prev.key, e.prev.value, e.prev.mod_revision);
  }
  absl::MutexLock lock(&mu_);
  if (offered) {
    // Held for the in-process subscribers it is sent to, set before any sees it.
    const int readers = DecodingSubscribersLocked(e.kv.key);
    if (readers > 0 && offered->is_object()) {
      (*offered)["metadata"]["resourceVersion"] = std::to_string(e.kv.mod_revision);
      absl::MutexLock obj_lock(&obj->decoded_mu_);  // Uncontended: no reader has it yet.
      obj->held_ = std::make_shared<const Json>(*std::move(offered));
      obj->decoded_ = obj->held_;
      obj->held_readers_ = readers;
    }
  }
  if (cached) {
    auto it = objects_.find(e.kv.key);
    if (it != objects_.end()) ev.prev = it->second;
    if (e.type == store::Event::Type::kPut) {
      objects_[e.kv.key] = ev.object;
    } else if (it != objects_.end()) {
      objects_.erase(it);
    }
  }
  ev.type = e.type != store::Event::Type::kPut ? CacheEvent::Type::kDeleted
            : ev.prev                          ? CacheEvent::Type::kModified
                                               : CacheEvent::Type::kAdded;
  revision_ = std::max(revision_, ev.revision);
  while (!revision_waiters_.empty() && revision_waiters_.begin()->first <= revision_) {
    RevisionWaiter& w = *revision_waiters_.begin()->second;
    {
      absl::MutexLock wlock(&w.mu);
      w.reached = true;
      w.cv.Signal();
    }
    revision_waiters_.erase(revision_waiters_.begin());
  }
  for (Subscription* s : subs_) {
    if (s->store_fed_ || !absl::StartsWith(e.kv.key, s->prefix_)) continue;
    if (ev.revision <= s->skip_through_) continue;
    absl::MutexLock slock(&s->mu_);
    if (s->closed_) continue;
    if (s->queue_.size() >= max_queue_) {
      s->closed_ = true;
      s->close_reason_ = "watcher fell too far behind";
    } else {
      s->queue_.push_back(ev);
    }
    s->ready_.store(true, std::memory_order_release);
    s->cv_.SignalAll();
  }
  ring_bytes_ += RingCost(ev);
  ring_.push_back(std::move(ev));
  while (!ring_.empty() && (ring_.size() > ring_capacity_ || ring_bytes_ > ring_max_bytes_)) {
    oldest_ = ring_.front().revision;
    ring_bytes_ -= RingCost(ring_.front());
    ring_.pop_front();
  }
}

size_t WatchCache::RingSize() const {
  absl::MutexLock lock(&mu_);
  return ring_.size();
}

size_t WatchCache::RingBytes() const {
  absl::MutexLock lock(&mu_);
  return ring_bytes_;
}

int64_t WatchCache::Revision() const {
  absl::MutexLock lock(&mu_);
  return revision_;
}

bool WatchCache::WaitForRevision(int64_t revision, Clock& clock, absl::Duration max_wait) {
  {
    absl::MutexLock lock(&mu_);
    if (revision_ >= revision) return true;
    if (max_wait <= absl::ZeroDuration()) return false;
  }
  auto w = std::make_shared<RevisionWaiter>();
  // The timer first: once registered, a waiter's deadline is set.
  const Clock::TimerId timer = clock.ScheduleAfter(max_wait, [w] {
    absl::MutexLock lock(&w->mu);
    w->expired = true;
    w->cv.Signal();
  });
  {
    absl::MutexLock lock(&mu_);
    if (revision_ >= revision) {
      clock.Cancel(timer);
      return true;
    }
    revision_waiters_.emplace(revision, w);
  }
  // Real time bounds the wait too: a virtual clock may never get there.
  const absl::Time backstop = absl::Now() + max_wait;
  bool reached = false;
  {
    absl::MutexLock lock(&w->mu);
    while (!w->reached && !w->expired && !w->cv.WaitWithDeadline(&w->mu, backstop)) {
    }
    reached = w->reached;
  }
  clock.Cancel(timer);
  if (!reached) {
    absl::MutexLock lock(&mu_);
    // Reached meanwhile (OnStoreEvent removed it), or still waiting: remove.
    for (auto [it, end] = revision_waiters_.equal_range(revision); it != end; ++it) {
      if (it->second == w) {
        revision_waiters_.erase(it);
        break;
      }
    }
    reached = revision_ >= revision;
  }
  return reached;
}

size_t WatchCache::RevisionWaiters() const {
  absl::MutexLock lock(&mu_);
  return revision_waiters_.size();
}

ObjectPtr WatchCache::Get(const std::string& key) const {
  if (!Cached(key)) {
    auto kv = store_.Get(key);
    if (!kv.ok()) {
      if (!absl::IsNotFound(kv.status())) {
        BATCHD_LOG_WARN("watch cache: reading {} from the store: {}", key, kv.status().ToString());
      }
      return nullptr;
    }
    return NewObject(key, std::move(kv->value), kv->mod_revision);
  }
  absl::MutexLock lock(&mu_);
  auto it = objects_.find(key);
  return it == objects_.end() ? nullptr : it->second;
}

std::vector<ObjectPtr> WatchCache::List(const std::string& prefix, const std::string& start_after,
                                        size_t limit, bool* more, int64_t* revision) const {
  std::vector<ObjectPtr> out;
  if (!Cached(prefix)) {
    // At the cache's revision: a watch from it then misses nothing.
    const int64_t rev = Revision();
    auto r = store_.RangeAtRevision(prefix, start_after, static_cast<int64_t>(limit), rev);
    if (!r.ok()) {
      BATCHD_LOG_WARN("watch cache: listing {} from the store: {}", prefix, r.status().ToString());
      if (more) *more = false;
      if (revision) *revision = rev;
      return out;
    }
    out.reserve(r->kvs.size());
    for (auto& kv : r->kvs) out.push_back(NewObject(kv.key, std::move(kv.value), kv.mod_revision));
    if (more) *more = r->more;
    if (revision) *revision = rev;
    return out;
  }
  absl::MutexLock lock(&mu_);
  auto it = start_after.empty() ? objects_.lower_bound(prefix) : objects_.upper_bound(start_after);
  if (more) *more = false;
  for (; it != objects_.end() && absl::StartsWith(it->first, prefix); ++it) {
    if (limit > 0 && out.size() == limit) {
      if (more) *more = true;
      break;
    }
    out.push_back(it->second);
  }
  if (revision) *revision = revision_;
  return out;
}

std::optional<size_t> WatchCache::Count(const std::string& prefix,
                                        const std::string& start_after) const {
  if (!Cached(prefix)) return std::nullopt;
  absl::MutexLock lock(&mu_);
  size_t n = 0;
  auto it = start_after.empty() ? objects_.lower_bound(prefix) : objects_.upper_bound(start_after);
  for (; it != objects_.end() && absl::StartsWith(it->first, prefix); ++it) ++n;
  return n;
}

absl::StatusOr<std::unique_ptr<WatchCache::Subscription>> WatchCache::Watch(
    const std::string& prefix, int64_t after_revision, bool decodes) {
  auto sub = std::make_unique<Subscription>();
  sub->cache_ = this;
  sub->prefix_ = prefix;
  sub->decodes_ = decodes;
  {
    absl::MutexLock lock(&mu_);
    // Lock order: the cache's mu_, then a subscription's (as Publish does).
    absl::MutexLock sub_lock(&sub->mu_);
    sub->last_rev_ = after_revision >= 0 ? after_revision : revision_;
    // From a revision not reached yet (written through another server):
    // events up to it are not sent when they arrive, as kube-apiserver's
    // cacher watches do.
    if (after_revision > revision_) sub->skip_through_ = after_revision;
    if (after_revision < 0 || after_revision >= oldest_) {
      if (after_revision >= 0) {
        for (const auto& ev : ring_) {
          if (ev.revision > after_revision && absl::StartsWith(ev.object->key, prefix)) {
            sub->queue_.push_back(ev);
            sub->ready_.store(true, std::memory_order_release);
          }
        }
      }
      subs_.push_back(sub.get());
      return sub;
    }
    // Older than the ring: fed by a store watch of its own, which replays
    // the store's history (across restarts too) and then follows it live.
    sub->store_fed_ = true;
    sub->decodes_ = false;
    subs_.push_back(sub.get());  // so the cache's destructor closes it
  }
  Subscription* raw = sub.get();
  auto handle = store_.Watch(prefix, after_revision, [raw](const store::Event& e) {
    absl::MutexLock slock(&raw->mu_);
    if (raw->closed_ || raw->cache_ == nullptr) return;
    CacheEvent ev;
    ev.revision = e.revision();
    ev.object = raw->cache_->NewObject(e.kv.key, e.kv.value, e.kv.mod_revision);
    if (!e.prev.key.empty()) {
      ev.prev = raw->cache_->NewObject(e.prev.key, e.prev.value, e.prev.mod_revision);
    }
    ev.type = e.type == store::Event::Type::kDelete ? CacheEvent::Type::kDeleted
              : ev.prev                               ? CacheEvent::Type::kModified
                                                      : CacheEvent::Type::kAdded;
    if (raw->queue_.size() >= raw->cache_->max_queue_) {
      raw->closed_ = true;
      raw->close_reason_ = "watcher fell too far behind";
    } else {
      raw->queue_.push_back(std::move(ev));
    }
    raw->ready_.store(true, std::memory_order_release);
    raw->cv_.SignalAll();
  });
  if (!handle.ok()) {
    // `sub` unsubscribes itself on destruction.
    return absl::OutOfRangeError(absl::StrCat("too old resource version: ", after_revision, " (",
                                              store_.CompactedRevision() + 1, ")"));
  }
  sub->store_watch_ = std::move(*handle);
  return sub;
}

void WatchCache::Unsubscribe(Subscription* s) {
  absl::MutexLock lock(&mu_);
  subs_.erase(std::remove(subs_.begin(), subs_.end(), s), subs_.end());
}

size_t WatchCache::WatcherCount() const {
  absl::MutexLock lock(&mu_);
  return subs_.size();
}

}  // namespace batchd::registry
