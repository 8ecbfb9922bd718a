#include "controllers/nodelifecycle/nodelifecycle.h"

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
    AddNodeLifecycleController(ctx_);
    ASSERT_TRUE(mgr_.SyncAll().ok());
  }
  void CreateNode(const std::string& name, bool simulated = false) {
    Json node = {{"apiVersion", "v1"},
                 {"kind", "Node"},
                 {"metadata", {{"name", name}}},
                 {"status",
                  {{"conditions", Json::array({{{"type", "Ready"},
                                                {"status", "True"},
                                                {"reason", "KubeletReady"}}})}}}};
    if (simulated) node["metadata"]["annotations"] = {{"batchd.io/simulated", "true"}};
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
  void Advance(absl::Duration d) {
    clock_.Advance(d);
    mgr_.RunUntilIdle();
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

}  // namespace
}  // namespace batchd::controllers
