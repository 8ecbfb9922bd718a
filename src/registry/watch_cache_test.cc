#include "registry/watch_cache.h"

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "api/kind.h"
#include "common/testing/fake_clock.h"
#include "gtest/gtest.h"
#include "store/memory/memory_store.h"

namespace batchd::registry {
namespace {

using api::Json;

const char kPodKey[] = "/registry/core/pods/default/p";

std::string PodJson(const std::string& phase) {
  Json pod = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", {{"name", "p"}, {"namespace", "default"}, {"labels", {{"app", "x"}}}}},
              {"spec", {{"nodeName", "n1"}}},
              {"status", {{"phase", phase}}}};
  return pod.dump();
}

class WatchCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cache_ = std::make_unique<WatchCache>(store_, api::BuiltinScheme());
    ASSERT_TRUE(cache_->Start().ok());
  }
  store::MemoryStore store_;
  std::unique_ptr<WatchCache> cache_;
};

// Storing a write does not parse it: the first reader decodes the object
// (resourceVersion included), readers share that decoding while one holds it,
// and labels and selectable fields are extracted when first asked for.
TEST_F(WatchCacheTest, ObjectsAreDecodedOnFirstUseAndShared) {
  auto sub = cache_->Watch("/registry/core/pods/", -1);
  ASSERT_TRUE(sub.ok());
  auto kv = store_.Create(kPodKey, PodJson("Running"));
  ASSERT_TRUE(kv.ok());
  CacheEvent ev;
  ASSERT_TRUE((*sub)->Next(&ev, absl::Seconds(5)));
  std::shared_ptr<const Json> d = ev.object->Shared();
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(ev.object->Shared().get(), d.get());
  EXPECT_EQ((*d)["metadata"]["resourceVersion"], std::to_string(kv->mod_revision));
  EXPECT_EQ(*d, Json::parse(ev.object->json));
  EXPECT_EQ(ev.object->labels().at("app"), "x");
  EXPECT_EQ(ev.object->fields().at("spec.nodeName"), "n1");
  EXPECT_EQ(ev.object->fields().at("status.phase"), "Running");
  EXPECT_EQ(ev.object->fields().at("metadata.namespace"), "default");
  EXPECT_EQ(cache_->Get(kPodKey)->Shared().get(), d.get());  // the cached version too
}

// The replay ring keeps objects, not their decodings: a replayed event has
// none, and Shared() still decodes the object on demand.
// A zero-timeout Next (a single-threaded pump) sees every queued event and
// the close of a watcher that fell behind, though an idle one takes no lock.
TEST(WatchCacheQueueTest, ZeroTimeoutNextSeesEventsAndTheClose) {
  store::MemoryStore store;
  WatchCache cache(store, api::BuiltinScheme(), /*ring_capacity=*/100, /*max_queue=*/2);
  ASSERT_TRUE(cache.Start().ok());
  auto sub = cache.Watch("/registry/core/pods/", -1);
  ASSERT_TRUE(sub.ok());
  CacheEvent ev;
  EXPECT_FALSE((*sub)->Next(&ev, absl::ZeroDuration()));
  EXPECT_FALSE((*sub)->closed());
  ASSERT_TRUE(store.Create(kPodKey, PodJson("Pending")).ok());
  ASSERT_TRUE((*sub)->Next(&ev, absl::ZeroDuration()));
  EXPECT_EQ(ev.type, CacheEvent::Type::kAdded);
  EXPECT_FALSE((*sub)->Next(&ev, absl::ZeroDuration()));
  int64_t rev = store.Revision();
  for (const char* phase : {"Running", "Succeeded", "Failed"}) {  // One more than max_queue.
    auto kv = store.Update(kPodKey, PodJson(phase), rev);
    ASSERT_TRUE(kv.ok());
    rev = kv->mod_revision;
  }
  EXPECT_FALSE((*sub)->closed()) << "closed, but two events are still to be read";
  ASSERT_TRUE((*sub)->Next(&ev, absl::ZeroDuration()));
  ASSERT_TRUE((*sub)->Next(&ev, absl::ZeroDuration()));
  EXPECT_FALSE((*sub)->Next(&ev, absl::ZeroDuration()));
  EXPECT_TRUE((*sub)->closed());
  EXPECT_EQ((*sub)->close_reason(), "watcher fell too far behind");
}

TEST_F(WatchCacheTest, ReplayRingDoesNotRetainDecodings) {
  auto kv = store_.Create(kPodKey, PodJson("Pending"));
  ASSERT_TRUE(kv.ok());
  ASSERT_TRUE(store_.Update(kPodKey, PodJson("Succeeded"), kv->mod_revision).ok());
  auto sub = cache_->Watch("/registry/core/pods/", 0);
  ASSERT_TRUE(sub.ok());
  struct Case {
    const char* phase;
  };
  for (const Case& c : {Case{"Pending"}, Case{"Succeeded"}}) {
    SCOPED_TRACE(c.phase);
    CacheEvent ev;
    ASSERT_TRUE((*sub)->Next(&ev, absl::Seconds(5)));
    EXPECT_EQ(ev.object->fields().at("status.phase"), c.phase);
    std::shared_ptr<const Json> d = ev.object->Shared();
    ASSERT_NE(d, nullptr);
    EXPECT_EQ((*d)["status"]["phase"], c.phase);
    EXPECT_EQ(ev.object->Shared().get(), d.get());  // shared while held
  }
}

// A writer's decoding, offered with the exact bytes it stores, is what
// in-process (decoding) subscribers read: the test marks the offered object
// with a field the bytes lack to tell it from a parse.
class OfferedDecodingTest : public WatchCacheTest {
 protected:
  static Json Marked(const std::string& bytes) {
    Json j = Json::parse(bytes);
    j["offered"] = true;
    return j;
  }
  static bool IsOffered(const CacheEvent& ev) { return ev.object->Shared()->contains("offered"); }
  std::unique_ptr<WatchCache::Subscription> Subscribe(bool decodes) {
    auto sub = cache_->Watch("/registry/core/pods/", -1, decodes);
    EXPECT_TRUE(sub.ok());
    return sub.ok() ? *std::move(sub) : nullptr;
  }
};

TEST_F(OfferedDecodingTest, DecodingSubscriberGetsTheOfferWithResourceVersion) {
  auto sub = Subscribe(/*decodes=*/true);
  const std::string bytes = PodJson("Running");
  absl::StatusOr<store::KeyValue> kv;
  {
    WatchCache::DecodedOffer offer = cache_->OfferDecoded(kPodKey, bytes, Marked(bytes));
    kv = store_.Create(kPodKey, bytes);
  }
  ASSERT_TRUE(kv.ok());
  CacheEvent ev;
  ASSERT_TRUE(sub->Next(&ev, absl::Seconds(5)));
  ASSERT_TRUE(IsOffered(ev));
  EXPECT_EQ((*ev.object->Shared())["metadata"]["resourceVersion"],
            std::to_string(kv->mod_revision));
  EXPECT_EQ(ev.object->fields().at("status.phase"), "Running");  // extracted without a parse
}

// Two decoding subscribers: the first taking the event and dropping it does
// not lose the decoding before the second took it.
TEST_F(OfferedDecodingTest, HeldUntilEveryDecodingSubscriberTookIt) {
  auto first = Subscribe(true), second = Subscribe(true), http = Subscribe(false);
  const std::string bytes = PodJson("Running");
  {
    WatchCache::DecodedOffer offer = cache_->OfferDecoded(kPodKey, bytes, Marked(bytes));
    ASSERT_TRUE(store_.Create(kPodKey, bytes).ok());
  }
  CacheEvent ev;
  ASSERT_TRUE(http->Next(&ev, absl::Seconds(5)));  // takes no share of it
  ev = CacheEvent();
  ASSERT_TRUE(first->Next(&ev, absl::Seconds(5)));
  EXPECT_TRUE(IsOffered(ev));
  ev = CacheEvent();
  ASSERT_FALSE(first->Next(&ev, absl::ZeroDuration()));  // done with it: drops its share
  ASSERT_TRUE(second->Next(&ev, absl::Seconds(5)));
  EXPECT_TRUE(IsOffered(ev));
  ev = CacheEvent();
  ASSERT_FALSE(second->Next(&ev, absl::ZeroDuration()));
  // Every decoding subscriber took it and nobody holds it: no longer kept.
  EXPECT_FALSE(cache_->Get(kPodKey)->Shared()->contains("offered"));
}

TEST_F(OfferedDecodingTest, NotUsedForOtherBytesWithdrawnOrWithoutDecodingSubscribers) {
  const std::string bytes = PodJson("Running");
  {
    auto http = Subscribe(false);
    WatchCache::DecodedOffer offer = cache_->OfferDecoded(kPodKey, bytes, Marked(bytes));
    auto kv = store_.Create(kPodKey, bytes);
    ASSERT_TRUE(kv.ok());
    CacheEvent ev;
    ASSERT_TRUE(http->Next(&ev, absl::Seconds(5)));
    EXPECT_FALSE(IsOffered(ev)) << "no decoding subscriber: nothing to offer to";
  }
  auto sub = Subscribe(true);
  int64_t rev = cache_->Get(kPodKey)->revision;
  {
    const std::string other = PodJson("Failed");
    WatchCache::DecodedOffer offer = cache_->OfferDecoded(kPodKey, bytes, Marked(bytes));
    auto kv = store_.Update(kPodKey, other, rev);  // a different write of the key
    ASSERT_TRUE(kv.ok());
    rev = kv->mod_revision;
    CacheEvent ev;
    ASSERT_TRUE(sub->Next(&ev, absl::Seconds(5)));
    EXPECT_FALSE(IsOffered(ev));
    EXPECT_EQ((*ev.object->Shared())["status"]["phase"], "Failed");
  }
  {
    const std::string again = PodJson("Succeeded");
    { WatchCache::DecodedOffer withdrawn = cache_->OfferDecoded(kPodKey, again, Marked(again)); }
    ASSERT_TRUE(store_.Update(kPodKey, again, rev).ok());
    CacheEvent ev;
    ASSERT_TRUE(sub->Next(&ev, absl::Seconds(5)));
    EXPECT_FALSE(IsOffered(ev));
  }
}

// A delete's last state is the version before it: a decoding subscriber gets
// a copy of that version's decoding while someone holds it (not a parse of
// the bytes), with the delete's resourceVersion; a final write that deletes
// (DeleteWithFinalValue) is offered like any write.
TEST_F(OfferedDecodingTest, DeletesReuseTheLastVersionsDecoding) {
  auto sub = Subscribe(/*decodes=*/true);
  const std::string bytes = PodJson("Running");
  {
    WatchCache::DecodedOffer offer = cache_->OfferDecoded(kPodKey, bytes, Marked(bytes));
    ASSERT_TRUE(store_.Create(kPodKey, bytes).ok());
  }
  CacheEvent ev;
  ASSERT_TRUE(sub->Next(&ev, absl::Seconds(5)));
  std::shared_ptr<const Json> held = ev.object->Shared();  // a reader keeps it
  ASSERT_TRUE(held->contains("offered"));
  const int64_t first_rev = ev.object->revision;
  auto del = store_.Delete(kPodKey, first_rev);
  ASSERT_TRUE(del.ok());
  ev = CacheEvent();
  ASSERT_TRUE(sub->Next(&ev, absl::Seconds(5)));
  ASSERT_EQ(ev.type, CacheEvent::Type::kDeleted);
  EXPECT_TRUE(IsOffered(ev)) << "copied from the held decoding";
  EXPECT_EQ((*ev.object->Shared())["metadata"]["resourceVersion"],
            std::to_string(del->mod_revision));
  EXPECT_EQ((*held)["metadata"]["resourceVersion"], std::to_string(first_rev))
      << "the held version is unchanged";

  // Nobody holds the last version's decoding: the delete's is parsed.
  held.reset();
  ev = CacheEvent();
  ASSERT_TRUE(store_.Create(kPodKey, bytes).ok());
  ASSERT_TRUE(sub->Next(&ev, absl::Seconds(5)));
  const int64_t rev = ev.object->revision;
  ev = CacheEvent();
  ASSERT_FALSE(sub->Next(&ev, absl::ZeroDuration()));
  ASSERT_TRUE(store_.Delete(kPodKey, rev).ok());
  ASSERT_TRUE(sub->Next(&ev, absl::Seconds(5)));
  EXPECT_FALSE(IsOffered(ev));
  EXPECT_EQ((*ev.object->Shared())["status"]["phase"], "Running");

  // A final write that deletes.
  const std::string last = PodJson("Succeeded");
  ASSERT_TRUE(store_.Create(kPodKey, bytes).ok());
  ev = CacheEvent();
  ASSERT_TRUE(sub->Next(&ev, absl::Seconds(5)));
  absl::StatusOr<store::KeyValue> gone;
  {
    WatchCache::DecodedOffer offer = cache_->OfferDecoded(kPodKey, last, Marked(last));
    gone = store_.DeleteWithFinalValue(kPodKey, ev.object->revision, last);
  }
  ASSERT_TRUE(gone.ok());
  ev = CacheEvent();
  ASSERT_TRUE(sub->Next(&ev, absl::Seconds(5)));
  ASSERT_EQ(ev.type, CacheEvent::Type::kDeleted);
  EXPECT_TRUE(IsOffered(ev));
  EXPECT_EQ((*ev.object->Shared())["status"]["phase"], "Succeeded");
  EXPECT_EQ((*ev.object->Shared())["metadata"]["resourceVersion"],
            std::to_string(gone->mod_revision));
}

std::string EventJson(const std::string& name, int count) {
  Json ev = {{"apiVersion", "v1"},
             {"kind", "Event"},
             {"metadata", {{"name", name}, {"namespace", "default"}}},
             {"involvedObject", {{"kind", "Pod"}, {"name", "p"}, {"namespace", "default"}}},
             {"reason", "Started"},
             {"count", count}};
  return ev.dump();
}

// Events are not kept (kube-apiserver's default watch-cache sizes): gets and
// lists read the store, a list at the cache's revision, and watchers still
// get their changes, with the previous state, from the live stream and the ring.
TEST_F(WatchCacheTest, EventsAreReadFromTheStoreNotKept) {
  const std::string prefix = "/registry/core/events/";
  EXPECT_FALSE(WatchCache::Cached(prefix + "default/e1"));
  EXPECT_TRUE(WatchCache::Cached(kPodKey));
  const int64_t start = store_.Revision();
  auto sub = cache_->Watch(prefix, -1);
  ASSERT_TRUE(sub.ok());
  ASSERT_TRUE(store_.Create(prefix + "default/e1", EventJson("e1", 1)).ok());
  ASSERT_TRUE(store_.Create(prefix + "default/e2", EventJson("e2", 1)).ok());
  auto upd = store_.Update(prefix + "default/e1", EventJson("e1", 2), 0);
  ASSERT_TRUE(upd.ok());
  ASSERT_TRUE(store_.Create(kPodKey, PodJson("Running")).ok());

  // Get and List read the store, resourceVersion spliced in as for kept objects.
  ObjectPtr e1 = cache_->Get(prefix + "default/e1");
  ASSERT_NE(e1, nullptr);
  EXPECT_EQ(e1->revision, upd->mod_revision);
  EXPECT_EQ(e1->Shared()->at("count"), 2);
  EXPECT_EQ(e1->Shared()->at("metadata").at("resourceVersion"), std::to_string(upd->mod_revision));
  EXPECT_EQ(cache_->Get(prefix + "default/none"), nullptr);
  bool more = true;
  int64_t rev = 0;
  std::vector<ObjectPtr> page = cache_->List(prefix, "", 1, &more, &rev);
  ASSERT_EQ(page.size(), 1u);
  EXPECT_EQ(page[0]->key, prefix + "default/e1");
  EXPECT_TRUE(more);
  EXPECT_EQ(rev, cache_->Revision());
  page = cache_->List(prefix + "default/", prefix + "default/e1", 0, &more, &rev);
  ASSERT_EQ(page.size(), 1u);
  EXPECT_EQ(page[0]->key, prefix + "default/e2");
  EXPECT_FALSE(more);
  EXPECT_FALSE(cache_->Count(prefix, "").has_value());
  EXPECT_EQ(cache_->Count("/registry/core/pods/", ""), std::optional<size_t>(1));

  // Watchers: added, added, modified (with the previous count), deleted.
  ASSERT_TRUE(store_.Delete(prefix + "default/e2", 0).ok());
  auto expect_events = [&](WatchCache::Subscription& s) {
    std::vector<std::string> got;
    CacheEvent ev;
    while (got.size() < 4 && s.Next(&ev, absl::Seconds(5))) {
      std::string line = absl::StrCat(static_cast<int>(ev.type), " ",
                                      ev.object->Shared()->at("metadata").at("name").get<std::string>());
      if (ev.prev) absl::StrAppend(&line, " was ", ev.prev->Shared()->at("count").dump());
      got.push_back(line);
    }
    EXPECT_EQ(got, (std::vector<std::string>{"0 e1", "0 e2", "1 e1 was 1", "2 e2 was 1"}));
  };
  expect_events(**sub);
  // The same from the ring.
  auto replay = cache_->Watch(prefix, start);
  ASSERT_TRUE(replay.ok());
  expect_events(**replay);
}

}  // namespace
}  // namespace batchd::registry

namespace batchd::registry {
namespace {

// The ring is bounded by bytes as well as by count; a watch from before it
// replays the store's history instead of answering 410.
TEST(WatchCacheRingTest, BoundedByBytesAndOlderWatchesReplayTheStore) {
  store::MemoryStore store;
  const size_t kRingBytes = 4096;
  WatchCache cache(store, api::BuiltinScheme(), /*ring_capacity=*/100000, /*max_queue=*/100000,
                   kRingBytes);
  ASSERT_TRUE(cache.Start().ok());
  const int64_t start = store.Revision();
  ASSERT_TRUE(store.Create(kPodKey, PodJson("Pending")).ok());
  for (int i = 0; i < 200; ++i) {
    ASSERT_TRUE(store.Update(kPodKey, PodJson(i % 2 ? "Running" : "Pending"), 0).ok());
  }
  EXPECT_LE(cache.RingBytes(), kRingBytes);
  EXPECT_LT(cache.RingSize(), 201u);
  EXPECT_GT(cache.RingSize(), 0u);
  auto sub = cache.Watch("/registry/core/pods/", start);
  ASSERT_TRUE(sub.ok()) << sub.status();
  int64_t last = start;
  for (int i = 0; i < 201; ++i) {
    CacheEvent ev;
    ASSERT_TRUE((*sub)->Next(&ev, absl::Seconds(30))) << i;
    EXPECT_EQ(ev.revision, last + 1);
    EXPECT_EQ(ev.type, i == 0 ? CacheEvent::Type::kAdded : CacheEvent::Type::kModified);
    last = ev.revision;
  }
  EXPECT_EQ((*sub)->BookmarkRevision(), store.Revision());
  // History the store has compacted is 410 (OutOfRange).
  ASSERT_TRUE(store.Compact(store.Revision()).ok());
  EXPECT_EQ(cache.Watch("/registry/core/pods/", start).status().code(),
            absl::StatusCode::kOutOfRange);
}

}  // namespace
}  // namespace batchd::registry

namespace batchd::registry {
namespace {

// A read NotOlderThan a revision the cache has not reached (written through
// another server) waits on the request's own thread, with a timer on the
// injected clock, and is woken by the change that reaches it, not before.
TEST_F(WatchCacheTest, WaitForRevisionWakesWhenTheCacheGetsThere) {
  FakeClock clock;
  const int64_t now = cache_->Revision();
  EXPECT_TRUE(cache_->WaitForRevision(now, clock, absl::ZeroDuration()));
  EXPECT_FALSE(cache_->WaitForRevision(now + 1, clock, absl::ZeroDuration()));
  EXPECT_EQ(clock.PendingTimers(), 0u);
  std::atomic<int> reached{-1};
  std::thread waiter(
      [&] { reached = cache_->WaitForRevision(now + 2, clock, absl::Hours(1)) ? 1 : 0; });
  while (cache_->RevisionWaiters() == 0) std::this_thread::yield();
  auto kv = store_.Create(kPodKey, PodJson("Pending"));  // now + 1: not there yet
  ASSERT_TRUE(kv.ok());
  EXPECT_EQ(cache_->RevisionWaiters(), 1u);
  EXPECT_EQ(reached.load(), -1);
  ASSERT_TRUE(store_.Update(kPodKey, PodJson("Running"), kv->mod_revision).ok());  // now + 2
  waiter.join();
  EXPECT_EQ(reached.load(), 1);
  EXPECT_EQ(cache_->RevisionWaiters(), 0u);
  EXPECT_EQ(clock.PendingTimers(), 0u);  // its timer cancelled
}

// Nothing reaches the revision: the wait ends at its deadline by the
// injected clock (not a moment earlier) and leaves nothing behind.
TEST_F(WatchCacheTest, WaitForRevisionGivesUpAtItsDeadline) {
  FakeClock clock;
  const int64_t want = cache_->Revision() + 1;
  std::atomic<int> reached{-1};
  std::thread waiter(
      [&] { reached = cache_->WaitForRevision(want, clock, absl::Hours(1)) ? 1 : 0; });
  // Registered (after its timer was set): nothing short of the hour ends it.
  while (cache_->RevisionWaiters() == 0) std::this_thread::yield();
  clock.Advance(absl::Minutes(59));
  EXPECT_EQ(reached.load(), -1);
  EXPECT_EQ(cache_->RevisionWaiters(), 1u);
  clock.Advance(absl::Minutes(1));
  waiter.join();
  EXPECT_EQ(reached.load(), 0);
  EXPECT_EQ(cache_->RevisionWaiters(), 0u);
  // A later change is applied as ever, and a new wait for it succeeds at once.
  ASSERT_TRUE(store_.Create(kPodKey, PodJson("Pending")).ok());
  EXPECT_TRUE(cache_->WaitForRevision(want, clock, absl::ZeroDuration()));
}

// A watch from a revision the cache has not reached yet (a resourceVersion
// another server returned) sends only the changes after it, as
// kube-apiserver's watch cache does: never one the client already saw.
TEST_F(WatchCacheTest, WatchFromARevisionNotReachedYetSkipsUpToIt) {
  const int64_t now = cache_->Revision();
  auto sub = cache_->Watch("/registry/core/pods/", now + 2);
  ASSERT_TRUE(sub.ok());
  auto kv = store_.Create(kPodKey, PodJson("Pending"));  // now + 1
  ASSERT_TRUE(kv.ok());
  auto kv2 = store_.Update(kPodKey, PodJson("Running"), kv->mod_revision);  // now + 2
  ASSERT_TRUE(kv2.ok());
  ASSERT_TRUE(store_.Update(kPodKey, PodJson("Succeeded"), kv2->mod_revision).ok());  // now + 3
  CacheEvent ev;
  ASSERT_TRUE((*sub)->Next(&ev, absl::Seconds(5)));
  EXPECT_EQ(ev.revision, now + 3);
  EXPECT_EQ(ev.object->fields().at("status.phase"), "Succeeded");
  EXPECT_FALSE((*sub)->Next(&ev, absl::ZeroDuration()));
}

}  // namespace
}  // namespace batchd::registry
