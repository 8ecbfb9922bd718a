// Required inter-pod affinity and anti-affinity through the whole scheduler
// (internal/pod_affinity.h has the filter's cases).
#include <set>

#include "scheduler/scheduler_test_env.h"

namespace batchd::scheduler {
namespace {

using api::Json;
using testing::MakeNode;
using testing::MakePod;
using PodAffinitySchedulerTest = testing::SchedulerTestEnv;

Json Labelled(Json node, Json labels) {
  node["metadata"]["labels"] = std::move(labels);
  return node;
}

// JobSet's exclusive placement of a Job's leader: with its own job's pods
// in one `rack`, and no other job's pods there.
Json ExclusiveLeader(const std::string& name, const std::string& job) {
  Json pod = MakePod(name, "1");
  pod["metadata"]["labels"] = {{"job-key", job}};
  Json own = {{"matchExpressions",
               Json::array({{{"key", "job-key"}, {"operator", "In"}, {"values", {job}}}})}};
  Json others = {{"matchExpressions",
                  Json::array({{{"key", "job-key"}, {"operator", "Exists"}},
                               {{"key", "job-key"}, {"operator", "NotIn"}, {"values", {job}}}})}};
  auto term = [](Json sel) {
    return Json{{"labelSelector", sel}, {"topologyKey", "rack"}, {"namespaceSelector", Json::object()}};
  };
  pod["spec"]["affinity"] = {
      {"podAffinity", {{"requiredDuringSchedulingIgnoredDuringExecution", {term(own)}}}},
      {"podAntiAffinity", {{"requiredDuringSchedulingIgnoredDuringExecution", {term(others)}}}}};
  return pod;
}

class ExclusiveTest : public PodAffinitySchedulerTest {
 protected:
  void SetUp() override {
    PodAffinitySchedulerTest::SetUp();
    for (const char* rack : {"r1", "r2"}) {
      for (const char* host : {"h1", "h2"}) {
        const std::string name = std::string(rack) + "-" + host;
        CreateNodeObj(Labelled(MakeNode(name, "4"), {{"rack", rack}}));
      }
    }
  }
  std::string RackOf(const std::string& pod) {
    const std::string node = NodeOf(pod);
    return node.empty() ? "" : node.substr(0, 2);
  }
};

TEST_F(ExclusiveTest, OneJobPerRackAndTheNextWaitsForARack) {
  CreatePod(ExclusiveLeader("leader-a", "a"));
  CreatePod(ExclusiveLeader("leader-b", "b"));
  mgr_.RunUntilIdle();
  ASSERT_NE(RackOf("leader-a"), "");
  ASSERT_NE(RackOf("leader-b"), "");
  EXPECT_NE(RackOf("leader-a"), RackOf("leader-b"));

  CreatePod(ExclusiveLeader("leader-c", "c"));
  mgr_.RunUntilIdle();
  EXPECT_EQ(NodeOf("leader-c"), "");
  EXPECT_EQ(PodMessage("leader-c"),
            "False/Unschedulable: 0/4 nodes are available: 4 node(s) didn't match pod "
            "anti-affinity rules. preemption: 0/4 nodes are available: 4 Preemption is not "
            "helpful for scheduling.");

  // A pod of job a joins its leader's rack (affinity), even though it is
  // not the first of its job.
  CreatePod(ExclusiveLeader("worker-a", "a"));
  mgr_.RunUntilIdle();
  EXPECT_EQ(RackOf("worker-a"), RackOf("leader-a"));

  // Job a ends: its rack frees for c.
  const std::string rack_a = RackOf("leader-a");
  Finish("leader-a");
  Finish("worker-a");
  mgr_.RunUntilIdle();
  EXPECT_EQ(RackOf("leader-c"), rack_a);
}

// A pod held back by its pod affinity is retried as soon as a pod is
// placed, not at the periodic flush.
TEST_F(PodAffinitySchedulerTest, AffinityWaiterIsRetriedWhenAPodIsPlaced) {
  CreateNodeObj(Labelled(MakeNode("za", "4"), {{"zone", "a"}}));
  CreateNodeObj(Labelled(MakeNode("zb", "4"), {{"zone", "b"}}));
  Json web = MakePod("web", "1");
  web["spec"]["affinity"] = Json::parse(R"({"podAffinity": {
      "requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": "zone"}]}})");
  CreatePod(web);
  mgr_.RunUntilIdle();
  EXPECT_EQ(NodeOf("web"), "");
  EXPECT_EQ(PodMessage("web"),
            "False/Unschedulable: 0/2 nodes are available: 2 node(s) didn't match pod affinity "
            "rules. preemption: 0/2 nodes are available: 2 Preemption is not helpful for "
            "scheduling.");

  Json db = MakePod("db", "3");
  db["metadata"]["labels"] = {{"app", "db"}};
  CreatePod(db);
  mgr_.RunUntilIdle();  // No clock advance: no flush.
  ASSERT_NE(NodeOf("db"), "");
  EXPECT_EQ(NodeOf("web"), NodeOf("db"));
}

// Pods of one signature with anti-affinity among themselves are decided one
// by one against the pods placed before them in the same pass.
TEST_F(PodAffinitySchedulerTest, AntiAffinitySpreadsABurstOneHostEach) {
  for (const char* n : {"n1", "n2", "n3"}) {
    CreateNodeObj(Labelled(MakeNode(n, "8"), {{"kubernetes.io/hostname", n}}));
  }
  for (int i = 0; i < 4; ++i) {
    Json p = MakePod("spread" + std::to_string(i), "1");
    p["metadata"]["labels"] = {{"app", "spread"}};
    p["spec"]["affinity"] = Json::parse(R"({"podAntiAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [
          {"labelSelector": {"matchLabels": {"app": "spread"}},
           "topologyKey": "kubernetes.io/hostname"}]}})");
    CreatePod(p);
  }
  // A plain pod (created later) that matches their terms is repelled by them too.
  clock_.Advance(absl::Seconds(1));
  Json plain = MakePod("plain", "1");
  plain["metadata"]["labels"] = {{"app", "spread"}};
  CreatePod(plain);
  mgr_.RunUntilIdle();
  std::set<std::string> hosts;
  int unplaced = 0;
  for (const char* p : {"spread0", "spread1", "spread2", "spread3", "plain"}) {
    if (NodeOf(p).empty()) {
      ++unplaced;
    } else {
      EXPECT_TRUE(hosts.insert(NodeOf(p)).second) << p << " shares " << NodeOf(p);
    }
  }
  EXPECT_EQ(hosts.size(), 3u);
  EXPECT_EQ(unplaced, 2);
  EXPECT_EQ(NodeOf("plain"), "");
  EXPECT_EQ(PodMessage("plain"),
            "False/Unschedulable: 0/3 nodes are available: 3 node(s) didn't satisfy existing "
            "pods anti-affinity rules. preemption: 0/3 nodes are available: 3 Preemption is not "
            "helpful for scheduling.");
}

}  // namespace
}  // namespace batchd::scheduler
