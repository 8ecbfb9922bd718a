// The agent's side of kubectl top: /stats/summary and the API server's
// metrics source (local agent, simulated nodes, remote agents).
#include "absl/strings/match.h"
#include "agent/agent.h"
#include "agent/testing/fake_pod_runtime.h"
#include "apiserver/resource_metrics.h"
#include "client/in_process_client.h"
#include "common/testing/fake_clock.h"
#include "gtest/gtest.h"
#include "store/memory/memory_store.h"

namespace batchd::agent {
namespace {

using api::Json;

class Probe : public HostProbe {
 public:
  int CpuCount() override { return 4; }
  int64_t MemoryBytes() override { return int64_t{8} << 30; }
  int64_t DiskBytes(const std::string&) override { return int64_t{100} << 30; }
  int64_t DiskAvailableBytes(const std::string&) override { return int64_t{50} << 30; }
  int GpuCount() override { return 0; }
  NodeFacts Facts() override { return {"host1", "amd64", "6.1.0", "Debian", "m", "b"}; }
};

class AgentMetricsTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(reg_.Start().ok()); }
  void StartAgent() {
    runtime_ = new testing::FakePodRuntime();
    AgentOptions o;
    o.node_name = "n1";
    o.log_port = 10250;
    o.stats_period = absl::Seconds(10);
    o.node_usage = [this] { return node_; };
    agent_ = std::make_unique<NodeAgent>(o, client_, clock_,
                                         std::unique_ptr<PodRuntime>(runtime_), probe_);
    ASSERT_TRUE(agent_->Sync().ok());
    agent_->RunUntilIdle();
  }
  Json CreatePod(const Json& pod) {
    auto p = client_.Create(client_.Kind("", "v1", "pods"), "default", pod);
    EXPECT_TRUE(p.ok()) << p.status();
    return p.ok() ? *p : Json();
  }
  FakeClock clock_;
  store::MemoryStore store_;
  registry::Registry reg_{store_, api::BuiltinScheme(), clock_};
  client::InProcessClient client_{reg_};
  Probe probe_;
  Usage node_{0, 1 << 30};
  testing::FakePodRuntime* runtime_ = nullptr;
  std::unique_ptr<NodeAgent> agent_;
};

TEST_F(AgentMetricsTest, HousekeepingSamplesSoTheFirstAskHasARate) {
  StartAgent();
  Json pod = {{"apiVersion", "v1"}, {"kind", "Pod"},
              {"metadata", {{"name", "p"}, {"namespace", "default"}}},
              {"spec", {{"nodeName", "n1"}, {"restartPolicy", "Never"},
                        {"containers", {{{"name", "c"}, {"image", "x"}, {"command", {"true"}}}}}}}};
  Json created = CreatePod(pod);
  agent_->RunUntilIdle();
  const std::string uid = created["metadata"]["uid"];
  runtime_->SetContainerUsages(uid, {{"c", {0, 2048}}});
  // The periodic sample (every 10 s) takes the baseline...
  clock_.Advance(absl::Seconds(10));
  agent_->RunUntilIdle();
  // ...so 4 s later a request has a rate over those 4 s.
  clock_.Advance(absl::Seconds(4));
  node_.cpu_usec = 4000000;  // 1 core over 4 s
  runtime_->SetContainerUsages(uid, {{"c", {1000000, 4096}}});
  apiserver::HttpRequest req;
  req.method = "GET";
  req.path = "/stats/summary";
  apiserver::BufferWriter w;
  agent_->ServeLogs(req, w);
  ASSERT_EQ(w.code(), 200) << w.body();
  auto s = apiserver::SummaryFromJson(Json::parse(w.body()));
  ASSERT_TRUE(s.ok()) << s.status() << w.body();
  EXPECT_EQ(s->node_name, "n1");
  EXPECT_EQ(s->usage.cpu_nanocores, 1000000000);
  EXPECT_EQ(s->usage.memory_bytes, 1 << 30);
  EXPECT_EQ(s->usage.window, absl::Seconds(4));
  ASSERT_EQ(s->pods.size(), 1u);
  EXPECT_EQ(s->pods[0].name, "p");
  EXPECT_EQ(s->pods[0].containers[0].usage.cpu_nanocores, 250000000);
  EXPECT_EQ(s->pods[0].containers[0].usage.memory_bytes, 4096);
  // Other methods are refused.
  req.method = "POST";
  apiserver::BufferWriter post;
  agent_->ServeLogs(req, post);
  EXPECT_EQ(post.code(), 405);
  // The server's source reads the local agent directly.
  auto source = NewResourceMetricsSource(client_, clock_, "n1", agent_.get());
  Json node = {{"metadata", {{"name", "n1"}}}};
  clock_.Advance(absl::Seconds(2));
  auto local = source->NodeUsage(node);
  ASSERT_TRUE(local.ok()) << local.status();
  EXPECT_EQ(local->pods.size(), 1u);
}

TEST_F(AgentMetricsTest, SimulatedNodesReportTheRequestsOfTheirRunningPods) {
  Json node = {{"apiVersion", "v1"}, {"kind", "Node"},
               {"metadata", {{"name", "sim1"}, {"annotations", {{"batchd.io/simulated", "true"}}}}}};
  ASSERT_TRUE(client_.Create(client_.Kind("", "v1", "nodes"), "", node).ok());
  auto mk = [&](const std::string& name, const std::string& node_name, const char* cpu,
                const char* mem) {
    Json p = {{"apiVersion", "v1"}, {"kind", "Pod"},
              {"metadata", {{"name", name}, {"namespace", "default"}}},
              {"spec", {{"nodeName", node_name}, {"restartPolicy", "Never"},
                        {"containers", {{{"name", "c"}, {"image", "x"},
                                         {"resources", {{"requests", {{"cpu", cpu}, {"memory", mem}}}}}}}}}}};
    Json c = CreatePod(p);
    c["status"] = {{"phase", name == "pending" ? "Pending" : "Running"}};
    auto u = client_.UpdateStatus(client_.Kind("", "v1", "pods"), c);
    ASSERT_TRUE(u.ok()) << u.status();
  };
  mk("a", "sim1", "1500m", "1Gi");
  mk("b", "sim1", "250m", "512Mi");
  mk("pending", "sim1", "8", "8Gi");
  mk("elsewhere", "sim2", "8", "8Gi");
  auto source = NewResourceMetricsSource(client_, clock_, "", nullptr);
  auto s = source->NodeUsage(node);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->usage.cpu_nanocores, 1750000000);
  EXPECT_EQ(s->usage.memory_bytes, (int64_t{1} << 30) + (int64_t{512} << 20));
  EXPECT_GT(s->usage.window, absl::ZeroDuration());
  ASSERT_EQ(s->pods.size(), 2u);
  // A node that is neither simulated, local nor reachable reports nothing;
  // nor does one whose address and port only its status names (anyone with
  // nodes/status could have written them): the agent must publish its
  // authenticated endpoint itself.
  Json remote = {{"metadata", {{"name", "r1"}}},
                 {"status", {{"addresses", {{{"type", "InternalIP"}, {"address", "127.0.0.1"}}}},
                             {"daemonEndpoints", {{"kubeletEndpoint", {{"Port", 10250}}}}}}}};
  auto r = source->NodeUsage(remote);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(absl::StrContains(r.status().message(), "has no authenticated log endpoint"))
      << r.status();
}

}  // namespace
}  // namespace batchd::agent
