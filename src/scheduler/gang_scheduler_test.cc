// Gang scheduling through the whole scheduler (registry, informers, the
// injected clock): all-or-nothing binding, minCount below the group size,
// the quorum barrier, a missing PodGroup, the wait timeout, the basic policy
// and v1alpha1 Workload pod groups with replica keys.
#include "api/meta/conditions.h"
#include "client/in_process_client.h"
#include "common/testing/fake_clock.h"
#include "gtest/gtest.h"
#include "scheduler/scheduler.h"
#include "store/memory/memory_store.h"

namespace batchd::scheduler {
namespace {

using api::Json;

Json MakeNode(const std::string& name, const std::string& cpu) {
  return {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"metadata", {{"name", name}}},
          {"status",
           {{"allocatable", {{"cpu", cpu}, {"memory", "16Gi"}, {"pods", "110"}}},
            {"capacity", {{"cpu", cpu}, {"memory", "16Gi"}, {"pods", "110"}}},
            {"conditions", Json::array({{{"type", "Ready"}, {"status", "True"}}})}}}};
}

Json MakePod(const std::string& name, const std::string& cpu = "1") {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", name}, {"namespace", "default"}}},
          {"spec",
           {{"restartPolicy", "Never"},
            {"containers", Json::array({{{"name", "c"},
                                         {"image", "busybox"},
                                         {"resources", {{"requests", {{"cpu", cpu}}}}}}})}}}};
}

Json GangPod(const std::string& name, const std::string& group) {
  Json p = MakePod(name);
  p["spec"]["schedulingGroup"] = {{"podGroupName", group}};
  return p;
}

Json Policy(int min_count) {
  return min_count > 0 ? Json{{"gang", {{"minCount", min_count}}}}
                       : Json{{"basic", Json::object()}};
}

class GangSchedulerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(reg_.Start().ok());
    SchedulerOptions opts;
    opts.binder = std::make_shared<RegistryBinder>(reg_);
    AddScheduler(ctx_, opts);
    ASSERT_TRUE(mgr_.SyncAll().ok());
  }
  void CreateNode(const std::string& name, const std::string& cpu) {
    Json node = MakeNode(name, cpu);
    ASSERT_TRUE(c_.Create(nodes_, "", node).ok());
    ASSERT_TRUE(c_.MergePatch(nodes_, "", name, {{"status", node["status"]}}, true).ok());
  }
  void CreatePod(Json pod) { ASSERT_TRUE(c_.Create(pods_, "default", std::move(pod)).ok()); }
  void CreatePodGroup(const std::string& name, int min_count) {
    Json pg = {{"apiVersion", "scheduling.k8s.io/v1alpha2"},
               {"kind", "PodGroup"},
               {"metadata", {{"name", name}, {"namespace", "default"}}},
               {"spec", {{"schedulingPolicy", Policy(min_count)}}}};
    ASSERT_TRUE(c_.Create(pod_groups_, "default", pg).ok());
  }
  void CreateGang(const std::string& group, int size, const std::string& prefix = "g") {
    for (int i = 0; i < size; ++i) CreatePod(GangPod(prefix + std::to_string(i), group));
  }
  void Finish(const std::string& pod) {
    ASSERT_TRUE(c_.MergePatch(pods_, "default", pod,
                              Json::parse(R"({"status":{"phase":"Succeeded"}})"), true)
                    .ok());
  }
  std::string NodeOf(const std::string& pod) {
    auto p = c_.Get(pods_, "default", pod);
    return p.ok() ? (*p)["spec"].value("nodeName", "") : "<missing>";
  }
  int Bound(const std::string& prefix, int size) {
    int n = 0;
    for (int i = 0; i < size; ++i) n += NodeOf(prefix + std::to_string(i)).empty() ? 0 : 1;
    return n;
  }
  std::string PodMessage(const std::string& pod) {
    auto p = c_.Get(pods_, "default", pod);
    if (!p.ok()) return "<missing>";
    auto c = api::meta::GetCondition(*p, "PodScheduled");
    return c ? c->status + "/" + c->reason + ": " + c->message : "<none>";
  }
  std::string GroupCondition(const std::string& pg) {
    auto p = c_.Get(pod_groups_, "default", pg);
    if (!p.ok()) return "<missing>";
    auto c = api::meta::GetCondition(*p, "PodGroupScheduled");
    return c ? c->status + "/" + c->reason + ": " + c->message : "<none>";
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
  const api::KindDef& pod_groups_ = c_.Kind("scheduling.k8s.io", "v1alpha2", "podgroups");
};

// Eight 1-cpu slots, one taken: a gang of 8 binds nothing, holds nothing
// (a plain pod still fits... after the blocker is gone it is the gang's),
// and binds whole once the eighth slot frees.
TEST_F(GangSchedulerTest, GangOfEightWaitsForTheEighthSlotThenBindsAtOnce) {
  CreateNode("a", "4");
  CreateNode("b", "4");
  CreatePod(MakePod("blocker"));
  mgr_.RunUntilIdle();
  ASSERT_NE(NodeOf("blocker"), "");
  CreatePodGroup("pg", 8);
  CreateGang("pg", 8);
  mgr_.RunUntilIdle();
  EXPECT_EQ(Bound("g", 8), 0);
  EXPECT_EQ(GroupCondition("pg"),
            "False/Unschedulable: 7 of 8 pods can be placed, minCount is 8");
  EXPECT_EQ(PodMessage("g3"),
            "False/Unschedulable: pod group \"pg\": 7 of 8 pods can be placed, minCount is 8; "
            "0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are available: "
            "2 No preemption victims found for incoming pod.");
  // Nothing is held: a small plain pod still finds the room the gang could not use.
  CreatePod(MakePod("small", "500m"));
  mgr_.RunUntilIdle();
  EXPECT_NE(NodeOf("small"), "");
  EXPECT_EQ(Bound("g", 8), 0);

  // The blocker and the small pod finish: room for all eight, bound in one pass.
  Finish("blocker");
  Finish("small");
  mgr_.RunUntilIdle();
  EXPECT_EQ(Bound("g", 8), 8);
  EXPECT_EQ(GroupCondition("pg"), "True/Scheduled: 8 pods placed, minCount is 8");
  int scheduled_events = 0;
  for (const auto& r : ev_.Reasons()) scheduled_events += r == "Scheduled" ? 1 : 0;
  EXPECT_EQ(scheduled_events, 10);  // blocker, small and the eight.
}

TEST_F(GangSchedulerTest, MinCountBelowSizeBindsWhatFitsThenTheRest) {
  CreateNode("a", "6");
  CreatePodGroup("pg", 5);
  CreateGang("pg", 8);
  mgr_.RunUntilIdle();
  EXPECT_EQ(Bound("g", 8), 6);
  EXPECT_EQ(GroupCondition("pg"), "True/Scheduled: 6 pods placed, minCount is 5");
  // The two left wait as ordinary pods would; the bound ones count toward minCount.
  EXPECT_EQ(NodeOf("g6"), "");
  EXPECT_NE(PodMessage("g6").find("Insufficient cpu"), std::string::npos) << PodMessage("g6");
  Finish("g0");
  mgr_.RunUntilIdle();
  EXPECT_EQ(Bound("g", 8), 7);  // g0 finished but keeps its node name.
  EXPECT_NE(NodeOf("g6"), "");
  EXPECT_EQ(GroupCondition("pg"), "True/Scheduled: 6 pods placed, minCount is 5");
}

TEST_F(GangSchedulerTest, WaitsUntilMinCountPodsExist) {
  CreateNode("a", "8");
  CreatePodGroup("pg", 4);
  CreateGang("pg", 3);
  mgr_.RunUntilIdle();
  EXPECT_EQ(Bound("g", 3), 0);
  EXPECT_EQ(PodMessage("g0"), "False/Unschedulable: waiting for minCount pods from a gang to "
                              "appear in scheduling queue");
  EXPECT_EQ(GroupCondition("pg"), "False/Unschedulable: 3 of 4 pods exist, minCount is 4");
  CreatePod(GangPod("g3", "pg"));
  mgr_.RunUntilIdle();
  EXPECT_EQ(Bound("g", 4), 4);
}

TEST_F(GangSchedulerTest, MissingPodGroupKeepsPodsPending) {
  CreateNode("a", "8");
  CreateGang("later", 2);
  mgr_.RunUntilIdle();
  EXPECT_EQ(Bound("g", 2), 0);
  EXPECT_EQ(PodMessage("g1"), "False/Unschedulable: waiting for pod's pod group \"later\" to "
                              "appear in scheduling queue");
  // No retry loop while nothing changes.
  clock_.Advance(absl::Seconds(30));
  EXPECT_EQ(mgr_.RunUntilIdle(), 0);
  CreatePodGroup("later", 2);
  mgr_.RunUntilIdle();
  EXPECT_EQ(Bound("g", 2), 2);
}

TEST_F(GangSchedulerTest, WaitTimesOutWithoutHoldingAndANewWaitBegins) {
  CreateNode("a", "7");
  CreatePodGroup("pg", 8);
  CreateGang("pg", 8);
  mgr_.RunUntilIdle();
  EXPECT_EQ(GroupCondition("pg"), "False/Unschedulable: 7 of 8 pods can be placed, minCount is 8");
  clock_.Advance(absl::Minutes(4));
  mgr_.RunUntilIdle();
  EXPECT_EQ(GroupCondition("pg"), "False/Unschedulable: 7 of 8 pods can be placed, minCount is 8");
  // Five minutes after the first failed attempt the wait times out.
  clock_.Advance(absl::Minutes(1));
  mgr_.RunUntilIdle();
  EXPECT_EQ(Bound("g", 8), 0);
  EXPECT_EQ(GroupCondition("pg"), "False/Unschedulable: timed out after 5m waiting for the "
                                  "gang: 7 of 8 pods can be placed, minCount is 8");
  EXPECT_NE(PodMessage("g0").find("timed out after 5m"), std::string::npos) << PodMessage("g0");
  // The next attempt starts a new wait; capacity arriving later still binds the gang.
  CreateNode("b", "1");
  mgr_.RunUntilIdle();
  EXPECT_EQ(Bound("g", 8), 8);
  EXPECT_EQ(GroupCondition("pg"), "True/Scheduled: 8 pods placed, minCount is 8");
}

TEST_F(GangSchedulerTest, BasicPolicyIsPerPodScheduling) {
  CreateNode("a", "2");
  CreatePodGroup("pg", 0);
  CreateGang("pg", 3);
  mgr_.RunUntilIdle();
  EXPECT_EQ(Bound("g", 3), 2);
  EXPECT_EQ(PodMessage("g2"),
            "False/Unschedulable: 0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 "
            "nodes are available: 1 No preemption victims found for incoming pod.");
  EXPECT_EQ(GroupCondition("pg"), "<none>");  // Basic groups get no gang condition.
  Finish("g0");
  mgr_.RunUntilIdle();
  EXPECT_EQ(Bound("g", 3), 3);
}

// v1alpha1: the policy applies to each (workload, podGroup, replicaKey).
TEST_F(GangSchedulerTest, WorkloadRefReplicasAreSeparateGangs) {
  CreateNode("a", "8");
  Json wl = Json::parse(R"({"apiVersion":"scheduling.k8s.io/v1alpha1","kind":"Workload",
      "metadata":{"name":"train","namespace":"default"},
      "spec":{"podGroups":[{"name":"workers","policy":{"gang":{"minCount":2}}}]}})");
  ASSERT_TRUE(c_.Create(c_.Kind("scheduling.k8s.io", "v1alpha1", "workloads"), "default", wl).ok());
  auto member = [&](const std::string& name, const std::string& replica) {
    Json p = MakePod(name);
    p["spec"]["workloadRef"] = {{"name", "train"}, {"podGroup", "workers"},
                                {"podGroupReplicaKey", replica}};
    CreatePod(p);
  };
  member("r0-a", "r0");
  member("r0-b", "r0");
  member("r1-a", "r1");
  Json other = MakePod("other-group");
  other["spec"]["workloadRef"] = {{"name", "train"}, {"podGroup", "missing"}};
  CreatePod(other);
  mgr_.RunUntilIdle();
  EXPECT_NE(NodeOf("r0-a"), "");
  EXPECT_NE(NodeOf("r0-b"), "");
  EXPECT_EQ(NodeOf("r1-a"), "");
  EXPECT_EQ(PodMessage("r1-a"), "False/Unschedulable: waiting for minCount pods from a gang to "
                                "appear in scheduling queue");
  EXPECT_EQ(PodMessage("other-group"),
            "False/Unschedulable: waiting for pod's workload \"train\" (pod group \"missing\") "
            "to appear in scheduling queue");
  member("r1-b", "r1");
  mgr_.RunUntilIdle();
  EXPECT_NE(NodeOf("r1-a"), "");
  EXPECT_NE(NodeOf("r1-b"), "");
}

}  // namespace
}  // namespace batchd::scheduler
