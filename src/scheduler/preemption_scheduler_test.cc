// Scheduler-level preemption: a higher-priority pod that fits nowhere
// nominates a node, its victims get DisruptionTarget and are deleted, and it
// binds once they are gone; Never and equal priority preempt nothing.
#include "api/meta/object_meta.h"
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

Json MakePod(const std::string& name, const std::string& cpu, int priority) {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", name}, {"namespace", "default"}}},
          {"spec",
           {{"restartPolicy", "Never"},
            {"priority", priority},
            {"containers", Json::array({{{"name", "c"},
                                         {"image", "busybox"},
                                         {"resources", {{"requests", {{"cpu", cpu}}}}}}})}}}};
}

class PreemptionSchedulerTest : public ::testing::Test {
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
    ASSERT_TRUE(
        c_.MergePatch(nodes_, "", name, {{"status", node["status"]}}, /*status=*/true).ok());
  }
  void CreatePod(Json pod) { ASSERT_TRUE(c_.Create(pods_, "default", std::move(pod)).ok()); }
  Json Get(const std::string& pod) {
    auto p = c_.Get(pods_, "default", pod);
    return p.ok() ? *p : Json(nullptr);
  }
  std::string NodeOf(const std::string& pod) {
    Json p = Get(pod);
    return p.is_null() ? "<missing>" : p["spec"].value("nodeName", "");
  }
  Json Condition(const std::string& pod, const std::string& type) {
    Json p = Get(pod);
    if (p.is_null()) return nullptr;
    for (const Json& c : p["status"].value("conditions", Json::array())) {
      if (c.value("type", "") == type) return c;
    }
    return nullptr;
  }
  bool Terminating(const std::string& pod) {
    Json p = Get(pod);
    return !p.is_null() && api::meta::IsBeingDeleted(p);
  }
  // What the kubelet does for a terminating pod: the final delete.
  void FinishDelete(const std::string& pod) {
    client::DeleteOptions opts;
    opts.grace_period_seconds = 0;
    ASSERT_TRUE(c_.Delete(pods_, "default", pod, opts).ok());
  }
  int CountEvents(const std::string& reason) {
    int n = 0;
    for (const auto& e : ev_.events()) n += e.reason == reason;
    return n;
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

TEST_F(PreemptionSchedulerTest, HigherPriorityPreemptsTheLowestThenBinds) {
  CreateNode("n1", "2");
  CreatePod(MakePod("low", "1", 1));
  CreatePod(MakePod("mid", "1", 5));
  mgr_.RunUntilIdle();
  ASSERT_EQ(NodeOf("low"), "n1");
  ASSERT_EQ(NodeOf("mid"), "n1");

  CreatePod(MakePod("high", "1", 10));
  mgr_.RunUntilIdle();
  EXPECT_EQ(NodeOf("high"), "");
  EXPECT_EQ(Get("high")["status"].value("nominatedNodeName", ""), "n1");
  Json dt = Condition("low", "DisruptionTarget");
  EXPECT_EQ(dt.value("status", ""), "True");
  EXPECT_EQ(dt.value("reason", ""), "PreemptionByScheduler");
  EXPECT_EQ(dt.value("message", ""),
            "default-scheduler: preempting to accommodate a higher priority pod");
  EXPECT_TRUE(Terminating("low"));
  EXPECT_FALSE(Terminating("mid"));
  EXPECT_TRUE(Condition("mid", "DisruptionTarget").is_null());
  EXPECT_EQ(CountEvents("Preempted"), 1);
  const std::string uid = api::meta::GetUid(Get("high"));
  bool found = false;
  for (const auto& e : ev_.events()) {
    if (e.reason != "Preempted") continue;
    found = true;
    EXPECT_EQ(e.object, "Pod default/low");
    EXPECT_EQ(e.message, "Preempted by pod " + uid + " on node n1");
  }
  EXPECT_TRUE(found);

  // A lower-priority newcomer may not take the room being freed.
  CreatePod(MakePod("replacement", "1", 1));
  mgr_.RunUntilIdle();
  EXPECT_EQ(CountEvents("Preempted"), 1);  // The terminating victim is waited for.
  FinishDelete("low");
  mgr_.RunUntilIdle();
  EXPECT_EQ(NodeOf("high"), "n1");
  EXPECT_EQ(NodeOf("replacement"), "");
  EXPECT_EQ(NodeOf("mid"), "n1");
  EXPECT_EQ(CountEvents("Preempted"), 1);  // The replacement outranks no one.
}

TEST_F(PreemptionSchedulerTest, NeverAndEqualPriorityPreemptNothing) {
  CreateNode("n1", "1");
  CreatePod(MakePod("low", "1", 1));
  mgr_.RunUntilIdle();
  ASSERT_EQ(NodeOf("low"), "n1");
  Json never = MakePod("never", "1", 10);
  never["spec"]["preemptionPolicy"] = "Never";
  CreatePod(never);
  CreatePod(MakePod("equal", "1", 1));
  mgr_.RunUntilIdle();
  EXPECT_EQ(NodeOf("never"), "");
  EXPECT_EQ(NodeOf("equal"), "");
  EXPECT_FALSE(Terminating("low"));
  EXPECT_EQ(CountEvents("Preempted"), 0);
  EXPECT_EQ(Get("never")["status"].value("nominatedNodeName", ""), "");
}

TEST_F(PreemptionSchedulerTest, MinimalVictimSet) {
  CreateNode("n1", "4");
  CreatePod(MakePod("p1", "1", 1));
  CreatePod(MakePod("p2", "1", 2));
  CreatePod(MakePod("big", "2", 3));
  mgr_.RunUntilIdle();
  ASSERT_EQ(NodeOf("big"), "n1");
  CreatePod(MakePod("high", "2", 10));
  mgr_.RunUntilIdle();
  EXPECT_TRUE(Terminating("p1"));
  EXPECT_TRUE(Terminating("p2"));
  EXPECT_FALSE(Terminating("big"));
  FinishDelete("p1");
  mgr_.RunUntilIdle();
  EXPECT_EQ(NodeOf("high"), "");  // Still waits for p2.
  FinishDelete("p2");
  mgr_.RunUntilIdle();
  EXPECT_EQ(NodeOf("high"), "n1");
}

TEST_F(PreemptionSchedulerTest, GangMemberIsNoVictim) {
  CreateNode("n1", "2");
  Json pg = {{"apiVersion", "scheduling.k8s.io/v1alpha2"},
             {"kind", "PodGroup"},
             {"metadata", {{"name", "gang"}, {"namespace", "default"}}},
             {"spec", {{"schedulingPolicy", {{"gang", {{"minCount", 1}}}}}}}};
  ASSERT_TRUE(c_.Create(pod_groups_, "default", pg).ok());
  Json member = MakePod("member", "1", 1);
  member["spec"]["schedulingGroup"] = {{"podGroupName", "gang"}};
  CreatePod(member);
  CreatePod(MakePod("loner", "1", 2));
  mgr_.RunUntilIdle();
  ASSERT_EQ(NodeOf("member"), "n1");
  ASSERT_EQ(NodeOf("loner"), "n1");
  // The lowest-priority pod is the gang member; the loner is taken instead.
  CreatePod(MakePod("high", "1", 10));
  mgr_.RunUntilIdle();
  EXPECT_TRUE(Terminating("loner"));
  EXPECT_FALSE(Terminating("member"));
  // Room only by taking the member too: no preemption at all.
  FinishDelete("loner");
  mgr_.RunUntilIdle();
  ASSERT_EQ(NodeOf("high"), "n1");
  CreatePod(MakePod("wide", "2", 20));
  mgr_.RunUntilIdle();
  EXPECT_FALSE(Terminating("member"));
  EXPECT_FALSE(Terminating("high"));  // Taking "high" alone would not be enough.
  EXPECT_EQ(NodeOf("wide"), "");
  EXPECT_EQ(CountEvents("Preempted"), 1);
}

}  // namespace
}  // namespace batchd::scheduler
