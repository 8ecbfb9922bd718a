// Gang scheduling through the whole scheduler (registry, informers, the
// injected clock): all-or-nothing binding, minCount below the group size,
// the quorum barrier, a missing PodGroup, the wait timeout, the basic policy,
// v1alpha1 Workload pod groups with replica keys, and disruptionMode
// PodGroup (one member evicted from a failed node takes the group with it).
#include "api/core/v1/node_view.h"
#include "scheduler/scheduler_test_env.h"

namespace batchd::scheduler {
namespace {

using api::Json;
using testing::MakeNode;
using testing::MakePod;
using testing::GangPod;
using GangSchedulerTest = testing::SchedulerTestEnv;

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

// Messages of the FailedScheduling events recorded for `pod`.
std::vector<std::string> FailedSchedulingMessages(const reconcile::FakeEventRecorder& ev,
                                                  const std::string& pod) {
  std::vector<std::string> out;
  for (const auto& e : ev.events()) {
    if (e.reason == "FailedScheduling" && e.object == "Pod default/" + pod) {
      out.push_back(e.message);
    }
  }
  return out;
}

TEST_F(GangSchedulerTest, WaitTimesOutWithoutHoldingAndANewWaitBegins) {
  CreateNode("a", "7");
  CreatePodGroup("pg", 8);
  CreateGang("pg", 8);
  mgr_.RunUntilIdle();
  EXPECT_EQ(GroupCondition("pg"), "False/Unschedulable: 7 of 8 pods can be placed, minCount is 8");
  // Nothing is assumed while the gang waits: the seven free cpus take a plain pod.
  CreatePod(MakePod("plain", "1"));
  mgr_.RunUntilIdle();
  EXPECT_EQ(NodeOf("plain"), "a");
  Finish("plain");
  clock_.Advance(absl::Minutes(4));
  mgr_.RunUntilIdle();
  EXPECT_EQ(GroupCondition("pg"), "False/Unschedulable: 7 of 8 pods can be placed, minCount is 8");
  ASSERT_EQ(FailedSchedulingMessages(ev_, "g0").size(), 1u);
  // Five minutes after the first failed attempt the wait times out, as
  // kube-scheduler's Permit does: the pods are rejected (a FailedScheduling
  // event each) and the PodGroup says why.
  clock_.Advance(absl::Minutes(1));
  mgr_.RunUntilIdle();
  EXPECT_EQ(Bound("g", 8), 0);
  EXPECT_EQ(GroupCondition("pg"),
            "False/Unschedulable: rejected due to timeout after waiting 5m0s at plugin "
            "GangScheduling: 7 of 8 pods can be placed, minCount is 8");
  for (int i = 0; i < 8; ++i) {
    const std::string pod = "g" + std::to_string(i);
    std::vector<std::string> events = FailedSchedulingMessages(ev_, pod);
    ASSERT_EQ(events.size(), 2u) << pod;
    EXPECT_EQ(events[1].rfind("rejected due to timeout after waiting 5m0s at plugin "
                              "GangScheduling; pod group \"pg\": 7 of 8 pods can be placed",
                              0),
              0u)
        << events[1];
    EXPECT_EQ(PodMessage(pod), "False/Unschedulable: " + events[1]);
  }
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

// disruptionMode PodGroup: the node lifecycle controller evicts one member
// from a failed node (Failed + DisruptionTarget/DeletionByTaintManager, then
// a delete); every other member follows in one decision, the PodGroup says
// so, and the replacements the Job would create are left alone.
TEST_F(GangSchedulerTest, DisruptionModePodGroupEvictsTheWholeGroup) {
  for (const char* n : {"a", "b", "c"}) CreateNode(n, "1");
  CreatePodGroup("pg", 3, "PodGroup");
  CreateGang("pg", 3);
  mgr_.RunUntilIdle();
  ASSERT_EQ(Bound("g", 3), 3);

  // What the taint manager does to the member on the failed node.
  Json evicted = Get("g1");
  api::core_v1::MarkPodEvictedByTaintManager(evicted, clock_.Now());
  ASSERT_TRUE(c_.UpdateStatus(pods_, evicted).ok());
  client::DeleteOptions graceful;
  ASSERT_TRUE(c_.Delete(pods_, "default", "g1", graceful).ok());
  mgr_.RunUntilIdle();

  for (const char* other : {"g0", "g2"}) {
    EXPECT_TRUE(Terminating(other)) << other;
    Json dt = Condition(other, "DisruptionTarget");
    EXPECT_EQ(dt.value("status", ""), "True") << other;
    EXPECT_EQ(dt.value("reason", ""), "DeletionByTaintManager") << other;
    EXPECT_EQ(dt.value("message", ""),
              "default-scheduler: pod group \"pg\" is disrupted as a whole (disruptionMode "
              "PodGroup): pod default/g1 is a disruption target (DeletionByTaintManager)");
  }
  EXPECT_EQ(CountEvents("PodGroupDisrupted"), 2);
  EXPECT_EQ(GroupCondition("pg", "DisruptionTarget"),
            "True/DeletionByTaintManager: default-scheduler: pod group \"pg\" is disrupted as a "
            "whole (disruptionMode PodGroup): pod default/g1 is a disruption target "
            "(DeletionByTaintManager)");

  // The replacements arrive while the old pods are still terminating; the
  // old pods' last events (their deletion) start nothing new.
  CreateGang("pg", 3, "r");
  mgr_.RunUntilIdle();
  EXPECT_EQ(NodeOf("g1"), "<missing>");  // Failed, so deleted at once.
  for (const char* old : {"g0", "g2"}) FinishDelete(old);
  mgr_.RunUntilIdle();
  EXPECT_EQ(Bound("r", 3), 3);
  for (const char* r : {"r0", "r1", "r2"}) EXPECT_FALSE(Terminating(r)) << r;
  EXPECT_EQ(CountEvents("PodGroupDisrupted"), 2);
}

TEST_F(GangSchedulerTest, DisruptionModePodEvictsOnlyThePod) {
  for (const char* n : {"a", "b"}) CreateNode(n, "1");
  CreatePodGroup("pg", 2);  // disruptionMode defaults to Pod.
  CreateGang("pg", 2);
  mgr_.RunUntilIdle();
  ASSERT_EQ(Bound("g", 2), 2);
  Json evicted = Get("g1");
  api::core_v1::MarkPodEvictedByTaintManager(evicted, clock_.Now());
  ASSERT_TRUE(c_.UpdateStatus(pods_, evicted).ok());
  mgr_.RunUntilIdle();
  EXPECT_FALSE(Terminating("g0"));
  EXPECT_TRUE(Condition("g0", "DisruptionTarget").is_null());
  EXPECT_EQ(GroupCondition("pg", "DisruptionTarget"), "<none>");
  EXPECT_EQ(CountEvents("PodGroupDisrupted"), 0);
}

}  // namespace
}  // namespace batchd::scheduler
