// PodIndex over an informer that keeps settled pods compact: the index holds
// names, so a settled pod's decoding is not kept alive, and For still gives
// every pod of the Job whole.
#include "api/meta/object_meta.h"
#include "api/testing/builders.h"
#include "client/in_process_client.h"
#include "client/informer.h"
#include "common/testing/fake_clock.h"
#include "controllers/job/expectations.h"
#include "gtest/gtest.h"
#include "reconcile/settled.h"
#include "registry/registry.h"
#include "store/memory/memory_store.h"

namespace batchd::controllers::job {
namespace {

using api::Json;

Json OwnedBy(const std::string& job) {
  return {{"apiVersion", "batch/v1"}, {"kind", "Job"}, {"name", job},
          {"uid", "uid-" + job},      {"controller", true}};
}

TEST(PodIndexTest, ReadsPodsFromTheInformerWithoutHoldingThem) {
  FakeClock clock;
  store::MemoryStore store;
  registry::Registry reg(store, api::BuiltinScheme(), clock);
  ASSERT_TRUE(reg.Start().ok());
  client::InProcessClient c(reg);
  const api::KindDef& pods = c.Kind("", "v1", "pods");
  client::Informer inf(c, pods);
  inf.SetCompactWhen(reconcile::SettledWhen(pods));
  PodIndex index;
  std::weak_ptr<const Json> seen_done;
  inf.AddHandlers({[&](const client::ObjectRef& p) {
                     index.Upsert(p);
                     if (api::meta::GetName(*p) == "done") seen_done = p;
                   },
                   [&](const client::ObjectRef& o, const client::ObjectRef& p) {
                     if (ControllingJobKey(*o) != ControllingJobKey(*p)) index.Remove(*o);
                     index.Upsert(p);
                   },
                   [&](const client::ObjectRef& p) { index.Remove(*p); }});
  ASSERT_TRUE(inf.Sync().ok());

  ASSERT_TRUE(c.Create(pods, "default", api::testing::MakePod("running").Owner(OwnedBy("j")).Obj())
                  .ok());
  ASSERT_TRUE(c.Create(pods, "default", api::testing::MakePod("done").Owner(OwnedBy("j")).Obj())
                  .ok());
  ASSERT_TRUE(c.Create(pods, "default", api::testing::MakePod("other").Owner(OwnedBy("k")).Obj())
                  .ok());
  ASSERT_TRUE(c.MergePatch(pods, "default", "done",
                           Json::parse(R"({"status":{"phase":"Succeeded"}})"), /*status=*/true)
                  .ok());
  EXPECT_EQ(inf.Pump(), 4);
  EXPECT_EQ(inf.CompactCount(), 1u);
  EXPECT_TRUE(seen_done.expired()) << "neither the informer nor the index holds its decoding";

  std::vector<client::ObjectRef> got = index.For("default/j", inf);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(api::meta::GetName(*got[0]), "done");
  EXPECT_EQ((*got[0])["status"]["phase"], "Succeeded");
  EXPECT_EQ(*got[0], *c.Get(pods, "default", "done"));
  EXPECT_EQ(*got[1], *c.Get(pods, "default", "running"));
  EXPECT_EQ(index.For("default/k", inf).size(), 1u);
  EXPECT_TRUE(index.For("default/none", inf).empty());

  // A pod gone from the informer is not returned, even before the index hears of it.
  client::DeleteOptions now;
  now.grace_period_seconds = 0;
  ASSERT_TRUE(c.Delete(pods, "default", "running", now).ok());
  client::Informer fresh(c, pods);
  ASSERT_TRUE(fresh.Sync().ok());
  got = index.For("default/j", fresh);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(api::meta::GetName(*got[0]), "done");
}

}  // namespace
}  // namespace batchd::controllers::job
