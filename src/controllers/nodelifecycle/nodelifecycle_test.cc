#include "controllers/nodelifecycle/nodelifecycle.h"

#include "controllers/nodelifecycle/default_tolerations.h"

#include "api/meta/time_util.h"
#include "client/in_process_client.h"
#include "common/testing/fake_clock.h"
#include "gtest/gtest.h"
#include "store/memory/memory_store.h"

namespace batchd::controllers {

using reconcile::ControllerContext;
using reconcile::FakeEventRecorder;
using reconcile::InformerFactory;
using reconcile::Manager;

namespace {

using api::Json;

class NodeLifecycleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(reg_.Start().ok());
    AddNodeLifecycleController(ctx_, opts_);
    ASSERT_TRUE(mgr_.SyncAll().ok());
  }
  // A node whose agent keeps renewing (Advance renews it): with it, a lost
  // node's zone is not fully disrupted.
  void CreateHealthyNode(const std::string& name, const std::string& zone = "") {
    CreateNode(name, false, zone);
    keep_.push_back(name);
  }
  void CreateNode(const std::string& name, bool simulated = false, const std::string& zone = "") {
    Json node = {{"apiVersion", "v1"},
                 {"kind", "Node"},
                 {"metadata", {{"name", name}}},
                 {"status",
                  {{"conditions", Json::array({{{"type", "Ready"},
                                                {"status", "True"},
                                                {"reason", "KubeletReady"}}})}}}};
    if (simulated) node["metadata"]["annotations"] = {{"batchd.io/simulated", "true"}};
    if (!zone.empty()) node["metadata"]["labels"] = {{"topology.kubernetes.io/zone", zone}};
    ASSERT_TRUE(c_.Create(nodes_, "", node).ok());
    ASSERT_TRUE(c_.MergePatch(nodes_, "", name, {{"status", node["status"]}}, true).ok());
    Json lease = {{"apiVersion", "coordination.k8s.io/v1"},
                  {"kind", "Lease"},
                  {"metadata", {{"name", name}, {"namespace", "kube-node-lease"}}},
                  {"spec",
                   {{"holderIdentity", name},
                    {"leaseDurationSeconds", 40},
                    {"renewTime", api::meta::FormatRfc3339Micro(clock_.Now())}}}};
    ASSERT_TRUE(c_.Create(leases_, "kube-node-lease", lease).ok());
    mgr_.RunUntilIdle();
  }
  void Renew(const std::string& name) {
    Json patch = {{"spec", {{"renewTime", api::meta::FormatRfc3339Micro(clock_.Now())}}}};
    ASSERT_TRUE(c_.MergePatch(leases_, "kube-node-lease", name, patch).ok());
    mgr_.RunUntilIdle();
  }
  void CreatePod(const std::string& name, const std::string& node, Json tolerations) {
    Json pod = {{"apiVersion", "v1"},
                {"kind", "Pod"},
                {"metadata",
                 {{"name", name},
                  {"namespace", "default"},
                  {"finalizers", Json::array({"batch.kubernetes.io/job-tracking"})}}},
                {"spec",
                 {{"nodeName", node},
                  {"tolerations", tolerations},
                  {"containers", Json::array({{{"name", "c"}, {"image", "x"}}})}}}};
    ASSERT_TRUE(c_.Create(pods_, "default", pod).ok());
    mgr_.RunUntilIdle();
  }
  // Advances in steps of at most 5 s, renewing the healthy nodes' leases.
  void Advance(absl::Duration d) {
    const absl::Time end = clock_.Now() + d;
    while (clock_.Now() < end) {
      clock_.Advance(std::min(absl::Seconds(5), end - clock_.Now()));
      for (const std::string& n : keep_) Renew(n);
      mgr_.RunUntilIdle();
    }
  }
  bool HasNoExecute(const std::string& node) {
    for (const std::string& t : Taints(node)) {
      if (t.size() > 10 && t.substr(t.size() - 10) == ":NoExecute") return true;
    }
    return false;
  }
  std::string Ready(const std::string& node) {
    auto n = c_.Get(nodes_, "", node);
    for (const Json& c : (*n)["status"]["conditions"]) {
      if (c["type"] == "Ready") return c.value("status", "") + "/" + c.value("reason", "");
    }
    return "";
  }
  std::vector<std::string> Taints(const std::string& node) {
    auto n = c_.Get(nodes_, "", node);
    std::vector<std::string> out;
    for (const Json& t : n->value("spec", Json::object()).value("taints", Json::array())) {
      out.push_back(t.value("key", "") + ":" + t.value("effect", ""));
    }
    return out;
  }
  // "phase deleting? DisruptionTarget-reason"
  std::string PodState(const std::string& name) {
    auto p = c_.Get(pods_, "default", name);
    if (!p.ok()) return "gone";
    std::string s = (*p)["status"].value("phase", "");
    if ((*p)["metadata"].contains("deletionTimestamp")) s += " deleting";
    for (const Json& c : (*p)["status"].value("conditions", Json::array())) {
      if (c["type"] == "DisruptionTarget") s += " " + c.value("reason", "");
    }
    return s;
  }

  NodeLifecycleOptions opts_;
  std::vector<std::string> keep_;
  FakeClock clock_;
  store::MemoryStore store_;
  registry::Registry reg_{store_, api::BuiltinScheme(), clock_};
  client::InProcessClient c_{reg_};
  Manager mgr_{clock_};
  InformerFactory inf_{c_, mgr_};
  FakeEventRecorder ev_;
  ControllerContext ctx_{c_, inf_, mgr_, clock_, ev_};
  const api::KindDef& pods_ = c_.Kind("", "v1", "pods");
  const api::KindDef& nodes_ = c_.Kind("", "v1", "nodes");
  const api::KindDef& leases_ = c_.Kind("coordination.k8s.io", "v1", "leases");
};

TEST_F(NodeLifecycleTest, LostLeaseMakesNodeUnknownAndEvictsPods) {
  CreateHealthyNode("n0");
  CreateNode("n1");
  CreatePod("plain", "n1", Json::array());
  Json tol30 = Json::array({{{"key", kUnreachableTaint}, {"operator", "Exists"},
                             {"effect", "NoExecute"}, {"tolerationSeconds", 30}}});
  CreatePod("tolerates30", "n1", tol30);
  Json forever = Json::array({{{"operator", "Exists"}}});
  CreatePod("forever", "n1", forever);

  Advance(absl::Seconds(20));
  Renew("n1");
  Advance(absl::Seconds(39));
  EXPECT_EQ(Ready("n1"), "True/KubeletReady");
  EXPECT_EQ(PodState("plain"), "Pending");

  Advance(absl::Seconds(1));  // 40 s since the last renewal.
  EXPECT_EQ(Ready("n1"), "Unknown/NodeStatusUnknown");
  EXPECT_EQ(Taints("n1"), (std::vector<std::string>{kUnreachableTaint + std::string(":NoSchedule"),
                                                   kUnreachableTaint + std::string(":NoExecute")}));
  EXPECT_EQ(PodState("plain"), "Failed deleting DeletionByTaintManager");
  EXPECT_EQ(PodState("tolerates30"), "Pending");
  EXPECT_EQ(PodState("forever"), "Pending");

  Advance(absl::Seconds(29));
  EXPECT_EQ(PodState("tolerates30"), "Pending");
  Advance(absl::Seconds(1));
  EXPECT_EQ(PodState("tolerates30"), "Failed deleting DeletionByTaintManager");
  EXPECT_EQ(PodState("forever"), "Pending");
  Advance(absl::Hours(1));
  EXPECT_EQ(PodState("forever"), "Pending");
}

// A node whose agent fences its pods (batchd.io/fence-period-seconds: 50,
// longer than the 40 s grace): a pod tolerating unreachable for 0 s would be
// evicted at 40 s; it waits until its copy there is surely dead (50 s + the
// 5 s margin after the last renewal). One tolerating it for 100 s is fenced
// after 100 s, and evicted at 140 s as without fencing (later than 105 s).
TEST_F(NodeLifecycleTest, FencingNodeIsEvictedOnlyAfterItsFencePeriod) {
  CreateHealthyNode("n0");
  CreateNode("n1");
  ASSERT_TRUE(c_.MergePatch(nodes_, "", "n1",
                            {{"metadata", {{"annotations",
                                            {{"batchd.io/fence-period-seconds", "50"}}}}}})
                  .ok());
  CreatePod("plain", "n1", Json::array());
  Json tol100 = Json::array({{{"key", kUnreachableTaint}, {"operator", "Exists"},
                              {"effect", "NoExecute"}, {"tolerationSeconds", 100}}});
  CreatePod("tolerates100", "n1", tol100);
  Renew("n1");
  Advance(absl::Seconds(40));
  EXPECT_EQ(Ready("n1"), "Unknown/NodeStatusUnknown");
  EXPECT_TRUE(HasNoExecute("n1"));
  EXPECT_EQ(PodState("plain"), "Pending");  // fenced at 50 s only
  Advance(absl::Seconds(14));
  EXPECT_EQ(PodState("plain"), "Pending");
  Advance(absl::Seconds(1));  // 55 s
  EXPECT_EQ(PodState("plain"), "Failed deleting DeletionByTaintManager");
  Advance(absl::Seconds(84));  // 139 s
  EXPECT_EQ(PodState("tolerates100"), "Pending");
  Advance(absl::Seconds(1));
  EXPECT_EQ(PodState("tolerates100"), "Failed deleting DeletionByTaintManager");
}

// A fencing node that reports NotReady (it still renews its lease, so it is
// not fenced) has its pods evicted as any other: its agent sees that itself.
TEST_F(NodeLifecycleTest, NotReadyFencingNodeIsEvictedAsUsual) {
  CreateHealthyNode("n0");
  CreateNode("n1");
  keep_.push_back("n1");  // its agent keeps renewing
  ASSERT_TRUE(c_.MergePatch(nodes_, "", "n1",
                            {{"metadata", {{"annotations",
                                            {{"batchd.io/fence-period-seconds", "50"}}}}}})
                  .ok());
  Json patch = Json::parse(
      R"({"status":{"conditions":[{"type":"Ready","status":"False","reason":"KubeletNotReady"}]}})");
  ASSERT_TRUE(c_.MergePatch(nodes_, "", "n1", patch, true).ok());
  CreatePod("p", "n1", Json::array());
  Advance(absl::Seconds(5));
  EXPECT_EQ(PodState("p"), "Failed deleting DeletionByTaintManager");
}

// An annotation that is no period (garbage, 0) changes nothing.
TEST_F(NodeLifecycleTest, InvalidFencePeriodIsIgnored) {
  CreateHealthyNode("n0");
  CreateNode("n1");
  ASSERT_TRUE(c_.MergePatch(nodes_, "", "n1",
                            {{"metadata", {{"annotations",
                                            {{"batchd.io/fence-period-seconds", "soon"}}}}}})
                  .ok());
  CreatePod("plain", "n1", Json::array());
  Renew("n1");
  Advance(absl::Seconds(40));
  EXPECT_EQ(PodState("plain"), "Failed deleting DeletionByTaintManager");
}

TEST_F(NodeLifecycleTest, RenewedLeaseRestoresReady) {
  CreateNode("n1");
  Advance(absl::Seconds(41));
  ASSERT_EQ(Ready("n1"), "Unknown/NodeStatusUnknown");
  Renew("n1");
  EXPECT_EQ(Ready("n1"), "True/KubeletReady");
  EXPECT_TRUE(Taints("n1").empty());
  // And the clock starts again from the renewal.
  Advance(absl::Seconds(39));
  EXPECT_EQ(Ready("n1"), "True/KubeletReady");
  Advance(absl::Seconds(1));
  EXPECT_EQ(Ready("n1"), "Unknown/NodeStatusUnknown");
}

TEST_F(NodeLifecycleTest, NotReadyNodeGetsNotReadyTaint) {
  CreateHealthyNode("n0");
  CreateNode("n1");
  Json patch = Json::parse(
      R"({"status":{"conditions":[{"type":"Ready","status":"False","reason":"KubeletNotReady"}]}})");
  ASSERT_TRUE(c_.MergePatch(nodes_, "", "n1", patch, true).ok());
  CreatePod("p", "n1", Json::array());
  mgr_.RunUntilIdle();
  EXPECT_EQ(Taints("n1"), (std::vector<std::string>{kNotReadyTaint + std::string(":NoSchedule"),
                                                   kNotReadyTaint + std::string(":NoExecute")}));
  EXPECT_EQ(PodState("p"), "Failed deleting DeletionByTaintManager");
}

TEST_F(NodeLifecycleTest, SimulatedNodesAreExempt) {
  CreateNode("sim", /*simulated=*/true);
  CreatePod("p", "sim", Json::array());
  Advance(absl::Minutes(10));
  EXPECT_EQ(Ready("sim"), "True/KubeletReady");
  EXPECT_TRUE(Taints("sim").empty());
  EXPECT_EQ(PodState("p"), "Pending");
}

// NoExecute taints come at --node-eviction-rate (0.1/s: one node per 10 s
// per zone); NoSchedule at once.
TEST_F(NodeLifecycleTest, NoExecuteTaintsAreRateLimited) {
  CreateHealthyNode("a");
  CreateHealthyNode("b");
  CreateHealthyNode("c");
  CreateHealthyNode("d");
  CreateNode("n1");
  CreateNode("n2");
  CreatePod("p1", "n1", Json::array());
  CreatePod("p2", "n2", Json::array());
  Advance(absl::Seconds(40));
  // Both lost at the same moment: one is tainted (and its pod evicted) now.
  EXPECT_EQ(Ready("n1"), "Unknown/NodeStatusUnknown");
  EXPECT_EQ(Ready("n2"), "Unknown/NodeStatusUnknown");
  EXPECT_NE(HasNoExecute("n1"), HasNoExecute("n2"));
  EXPECT_EQ(Taints("n1").size() + Taints("n2").size(), 3u);  // 2 NoSchedule + 1 NoExecute
  const std::string first = HasNoExecute("n1") ? "p1" : "p2";
  const std::string second = first == "p1" ? "p2" : "p1";
  EXPECT_EQ(PodState(first), "Failed deleting DeletionByTaintManager");
  EXPECT_EQ(PodState(second), "Pending");
  Advance(absl::Seconds(5));
  EXPECT_EQ(PodState(second), "Pending");
  Advance(absl::Seconds(5));  // 10 s later: the second node.
  EXPECT_TRUE(HasNoExecute("n1") && HasNoExecute("n2"));
  EXPECT_EQ(PodState(second), "Failed deleting DeletionByTaintManager");
}

// No node Ready at all (the server is cut off, not the agents): full
// disruption, nothing evicted; when agents come back, every node gets a fresh
// grace period.
TEST_F(NodeLifecycleTest, FullDisruptionEvictsNothing) {
  CreateNode("n1");
  CreateNode("n2");
  CreatePod("p1", "n1", Json::array());
  CreatePod("p2", "n2", Json::array());
  Advance(absl::Minutes(10));
  EXPECT_EQ(Ready("n1"), "Unknown/NodeStatusUnknown");
  EXPECT_EQ(Ready("n2"), "Unknown/NodeStatusUnknown");
  EXPECT_FALSE(HasNoExecute("n1"));
  EXPECT_FALSE(HasNoExecute("n2"));
  EXPECT_EQ(PodState("p1"), "Pending");
  EXPECT_EQ(PodState("p2"), "Pending");
  // n1's agent is back; n2's is not: n2 gets a full grace period from now
  // before it is tainted, instead of being evicted at once.
  Renew("n1");
  EXPECT_EQ(Ready("n1"), "True/KubeletReady");
  keep_.push_back("n1");
  Advance(absl::Seconds(35));
  EXPECT_FALSE(HasNoExecute("n2"));
  EXPECT_EQ(PodState("p2"), "Pending");
  Advance(absl::Seconds(10));
  EXPECT_TRUE(HasNoExecute("n2"));
  EXPECT_EQ(PodState("p2"), "Failed deleting DeletionByTaintManager");
}

// Most of a small zone not Ready (> 2 nodes, >= 55%): partial disruption,
// no NoExecute taints (rate 0 below --large-cluster-size-threshold); another
// zone is unaffected.
TEST_F(NodeLifecycleTest, PartialDisruptionOfASmallZoneEvictsNothingThere) {
  CreateHealthyNode("a1", "a");
  CreateNode("a2", false, "a");
  CreateNode("a3", false, "a");
  CreateNode("a4", false, "a");
  CreateHealthyNode("b1", "b");
  CreateHealthyNode("b2", "b");
  CreateNode("b3", false, "b");
  CreatePod("pa", "a2", Json::array());
  CreatePod("pb", "b3", Json::array());
  Advance(absl::Minutes(2));
  EXPECT_FALSE(HasNoExecute("a2") || HasNoExecute("a3") || HasNoExecute("a4"));
  EXPECT_EQ(PodState("pa"), "Pending");
  EXPECT_TRUE(HasNoExecute("b3"));
  EXPECT_EQ(PodState("pb"), "Failed deleting DeletionByTaintManager");
}

TEST_F(NodeLifecycleTest, PressureConditionsGetNoScheduleTaints) {
  CreateHealthyNode("n0");
  Json patch = Json::parse(
      R"({"status":{"conditions":[{"type":"Ready","status":"True","reason":"KubeletReady"},
          {"type":"DiskPressure","status":"True","reason":"KubeletHasDiskPressure"}]}})");
  ASSERT_TRUE(c_.MergePatch(nodes_, "", "n0", patch, true).ok());
  mgr_.RunUntilIdle();
  EXPECT_EQ(Taints("n0"), std::vector<std::string>{std::string(kDiskPressureTaint) + ":NoSchedule"});
  patch["status"]["conditions"][1]["status"] = "False";
  ASSERT_TRUE(c_.MergePatch(nodes_, "", "n0", patch, true).ok());
  mgr_.RunUntilIdle();
  EXPECT_TRUE(Taints("n0").empty());
}

TEST(DefaultTolerationsTest, AddsMissingOnes) {
  Json pod = {{"spec", {{"containers", Json::array()}}}};
  EXPECT_TRUE(AddDefaultTolerations(pod, {.not_ready_seconds = 300, .unreachable_seconds = 60}));
  EXPECT_EQ(pod["spec"]["tolerations"],
            Json::parse(R"([{"key":"node.kubernetes.io/not-ready","operator":"Exists",
                             "effect":"NoExecute","tolerationSeconds":300},
                            {"key":"node.kubernetes.io/unreachable","operator":"Exists",
                             "effect":"NoExecute","tolerationSeconds":60}])"));
  EXPECT_FALSE(AddDefaultTolerations(pod, {}));
  // A toleration of everything, or of the key with any effect, counts.
  Json all = {{"spec", {{"tolerations", Json::array({{{"operator", "Exists"}}})}}}};
  EXPECT_FALSE(AddDefaultTolerations(all, {}));
  Json one = {{"spec",
               {{"tolerations", Json::array({{{"key", "node.kubernetes.io/unreachable"},
                                             {"operator", "Exists"}}})}}}};
  EXPECT_TRUE(AddDefaultTolerations(one, {}));
  EXPECT_EQ(one["spec"]["tolerations"].size(), 2u);
  EXPECT_EQ(one["spec"]["tolerations"][1]["key"], "node.kubernetes.io/not-ready");
}

TEST(DefaultTolerationsTest, AddedAtCreateOnly) {
  FakeClock clock;
  store::MemoryStore store;
  registry::Registry reg{store, api::BuiltinScheme(), clock};
  ASSERT_TRUE(reg.Start().ok());
  ASSERT_TRUE(AddDefaultTolerationSeconds(reg, {.not_ready_seconds = 7, .unreachable_seconds = 9}).ok());
  client::InProcessClient c{reg};
  const api::KindDef& pods = c.Kind("", "v1", "pods");
  Json pod = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", {{"name", "p"}, {"namespace", "default"}}},
              {"spec", {{"containers", Json::array({{{"name", "c"}, {"image", "x"}}})}}}};
  auto created = c.Create(pods, "default", pod);
  ASSERT_TRUE(created.ok()) << created.status();
  const Json& tols = (*created)["spec"]["tolerations"];
  ASSERT_EQ(tols.size(), 2u);
  EXPECT_EQ(tols[0]["tolerationSeconds"], 7);
  EXPECT_EQ(tols[1]["tolerationSeconds"], 9);
}

}  // namespace
}  // namespace batchd::controllers
