#include "controllers/endpointslice/internal/desired.h"

#include <gtest/gtest.h>

namespace batchd::controllers::endpointslice::internal {
namespace {

using api::Json;
using api::core_v1::PodView;
using api::core_v1::ServiceView;

Json Svc(Json ports = Json::array({{{"name", "rpc"}, {"port", 80}, {"targetPort", 7000},
                                     {"protocol", "TCP"}}})) {
  return {{"metadata", {{"name", "workers"}, {"namespace", "ns"}, {"uid", "svc"}}},
          {"spec", {{"clusterIP", "None"}, {"selector", {{"app", "w"}}}, {"ports", ports}}}};
}

Json Pod(const std::string& name, bool ready = true) {
  return {{"metadata", {{"name", name}, {"namespace", "ns"}, {"uid", "u-" + name},
                        {"labels", {{"app", "w"}}}}},
          {"spec", {{"nodeName", "n1"}, {"hostname", name}, {"subdomain", "workers"},
                    {"containers", Json::array({{{"name", "c"},
                                                 {"ports", Json::array({{{"name", "http"},
                                                                         {"containerPort", 8080},
                                                                         {"protocol", "TCP"}}})}}})}}},
          {"status", {{"phase", "Running"}, {"podIP", "10.1.1.1"},
                      {"conditions", Json::array({{{"type", "Ready"},
                                                   {"status", ready ? "True" : "False"}}})}}}};
}

std::vector<PodView> Views(const std::vector<Json>& pods) {
  std::vector<PodView> out;
  for (const Json& p : pods) out.push_back(PodView::Parse(p));
  return out;
}

TEST(DesiredTest, EndpointOfAPod) {
  Json svc = Svc(), pod = Pod("w-0");
  const ServiceView sv = ServiceView::Parse(svc);
  api::discovery_v1::EndpointValue e = EndpointFor(sv, PodView::Parse(pod));
  EXPECT_EQ(e.address, "10.1.1.1");
  EXPECT_EQ(e.hostname, "w-0");
  EXPECT_EQ(e.node_name, "n1");
  EXPECT_TRUE(e.ready && e.serving && !e.terminating);
  EXPECT_EQ(e.pod_uid, "u-w-0");
  // Another subdomain: no hostname.
  pod["spec"]["subdomain"] = "other";
  EXPECT_EQ(EndpointFor(sv, PodView::Parse(pod)).hostname, "");
  // Terminating: serving but not ready.
  pod["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:00Z";
  e = EndpointFor(sv, PodView::Parse(pod));
  EXPECT_TRUE(!e.ready && e.serving && e.terminating);
}

TEST(DesiredTest, PublishNotReadyAddresses) {
  Json svc = Svc(), pod = Pod("w-0", /*ready=*/false);
  EXPECT_FALSE(EndpointFor(ServiceView::Parse(svc), PodView::Parse(pod)).ready);
  svc["spec"]["publishNotReadyAddresses"] = true;
  api::discovery_v1::EndpointValue e = EndpointFor(ServiceView::Parse(svc), PodView::Parse(pod));
  EXPECT_TRUE(e.ready);
  EXPECT_FALSE(e.serving);
}

TEST(DesiredTest, SkipsTerminalAndAddresslessPods) {
  Json done = Pod("a"), fresh = Pod("b"), ok = Pod("c");
  done["status"]["phase"] = "Succeeded";
  fresh["status"].erase("podIP");
  Json svc = Svc();
  auto slices = DesiredSlices(ServiceView::Parse(svc), Views({done, fresh, ok}), 1000);
  ASSERT_EQ(slices.size(), 1u);
  ASSERT_EQ(slices[0].endpoints.size(), 1u);
  EXPECT_EQ(slices[0].endpoints[0].pod_name, "c");
  EXPECT_EQ(slices[0].name, "workers-0");
}

TEST(DesiredTest, NamedTargetPortsResolvePerPod) {
  Json svc = Svc(Json::array({{{"name", "web"}, {"port", 80}, {"targetPort", "http"},
                               {"protocol", "TCP"}}}));
  Json with = Pod("a"), without = Pod("b");
  without["spec"]["containers"][0].erase("ports");
  auto slices = DesiredSlices(ServiceView::Parse(svc), Views({without, with}), 1000);
  // Pods in name order; a group per port resolution, in order of its first pod.
  ASSERT_EQ(slices.size(), 2u);
  EXPECT_EQ(slices[0].endpoints[0].pod_name, "a");
  ASSERT_EQ(slices[0].ports.size(), 1u);
  EXPECT_EQ(slices[0].ports[0].port, 8080);
  EXPECT_EQ(slices[0].ports[0].name, "web");
  EXPECT_EQ(slices[1].endpoints[0].pod_name, "b");
  EXPECT_TRUE(slices[1].ports.empty());
  EXPECT_EQ(slices[1].name, "workers-1");
}

TEST(DesiredTest, BoundedSlicesAndPlaceholder) {
  Json svc = Svc();
  std::vector<Json> pods;
  for (int i = 0; i < 5; ++i) pods.push_back(Pod("p" + std::to_string(i)));
  auto slices = DesiredSlices(ServiceView::Parse(svc), Views(pods), 2);
  ASSERT_EQ(slices.size(), 3u);
  EXPECT_EQ(slices[0].endpoints.size(), 2u);
  EXPECT_EQ(slices[2].endpoints.size(), 1u);
  EXPECT_EQ(slices[2].name, "workers-2");
  EXPECT_EQ(slices[2].endpoints[0].pod_name, "p4");
  auto empty = DesiredSlices(ServiceView::Parse(svc), {}, 2);
  ASSERT_EQ(empty.size(), 1u);
  EXPECT_TRUE(empty[0].endpoints.empty());
}

}  // namespace
}  // namespace batchd::controllers::endpointslice::internal
