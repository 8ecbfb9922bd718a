// Topology-aware admission through the queue manager: Topology and
// ResourceFlavor objects, Nodes (Ready, schedulable) and the pods outside TAS
// that take their capacity, the Workload's topologyAssignment in the v1beta2
// form, and a restart that counts admitted assignments again.
#include "controllers/queueing/queue_manager_test_env.h"

namespace batchd::controllers::queueing {
namespace {

using api::Json;
using testing::QueueManagerTest;
using ::testing::HasSubstr;

constexpr char kRack[] = "topology.batchd.io/rack";
constexpr char kHost[] = "kubernetes.io/hostname";

class TasQueueManagerTest : public QueueManagerTest {
 protected:
  void Node(const std::string& name, const std::string& rack, const std::string& cpu,
            bool ready = true) {
    Json node = {{"apiVersion", "v1"},
                 {"kind", "Node"},
                 {"metadata", {{"name", name}, {"labels", {{kRack, rack}, {kHost, name}, {"pool", "tas"}}}}},
                 {"status",
                  {{"allocatable", {{"cpu", cpu}, {"pods", "110"}}},
                   {"conditions",
                    {{{"type", "Ready"}, {"status", ready ? "True" : "False"}}}}}}};
    auto r = client_.Create(nodes_, "", node);
    ASSERT_TRUE(r.ok()) << r.status();
    auto s = client_.MergePatch(nodes_, "", name, {{"status", node["status"]}}, true);
    ASSERT_TRUE(s.ok()) << s.status();
  }
  // A bound pod outside TAS on `node`.
  void Pod(const std::string& name, const std::string& node, const std::string& cpu) {
    Json pod = {{"apiVersion", "v1"},
                {"kind", "Pod"},
                {"metadata", {{"name", name}, {"namespace", "ns"}}},
                {"spec",
                 {{"nodeName", node},
                  {"containers",
                   {{{"name", "c"},
                     {"image", "x"},
                     {"resources", {{"requests", {{"cpu", cpu}}}}}}}}}}};
    auto r = client_.Create(pods_, "ns", pod);
    ASSERT_TRUE(r.ok()) << r.status();
  }
  // Two racks of two 2-cpu nodes, flavor `tas` on topology `default`.
  void Cluster() {
    Namespace("ns");
    Create("topologies", "",
           {{"metadata", {{"name", "default"}}},
            {"spec", {{"levels", {{{"nodeLabel", kRack}}, {{"nodeLabel", kHost}}}}}}});
    Create("resourceflavors", "",
           {{"metadata", {{"name", "tas"}}},
            {"spec", {{"topologyName", "default"}, {"nodeLabels", {{"pool", "tas"}}}}}});
    Json spec = {{"namespaceSelector", Json::object()},
                 {"resourceGroups",
                  {{{"coveredResources", {"cpu"}},
                    {"flavors", {{{"name", "tas"}, {"resources", {testing::Quota("cpu", "100")}}}}}}}}};
    Create("clusterqueues", "", {{"metadata", {{"name", "cq"}}}, {"spec", spec}});
    LocalQueue("ns", "lq", "cq");
    for (const char* rack : {"r1", "r2"}) {
      for (const char* h : {"a", "b"}) Node(std::string(rack) + "-" + h, rack, "2");
    }
  }
  // A Workload of `count` 1-cpu pods that must share one rack.
  void RackWorkload(const std::string& name, int count) {
    Workload(name, "lq", "1", 0, count);
    Json wl = Wl(name);
    wl["spec"]["podSets"][0]["topologyRequest"] = {{"required", kRack}};
    auto r = client_.Update(Kind("workloads"), wl);
    ASSERT_TRUE(r.ok()) << r.status();
  }
  // (host, count) of the first pod set's topology assignment.
  std::vector<std::pair<std::string, int>> Hosts(const std::string& name) {
    std::vector<std::pair<std::string, int>> out;
    Json ta = Wl(name)["status"]["admission"]["podSetAssignments"][0]["topologyAssignment"];
    EXPECT_EQ(ta["levels"], Json::array({kRack, kHost}));
    for (const Json& s : ta["slices"]) {
      const Json& hosts = s["valuesPerLevel"][1];
      for (int i = 0; i < s["domainCount"].get<int>(); ++i) {
        std::string h = hosts.contains("universalValue")
                            ? hosts["universalValue"].get<std::string>()
                            : hosts.value("prefix", "") + hosts["roots"][i].get<std::string>() +
                                  hosts.value("suffix", "");
        int n = s.contains("universalPodCount") ? s["universalPodCount"].get<int>()
                                                : s["podCounts"][i].get<int>();
        out.emplace_back(h, n);
      }
    }
    return out;
  }

  const api::KindDef& nodes_ = client_.Kind("", "v1", "nodes");
  const api::KindDef& pods_ = client_.Kind("", "v1", "pods");
};

TEST_F(TasQueueManagerTest, AdmitsWithATopologyAssignmentInOneRack) {
  Start();
  Cluster();
  RackWorkload("w", 4);
  Settle();
  ASSERT_TRUE(Admitted("w")) << Wl("w").dump();
  auto hosts = Hosts("w");
  ASSERT_EQ(hosts.size(), 2u);
  EXPECT_EQ(hosts[0].first.substr(0, 2), hosts[1].first.substr(0, 2)) << "one rack";
  EXPECT_EQ(hosts[0].second + hosts[1].second, 4);
}

TEST_F(TasQueueManagerTest, PodsOutsideTasAndUnreadyNodesTakeCapacity) {
  Start();
  Cluster();
  Pod("other", "r1-a", "1");  // r1 has 3 free cpus
  Node("r3-a", "r3", "8", /*ready=*/false);
  RackWorkload("w", 4);
  Settle();
  ASSERT_TRUE(Admitted("w"));
  for (const auto& [host, n] : Hosts("w")) EXPECT_EQ(host.substr(0, 2), "r2") << host;
  RackWorkload("w2", 4);
  Settle();
  EXPECT_FALSE(Admitted("w2"));
  EXPECT_THAT(CondMessage(Wl("w2"), "QuotaReserved"), HasSubstr("3 out of 4"));
  // The pod outside TAS finishes: r1 has room again.
  auto r = client_.MergePatch(pods_, "ns", "other", {{"status", {{"phase", "Succeeded"}}}}, true);
  ASSERT_TRUE(r.ok()) << r.status();
  Settle();
  EXPECT_TRUE(Admitted("w2"));
}

TEST_F(TasQueueManagerTest, RestartCountsAdmittedAssignments) {
  Start();
  Cluster();
  RackWorkload("a", 4);
  RackWorkload("b", 4);
  Settle();
  ASSERT_TRUE(Admitted("a"));
  ASSERT_TRUE(Admitted("b"));
  Restart();
  RackWorkload("c", 1);
  Settle();
  EXPECT_FALSE(Admitted("c")) << "both racks are held by a and b after the restart";
  EXPECT_TRUE(Admitted("a"));
  EXPECT_TRUE(Admitted("b"));
}

TEST_F(TasQueueManagerTest, ANodeFailureMovesPodsWithinTheRackOrEvicts) {
  Start();
  Cluster();
  RackWorkload("w", 2);
  Settle();
  ASSERT_TRUE(Admitted("w"));
  auto hosts = Hosts("w");
  ASSERT_EQ(hosts.size(), 1u) << "two pods fit one 2-cpu host";
  const std::string failed = hosts[0].first;
  const std::string rack = failed.substr(0, 2);
  auto r = client_.MergePatch(nodes_, "", failed,
                              {{"status", {{"conditions", {{{"type", "Ready"}, {"status", "False"}}}}}}},
                              true);
  ASSERT_TRUE(r.ok()) << r.status();
  Settle();
  hosts = Hosts("w");
  ASSERT_EQ(hosts.size(), 1u);
  EXPECT_NE(hosts[0].first, failed);
  EXPECT_EQ(hosts[0].first.substr(0, 2), rack) << "moved within its rack";
  EXPECT_EQ(hosts[0].second, 2);
  EXPECT_TRUE(Admitted("w"));
  EXPECT_FALSE(Wl("w")["status"].contains("unhealthyNodes"));
  // The rack's other node fails too: no room left in the rack, evicted.
  r = client_.MergePatch(nodes_, "", hosts[0].first,
                         {{"status", {{"conditions", {{{"type", "Ready"}, {"status", "False"}}}}}}},
                         true);
  ASSERT_TRUE(r.ok()) << r.status();
  Settle();
  Json w = Wl("w");
  EXPECT_EQ(Cond(w, "Evicted"), "True/NodeFailures");
  EXPECT_THAT(CondMessage(w, "Evicted"), HasSubstr(hosts[0].first));
  EXPECT_EQ(w["status"]["unhealthyNodes"][0]["name"], hosts[0].first);
}

}  // namespace
}  // namespace batchd::controllers::queueing
