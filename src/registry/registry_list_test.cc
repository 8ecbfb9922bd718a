// LIST with resourceVersion / resourceVersionMatch / limit / continue as
// kube-apiserver serves it, watches older than the cache's ring, and
// bookmarks that never pass an unsent event. Every test runs on the memory
// store and on etcd (a real `etcd` the test starts, as store_etcd_test does;
// skipped, saying so, where none is installed): resourceVersions are then
// etcd's revisions and 410s come from etcd's compaction.
#include <algorithm>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "api/testing/builders.h"
#include "common/testing/fake_clock.h"
#include "gtest/gtest.h"
#include "registry/errors.h"
#include "registry/registry.h"
#include "store/etcd/etcd_store.h"
#include "store/memory/memory_store.h"
#include "store/testing/etcd_process.h"

namespace batchd::registry {
namespace {

using api::Json;
using api::testing::MakeJob;

enum class Backend { kMemory, kEtcd };

class RegistryListTest : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    if (GetParam() == Backend::kEtcd) {
      if (store::testing::FindEtcdBinary().empty()) {
        GTEST_SKIP() << "no etcd binary on PATH (install Debian's etcd-server, or set "
                        "BATCHD_ETCD): the registry tests on etcd are skipped";
      }
      etcd_ = std::make_unique<store::testing::EtcdProcess>();
      ASSERT_TRUE(etcd_->Start().ok());
      store::EtcdOptions o;
      o.servers = {etcd_->client_url()};
      o.prefix = "/registry";
      o.revision_offset = 1;  // a fresh etcd is at revision 1, a fresh store at 0
      auto s = store::EtcdStore::Open(o);
      ASSERT_TRUE(s.ok()) << s.status();
      store_ = std::move(*s);
    } else {
      store_ = std::make_unique<store::MemoryStore>();
    }
    StartRegistry();
  }
  void TearDown() override {
    reg_.reset();
    store_.reset();
  }
  void StartRegistry() {
    reg_.reset();
    reg_ = std::make_unique<Registry>(*store_, api::BuiltinScheme(), clock_);
    ASSERT_TRUE(reg_->Start().ok());
    jobs_ = reg_->scheme().ByResource("batch", "v1", "jobs");
    ASSERT_NE(jobs_, nullptr);
  }
  Json MustCreate(const std::string& name) {
    auto r = reg_->Create(*jobs_, "default", MakeJob(name).Obj(), WriteOptions{});
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : Json();
  }
  void MustDelete(const std::string& name) {
    DeleteOptions d;
    d.propagation_policy = "Background";
    auto r = reg_->Delete(*jobs_, "default", name, d);
    ASSERT_TRUE(r.ok()) << r.status();
  }
  std::vector<std::string> Names(const ListResult& r) {
    std::vector<std::string> out;
    for (const auto& o : r.items) out.push_back(o->Decode()["metadata"]["name"]);
    return out;
  }
  std::string Reason(const absl::Status& s) { return GetPayload(s).reason; }

  FakeClock clock_;
  std::unique_ptr<store::testing::EtcdProcess> etcd_;
  std::unique_ptr<store::Store> store_;
  std::unique_ptr<Registry> reg_;
  const api::KindDef* jobs_ = nullptr;
};

// Pages after the first are read at the first page's revision: creates and
// deletes in between show in none of them.
TEST_P(RegistryListTest, PagedListIsOneSnapshot) {
  for (const char* n : {"a", "b", "c", "d", "e"}) MustCreate(n);
  ListOptions o;
  o.limit = 2;
  auto p1 = reg_->List(*jobs_, "default", o);
  ASSERT_TRUE(p1.ok()) << p1.status();
  EXPECT_EQ(Names(*p1), (std::vector<std::string>{"a", "b"}));
  ASSERT_FALSE(p1->continue_token.empty());
  MustDelete("c");
  MustCreate("bb");
  MustCreate("f");
  o.continue_token = p1->continue_token;
  auto p2 = reg_->List(*jobs_, "default", o);
  ASSERT_TRUE(p2.ok()) << p2.status();
  EXPECT_EQ(p2->revision, p1->revision);
  EXPECT_EQ(Names(*p2), (std::vector<std::string>{"c", "d"}));
  o.continue_token = p2->continue_token;
  auto p3 = reg_->List(*jobs_, "default", o);
  ASSERT_TRUE(p3.ok()) << p3.status();
  EXPECT_EQ(Names(*p3), (std::vector<std::string>{"e"}));
  EXPECT_TRUE(p3->continue_token.empty());
  // Once compacted past the snapshot, the token is 410 Expired.
  ASSERT_TRUE(store_->Compact(store_->Revision()).ok());
  o.continue_token = p1->continue_token;
  auto gone = reg_->List(*jobs_, "default", o);
  EXPECT_EQ(Reason(gone.status()), "Expired");
  EXPECT_NE(gone.status().message().find("The provided continue parameter is too old"),
            std::string::npos);
}

TEST_P(RegistryListTest, ResourceVersionMatch) {
  MustCreate("a");
  const int64_t rv1 = store_->Revision();
  MustCreate("b");
  ListOptions o;
  o.resource_version = std::to_string(rv1);
  o.resource_version_match = "Exact";
  auto exact = reg_->List(*jobs_, "default", o);
  ASSERT_TRUE(exact.ok()) << exact.status();
  EXPECT_EQ(exact->revision, rv1);
  EXPECT_EQ(Names(*exact), (std::vector<std::string>{"a"}));
  o.resource_version_match = "NotOlderThan";
  auto newer = reg_->List(*jobs_, "default", o);
  ASSERT_TRUE(newer.ok());
  EXPECT_EQ(Names(*newer), (std::vector<std::string>{"a", "b"}));
  // A revision the server has not reached: it waits for its cache (3 s by
  // the server's clock, as kube-apiserver), then answers 504 Too large
  // resource version, with the cause and when to retry.
  o.resource_version = std::to_string(store_->Revision() + 10);
  absl::StatusOr<ListResult> future;
  std::thread lister([&] { future = reg_->List(*jobs_, "default", o); });
  while (reg_->cache().RevisionWaiters() == 0) std::this_thread::yield();
  clock_.Advance(absl::Seconds(3));
  lister.join();
  EXPECT_EQ(Reason(future.status()), "Timeout");
  EXPECT_NE(future.status().message().find("Too large resource version"), std::string::npos);
  const Json& details = GetPayload(future.status()).details;
  EXPECT_EQ(details["causes"][0]["reason"], "ResourceVersionTooLarge");
  EXPECT_EQ(details["retryAfterSeconds"], 1);
  // Not waiting at all (a request whose own timeout is spent): 504 at once;
  // a get with that resourceVersion too.
  o.fresh_wait = absl::ZeroDuration();
  EXPECT_EQ(Reason(reg_->List(*jobs_, "default", o).status()), "Timeout");
  o.fresh_wait = absl::Seconds(3);
  EXPECT_EQ(Reason(reg_->Get(*jobs_, "default", "a", o.resource_version, absl::ZeroDuration())
                       .status()),
            "Timeout");
  EXPECT_EQ(Reason(reg_->Get(*jobs_, "default", "a", "x1").status()), "BadRequest");
  EXPECT_TRUE(reg_->Get(*jobs_, "default", "a", std::to_string(rv1)).ok());
  // Exact at a revision the store has not reached: 504 too.
  o.resource_version_match = "Exact";
  EXPECT_EQ(Reason(reg_->List(*jobs_, "default", o).status()), "Timeout");
  // Refusals as ListOptions validation words them.
  o.resource_version = "0";
  o.resource_version_match = "Exact";
  EXPECT_EQ(Reason(reg_->List(*jobs_, "default", o).status()), "Invalid");
  o.resource_version = "";
  o.resource_version_match = "NotOlderThan";
  EXPECT_EQ(Reason(reg_->List(*jobs_, "default", o).status()), "Invalid");
  o.resource_version = "1";
  o.resource_version_match = "Sometimes";
  EXPECT_EQ(Reason(reg_->List(*jobs_, "default", o).status()), "Invalid");
  // Exact and compacted: 410 Expired.
  ASSERT_TRUE(store_->Compact(store_->Revision()).ok());
  o.resource_version = std::to_string(rv1);
  o.resource_version_match = "Exact";
  auto old = reg_->List(*jobs_, "default", o);
  EXPECT_EQ(Reason(old.status()), "Expired");
  EXPECT_EQ(old.status().message(), "The resourceVersion for the provided list is too old.");
}

// A watch from a revision older than the cache's ring (here: a registry
// started after the writes, as after a server restart) replays the store's
// history instead of answering 410; compacted history is 410.
TEST_P(RegistryListTest, WatchOlderThanTheCacheReplaysTheStore) {
  MustCreate("a");
  const int64_t from = store_->Revision();
  MustCreate("b");
  MustDelete("a");
  StartRegistry();  // a fresh cache: its ring starts now
  ListOptions o;
  o.resource_version = std::to_string(from);
  auto w = reg_->Watch(*jobs_, "default", o);
  ASSERT_TRUE(w.ok()) << w.status();
  MustCreate("c");
  std::vector<std::string> seen;
  Watcher::Event ev;
  while ((seen.empty() || seen.back() != "ADDED c") && seen.size() < 10 &&
         (*w)->Next(&ev, absl::Seconds(30))) {
    seen.push_back(ev.type + " " + ev.object->Decode()["metadata"]["name"].get<std::string>());
  }
  EXPECT_EQ(seen, (std::vector<std::string>{"ADDED b", "DELETED a", "ADDED c"}));
  ASSERT_TRUE(store_->Compact(store_->Revision()).ok());
  o.resource_version = std::to_string(from);
  auto expired = reg_->Watch(*jobs_, "default", o);
  EXPECT_EQ(Reason(expired.status()), "Expired");
}

// A bookmark's revision never passes an event the watcher has not returned.
TEST_P(RegistryListTest, BookmarkNeverPassesAnUnsentEvent) {
  MustCreate("a");
  ListOptions o;
  o.resource_version = std::to_string(store_->Revision());
  auto w = reg_->Watch(*jobs_, "default", o);
  ASSERT_TRUE(w.ok());
  const int64_t start = store_->Revision();
  EXPECT_EQ((*w)->Revision(), start);
  MustCreate("b");
  MustCreate("c");
  // Two events queued, none returned: the bookmark stays at the start.
  EXPECT_EQ((*w)->Revision(), start);
  Watcher::Event ev;
  ASSERT_TRUE((*w)->Next(&ev, absl::Seconds(30)));
  EXPECT_EQ((*w)->Revision(), ev.object->revision);
  ASSERT_TRUE((*w)->Next(&ev, absl::Seconds(30)));
  EXPECT_EQ((*w)->Revision(), store_->Revision());
  // Writes elsewhere move an idle watcher's bookmark on.
  ASSERT_TRUE(
      reg_->Create(*jobs_, "kube-system", MakeJob("z", "kube-system").Obj(), WriteOptions{}).ok());
  EXPECT_EQ((*w)->Revision(), store_->Revision());
}

// PUT with metadata.uid: a precondition (409 on mismatch, kube's message).
TEST_P(RegistryListTest, UpdateHonoursUidPrecondition) {
  Json j = MustCreate("u");
  Json stale = j;
  stale["metadata"]["uid"] = "00000000-0000-0000-0000-000000000000";
  stale["metadata"].erase("resourceVersion");
  auto r = reg_->Update(*jobs_, "default", "u", stale, false, WriteOptions{});
  EXPECT_EQ(Reason(r.status()), "Conflict");
  EXPECT_EQ(r.status().message(),
            absl::StrCat("Operation cannot be fulfilled on jobs.batch \"u\": Precondition failed: "
                         "UID in precondition: 00000000-0000-0000-0000-000000000000, UID in "
                         "object meta: ",
                         j["metadata"]["uid"].get<std::string>()));
  Json good = j;
  good["metadata"].erase("resourceVersion");
  good["metadata"]["labels"]["x"] = "y";
  EXPECT_TRUE(reg_->Update(*jobs_, "default", "u", good, false, WriteOptions{}).ok());
}

// Removing the last finalizer of a deleting object deletes it in the same
// commit: one revision, no stored finalizer-less intermediate state.
TEST_P(RegistryListTest, EmptyingFinalizersDeletesInOneCommit) {
  auto c = reg_->Create(*jobs_, "default", MakeJob("f").Finalizer("example.com/hold").Obj(),
                        WriteOptions{});
  ASSERT_TRUE(c.ok());
  DeleteOptions bg;
  bg.propagation_policy = "Background";
  ASSERT_TRUE(reg_->Delete(*jobs_, "default", "f", bg).ok());
  const int64_t before = store_->Revision();
  auto cur = reg_->Get(*jobs_, "default", "f");
  ASSERT_TRUE(cur.ok());
  Json live = (*cur)->Decode();
  live["metadata"]["finalizers"] = Json::array();
  auto u = reg_->Update(*jobs_, "default", "f", live, false, WriteOptions{});
  ASSERT_TRUE(u.ok()) << u.status();
  EXPECT_EQ(store_->Revision(), before + 1);
  EXPECT_EQ(u->value("metadata", Json::object()).value("resourceVersion", ""),
            std::to_string(before + 1));
  EXPECT_FALSE(reg_->Get(*jobs_, "default", "f").ok());
}

// Create, get, update, delete and watch on one line of resourceVersions
// (etcd's revisions on etcd): a stale resourceVersion is 409 Conflict and
// changes nothing; a watch from the create's resourceVersion sees the update
// and the delete, each with its own; a list is at the store's revision.
TEST_P(RegistryListTest, WritesAndWatchShareResourceVersions) {
  Json a = MustCreate("w");
  const std::string rv1 = a["metadata"].value("resourceVersion", "");
  EXPECT_EQ(rv1, std::to_string(store_->Revision()));
  auto got = reg_->Get(*jobs_, "default", "w");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ((*got)->Decode()["metadata"].value("resourceVersion", ""), rv1);
  ListOptions o;
  o.resource_version = rv1;
  auto w = reg_->Watch(*jobs_, "default", o);
  ASSERT_TRUE(w.ok()) << w.status();
  Json upd = a;
  upd["metadata"]["labels"]["v"] = "2";
  auto u = reg_->Update(*jobs_, "default", "w", upd, false, WriteOptions{});
  ASSERT_TRUE(u.ok()) << u.status();
  const std::string rv2 = (*u)["metadata"].value("resourceVersion", "");
  EXPECT_GT(std::stoll(rv2), std::stoll(rv1));
  Json stale = a;
  stale["metadata"]["labels"]["v"] = "stale";
  auto s = reg_->Update(*jobs_, "default", "w", stale, false, WriteOptions{});
  EXPECT_EQ(Reason(s.status()), "Conflict");
  EXPECT_EQ((*reg_->Get(*jobs_, "default", "w"))->Decode()["metadata"]["labels"]["v"], "2");
  MustDelete("w");
  const int64_t deleted_at = store_->Revision();
  std::vector<std::string> seen;
  Watcher::Event ev;
  while (seen.size() < 2 && (*w)->Next(&ev, absl::Seconds(30))) {
    seen.push_back(absl::StrCat(ev.type, " ", ev.object->revision));
  }
  EXPECT_EQ(seen, (std::vector<std::string>{absl::StrCat("MODIFIED ", rv2),
                                            absl::StrCat("DELETED ", deleted_at)}));
  auto list = reg_->List(*jobs_, "default", ListOptions{});
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_EQ(list->revision, store_->Revision());
  EXPECT_TRUE(list->items.empty());
}

INSTANTIATE_TEST_SUITE_P(Stores, RegistryListTest,
                         ::testing::Values(Backend::kMemory, Backend::kEtcd),
                         [](const ::testing::TestParamInfo<Backend>& p) {
                           return p.param == Backend::kEtcd ? "Etcd" : "Memory";
                         });

// Two servers on one etcd. Right after a write through A, B's watch cache
// may not have it yet (B's own etcd watch delivers it a moment later): a
// list through B NotOlderThan the write's resourceVersion waits for B's
// cache and finds it, instead of 504; an Exact list reads etcd at that
// revision; a watch through B from it sends the next change, never the
// write itself. Repeated, so some of the reads do come before B's cache.
TEST(RegistryTwoServersTest, ReadsThroughBAtRevisionsWrittenThroughA) {
  if (store::testing::FindEtcdBinary().empty()) {
    GTEST_SKIP() << "no etcd binary on PATH (install Debian's etcd-server, or set "
                    "BATCHD_ETCD): the registry tests on etcd are skipped";
  }
  store::testing::EtcdProcess etcd;
  ASSERT_TRUE(etcd.Start().ok());
  store::EtcdOptions o;
  o.servers = {etcd.client_url()};
  o.prefix = "/registry";
  o.revision_offset = 1;
  auto store_a = store::EtcdStore::Open(o);
  auto store_b = store::EtcdStore::Open(o);
  ASSERT_TRUE(store_a.ok() && store_b.ok());
  // Nothing advances it: B's waits end when its cache gets there.
  FakeClock clock;
  Registry a(**store_a, api::BuiltinScheme(), clock);
  Registry b(**store_b, api::BuiltinScheme(), clock);
  ASSERT_TRUE(a.Start().ok());
  ASSERT_TRUE(b.Start().ok());
  const api::KindDef* jobs = a.scheme().ByResource("batch", "v1", "jobs");
  ASSERT_NE(jobs, nullptr);
  auto names = [](const ListResult& r) {
    std::vector<std::string> out;
    for (const auto& obj : r.items) out.push_back(obj->Decode()["metadata"]["name"]);
    return out;
  };
  for (int i = 0; i < 10; ++i) {
    SCOPED_TRACE(i);
    const std::string name = absl::StrCat("j", i);
    auto created = a.Create(*jobs, "default", MakeJob(name).Obj(), WriteOptions{});
    ASSERT_TRUE(created.ok()) << created.status();
    const std::string rv = (*created)["metadata"]["resourceVersion"];
    // Alternately the get and the watch come first, right after the write.
    auto get = [&] {
      auto got = b.Get(*jobs, "default", name, rv);
      ASSERT_TRUE(got.ok()) << got.status();
      EXPECT_EQ((*got)->revision, std::stoll(rv));
    };
    if (i % 2 == 0) get();
    ListOptions from;
    from.resource_version = rv;
    auto w = b.Watch(*jobs, "default", from);
    ASSERT_TRUE(w.ok()) << w.status();
    if (i % 2 == 1) get();
    ListOptions newer;
    newer.resource_version = rv;
    newer.resource_version_match = "NotOlderThan";
    auto listed = b.List(*jobs, "default", newer);
    ASSERT_TRUE(listed.ok()) << listed.status();
    EXPECT_GE(listed->revision, std::stoll(rv));
    const std::vector<std::string> seen = names(*listed);
    EXPECT_EQ(std::count(seen.begin(), seen.end(), name), 1);
    ListOptions exact = newer;
    exact.resource_version_match = "Exact";
    auto at = b.List(*jobs, "default", exact);
    ASSERT_TRUE(at.ok()) << at.status();
    EXPECT_EQ(at->revision, std::stoll(rv));
    EXPECT_EQ(names(*at).size(), static_cast<size_t>(2 * i + 1));  // j0..ji, k0..k(i-1)
    const std::string next = absl::StrCat("k", i);
    ASSERT_TRUE(a.Create(*jobs, "kube-system", MakeJob(next, "kube-system").Obj(), WriteOptions{}).ok());
    ASSERT_TRUE(a.Create(*jobs, "default", MakeJob(next).Obj(), WriteOptions{}).ok());
    Watcher::Event ev;
    ASSERT_TRUE((*w)->Next(&ev, absl::Seconds(30)));
    EXPECT_EQ(ev.type + " " + ev.object->Decode()["metadata"]["name"].get<std::string>(),
              "ADDED " + next);
  }
  EXPECT_EQ(b.cache().RevisionWaiters(), 0u);
}

}  // namespace
}  // namespace batchd::registry
