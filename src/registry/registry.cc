#include "registry/registry.h"

#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "common/string_view.h"
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
absl::Status TooLargeResourceVersion(int64_t want, int64_t current);
}  // namespace

absl::StatusOr<ObjectPtr> Registry::Get(const api::KindDef& k, std::string_view ns,
                                        std::string_view name,
                                        const std::string& resource_version,
                                        absl::Duration fresh_wait) {
  int64_t want = 0;
  if (!resource_version.empty() && (!absl::SimpleAtoi(resource_version, &want) || want < 0)) {
    return BadRequest(absl::StrCat("invalid resource version: ", resource_version));
  }
  if (want > 0 && !cache_->WaitForRevision(want, clock_, fresh_wait)) {
    return TooLargeResourceVersion(want, cache_->Revision());
  }
  return Get(k, ns, name);
}

namespace {

std::string EncodeContinue(int64_t rv, const std::string& key) {
  Json j = {{"v", "meta.k8s.io/v1"}, {"rv", rv}, {"start", key}};
  return absl::WebSafeBase64Escape(j.dump());
}

absl::Status DecodeContinue(const std::string& token, const std::string& prefix,
                            std::string* start, int64_t* rv) {
  std::string raw;
  if (!absl::WebSafeBase64Unescape(token, &raw)) {
    return BadRequest("continue key is not valid: illegal base64 data");
  }
  Json j = Json::parse(raw, nullptr, false);
  if (!j.is_object() || !j.contains("start") || !j["start"].is_string()) {
    return BadRequest("continue key is not valid: incorrect encoded start resourceVersion");
  }
  if (!j.contains("rv") || !j["rv"].is_number_integer()) {
    return BadRequest("continue key is not valid: incorrect encoded start resourceVersion");
  }
  *rv = j["rv"].get<int64_t>();
  *start = j["start"].get<std::string>();
  if (start->rfind(prefix, 0) != 0) {
    return BadRequest("continue key is not valid: key does not belong to this collection");
  }
  return absl::OkStatus();
}

// kube-apiserver's refusals of list options, as ListOptions validation
// words them (422 Invalid).
absl::Status InvalidListOptions(std::string_view field, std::string_view detail) {
  return ApiError(absl::StatusCode::kInvalidArgument, "Invalid",
                  absl::StrCat("ListOptions.meta.k8s.io \"\" is invalid: ", Sv(field), ": ", Sv(detail)),
                  Json{{"group", "meta.k8s.io"}, {"kind", "ListOptions"},
                       {"causes", Json::array({Json{{"reason", "FieldValueForbidden"},
                                                    {"message", std::string(detail)},
                                                    {"field", std::string(field)}}})}});
}

absl::Status TooLargeResourceVersion(int64_t want, int64_t current) {
  return ApiError(absl::StatusCode::kDeadlineExceeded, "Timeout",
                  absl::StrCat("Too large resource version: ", want, ", current: ", current),
                  Json{{"causes", Json::array({Json{{"reason", "ResourceVersionTooLarge"},
                                                    {"message", "Too large resource version"}}})},
                       {"retryAfterSeconds", 1}});
}

constexpr char kExpiredList[] = "The resourceVersion for the provided list is too old.";
constexpr char kExpiredContinue[] =
    "The provided continue parameter is too old to display a consistent list result. You can "
    "start a new list without the continue parameter, or use the continue token in this "
    "response to retrieve the remainder of the results. Continuing with the provided token "
    "results in an inconsistent list - objects that were created, modified, or deleted between "
    "the time the first chunk was returned and now may show up in the list.";

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
  const std::string& rv = opts.resource_version;
  const std::string& match = opts.resource_version_match;
  if (!match.empty()) {
    if (match != "Exact" && match != "NotOlderThan") {
      return ApiError(absl::StatusCode::kInvalidArgument, "Invalid",
                      absl::StrCat("ListOptions.meta.k8s.io \"\" is invalid: "
                                   "resourceVersionMatch: Unsupported value: \"",
                                   match, "\": supported values: \"Exact\", \"NotOlderThan\""));
    }
    if (rv.empty()) {
      return InvalidListOptions("resourceVersionMatch",
                                "resourceVersionMatch is forbidden unless resourceVersion is "
                                "provided");
    }
    if (!opts.continue_token.empty()) {
      return InvalidListOptions("resourceVersionMatch",
                                "resourceVersionMatch is forbidden when continue is provided");
    }
    if (match == "Exact" && rv == "0") {
      return InvalidListOptions("resourceVersionMatch",
                                "resourceVersionMatch \"exact\" is forbidden for "
                                "resourceVersion \"0\"");
    }
  }
  int64_t want = 0;
  if (!rv.empty() && (!absl::SimpleAtoi(rv, &want) || want < 0)) {
    return BadRequest(absl::StrCat("invalid resource version: ", rv));
  }
  std::string prefix = CollectionPrefix(k, ns);
  const size_t limit = static_cast<size_t>(opts.limit);
  std::string start;
  if (!opts.continue_token.empty()) {
    if (!rv.empty() && rv != "0") {
      return BadRequest("specifying resource version is not allowed when using continue");
    }
    int64_t token_rv = 0;
    auto st = DecodeContinue(opts.continue_token, prefix, &start, &token_rv);
    if (!st.ok()) return st;
    // A later page is read from the store as of the first page's revision,
    // so every page is one snapshot (a token of -1 continues at the latest).
    if (token_rv > 0) {
      return ListAtRevision(k, prefix, start, token_rv, /*continuing=*/true, *filter, limit);
    }
  } else if (match == "Exact") {
    return ListAtRevision(k, prefix, "", want, /*continuing=*/false, *filter, limit);
  } else if (want > 0 && !cache_->WaitForRevision(want, clock_, opts.fresh_wait)) {
    // NotOlderThan a revision this server's cache has not reached (one
    // written through another server, not yet on this one's watch): it
    // waits for it, then answers 504 as kube-apiserver's cacher does.
    return TooLargeResourceVersion(want, cache_->Revision());
  }
  // From the cache: resourceVersion "" (most recent: the cache is updated
  // before any write is acknowledged), "0" and NotOlderThan. A first page
  // is a snapshot at the cache's revision, carried in its continue token.
  ListResult out;
  // Scan in chunks so selectors that match rarely still fill a page.
  std::string cursor = start;
  for (;;) {
    bool more = false;
    int64_t rev = 0;
    size_t chunk = limit == 0 ? 0 : std::max<size_t>(limit * 2, 500);
    auto objs = cache_->List(prefix, cursor, chunk, &more, &rev);
    if (out.revision == 0) out.revision = rev;
    if (rev != out.revision) {
      // The cache moved between two chunks: read the rest at the first
      // chunk's revision.
      auto rest = ListAtRevision(k, prefix, cursor, out.revision, /*continuing=*/false, *filter,
                                 limit == 0 ? 0 : limit - out.items.size());
      if (!rest.ok()) return rest.status();
      for (auto& o : rest->items) out.items.push_back(std::move(o));
      out.continue_token = std::move(rest->continue_token);
      return out;
    }
    for (size_t i = 0; i < objs.size(); ++i) {
      if (!filter->Matches(*objs[i])) continue;
      if (limit > 0 && out.items.size() == limit) {
        out.continue_token = EncodeContinue(out.revision, out.items.back()->key);
        if (filter->Everything()) {
          // Uncounted for objects the cache does not keep (Events), as
          // kube-apiserver may omit it.
          if (std::optional<size_t> n = cache_->Count(prefix, out.items.back()->key)) {
            out.remaining = static_cast<int64_t>(*n);
          }
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

absl::StatusOr<ListResult> Registry::ListAtRevision(const api::KindDef& k,
                                                    const std::string& prefix,
                                                    const std::string& start, int64_t revision,
                                                    bool continuing,
                                                    const internal::ObjectFilter& filter,
                                                    size_t limit) {
  (void)k;
  auto expired = [&] { return Expired(continuing ? kExpiredContinue : kExpiredList); };
  if (revision < store_.CompactedRevision()) return expired();
  // A revision past this server's view is left to the store: on a shared
  // store (etcd) another server may have written it, and etcd answers.
  ListResult out;
  out.revision = revision;
  std::string cursor = start;
  for (;;) {
    const int64_t chunk = limit == 0 ? 0 : static_cast<int64_t>(std::max<size_t>(limit * 2, 500));
    auto range = store_.RangeAtRevision(prefix, cursor, chunk, revision);
    if (!range.ok()) {
      // In the future (now that the store answered, its revision is the
      // latest), or compacted between the check and the read.
      if (range.status().code() == absl::StatusCode::kOutOfRange) {
        if (const int64_t current = store_.Revision(); revision > current) {
          return TooLargeResourceVersion(revision, current);
        }
        return expired();
      }
      return Internal(absl::StrCat("reading the list at revision ", revision, ": ",
                                   range.status().message()));
    }
    for (store::KeyValue& kv : range->kvs) {
      ObjectPtr o = cache_->MakeObject(kv.key, std::move(kv.value), kv.mod_revision);
      if (!filter.Matches(*o)) continue;
      if (limit > 0 && out.items.size() == limit) {
        out.continue_token = EncodeContinue(revision, out.items.back()->key);
        return out;
      }
      out.items.push_back(std::move(o));
    }
    if (!range->more || range->kvs.empty()) break;
    cursor = range->kvs.back().key;
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
    // A zero timeout (single-threaded pumps) reads no clock: it only drains
    // the events already queued.
    const bool waits = timeout > absl::ZeroDuration();
    const absl::Time deadline = waits ? absl::Now() + timeout : absl::InfinitePast();
    for (;;) {
      absl::Duration left =
          waits ? std::max(deadline - absl::Now(), absl::ZeroDuration()) : absl::ZeroDuration();
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
  // Never past an event not yet returned (0 while the initial state is
  // still being sent: no bookmark then).
  int64_t Revision() const override {
    return initial_.empty() ? sub_->BookmarkRevision() : 0;
  }

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
