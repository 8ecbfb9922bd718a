#include "apiserver/resource_metrics.h"

#include "api/testing/builders.h"
#include "apiserver/apiserver.h"
#include "common/testing/fake_clock.h"
#include "gtest/gtest.h"
#include "store/memory/memory_store.h"

namespace batchd::apiserver {
namespace {

using api::Json;

// Usage per node name; a node without an entry reports an error.
class FakeSource : public ResourceMetricsSource {
 public:
  absl::StatusOr<NodeUsageSummary> NodeUsage(const Json& node) override {
    ++calls;
    std::string name = node["metadata"]["name"];
    auto it = usage.find(name);
    if (it == usage.end()) return absl::UnavailableError("no agent");
    return it->second;
  }
  std::map<std::string, NodeUsageSummary> usage;
  int calls = 0;
};

class ResourceMetricsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    reg_ = std::make_unique<registry::Registry>(store_, api::BuiltinScheme(), clock_);
    ASSERT_TRUE(reg_->Start().ok());
    ApiServerOptions o;
    o.resource_metrics = &source_;
    api_ = std::make_unique<ApiServer>(*reg_, clock_, o);
    t0_ = clock_.Now();
  }
  BufferWriter Do(std::string method, std::string target, std::string body = "") {
    HttpRequest r;
    r.method = std::move(method);
    size_t q = target.find('?');
    r.path = target.substr(0, q);
    if (q != std::string::npos) r.query = ParseQuery(target.substr(q + 1));
    if (!body.empty()) r.headers["content-type"] = "application/json";
    r.body = std::move(body);
    BufferWriter w;
    api_->Handle(r, w);
    return w;
  }
  Json Body(const BufferWriter& w) { return Json::parse(w.body(), nullptr, false); }
  void Node(const std::string& name, const std::string& label) {
    Json n = {{"apiVersion", "v1"}, {"kind", "Node"},
              {"metadata", {{"name", name}, {"labels", {{"pool", label}}}}}};
    auto c = Do("POST", "/api/v1/nodes", n.dump());
    ASSERT_EQ(c.code(), 201) << c.body();
  }
  // A pod bound to `node` in phase `phase`; returns its uid.
  std::string Pod(const std::string& name, const std::string& node, const std::string& phase) {
    Json p = api::testing::MakePod(name).Label("app", name).Obj();
    p["spec"]["nodeName"] = node;
    auto c = Do("POST", "/api/v1/namespaces/default/pods", p.dump());
    EXPECT_EQ(c.code(), 201) << c.body();
    Json created = Body(c);
    created["status"] = {{"phase", phase}};
    auto s = Do("PUT", "/api/v1/namespaces/default/pods/" + name + "/status", created.dump());
    EXPECT_EQ(s.code(), 200) << s.body();
    return created["metadata"]["uid"];
  }
  ResourceUsage U(int64_t nanocores, int64_t bytes) {
    return {nanocores, bytes, t0_, absl::Seconds(10)};
  }

  FakeClock clock_;
  store::MemoryStore store_;
  std::unique_ptr<registry::Registry> reg_;
  FakeSource source_;
  std::unique_ptr<ApiServer> api_;
  absl::Time t0_;
};

TEST_F(ResourceMetricsTest, DiscoveryListsTheGroup) {
  bool found = false;
  const Json groups = Body(Do("GET", "/apis"));
  for (const auto& g : groups["groups"]) {
    found |= g["name"] == "metrics.k8s.io" && g["preferredVersion"]["version"] == "v1beta1";
  }
  EXPECT_TRUE(found);
  EXPECT_EQ(Body(Do("GET", "/apis/metrics.k8s.io"))["kind"], "APIGroup");
  Json res = Body(Do("GET", "/apis/metrics.k8s.io/v1beta1"));
  ASSERT_EQ(res["resources"].size(), 2u) << res.dump();
  EXPECT_EQ(res["resources"][0]["name"], "nodes");
  EXPECT_EQ(res["resources"][0]["namespaced"], false);
  EXPECT_EQ(res["resources"][1]["kind"], "PodMetrics");
  EXPECT_EQ(res["resources"][1]["verbs"], Json::array({"get", "list"}));
}

TEST_F(ResourceMetricsTest, WithoutASourceNothingIsServed) {
  ApiServer plain(*reg_, clock_);
  HttpRequest r;
  r.method = "GET";
  r.path = "/apis/metrics.k8s.io/v1beta1/nodes";
  BufferWriter w;
  plain.Handle(r, w);
  EXPECT_EQ(w.code(), 404);
  r.path = "/apis";
  BufferWriter d;
  plain.Handle(r, d);
  EXPECT_EQ(d.body().find("metrics.k8s.io"), std::string::npos);
}

TEST_F(ResourceMetricsTest, NodeMetricsListGetAndSelectors) {
  Node("n1", "gpu");
  Node("n2", "cpu");
  Node("n3", "cpu");
  source_.usage["n1"] = {"n1", U(250000000, 1 << 20), {}};
  source_.usage["n3"] = {"n3", U(7, 1000), {}};
  auto l = Do("GET", "/apis/metrics.k8s.io/v1beta1/nodes");
  ASSERT_EQ(l.code(), 200) << l.body();
  Json list = Body(l);
  EXPECT_EQ(list["kind"], "NodeMetricsList");
  EXPECT_EQ(list["apiVersion"], "metrics.k8s.io/v1beta1");
  ASSERT_EQ(list["items"].size(), 2u) << list.dump();  // n2 reports nothing: left out
  const Json& n1 = list["items"][0];
  EXPECT_EQ(n1["kind"], "NodeMetrics");
  EXPECT_EQ(n1["metadata"]["name"], "n1");
  EXPECT_EQ(n1["metadata"]["labels"]["pool"], "gpu");
  EXPECT_EQ(n1["usage"]["cpu"], "250000000n");
  EXPECT_EQ(n1["usage"]["memory"], "1024Ki");
  EXPECT_EQ(n1["window"], "10s");
  EXPECT_EQ(list["items"][1]["usage"]["memory"], "1000");  // not a multiple of 1Ki
  // Label selectors select the nodes.
  Json sel = Body(Do("GET", "/apis/metrics.k8s.io/v1beta1/nodes?labelSelector=pool%3Dcpu"));
  ASSERT_EQ(sel["items"].size(), 1u);
  EXPECT_EQ(sel["items"][0]["metadata"]["name"], "n3");
  // One node.
  auto g = Do("GET", "/apis/metrics.k8s.io/v1beta1/nodes/n1");
  ASSERT_EQ(g.code(), 200);
  EXPECT_EQ(Body(g)["kind"], "NodeMetrics");
  auto missing = Do("GET", "/apis/metrics.k8s.io/v1beta1/nodes/n2");
  EXPECT_EQ(missing.code(), 404);
  EXPECT_EQ(Body(missing)["message"], "nodemetrics.metrics.k8s.io \"n2\" not found");
  EXPECT_EQ(Do("GET", "/apis/metrics.k8s.io/v1beta1/nodes/nope").code(), 404);
}

TEST_F(ResourceMetricsTest, PodMetricsOfRunningPodsAskEachNodeOnce) {
  Node("n1", "a");
  std::string a = Pod("a", "n1", "Running");
  std::string b = Pod("b", "n1", "Running");
  Pod("done", "n1", "Succeeded");
  source_.usage["n1"] = {"n1", U(1, 1024),
                         {{"default", "a", a, {{"main", U(5000000, 2048)}}},
                          {"default", "b", b, {{"main", U(1, 4096)}, {"side", U(2, 8192)}}},
                          {"default", "gone", "x", {{"main", U(1, 1)}}}}};
  source_.calls = 0;
  auto l = Do("GET", "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods");
  ASSERT_EQ(l.code(), 200) << l.body();
  Json list = Body(l);
  EXPECT_EQ(list["kind"], "PodMetricsList");
  ASSERT_EQ(list["items"].size(), 2u) << list.dump();
  EXPECT_EQ(source_.calls, 1);
  EXPECT_EQ(list["items"][0]["metadata"]["name"], "a");
  EXPECT_EQ(list["items"][0]["metadata"]["namespace"], "default");
  EXPECT_EQ(list["items"][0]["metadata"]["labels"]["app"], "a");
  EXPECT_EQ(list["items"][0]["containers"][0]["usage"]["cpu"], "5000000n");
  EXPECT_EQ(list["items"][0]["containers"][0]["usage"]["memory"], "2Ki");
  EXPECT_EQ(list["items"][1]["containers"].size(), 2u);
  // All namespaces, a label selector, one pod.
  EXPECT_EQ(Body(Do("GET", "/apis/metrics.k8s.io/v1beta1/pods"))["items"].size(), 2u);
  Json sel = Body(Do("GET", "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods?labelSelector=app%3Db"));
  ASSERT_EQ(sel["items"].size(), 1u);
  EXPECT_EQ(sel["items"][0]["metadata"]["name"], "b");
  auto one = Do("GET", "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/a");
  ASSERT_EQ(one.code(), 200) << one.body();
  EXPECT_EQ(Body(one)["kind"], "PodMetrics");
  auto done = Do("GET", "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/done");
  EXPECT_EQ(done.code(), 404);
  EXPECT_EQ(Body(done)["message"], "podmetrics.metrics.k8s.io \"default/done\" not found");
  EXPECT_EQ(Body(Do("GET", "/apis/metrics.k8s.io/v1beta1/namespaces/other/pods"))["items"].size(),
            0u);
}

TEST_F(ResourceMetricsTest, BadRequestsGetStatusErrors) {
  Node("n1", "a");
  auto post = Do("POST", "/apis/metrics.k8s.io/v1beta1/nodes", "{}");
  EXPECT_EQ(post.code(), 405);
  EXPECT_EQ(Body(post)["kind"], "Status");
  auto watch = Do("GET", "/apis/metrics.k8s.io/v1beta1/nodes?watch=true");
  EXPECT_EQ(watch.code(), 405);
  EXPECT_EQ(Body(watch)["reason"], "MethodNotAllowed");
  auto bad = Do("GET", "/apis/metrics.k8s.io/v1beta1/jobs");
  EXPECT_EQ(bad.code(), 404);
  EXPECT_EQ(Body(bad)["kind"], "Status");
  auto deep = Do("GET", "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/a/b");
  EXPECT_EQ(deep.code(), 404);
  auto sel = Do("GET", "/apis/metrics.k8s.io/v1beta1/nodes?labelSelector=%3D%3D%3D");
  EXPECT_EQ(sel.code(), 400) << sel.body();
  EXPECT_EQ(Body(sel)["kind"], "Status");
}

TEST(Summary, RoundTripsAndRefusesGarbage) {
  absl::Time t = absl::FromUnixSeconds(1700000000);
  NodeUsageSummary s{"n", {10, 20, t, absl::Milliseconds(1500)},
                     {{"ns", "p", "uid-1", {{"c", {3, 4, t, absl::Seconds(2)}}}}}};
  Json j = SummaryToJson(s);
  EXPECT_EQ(j["node"]["usage"]["usageNanoCores"], 10);
  auto back = SummaryFromJson(j);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->node_name, "n");
  EXPECT_EQ(back->usage.window, absl::Milliseconds(1500));
  EXPECT_EQ(back->usage.time, t);
  ASSERT_EQ(back->pods.size(), 1u);
  EXPECT_EQ(back->pods[0].uid, "uid-1");
  EXPECT_EQ(back->pods[0].containers[0].usage.memory_bytes, 4);
  EXPECT_FALSE(SummaryFromJson(Json::parse("{}")).ok());
  Json neg = j;
  neg["pods"][0]["containers"][0]["usage"]["usageNanoCores"] = -1;
  auto bad = SummaryFromJson(neg);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("pods[0].containers[0].usage"), std::string_view::npos);
  Json str = j;
  str["node"]["usage"]["workingSetBytes"] = "many";
  EXPECT_FALSE(SummaryFromJson(str).ok());
}

}  // namespace
}  // namespace batchd::apiserver
