#include "registry/registry.h"

#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "registry/errors.h"
#include "registry/internal/selectors.h"
#include "registry/internal/versions.h"

namespace batchd::registry {

using api::Json;


absl::StatusOr<ObjectPtr> Registry::Get(const api::KindDef& k, std::string_view ns,
                                        std::string_view name) {
  ObjectPtr o = cache_->Get(StoreKey(k, ns, name));
  if (!o) return NotFound(k, name);
  return Served(k, std::move(o));
}

namespace {

std::string EncodeContinue(int64_t rv, const std::string& key) {
  Json j = {{"v", "meta.k8s.io/v1"}, {"rv", rv}, {"start", key}};
  return absl::WebSafeBase64Escape(j.dump());
}

absl::Status DecodeContinue(const std::string& token, const std::string& prefix,
                            std::string* start) {
  std::string raw;
  if (!absl::WebSafeBase64Unescape(token, &raw)) {
    return BadRequest("continue key is not valid: illegal base64 data");
  }
  Json j = Json::parse(raw, nullptr, false);
  if (!j.is_object() || !j.contains("start") || !j["start"].is_string()) {
    return BadRequest("continue key is not valid: incorrect encoded start resourceVersion");
  }
  *start = j["start"].get<std::string>();
  if (start->rfind(prefix, 0) != 0) {
    return BadRequest("continue key is not valid: key does not belong to this collection");
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ListResult> Registry::List(const api::KindDef& k, std::string_view ns,
                                          const ListOptions& opts) {
  if (k.storage) {
    auto res = List(*k.storage, ns, opts);
    if (res.ok()) {
      for (auto& o : res->items) o = Served(k, o);
    }
    return res;
  }
  auto filter = internal::ObjectFilter::Parse(k, opts.label_selector, opts.field_selector);
  if (!filter.ok()) return filter.status();
  if (opts.limit < 0) return BadRequest("limit must be non-negative");
  std::string prefix = CollectionPrefix(k, ns);
  std::string start;
  if (!opts.continue_token.empty()) {
    auto st = DecodeContinue(opts.continue_token, prefix, &start);
    if (!st.ok()) return st;
  }
  ListResult out;
  const size_t limit = static_cast<size_t>(opts.limit);
  // Scan in chunks so selectors that match rarely still fill a page.
  std::string cursor = start;
  for (;;) {
    bool more = false;
    int64_t rev = 0;
    size_t chunk = limit == 0 ? 0 : std::max<size_t>(limit * 2, 500);
    auto objs = cache_->List(prefix, cursor, chunk, &more, &rev);
    if (out.revision == 0) out.revision = rev;
    for (size_t i = 0; i < objs.size(); ++i) {
      if (!filter->Matches(*objs[i])) continue;
      if (limit > 0 && out.items.size() == limit) {
        out.continue_token = EncodeContinue(out.revision, out.items.back()->key);
        if (filter->Everything()) {
          out.remaining = static_cast<int64_t>(cache_->Count(prefix, out.items.back()->key));
        }
        return out;
      }
      out.items.push_back(objs[i]);
    }
    if (!more || objs.empty()) break;
    cursor = objs.back()->key;
  }
  return out;
}

namespace {

// Watch stream over a cache subscription: applies selectors, maps
// transitions, and first replays the current state when asked to.
class FilteredWatcher : public Watcher {
 public:
  FilteredWatcher(std::unique_ptr<WatchCache::Subscription> sub, internal::ObjectFilter filter,
                  std::vector<ObjectPtr> initial, WatchCache* cache)
      : sub_(std::move(sub)), filter_(std::move(filter)), cache_(cache) {
    for (auto& o : initial) initial_.push_back(std::move(o));
  }

  bool Next(Event* ev, absl::Duration timeout) override {
    if (!initial_.empty()) {
      ev->type = "ADDED";
      ev->object = std::move(initial_.front());
      initial_.pop_front();
      return true;
    }
    absl::Time deadline = absl::Now() + timeout;
    for (;;) {
      // A zero timeout still drains events that are already queued.
      absl::Duration left = std::max(deadline - absl::Now(), absl::ZeroDuration());
      CacheEvent ce;
      if (!sub_->Next(&ce, left)) {
        if (sub_->closed() && !error_sent_) {
          error_sent_ = true;
          ev->type = "ERROR";
          ev->error = {{"kind", "Status"}, {"apiVersion", "v1"}, {"metadata", Json::object()},
                       {"status", "Failure"}, {"message", sub_->close_reason()},
                       {"reason", "Expired"}, {"code", 410}};
          return true;
        }
        return false;
      }
      bool now = ce.type != CacheEvent::Type::kDeleted && filter_.Matches(*ce.object);
      bool before = ce.prev && filter_.Matches(*ce.prev);
      if (ce.type == CacheEvent::Type::kDeleted) {
        if (!filter_.Matches(*ce.object)) continue;
        ev->type = "DELETED";
      } else if (now && before) {
        ev->type = "MODIFIED";
      } else if (now) {
        ev->type = "ADDED";
      } else if (before) {
        // Left the selection: Kubernetes reports it as deleted.
        ev->type = "DELETED";
      } else {
        continue;
      }
      ev->object = ce.object;
      return true;
    }
  }

  bool done() const override { return initial_.empty() && sub_->closed(); }
  int64_t Revision() const override { return cache_->Revision(); }

 private:
  std::unique_ptr<WatchCache::Subscription> sub_;
  internal::ObjectFilter filter_;
  std::deque<ObjectPtr> initial_;
  WatchCache* cache_;
  bool error_sent_ = false;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Watcher>> Registry::Watch(const api::KindDef& k,
                                                         std::string_view ns,
                                                         const ListOptions& opts) {
  if (k.storage) {
    auto w = Watch(*k.storage, ns, opts);
    if (!w.ok()) return w;
    const api::KindDef* served = &k;
    return internal::NewConvertingWatcher(std::move(*w), [this, served](ObjectPtr o) {
      return Served(*served, std::move(o));
    });
  }
  auto filter = internal::ObjectFilter::Parse(k, opts.label_selector, opts.field_selector);
  if (!filter.ok()) return filter.status();
  std::string prefix = CollectionPrefix(k, ns);
  int64_t after = -1;
  std::vector<ObjectPtr> initial;
  const std::string& rv = opts.resource_version;
  if (rv.empty() || rv == "0") {
    // Start from the current state: synthetic ADDED events, then changes.
    // Subscribe first, under the snapshot's revision, so nothing is missed.
    int64_t snap_rev = 0;
    bool more = false;
    auto all = cache_->List(prefix, "", 0, &more, &snap_rev);
    auto sub = cache_->Watch(prefix, snap_rev, opts.decodes);
    if (!sub.ok()) return Expired(std::string(sub.status().message()));
    for (auto& o : all) {
      if (filter->Matches(*o)) initial.push_back(o);
    }
    return std::unique_ptr<Watcher>(
        new FilteredWatcher(std::move(*sub), *filter, std::move(initial), cache_.get()));
  }
  if (!absl::SimpleAtoi(rv, &after) || after < 0) {
    return BadRequest(absl::StrCat("invalid resource version: ", rv));
  }
  auto sub = cache_->Watch(prefix, after, opts.decodes);
  if (!sub.ok()) return Expired(std::string(sub.status().message()));
  return std::unique_ptr<Watcher>(
      new FilteredWatcher(std::move(*sub), *filter, {}, cache_.get()));
}

std::optional<PatchType> PatchTypeFromContentType(std::string_view ct) {
  auto semi = ct.find(';');
  if (semi != std::string_view::npos) ct = ct.substr(0, semi);
  while (!ct.empty() && ct.back() == ' ') ct.remove_suffix(1);
  if (ct == "application/merge-patch+json") return PatchType::kMerge;
  if (ct == "application/json-patch+json") return PatchType::kJson;
  if (ct == "application/strategic-merge-patch+json") return PatchType::kStrategic;
  if (ct == "application/apply-patch+yaml") return PatchType::kApply;
  return std::nullopt;
}

}  // namespace batchd::registry
