#include "agent/sim/sim_kubelet.h"

#include "client/in_process_client.h"
#include "scheduler/scheduler.h"
#include "common/testing/fake_clock.h"
#include "gtest/gtest.h"
#include "store/memory/memory_store.h"

namespace batchd::agent::sim {
namespace {

using api::Json;

class SimKubeletTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(reg_.Start().ok());
    AddSimulatedKubelet(ctx_);
    ASSERT_TRUE(mgr_.SyncAll().ok());
    Json node = {{"apiVersion", "v1"},
                 {"kind", "Node"},
                 {"metadata", {{"name", "sim-1"}, {"annotations", {{kSimulatedAnnotation, "true"}}}}},
                 {"status", {{"capacity", {{"cpu", "8"}, {"memory", "32Gi"}}}}}};
    ASSERT_TRUE(c_.Create(nodes_, "", node).ok());
    // The registry resets status on create; the capacity is written separately.
    ASSERT_TRUE(c_.MergePatch(nodes_, "", "sim-1", {{"status", node["status"]}}, true).ok());
    mgr_.RunUntilIdle();
  }

  // Creates a pod and binds it to sim-1.
  void RunPod(const std::string& name, const std::string& policy,
              std::map<std::string, std::string> annotations) {
    Json pod = {{"apiVersion", "v1"},
                {"kind", "Pod"},
                {"metadata", {{"name", name}, {"namespace", "default"}}},
                {"spec",
                 {{"restartPolicy", policy},
                  {"containers", Json::array({{{"name", "main"}, {"image", "busybox"}}})}}}};
    for (const auto& [k, v] : annotations) pod["metadata"]["annotations"][k] = v;
    ASSERT_TRUE(c_.Create(pods_, "default", pod).ok());
    Json binding = {{"target", {{"kind", "Node"}, {"name", "sim-1"}}}};
    ASSERT_TRUE(reg_.Bind("default", name, binding, {}).ok());
    mgr_.RunUntilIdle();
  }
  Json Pod(const std::string& name) {
    auto p = c_.Get(pods_, "default", name);
    return p.ok() ? *p : Json();
  }
  void Advance(absl::Duration d) {
    clock_.Advance(d);
    mgr_.RunUntilIdle();
  }

  FakeClock clock_;
  store::MemoryStore store_;
  registry::Registry reg_{store_, api::BuiltinScheme(), clock_};
  client::InProcessClient c_{reg_};
  reconcile::Manager mgr_{clock_};
  reconcile::InformerFactory inf_{c_, mgr_};
  reconcile::FakeEventRecorder ev_;
  reconcile::ControllerContext ctx_{c_, inf_, mgr_, clock_, ev_};
  const api::KindDef& pods_ = c_.Kind("", "v1", "pods");
  const api::KindDef& nodes_ = c_.Kind("", "v1", "nodes");
};

TEST_F(SimKubeletTest, NodeIsReady) {
  auto node = c_.Get(nodes_, "", "sim-1");
  ASSERT_TRUE(node.ok());
  const Json& st = (*node)["status"];
  bool ready = false;
  for (const Json& c : st["conditions"]) {
    if (c["type"] == "Ready") ready = c["status"] == "True";
  }
  EXPECT_TRUE(ready);
  EXPECT_EQ(st["allocatable"]["cpu"], "8");
  EXPECT_EQ(st["allocatable"]["pods"], "110");
  EXPECT_EQ(st["nodeInfo"]["kubeletVersion"], "v1.32.0-batchd-sim");
  EXPECT_EQ(st["addresses"][0]["type"], "InternalIP");
  // Steady state: nothing more to write.
  clock_.Advance(absl::Minutes(1));
  EXPECT_EQ(mgr_.RunUntilIdle(), 0);
}

TEST_F(SimKubeletTest, RunsForDurationThenSucceeds) {
  RunPod("p", "Never", {{kSimDurationAnnotation, "90s"}});
  Json pod = Pod("p");
  EXPECT_EQ(pod["status"]["phase"], "Running");
  EXPECT_TRUE(pod["status"]["containerStatuses"][0]["state"].contains("running"));
  EXPECT_FALSE(pod["status"].value("podIP", "").empty());
  EXPECT_EQ(pod["status"]["podIP"], pod["status"]["hostIP"]);  // The node's network.
  Advance(absl::Seconds(89));
  EXPECT_EQ(Pod("p")["status"]["phase"], "Running");
  Advance(absl::Seconds(1));
  pod = Pod("p");
  EXPECT_EQ(pod["status"]["phase"], "Succeeded");
  const Json& term = pod["status"]["containerStatuses"][0]["state"]["terminated"];
  EXPECT_EQ(term["exitCode"], 0);
  EXPECT_EQ(term["reason"], "Completed");
}

TEST_F(SimKubeletTest, SubSecondAndZeroDurations) {
  RunPod("fast", "Never", {{kSimDurationAnnotation, "500ms"}});
  RunPod("instant", "Never", {});
  EXPECT_EQ(Pod("instant")["status"]["phase"], "Succeeded");
  EXPECT_EQ(Pod("fast")["status"]["phase"], "Running");
  Advance(absl::Milliseconds(500));
  EXPECT_EQ(Pod("fast")["status"]["phase"], "Succeeded");
}

TEST_F(SimKubeletTest, NonZeroExitFails) {
  RunPod("p", "Never", {{kSimDurationAnnotation, "10s"}, {kSimExitCodeAnnotation, "3"}});
  Advance(absl::Seconds(10));
  Json pod = Pod("p");
  EXPECT_EQ(pod["status"]["phase"], "Failed");
  const Json& term = pod["status"]["containerStatuses"][0]["state"]["terminated"];
  EXPECT_EQ(term["exitCode"], 3);
  EXPECT_EQ(term["reason"], "Error");
}

TEST_F(SimKubeletTest, OnFailureRestartsWithBackOff) {
  RunPod("p", "OnFailure", {{kSimDurationAnnotation, "5s"}, {kSimExitCodeAnnotation, "2"}});
  Advance(absl::Seconds(5));
  Json pod = Pod("p");
  EXPECT_EQ(pod["status"]["phase"], "Running");
  const Json& cs = pod["status"]["containerStatuses"][0];
  EXPECT_EQ(cs["restartCount"], 1);
  EXPECT_EQ(cs["state"]["waiting"]["reason"], "CrashLoopBackOff");
  EXPECT_EQ(cs["lastState"]["terminated"]["exitCode"], 2);
  Advance(absl::Seconds(10));  // Back-off over: running again.
  EXPECT_TRUE(Pod("p")["status"]["containerStatuses"][0]["state"].contains("running"));
  Advance(absl::Seconds(5));   // Fails again: back-off doubles.
  EXPECT_EQ(Pod("p")["status"]["containerStatuses"][0]["restartCount"], 2);
  Advance(absl::Seconds(19));
  EXPECT_TRUE(Pod("p")["status"]["containerStatuses"][0]["state"].contains("waiting"));
  Advance(absl::Seconds(1));
  EXPECT_TRUE(Pod("p")["status"]["containerStatuses"][0]["state"].contains("running"));
  EXPECT_EQ(Pod("p")["status"]["phase"], "Running");
}

TEST_F(SimKubeletTest, GracefulDeleteFinishesAtOnce) {
  RunPod("p", "Never", {{kSimDurationAnnotation, "1h"}});
  ASSERT_EQ(Pod("p")["status"]["phase"], "Running");
  ASSERT_TRUE(c_.Delete(pods_, "default", "p").ok());
  mgr_.RunUntilIdle();
  EXPECT_FALSE(c_.Get(pods_, "default", "p").ok());
}

TEST_F(SimKubeletTest, PodsOnOtherNodesAreLeftAlone) {
  Json node = {{"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", "real"}}}};
  ASSERT_TRUE(c_.Create(nodes_, "", node).ok());
  Json pod = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", {{"name", "r"}, {"namespace", "default"}}},
              {"spec", {{"containers", Json::array({{{"name", "main"}, {"image", "x"}}})}}}};
  ASSERT_TRUE(c_.Create(pods_, "default", pod).ok());
  ASSERT_TRUE(reg_.Bind("default", "r", {{"target", {{"name", "real"}}}}, {}).ok());
  mgr_.RunUntilIdle();
  EXPECT_EQ(Pod("r")["status"]["phase"], "Pending");
  auto n = c_.Get(nodes_, "", "real");
  EXPECT_FALSE((*n).contains("status") && (*n)["status"].contains("conditions"));
}

TEST(SimClusterTest, ScheduledPodRunsToCompletion) {
  FakeClock clock;
  store::MemoryStore store;
  registry::Registry reg(store, api::BuiltinScheme(), clock);
  ASSERT_TRUE(reg.Start().ok());
  client::InProcessClient c(reg);
  reconcile::Manager mgr(clock);
  reconcile::InformerFactory inf(c, mgr);
  reconcile::FakeEventRecorder ev;
  reconcile::ControllerContext ctx{c, inf, mgr, clock, ev};
  scheduler::SchedulerOptions opts;
  opts.binder = std::make_shared<scheduler::RegistryBinder>(reg);
  scheduler::AddScheduler(ctx, opts);
  AddSimulatedKubelet(ctx);
  ASSERT_TRUE(mgr.SyncAll().ok());
  const api::KindDef& nodes = c.Kind("", "v1", "nodes");
  const api::KindDef& pods = c.Kind("", "v1", "pods");
  Json node = {{"apiVersion", "v1"},
               {"kind", "Node"},
               {"metadata", {{"name", "sim-1"}, {"annotations", {{kSimulatedAnnotation, "true"}}}}},
               {"status", {{"capacity", {{"cpu", "2"}, {"memory", "4Gi"}}}}}};
  ASSERT_TRUE(c.Create(nodes, "", node).ok());
  ASSERT_TRUE(c.MergePatch(nodes, "", "sim-1", {{"status", node["status"]}}, true).ok());
  Json pod = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata",
               {{"name", "p"}, {"namespace", "default"},
                {"annotations", {{kSimDurationAnnotation, "1m"}}}}},
              {"spec",
               {{"restartPolicy", "Never"},
                {"containers", Json::array({{{"name", "main"}, {"image", "busybox"}}})}}}};
  ASSERT_TRUE(c.Create(pods, "default", pod).ok());
  mgr.RunUntilIdle();
  auto running = c.Get(pods, "default", "p");
  ASSERT_TRUE(running.ok());
  EXPECT_EQ((*running)["spec"]["nodeName"], "sim-1");
  EXPECT_EQ((*running)["status"]["phase"], "Running");
  clock.Advance(absl::Minutes(1));
  mgr.RunUntilIdle();
  EXPECT_EQ((*c.Get(pods, "default", "p"))["status"]["phase"], "Succeeded");
}

}  // namespace
}  // namespace batchd::agent::sim
