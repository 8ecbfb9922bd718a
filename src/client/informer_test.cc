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

}  // namespace
}  // namespace batchd::client
