#include "controllers/endpointslice/endpointslice_controller.h"

#include <string>

#include "api/discovery/v1/endpoint_slice_view.h"
#include "client/in_process_client.h"
#include "common/testing/fake_clock.h"
#include "gtest/gtest.h"
#include "store/memory/memory_store.h"

namespace batchd::controllers::endpointslice {
namespace {

using api::Json;
using api::discovery_v1::EndpointSliceView;
using reconcile::ControllerContext;
using reconcile::FakeEventRecorder;
using reconcile::InformerFactory;
using reconcile::Manager;

class EndpointSliceControllerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(reg_.Start().ok());
    AddEndpointSliceController(ctx_);
    ASSERT_TRUE(mgr_.SyncAll().ok());
  }

  void CreateService(const std::string& name, bool publish_not_ready = false) {
    Json svc = {{"apiVersion", "v1"},
                {"kind", "Service"},
                {"metadata", {{"name", name}, {"namespace", "default"}}},
                {"spec",
                 {{"clusterIP", "None"},
                  {"selector", {{"app", name}}},
                  {"publishNotReadyAddresses", publish_not_ready},
                  {"ports", Json::array({{{"port", 7000}}})}}}};
    auto r = c_.Create(svcs_, "default", svc);
    ASSERT_TRUE(r.ok()) << r.status();
    mgr_.RunUntilIdle();
  }

  // A pod of `app`, bound to node n1 with the node's IP, Ready or not.
  void CreatePod(const std::string& name, const std::string& app, bool ready) {
    Json pod = {{"apiVersion", "v1"},
                {"kind", "Pod"},
                {"metadata", {{"name", name}, {"namespace", "default"}, {"labels", {{"app", app}}}}},
                {"spec",
                 {{"hostname", name},
                  {"subdomain", app},
                  {"containers", Json::array({{{"name", "c"}, {"image", "x"}}})}}}};
    auto r = c_.Create(pods_, "default", pod);
    ASSERT_TRUE(r.ok()) << r.status();
    SetReady(name, ready);
  }

  void SetReady(const std::string& name, bool ready) {
    Json status = {{"status",
                    {{"phase", "Running"},
                     {"podIP", "192.168.0.7"},
                     {"conditions", Json::array({{{"type", "Ready"},
                                                  {"status", ready ? "True" : "False"}}})}}}};
    auto r = c_.MergePatch(pods_, "default", name, status, /*status=*/true);
    ASSERT_TRUE(r.ok()) << r.status();
    mgr_.RunUntilIdle();
  }

  std::vector<Json> Slices(const std::string& service) {
    client::Selector sel;
    sel.labels = std::string(api::discovery_v1::kServiceNameLabel) + "=" + service;
    auto l = c_.List(slices_, "default", sel);
    EXPECT_TRUE(l.ok());
    return l.ok() ? l->items : std::vector<Json>{};
  }

  // "host:ready" of every endpoint of the service's slices, in order.
  std::vector<std::string> Endpoints(const std::string& service) {
    std::vector<std::string> out;
    for (const Json& s : Slices(service)) {
      for (const auto& e : EndpointSliceView::Parse(s).endpoints) {
        out.push_back(std::string(e.hostname) + ":" + (e.ready.value_or(false) ? "ready" : "not"));
      }
    }
    return out;
  }

  FakeClock clock_;
  store::MemoryStore store_;
  registry::Registry reg_{store_, api::BuiltinScheme(), clock_};
  client::InProcessClient c_{reg_};
  Manager mgr_{clock_};
  InformerFactory inf_{c_, mgr_};
  FakeEventRecorder ev_;
  ControllerContext ctx_{c_, inf_, mgr_, clock_, ev_};
  const api::KindDef& pods_ = c_.Kind("", "v1", "pods");
  const api::KindDef& svcs_ = c_.Kind("", "v1", "services");
  const api::KindDef& slices_ = c_.Kind("discovery.k8s.io", "v1", "endpointslices");
};

TEST_F(EndpointSliceControllerTest, OneSlicePerServiceFollowsItsPods) {
  CreateService("workers");
  std::vector<Json> slices = Slices("workers");
  ASSERT_EQ(slices.size(), 1u);  // The placeholder.
  const EndpointSliceView v = EndpointSliceView::Parse(slices[0]);
  EXPECT_EQ(v.meta.name, "workers-0");
  EXPECT_EQ(v.managed_by, api::discovery_v1::kManagedByController);
  EXPECT_FALSE(v.meta.ControllerUid().empty());
  EXPECT_TRUE(v.endpoints.empty());

  CreatePod("w-0", "workers", true);
  CreatePod("w-1", "workers", false);
  CreatePod("other", "else", true);
  EXPECT_EQ(Endpoints("workers"), (std::vector<std::string>{"w-0:ready", "w-1:not"}));
  slices = Slices("workers");
  ASSERT_EQ(slices.size(), 1u);
  EXPECT_EQ(slices[0]["endpoints"][0]["addresses"], Json::array({"192.168.0.7"}));
  EXPECT_EQ(slices[0]["ports"], Json::parse(R"([{"name":"","port":7000,"protocol":"TCP"}])"));

  SetReady("w-1", true);
  EXPECT_EQ(Endpoints("workers"), (std::vector<std::string>{"w-0:ready", "w-1:ready"}));
  ASSERT_TRUE(c_.Delete(pods_, "default", "w-0", {.grace_period_seconds = 0}).ok());
  mgr_.RunUntilIdle();
  EXPECT_EQ(Endpoints("workers"), (std::vector<std::string>{"w-1:ready"}));
  // The other service's pod appears nowhere.
  EXPECT_TRUE(Slices("else").empty());
}

TEST_F(EndpointSliceControllerTest, PublishNotReadyAddresses) {
  CreateService("workers", /*publish_not_ready=*/true);
  CreatePod("w-0", "workers", false);
  EXPECT_EQ(Endpoints("workers"), (std::vector<std::string>{"w-0:ready"}));
}

TEST_F(EndpointSliceControllerTest, RepairsATamperedOrDeletedSlice) {
  CreateService("workers");
  CreatePod("w-0", "workers", true);
  Json s = Slices("workers").at(0);
  s["endpoints"] = Json::array();
  ASSERT_TRUE(c_.Update(slices_, s).ok());
  mgr_.RunUntilIdle();
  EXPECT_EQ(Endpoints("workers"), (std::vector<std::string>{"w-0:ready"}));
  ASSERT_TRUE(c_.Delete(slices_, "default", "workers-0").ok());
  mgr_.RunUntilIdle();
  EXPECT_EQ(Endpoints("workers"), (std::vector<std::string>{"w-0:ready"}));
}

TEST_F(EndpointSliceControllerTest, NoWriteWhenNothingChanged) {
  CreateService("workers");
  CreatePod("w-0", "workers", true);
  const std::string rv = Slices("workers").at(0)["metadata"]["resourceVersion"];
  SetReady("w-0", true);  // A pod update that changes nothing the slice shows.
  EXPECT_EQ(Slices("workers").at(0)["metadata"]["resourceVersion"], rv);
}

}  // namespace
}  // namespace batchd::controllers::endpointslice
