// The Store conformance suite: one typed gtest suite that every backend runs
// (STYLE practice 7). A backend test instantiates it with a factory type:
//
//   struct MyFactory { std::unique_ptr<Store> Make(); };  // default-constructible
//   INSTANTIATE_TYPED_TEST_SUITE_P(My, StoreConformanceTest, ::testing::Types<MyFactory>);
//
// The factory owns whatever the store needs (a temp dir) and outlives it.
// Thread-safety: test-only code; `EventRecorder` is thread-safe.
#pragma once

#include <algorithm>
#include <atomic>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "store/store.h"

namespace batchd::store::testing {

// Records the events a watch delivers.
class EventRecorder {
 public:
  WatchCallback Callback() {
    return [this](const Event& e) {
      absl::MutexLock lock(&mu_);
      events_.push_back(e);
    };
  }
  std::vector<Event> Events() const {
    absl::MutexLock lock(&mu_);
    return events_;
  }
  std::vector<int64_t> Revisions() const {
    std::vector<int64_t> out;
    for (const Event& e : Events()) out.push_back(e.revision());
    return out;
  }
  // Waits (bounded, never sleeps blindly) until `n` events arrived.
  bool WaitForCount(size_t n, absl::Duration timeout = absl::Seconds(60)) const {
    absl::MutexLock lock(&mu_);
    auto enough = [&]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return events_.size() >= n; };
    return mu_.AwaitWithTimeout(absl::Condition(&enough), timeout);
  }

 private:
  mutable absl::Mutex mu_;
  std::vector<Event> events_ ABSL_GUARDED_BY(mu_);
};

template <typename Factory>
class StoreConformanceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = factory_.Make();
    ASSERT_NE(store_, nullptr);
  }
  Store& store() { return *store_; }
  KeyValue MustCreate(const std::string& key, const std::string& value) {
    absl::StatusOr<KeyValue> kv = store_->Create(key, value);
    EXPECT_TRUE(kv.ok()) << kv.status();
    return kv.ok() ? *kv : KeyValue{};
  }
  std::vector<std::string> Keys(const RangeResult& r) {
    std::vector<std::string> out;
    for (const KeyValue& kv : r.kvs) out.push_back(kv.key);
    return out;
  }

  Factory factory_;
  std::unique_ptr<Store> store_;
};

TYPED_TEST_SUITE_P(StoreConformanceTest);

TYPED_TEST_P(StoreConformanceTest, CreateGetUpdateDelete) {
  Store& s = this->store();
  EXPECT_EQ(s.Revision(), 0);
  KeyValue created = this->MustCreate("/a", "v1");
  EXPECT_EQ(created.key, "/a");
  EXPECT_EQ(created.value, "v1");
  EXPECT_EQ(created.create_revision, 1);
  EXPECT_EQ(created.mod_revision, 1);
  absl::StatusOr<KeyValue> got = s.Get("/a");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->value, "v1");
  EXPECT_EQ(got->mod_revision, 1);

  absl::StatusOr<KeyValue> updated = s.Update("/a", "v2", 1);
  ASSERT_TRUE(updated.ok()) << updated.status();
  EXPECT_EQ(updated->value, "v2");
  EXPECT_EQ(updated->create_revision, 1);
  EXPECT_EQ(updated->mod_revision, 2);
  EXPECT_EQ(s.Get("/a")->value, "v2");

  absl::StatusOr<KeyValue> deleted = s.Delete("/a", 2);
  ASSERT_TRUE(deleted.ok()) << deleted.status();
  EXPECT_EQ(deleted->value, "v2");
  EXPECT_EQ(deleted->create_revision, 1);
  EXPECT_EQ(deleted->mod_revision, 3);
  EXPECT_EQ(s.Get("/a").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(s.Revision(), 3);
  // A key can be created again after deletion, with a fresh create revision.
  EXPECT_EQ(this->MustCreate("/a", "v3").create_revision, 4);
}

TYPED_TEST_P(StoreConformanceTest, ErrorCodes) {
  Store& s = this->store();
  this->MustCreate("/k", "v");  // revision 1
  struct Case {
    std::string name;
    std::function<absl::Status()> op;
    absl::StatusCode want;
  };
  std::vector<Case> cases = {
      {"create existing", [&] { return s.Create("/k", "x").status(); },
       absl::StatusCode::kAlreadyExists},
      {"get missing", [&] { return s.Get("/missing").status(); }, absl::StatusCode::kNotFound},
      {"update missing", [&] { return s.Update("/missing", "x", 0).status(); },
       absl::StatusCode::kNotFound},
      {"delete missing", [&] { return s.Delete("/missing", 0).status(); },
       absl::StatusCode::kNotFound},
      {"update stale", [&] { return s.Update("/k", "x", 7).status(); },
       absl::StatusCode::kAborted},
      {"delete stale", [&] { return s.Delete("/k", 7).status(); }, absl::StatusCode::kAborted},
      {"range negative limit", [&] { return s.Range("/", "", -1).status(); },
       absl::StatusCode::kInvalidArgument},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(c.op().code(), c.want);
  }
  // Failed writes change nothing.
  EXPECT_EQ(s.Revision(), 1);
  EXPECT_EQ(s.Get("/k")->value, "v");
}

TYPED_TEST_P(StoreConformanceTest, UnconditionalWrites) {
  Store& s = this->store();
  this->MustCreate("/k", "v1");
  this->MustCreate("/other", "x");
  absl::StatusOr<KeyValue> updated = s.Update("/k", "v2", 0);
  ASSERT_TRUE(updated.ok()) << updated.status();
  EXPECT_EQ(updated->mod_revision, 3);
  EXPECT_EQ(updated->create_revision, 1);
  absl::StatusOr<KeyValue> deleted = s.Delete("/k", 0);
  ASSERT_TRUE(deleted.ok()) << deleted.status();
  EXPECT_EQ(deleted->mod_revision, 4);
}

TYPED_TEST_P(StoreConformanceTest, RevisionsAreGlobalAndMonotonic) {
  Store& s = this->store();
  int64_t last = s.Revision();
  for (int i = 0; i < 20; ++i) {
    std::string key = absl::StrCat("/r/", i % 3);
    absl::StatusOr<KeyValue> kv = i < 3 ? s.Create(key, "v") : s.Update(key, "v", 0);
    ASSERT_TRUE(kv.ok()) << kv.status();
    EXPECT_EQ(kv->mod_revision, last + 1);
    EXPECT_EQ(kv->create_revision, (i % 3) + 1);
    last = kv->mod_revision;
  }
  EXPECT_EQ(s.Revision(), last);
}

TYPED_TEST_P(StoreConformanceTest, Range) {
  Store& s = this->store();
  for (const char* k : {"/a/1", "/a/2", "/a/3", "/ab", "/b/1", "/x\xff\xff", "/y"}) {
    this->MustCreate(k, std::string("val") + k);
  }
  struct Case {
    std::string name;
    std::string prefix, start_after;
    int64_t limit;
    std::vector<std::string> want;
    bool want_more;
  };
  std::vector<Case> cases = {
      {"prefix", "/a/", "", 0, {"/a/1", "/a/2", "/a/3"}, false},
      {"limit", "/a/", "", 2, {"/a/1", "/a/2"}, true},
      {"start_after", "/a/", "/a/1", 1, {"/a/2"}, true},
      {"last page", "/a/", "/a/2", 1, {"/a/3"}, false},
      {"exact limit", "/a/", "", 3, {"/a/1", "/a/2", "/a/3"}, false},
      {"huge limit", "/a/", "", std::numeric_limits<int64_t>::max(), {"/a/1", "/a/2", "/a/3"},
       false},
      {"start_after before prefix", "/a/", "/", 0, {"/a/1", "/a/2", "/a/3"}, false},
      {"start_after past prefix", "/a/", "/b", 0, {}, false},
      {"no match", "/c/", "", 0, {}, false},
      {"prefix is not a path", "/a", "", 0, {"/a/1", "/a/2", "/a/3", "/ab"}, false},
      {"0xff prefix", "/x\xff", "", 0, {"/x\xff\xff"}, false},
      {"everything", "", "", 0,
       {"/a/1", "/a/2", "/a/3", "/ab", "/b/1", "/x\xff\xff", "/y"}, false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    absl::StatusOr<RangeResult> r = s.Range(c.prefix, c.start_after, c.limit);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_THAT(this->Keys(*r), ::testing::ElementsAreArray(c.want));
    EXPECT_EQ(r->more, c.want_more);
    EXPECT_EQ(r->revision, 7);
  }
  absl::StatusOr<RangeResult> one = s.Range("/b/", "", 0);
  ASSERT_TRUE(one.ok());
  ASSERT_EQ(one->kvs.size(), 1u);
  EXPECT_EQ(one->kvs[0].value, "val/b/1");
  EXPECT_EQ(one->kvs[0].create_revision, 5);
  EXPECT_EQ(one->kvs[0].mod_revision, 5);
}

TYPED_TEST_P(StoreConformanceTest, WatchFromNow) {
  Store& s = this->store();
  this->MustCreate("/w/old", "x");
  EventRecorder rec;
  auto handle = s.Watch("/w/", -1, rec.Callback());
  ASSERT_TRUE(handle.ok()) << handle.status();
  this->MustCreate("/w/new", "y");
  ASSERT_TRUE(s.Update("/w/old", "x2", 0).ok());
  // Live events are delivered before the write returns.
  std::vector<Event> events = rec.Events();
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].type, Event::Type::kPut);
  EXPECT_EQ(events[0].kv.key, "/w/new");
  EXPECT_EQ(events[0].kv.value, "y");
  EXPECT_TRUE(events[0].prev.key.empty());
  EXPECT_EQ(events[1].kv.key, "/w/old");
  EXPECT_EQ(events[1].kv.value, "x2");
  EXPECT_EQ(events[1].kv.create_revision, 1);
  EXPECT_EQ(events[1].prev.value, "x");
  EXPECT_EQ(events[1].prev.mod_revision, 1);
  EXPECT_THAT(rec.Revisions(), ::testing::ElementsAre(2, 3));
}

TYPED_TEST_P(StoreConformanceTest, WatchReplaysHistory) {
  Store& s = this->store();
  for (int i = 1; i <= 5; ++i) this->MustCreate(absl::StrCat("/h/", i), "v");
  EventRecorder rec;
  auto handle = s.Watch("/h/", 2, rec.Callback());
  ASSERT_TRUE(handle.ok()) << handle.status();
  this->MustCreate("/h/6", "v");
  ASSERT_TRUE(rec.WaitForCount(4));
  EXPECT_THAT(rec.Revisions(), ::testing::ElementsAre(3, 4, 5, 6));
  EXPECT_EQ(rec.Events()[0].kv.key, "/h/3");

  EventRecorder all;
  auto from_zero = s.Watch("", 0, all.Callback());
  ASSERT_TRUE(from_zero.ok()) << from_zero.status();
  ASSERT_TRUE(all.WaitForCount(6));
  EXPECT_THAT(all.Revisions(), ::testing::ElementsAre(1, 2, 3, 4, 5, 6));
}

TYPED_TEST_P(StoreConformanceTest, WatchFiltersByPrefix) {
  Store& s = this->store();
  EventRecorder jobs, pods;
  auto h1 = s.Watch("/jobs/", -1, jobs.Callback());
  auto h2 = s.Watch("/pods/", -1, pods.Callback());
  ASSERT_TRUE(h1.ok() && h2.ok());
  this->MustCreate("/jobs/a", "1");
  this->MustCreate("/pods/a", "2");
  this->MustCreate("/jobsx", "3");
  this->MustCreate("/jobs/b", "4");
  EXPECT_THAT(jobs.Revisions(), ::testing::ElementsAre(1, 4));
  EXPECT_THAT(pods.Revisions(), ::testing::ElementsAre(2));
}

TYPED_TEST_P(StoreConformanceTest, DeleteEventCarriesPrevValue) {
  Store& s = this->store();
  this->MustCreate("/d/x", "first");
  ASSERT_TRUE(s.Update("/d/x", "last", 0).ok());
  EventRecorder rec;
  auto handle = s.Watch("/d/", -1, rec.Callback());
  ASSERT_TRUE(handle.ok());
  ASSERT_TRUE(s.Delete("/d/x", 2).ok());
  std::vector<Event> events = rec.Events();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].type, Event::Type::kDelete);
  EXPECT_EQ(events[0].revision(), 3);
  EXPECT_EQ(events[0].kv.key, "/d/x");
  EXPECT_EQ(events[0].kv.value, "last");
  EXPECT_EQ(events[0].kv.create_revision, 1);
  EXPECT_EQ(events[0].prev.key, "/d/x");
  EXPECT_EQ(events[0].prev.value, "last");
  EXPECT_EQ(events[0].prev.mod_revision, 2);
}

TYPED_TEST_P(StoreConformanceTest, WatchFutureRevision) {
  Store& s = this->store();
  this->MustCreate("/f/1", "v");
  EventRecorder rec;
  auto handle = s.Watch("/f/", 3, rec.Callback());
  ASSERT_TRUE(handle.ok()) << handle.status();
  this->MustCreate("/f/2", "v");
  this->MustCreate("/f/3", "v");
  this->MustCreate("/f/4", "v");
  EXPECT_THAT(rec.Revisions(), ::testing::ElementsAre(4));
}

TYPED_TEST_P(StoreConformanceTest, ConcurrentWritersKeepEventOrder) {
  Store& s = this->store();
  constexpr int kThreads = 8, kPerThread = 150, kPrefixes = 3;
  EventRecorder all;
  std::vector<std::unique_ptr<EventRecorder>> per_prefix;
  std::vector<std::unique_ptr<WatchHandle>> handles;
  for (int p = 0; p < kPrefixes; ++p) {
    per_prefix.push_back(std::make_unique<EventRecorder>());
    auto h = s.Watch(absl::StrCat("/c", p, "/"), -1, per_prefix.back()->Callback());
    ASSERT_TRUE(h.ok());
    handles.push_back(std::move(*h));
  }
  auto h = s.Watch("", -1, all.Callback());
  ASSERT_TRUE(h.ok());
  handles.push_back(std::move(*h));
  std::vector<std::vector<int64_t>> acked(kPrefixes);
  absl::Mutex acked_mu;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        int p = (t + i) % kPrefixes;
        absl::StatusOr<KeyValue> kv = s.Create(absl::StrCat("/c", p, "/", t, "-", i), "v");
        ASSERT_TRUE(kv.ok()) << kv.status();
        absl::MutexLock lock(&acked_mu);
        acked[p].push_back(kv->mod_revision);
      }
    });
  }
  for (auto& t : threads) t.join();
  const int64_t total = kThreads * kPerThread;
  ASSERT_EQ(s.Revision(), total);
  std::vector<int64_t> want_all(total);
  for (int64_t i = 0; i < total; ++i) want_all[i] = i + 1;
  EXPECT_EQ(all.Revisions(), want_all);  // No gaps, no duplicates, in order.
  for (int p = 0; p < kPrefixes; ++p) {
    SCOPED_TRACE(p);
    std::sort(acked[p].begin(), acked[p].end());
    EXPECT_EQ(per_prefix[p]->Revisions(), acked[p]);
  }
}

TYPED_TEST_P(StoreConformanceTest, WatchReplayRacingWriters) {
  Store& s = this->store();
  for (int i = 0; i < 50; ++i) this->MustCreate(absl::StrCat("/z/pre", i), "v");
  std::atomic<bool> stop{false};
  std::thread writer([&] {
    for (int i = 0; i < 300 && !stop; ++i) ASSERT_TRUE(s.Create(absl::StrCat("/z/", i), "v").ok());
  });
  EventRecorder rec;
  auto handle = s.Watch("/z/", 10, rec.Callback());
  ASSERT_TRUE(handle.ok()) << handle.status();
  writer.join();
  const int64_t last = s.Revision();
  ASSERT_TRUE(rec.WaitForCount(static_cast<size_t>(last - 10)));
  std::vector<int64_t> revs = rec.Revisions();
  ASSERT_EQ(revs.size(), static_cast<size_t>(last - 10));
  for (size_t i = 0; i < revs.size(); ++i) ASSERT_EQ(revs[i], 11 + static_cast<int64_t>(i));
}

TYPED_TEST_P(StoreConformanceTest, CompactionMakesOldRevisionsUnwatchable) {
  Store& s = this->store();
  for (int i = 1; i <= 5; ++i) this->MustCreate(absl::StrCat("/k/", i), "v");
  ASSERT_TRUE(s.Compact(3).ok());
  EXPECT_EQ(s.OldestWatchableRevision(), 3);
  EventRecorder rec;
  auto old = s.Watch("/k/", 2, rec.Callback());
  EXPECT_EQ(old.status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_THAT(std::string(old.status().message()), ::testing::HasSubstr("compacted"));
  auto ok = s.Watch("/k/", 3, rec.Callback());
  ASSERT_TRUE(ok.ok()) << ok.status();
  ASSERT_TRUE(rec.WaitForCount(2));
  EXPECT_THAT(rec.Revisions(), ::testing::ElementsAre(4, 5));
  EXPECT_EQ(s.Compact(99).code(), absl::StatusCode::kOutOfRange);  // Future revision.
  EXPECT_TRUE(s.Compact(2).ok());  // Already compacted: no-op.
  EXPECT_EQ(s.OldestWatchableRevision(), 3);
  // Data is untouched by compaction.
  EXPECT_EQ(s.Get("/k/1")->mod_revision, 1);
}

TYPED_TEST_P(StoreConformanceTest, DestroyingHandleStopsCallbacks) {
  Store& s = this->store();
  EventRecorder rec;
  auto handle = s.Watch("/s/", -1, rec.Callback());
  ASSERT_TRUE(handle.ok());
  this->MustCreate("/s/1", "v");
  handle->reset();
  this->MustCreate("/s/2", "v");
  EXPECT_THAT(rec.Revisions(), ::testing::ElementsAre(1));
}

TYPED_TEST_P(StoreConformanceTest, DestroyingHandleWaitsForRunningCallback) {
  Store& s = this->store();
  absl::Mutex mu;
  bool entered = false, release = false;
  std::atomic<bool> callback_done{false};
  auto handle = s.Watch("/s/", -1, [&](const Event&) {
    absl::MutexLock lock(&mu);
    entered = true;
    mu.Await(absl::Condition(&release));
    callback_done = true;
  });
  ASSERT_TRUE(handle.ok());
  std::thread writer([&] { ASSERT_TRUE(s.Create("/s/1", "v").ok()); });
  {
    absl::MutexLock lock(&mu);
    mu.Await(absl::Condition(&entered));
  }
  std::thread destroyer([&] {
    handle->reset();
    EXPECT_TRUE(callback_done.load());  // The destructor waited for the callback.
  });
  {
    absl::MutexLock lock(&mu);
    release = true;
  }
  destroyer.join();
  writer.join();
  ASSERT_TRUE(s.Create("/s/2", "v").ok());
}

// CreateMany: each entry on its own (one failing does not fail the others),
// results in order, revisions consecutive for the successes, watchers see
// them in that order.
TYPED_TEST_P(StoreConformanceTest, CreateManyEachOnItsOwn) {
  Store& s = this->store();
  this->MustCreate("/m/dup", "old");
  EventRecorder rec;
  auto handle = s.Watch("/m/", -1, rec.Callback());
  ASSERT_TRUE(handle.ok());
  std::vector<std::pair<std::string, std::string>> kvs = {
      {"/m/a", "1"}, {"/m/dup", "x"}, {"", "empty key"}, {"/m/b", "2"}, {"/m/a", "again"}};
  std::vector<absl::StatusOr<KeyValue>> r = s.CreateMany(std::move(kvs));
  ASSERT_EQ(r.size(), 5u);
  ASSERT_TRUE(r[0].ok()) << r[0].status();
  EXPECT_EQ(r[0]->key, "/m/a");
  EXPECT_EQ(r[0]->mod_revision, 2);
  EXPECT_EQ(r[1].status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(r[2].status().code(), absl::StatusCode::kInvalidArgument);
  ASSERT_TRUE(r[3].ok()) << r[3].status();
  EXPECT_EQ(r[3]->value, "2");
  EXPECT_EQ(r[3]->mod_revision, 3);
  EXPECT_EQ(r[4].status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(s.Get("/m/dup")->value, "old");
  EXPECT_EQ(s.Get("/m/a")->value, "1");
  EXPECT_EQ(s.Revision(), 3);
  EXPECT_THAT(rec.Revisions(), ::testing::ElementsAre(2, 3));
  EXPECT_TRUE(s.CreateMany({}).empty());
}

// UpdateMany: each entry on its own as Update (a stale or missing key fails
// alone), results in order, consecutive revisions for the successes.
TYPED_TEST_P(StoreConformanceTest, UpdateManyEachOnItsOwn) {
  Store& s = this->store();
  const int64_t a = this->MustCreate("/u/a", "a0").mod_revision;  // 1
  this->MustCreate("/u/b", "b0");                                 // 2
  EventRecorder rec;
  auto handle = s.Watch("/u/", -1, rec.Callback());
  ASSERT_TRUE(handle.ok());
  std::vector<Store::UpdateOp> ops = {{"/u/a", "a1", a},  {"/u/b", "stale", a},
                                      {"/u/gone", "x", 0}, {"", "empty key", 0},
                                      {"/u/b", "b1", 0}};
  std::vector<absl::StatusOr<KeyValue>> r = s.UpdateMany(std::move(ops));
  ASSERT_EQ(r.size(), 5u);
  ASSERT_TRUE(r[0].ok()) << r[0].status();
  EXPECT_EQ(r[0]->mod_revision, 3);
  EXPECT_EQ(r[1].status().code(), absl::StatusCode::kAborted);
  EXPECT_EQ(r[2].status().code(), absl::StatusCode::kNotFound);
  EXPECT_FALSE(r[3].ok());  // An empty key is never stored.
  ASSERT_TRUE(r[4].ok()) << r[4].status();
  EXPECT_EQ(r[4]->mod_revision, 4);
  EXPECT_EQ(s.Get("/u/a")->value, "a1");
  EXPECT_EQ(s.Get("/u/b")->value, "b1");
  EXPECT_EQ(s.Revision(), 4);
  EXPECT_THAT(rec.Revisions(), ::testing::ElementsAre(3, 4));
  EXPECT_TRUE(s.UpdateMany({}).empty());
}

// UpdateMany with chained entries (after_previous): an entry is written only
// when the one before it was; a chain stops at its first failure, entries
// outside it go on, and the first entry's flag has no predecessor to wait for.
TYPED_TEST_P(StoreConformanceTest, UpdateManyChainStopsAtFirstFailure) {
  Store& s = this->store();
  const int64_t a = this->MustCreate("/c/a", "a0").mod_revision;  // 1
  const int64_t b = this->MustCreate("/c/b", "b0").mod_revision;  // 2
  this->MustCreate("/c/c", "c0");                                 // 3
  std::vector<Store::UpdateOp> ops(9);
  ops[0] = {"/c/a", "a1", a, /*after_previous=*/true};  // first: written
  ops[1] = {"/c/n", "n0", 0, true, /*create=*/true};    // created (a1 was written)
  ops[2] = {"/c/b", "b1", b, true};                     // written
  ops[3] = {"/c/c", "stale", a, true};                  // Aborted: stale
  ops[4] = {"/c/a", "a2", 0, true};                     // chain broken: not written
  ops[5] = {"/c/m", "m0", 0, true, true};               // still broken: not created
  ops[6] = {"/c/c", "c1", 0, false};                    // a new start: written
  ops[7] = {"/c/n", "again", 0, true, true};            // AlreadyExists
  ops[8] = {"/c/b", "b2", 0, true};                     // broken by it
  std::vector<absl::StatusOr<KeyValue>> r = s.UpdateMany(std::move(ops));
  ASSERT_EQ(r.size(), 9u);
  ASSERT_TRUE(r[0].ok()) << r[0].status();
  ASSERT_TRUE(r[1].ok()) << r[1].status();
  ASSERT_TRUE(r[2].ok()) << r[2].status();
  EXPECT_EQ(r[1]->mod_revision, r[0]->mod_revision + 1);
  EXPECT_EQ(r[1]->create_revision, r[1]->mod_revision);
  EXPECT_EQ(r[2]->mod_revision, r[1]->mod_revision + 1);
  EXPECT_EQ(r[3].status().code(), absl::StatusCode::kAborted);
  EXPECT_EQ(r[4].status().code(), absl::StatusCode::kAborted);
  EXPECT_EQ(r[5].status().code(), absl::StatusCode::kAborted);
  ASSERT_TRUE(r[6].ok()) << r[6].status();
  EXPECT_EQ(r[7].status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(r[8].status().code(), absl::StatusCode::kAborted);
  EXPECT_EQ(s.Get("/c/a")->value, "a1");
  EXPECT_EQ(s.Get("/c/b")->value, "b1");
  EXPECT_EQ(s.Get("/c/c")->value, "c1");
  EXPECT_EQ(s.Get("/c/n")->value, "n0");
  EXPECT_EQ(s.Get("/c/m").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(s.Revision(), 7);
}

// MVCC: a range reads any revision from the compacted one on, pages of it
// stay one snapshot while writes go on, and compaction ends the past.
TYPED_TEST_P(StoreConformanceTest, RangeAtPastRevision) {
  Store& s = *this->store_;
  ASSERT_TRUE(s.Create("/p/a", "a1").ok());   // 1
  ASSERT_TRUE(s.Create("/p/b", "b1").ok());   // 2
  ASSERT_TRUE(s.Create("/p/c", "c1").ok());   // 3
  ASSERT_TRUE(s.Update("/p/a", "a2", 0).ok());  // 4
  ASSERT_TRUE(s.Delete("/p/b", 0).ok());      // 5
  ASSERT_TRUE(s.Create("/p/d", "d1").ok());   // 6
  ASSERT_TRUE(s.Create("/q/x", "x").ok());    // 7
  auto values = [](const RangeResult& r) {
    std::vector<std::string> out;
    for (const KeyValue& kv : r.kvs) out.push_back(kv.key + "=" + kv.value);
    return out;
  };
  absl::StatusOr<RangeResult> at3 = s.RangeAtRevision("/p/", "", 0, 3);
  ASSERT_TRUE(at3.ok()) << at3.status();
  EXPECT_EQ(at3->revision, 3);
  EXPECT_THAT(values(*at3), ::testing::ElementsAre("/p/a=a1", "/p/b=b1", "/p/c=c1"));
  EXPECT_EQ(at3->kvs[0].mod_revision, 1);
  // Paging at revision 4: two pages, the deleted-later /p/b included.
  absl::StatusOr<RangeResult> p1 = s.RangeAtRevision("/p/", "", 2, 4);
  ASSERT_TRUE(p1.ok());
  EXPECT_TRUE(p1->more);
  EXPECT_THAT(values(*p1), ::testing::ElementsAre("/p/a=a2", "/p/b=b1"));
  ASSERT_TRUE(s.Update("/p/c", "c2", 0).ok());  // 8: after the first page
  absl::StatusOr<RangeResult> p2 = s.RangeAtRevision("/p/", "/p/b", 2, 4);
  ASSERT_TRUE(p2.ok());
  EXPECT_FALSE(p2->more);
  EXPECT_THAT(values(*p2), ::testing::ElementsAre("/p/c=c1"));
  absl::StatusOr<RangeResult> now = s.RangeAtRevision("/p/", "", 0, 0);
  ASSERT_TRUE(now.ok());
  EXPECT_EQ(now->revision, 8);
  EXPECT_THAT(values(*now), ::testing::ElementsAre("/p/a=a2", "/p/c=c2", "/p/d=d1"));
  EXPECT_EQ(s.RangeAtRevision("/p/", "", 0, 9).status().code(), absl::StatusCode::kOutOfRange);
  ASSERT_TRUE(s.Compact(5).ok());
  EXPECT_EQ(s.CompactedRevision(), 5);
  EXPECT_EQ(s.RangeAtRevision("/p/", "", 0, 4).status().code(), absl::StatusCode::kOutOfRange);
  absl::StatusOr<RangeResult> at5 = s.RangeAtRevision("/p/", "", 0, 5);
  ASSERT_TRUE(at5.ok()) << at5.status();
  EXPECT_THAT(values(*at5), ::testing::ElementsAre("/p/a=a2", "/p/c=c1"));
  absl::StatusOr<RangeResult> at7 = s.RangeAtRevision("/p/", "", 0, 7);
  ASSERT_TRUE(at7.ok());
  EXPECT_THAT(values(*at7), ::testing::ElementsAre("/p/a=a2", "/p/c=c1", "/p/d=d1"));
}

// A watch from the compacted revision replays every later change with its
// previous value, including one whose previous version is at or below it.
TYPED_TEST_P(StoreConformanceTest, WatchFromCompactedRevisionReplays) {
  Store& s = *this->store_;
  ASSERT_TRUE(s.Create("/w/a", "1").ok());      // 1
  ASSERT_TRUE(s.Update("/w/a", "2", 0).ok());   // 2
  ASSERT_TRUE(s.Create("/w/b", "b").ok());      // 3
  ASSERT_TRUE(s.Update("/w/a", "3", 0).ok());   // 4
  ASSERT_TRUE(s.Delete("/w/b", 0).ok());        // 5
  ASSERT_TRUE(s.Compact(3).ok());
  EXPECT_EQ(s.Watch("/w/", 2, [](const Event&) {}).status().code(),
            absl::StatusCode::kOutOfRange);
  EventRecorder rec;
  auto h = s.Watch("/w/", 3, rec.Callback());
  ASSERT_TRUE(h.ok()) << h.status();
  ASSERT_TRUE(s.Create("/w/c", "c").ok());      // 6: live, after the replay
  ASSERT_TRUE(rec.WaitForCount(3));
  std::vector<Event> ev = rec.Events();
  ASSERT_EQ(ev.size(), 3u);
  EXPECT_EQ(ev[0].revision(), 4);
  EXPECT_EQ(ev[0].prev.value, "2");
  EXPECT_EQ(ev[0].kv.create_revision, 1);
  EXPECT_EQ(ev[1].type, Event::Type::kDelete);
  EXPECT_EQ(ev[1].kv.value, "b");
  EXPECT_EQ(ev[1].kv.create_revision, 3);
  EXPECT_EQ(ev[2].revision(), 6);
  EXPECT_TRUE(ev[2].prev.key.empty());
}

// A delete that records the key's final value: one revision, and its event
// (live and replayed) carries that value.
TYPED_TEST_P(StoreConformanceTest, DeleteWithFinalValueIsOneRevision) {
  Store& s = *this->store_;
  ASSERT_TRUE(s.Create("/f/a", "held").ok());  // 1
  EXPECT_EQ(s.DeleteWithFinalValue("/f/a", 7, "final").status().code(),
            absl::StatusCode::kAborted);
  EventRecorder live;
  auto h = s.Watch("/f/", -1, live.Callback());
  ASSERT_TRUE(h.ok());
  absl::StatusOr<KeyValue> d = s.DeleteWithFinalValue("/f/a", 1, "final");
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->mod_revision, 2);
  EXPECT_EQ(d->value, "final");
  EXPECT_EQ(s.Revision(), 2);
  EXPECT_EQ(s.Get("/f/a").status().code(), absl::StatusCode::kNotFound);
  ASSERT_TRUE(live.WaitForCount(1));
  EXPECT_EQ(live.Events()[0].type, Event::Type::kDelete);
  EXPECT_EQ(live.Events()[0].kv.value, "final");
  EXPECT_EQ(live.Events()[0].prev.value, "held");
  EventRecorder replay;
  auto r = s.Watch("/f/", 1, replay.Callback());
  ASSERT_TRUE(r.ok());
  ASSERT_TRUE(replay.WaitForCount(1));
  EXPECT_EQ(replay.Events()[0].kv.value, "final");
  EXPECT_EQ(replay.Events()[0].prev.value, "held");
}

REGISTER_TYPED_TEST_SUITE_P(StoreConformanceTest, RangeAtPastRevision,
                            WatchFromCompactedRevisionReplays, DeleteWithFinalValueIsOneRevision, CreateGetUpdateDelete, ErrorCodes,
                            UnconditionalWrites, RevisionsAreGlobalAndMonotonic, Range,
                            WatchFromNow, WatchReplaysHistory, WatchFiltersByPrefix,
                            DeleteEventCarriesPrevValue, WatchFutureRevision,
                            ConcurrentWritersKeepEventOrder, WatchReplayRacingWriters,
                            CompactionMakesOldRevisionsUnwatchable,
                            DestroyingHandleStopsCallbacks,
                            DestroyingHandleWaitsForRunningCallback, CreateManyEachOnItsOwn,
                            UpdateManyEachOnItsOwn, UpdateManyChainStopsAtFirstFailure);

}  // namespace batchd::store::testing
