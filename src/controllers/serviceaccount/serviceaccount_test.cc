// The default ServiceAccount of every namespace and the ServiceAccount
// admission plugin, on an in-memory registry and a FakeClock.
#include "controllers/serviceaccount/serviceaccount.h"

#include "client/in_process_client.h"
#include "common/testing/fake_clock.h"
#include "gtest/gtest.h"
#include "reconcile/controller.h"
#include "reconcile/events.h"
#include "registry/errors.h"
#include "registry/registry.h"
#include "store/memory/memory_store.h"

namespace batchd::controllers {
namespace {

using api::Json;

class ServiceAccountTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(reg_.Start().ok());
    ASSERT_TRUE(AddServiceAccountAdmission(reg_).ok());
    AddServiceAccountsController(ctx_);
    ASSERT_TRUE(mgr_.SyncAll().ok());
    mgr_.RunUntilIdle();
  }
  const api::KindDef& Sa() { return client_.Kind("", "v1", "serviceaccounts"); }
  const api::KindDef& Ns() { return client_.Kind("", "v1", "namespaces"); }
  const api::KindDef& Pods() { return client_.Kind("", "v1", "pods"); }
  bool HasDefault(const std::string& ns) { return client_.Get(Sa(), ns, "default").ok(); }
  absl::StatusOr<Json> CreatePod(const std::string& ns, const std::string& name, Json spec_extra) {
    Json pod = {{"apiVersion", "v1"},
                {"kind", "Pod"},
                {"metadata", {{"name", name}}},
                {"spec", {{"containers", {{{"name", "c"}, {"image", "busybox"}}}}}}};
    for (auto& [k, v] : spec_extra.items()) pod["spec"][k] = v;
    return client_.Create(Pods(), ns, pod);
  }

  FakeClock clock_;
  store::MemoryStore store_;
  registry::Registry reg_{store_, api::BuiltinScheme(), clock_};
  client::InProcessClient client_{reg_};
  reconcile::Manager mgr_{clock_};
  reconcile::InformerFactory informers_{client_, mgr_};
  reconcile::FakeEventRecorder events_;
  reconcile::ControllerContext ctx_{client_, informers_, mgr_, clock_, events_};
};

TEST_F(ServiceAccountTest, EveryNamespaceGetsADefaultServiceAccount) {
  for (const char* ns : {"default", "kube-system", "kube-public"}) EXPECT_TRUE(HasDefault(ns)) << ns;
  ASSERT_TRUE(client_.Create(Ns(), "", Json{{"metadata", {{"name", "team-a"}}}}).ok());
  EXPECT_FALSE(HasDefault("team-a"));
  mgr_.RunUntilIdle();
  EXPECT_TRUE(HasDefault("team-a"));
  // Deleted: created again.
  ASSERT_TRUE(client_.Delete(Sa(), "team-a", "default", {}).ok());
  mgr_.RunUntilIdle();
  EXPECT_TRUE(HasDefault("team-a"));
  // Other service accounts are left alone.
  ASSERT_TRUE(client_.Create(Sa(), "team-a", Json{{"metadata", {{"name", "bot"}}}}).ok());
  ASSERT_TRUE(client_.Delete(Sa(), "team-a", "bot", {}).ok());
  mgr_.RunUntilIdle();
  EXPECT_FALSE(client_.Get(Sa(), "team-a", "bot").ok());
}

TEST_F(ServiceAccountTest, PodsGetTheDefaultServiceAccountAndMustNameAnExistingOne) {
  auto p = CreatePod("default", "plain", Json::object());
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ((*p)["spec"]["serviceAccountName"], "default");
  EXPECT_EQ((*p)["spec"]["serviceAccount"], "default");
  auto missing = CreatePod("default", "bad", Json{{"serviceAccountName", "bot"}});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(registry::GetPayload(missing.status()).reason, "Forbidden");
  EXPECT_EQ(missing.status().message(),
            "pods \"bad\" is forbidden: service account default/bot was not found, retry after "
            "the service account is created");
  EXPECT_FALSE(client_.Get(Pods(), "default", "bad").ok());
  ASSERT_TRUE(client_.Create(Sa(), "default", Json{{"metadata", {{"name", "bot"}}}}).ok());
  auto named = CreatePod("default", "good", Json{{"serviceAccountName", "bot"}});
  ASSERT_TRUE(named.ok()) << named.status();
  EXPECT_EQ((*named)["spec"]["serviceAccountName"], "bot");
  // The deprecated field alone names it too.
  auto old_style = CreatePod("default", "old", Json{{"serviceAccount", "bot"}});
  ASSERT_TRUE(old_style.ok()) << old_style.status();
  EXPECT_EQ((*old_style)["spec"]["serviceAccountName"], "bot");
  // A pod in a namespace the controller has not handled yet gets the
  // default account created on the spot (no refusal race).
  ASSERT_TRUE(client_.Create(Ns(), "", Json{{"metadata", {{"name", "fresh"}}}}).ok());
  EXPECT_FALSE(HasDefault("fresh"));
  auto early = CreatePod("fresh", "early", Json::object());
  ASSERT_TRUE(early.ok()) << early.status();
  EXPECT_TRUE(HasDefault("fresh"));
  mgr_.RunUntilIdle();  // the controller finds it there
  EXPECT_TRUE(HasDefault("fresh"));
  // A namespace that does not exist: refused with the ServiceAccount message
  // (or the namespace's NotFound), never created.
  EXPECT_FALSE(CreatePod("nowhere", "p", Json::object()).ok());
  EXPECT_FALSE(HasDefault("nowhere"));
}

}  // namespace
}  // namespace batchd::controllers
