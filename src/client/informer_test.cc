#include "client/informer.h"

#include "api/testing/builders.h"
#include "client/in_process_client.h"
#include "common/testing/fake_clock.h"
#include "gtest/gtest.h"
#include "store/memory/memory_store.h"

namespace batchd::client {
namespace {

using api::Json;

TEST(InformerTest, ListsThenFollowsChangesDeterministically) {
  FakeClock clock;
  store::MemoryStore store;
  registry::Registry reg(store, api::BuiltinScheme(), clock);
  ASSERT_TRUE(reg.Start().ok());
  InProcessClient c(reg);
  const api::KindDef& jobs = c.Kind("batch", "v1", "jobs");
  ASSERT_TRUE(c.Create(jobs, "default", api::testing::MakeJob("a").Obj()).ok());

  Informer inf(c, jobs);
  std::vector<std::string> events;
  inf.AddHandlers({[&](const ObjectRef& o) { events.push_back("add " + Informer::KeyOf(*o)); },
                   [&](const ObjectRef&, const ObjectRef& n) {
                     events.push_back("update " + Informer::KeyOf(*n));
                   },
                   [&](const ObjectRef& o) { events.push_back("delete " + Informer::KeyOf(*o)); }});
  ASSERT_TRUE(inf.Sync().ok());
  EXPECT_EQ(events, (std::vector<std::string>{"add default/a"}));

  ASSERT_TRUE(c.Create(jobs, "default", api::testing::MakeJob("b").Label("x", "1").Obj()).ok());
  ASSERT_TRUE(c.MergePatch(jobs, "default", "a", Json::parse(R"({"metadata":{"labels":{"y":"2"}}})")).ok());
  DeleteOptions bg;
  bg.propagation_policy = "Background";
  ASSERT_TRUE(c.Delete(jobs, "default", "a", bg).ok());
  EXPECT_EQ(inf.Pump(), 3);
  EXPECT_EQ(events, (std::vector<std::string>{"add default/a", "add default/b", "update default/a",
                                              "delete default/a"}));
  EXPECT_EQ(inf.Get("default", "a"), nullptr);
  ASSERT_NE(inf.Get("default", "b"), nullptr);
  EXPECT_EQ(inf.ListMatching("default", "x=1").size(), 1u);
  EXPECT_EQ(inf.List("other").size(), 0u);
}


// A job is "settled" here when it carries the label done=1.
bool Done(const Json& o) {
  const Json& m = o["metadata"];
  return m.contains("labels") && m["labels"].value("done", "") == "1";
}

Json Stored(InProcessClient& c, const api::KindDef& k, const std::string& name) {
  auto got = c.Get(k, "default", name);
  EXPECT_TRUE(got.ok());
  return got.ok() ? *got : Json();
}

TEST(InformerTest, SettledObjectsAreKeptCompactAndReadTheSame) {
  FakeClock clock;
  store::MemoryStore store;
  registry::Registry reg(store, api::BuiltinScheme(), clock);
  ASSERT_TRUE(reg.Start().ok());
  InProcessClient c(reg);
  const api::KindDef& jobs = c.Kind("batch", "v1", "jobs");
  ASSERT_TRUE(c.Create(jobs, "default", api::testing::MakeJob("listed").Label("done", "1").Obj()).ok());
  ASSERT_TRUE(c.Create(jobs, "default", api::testing::MakeJob("live").Obj()).ok());

  Informer inf(c, jobs);
  inf.SetCompactWhen(Done);
  std::weak_ptr<const Json> handed;  // what the add handler got for "watched"
  std::vector<std::string> updates;
  inf.AddHandlers({[&](const ObjectRef& o) {
                     if (Informer::KeyOf(*o) == "default/watched") handed = o;
                   },
                   [&](const ObjectRef& old_obj, const ObjectRef& n) {
                     // The previous state is whole even when it was kept compact.
                     auto done = [](const Json& o) {
                       return o["metadata"].value("labels", Json::object()).value("done", "-");
                     };
                     updates.push_back(Informer::KeyOf(*n) + " " + done(*old_obj) + "->" +
                                       done(*n) + " spec " +
                                       (old_obj->at("spec") == n->at("spec") ? "same" : "differs"));
                   },
                   nullptr});
  // Listed: "listed" is serialized by the informer itself.
  ASSERT_TRUE(inf.Sync().ok());
  EXPECT_EQ(inf.CompactCount(), 1u);

  // Watched: the in-process client hands over the watch cache's bytes.
  ASSERT_TRUE(c.Create(jobs, "default",
                       api::testing::MakeJob("watched").Label("done", "1").Label("x", "1").Obj())
                  .ok());
  EXPECT_EQ(inf.Pump(), 1);
  EXPECT_EQ(inf.CompactCount(), 2u);
  // Nothing keeps the decoding the handler saw once it returned.
  EXPECT_TRUE(handed.expired());

  // Every field reads as stored: Get, List and label selection.
  for (const char* name : {"listed", "live", "watched"}) {
    ObjectRef got = inf.Get("default", name);
    ASSERT_NE(got, nullptr) << name;
    EXPECT_EQ(*got, Stored(c, jobs, name)) << name;
  }
  std::vector<ObjectRef> all = inf.List("default");
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(*all[0], Stored(c, jobs, "listed"));
  EXPECT_EQ(*all[2], Stored(c, jobs, "watched"));
  EXPECT_EQ(inf.List().size(), 3u);
  EXPECT_EQ(inf.List("other").size(), 0u);
  ASSERT_EQ(inf.ListMatching("default", "x=1").size(), 1u);
  EXPECT_EQ(Informer::KeyOf(*inf.ListMatching("default", "x=1")[0]), "default/watched");

  // GetUnlessCompact: the live object, and nothing for a compact one.
  ASSERT_NE(inf.GetUnlessCompact("default", "live"), nullptr);
  EXPECT_EQ(*inf.GetUnlessCompact("default", "live"), Stored(c, jobs, "live"));
  EXPECT_EQ(inf.GetUnlessCompact("default", "listed"), nullptr);
  EXPECT_EQ(inf.GetUnlessCompact("default", "watched"), nullptr);
  EXPECT_EQ(inf.GetUnlessCompact("default", "absent"), nullptr);

  // Readers share one decoding while any holds it.
  ObjectRef a = inf.Get("default", "watched");
  EXPECT_EQ(inf.Get("default", "watched").get(), a.get());
  EXPECT_EQ(inf.List("default")[2].get(), a.get());
  a.reset();

  // A compact object that changes: handlers get its whole previous state; an
  // object no longer settled is decoded again, and one that becomes settled
  // is compacted.
  ASSERT_TRUE(c.MergePatch(jobs, "default", "watched",
                           Json::parse(R"({"metadata":{"labels":{"done":"0"}}})"))
                  .ok());
  ASSERT_TRUE(c.MergePatch(jobs, "default", "live",
                           Json::parse(R"({"metadata":{"labels":{"done":"1"}}})"))
                  .ok());
  EXPECT_EQ(inf.Pump(), 2);
  EXPECT_EQ(updates, (std::vector<std::string>{"default/watched 1->0 spec same",
                                               "default/live -->1 spec same"}));
  EXPECT_EQ(inf.CompactCount(), 2u);
  EXPECT_EQ(*inf.Get("default", "watched"), Stored(c, jobs, "watched"));
  EXPECT_EQ(*inf.Get("default", "live"), Stored(c, jobs, "live"));

  // Deleting a compact object: the delete handler gets it whole.
  std::string deleted;
  Informer inf2(c, jobs);
  inf2.SetCompactWhen(Done);
  inf2.AddHandlers({nullptr, nullptr, [&](const ObjectRef& o) { deleted = o->dump(); }});
  ASSERT_TRUE(inf2.Sync().ok());
  const std::string before = Stored(c, jobs, "listed").dump();
  DeleteOptions bg;
  bg.propagation_policy = "Background";
  ASSERT_TRUE(c.Delete(jobs, "default", "listed", bg).ok());
  inf2.Pump();
  EXPECT_EQ(inf2.Get("default", "listed"), nullptr);
  ASSERT_FALSE(deleted.empty());
  EXPECT_EQ(Json::parse(deleted)["spec"], Json::parse(before)["spec"]);
}

}  // namespace
}  // namespace batchd::client
