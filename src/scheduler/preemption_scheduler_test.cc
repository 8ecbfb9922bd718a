// Scheduler-level preemption: a higher-priority pod that fits nowhere
// nominates a node, its victims get DisruptionTarget and are deleted, and it
// binds once they are gone; Never and equal priority preempt nothing; gangs
// are victims only whole; nominations end when the pod binds elsewhere, is
// no longer a preemptor or is displaced; messages read like kube-scheduler's.
#include "scheduler/scheduler_test_env.h"

namespace batchd::scheduler {
namespace {

using api::Json;
using testing::MakeNode;
using testing::MakePod;
using testing::GangPod;
using PreemptionSchedulerTest = testing::SchedulerTestEnv;

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

// Never a part of a gang without the whole gang: the gang's member on n1 is
// the cheapest victim there, so the whole gang goes, its member on n2 too,
// as one decision; the PodGroup is marked a disruption target.
TEST_F(PreemptionSchedulerTest, GangIsPreemptedWhole) {
  CreateNode("n1", "1");
  CreateNode("n2", "1");
  CreatePodGroup("gang", 2);
  CreateGang("gang", 2, "m", "1", 1);
  mgr_.RunUntilIdle();
  ASSERT_EQ(Bound("m", 2), 2);
  CreatePod(MakePod("high", "1", 10));
  mgr_.RunUntilIdle();
  EXPECT_EQ(NominatedNode("high"), "n1");
  for (const char* m : {"m0", "m1"}) {
    EXPECT_TRUE(Terminating(m)) << m;
    EXPECT_EQ(Condition(m, "DisruptionTarget").value("reason", ""), "PreemptionByScheduler");
  }
  EXPECT_EQ(CountEvents("Preempted"), 2);
  EXPECT_EQ(GroupCondition("gang", "DisruptionTarget"),
            "True/PreemptionByScheduler: default-scheduler: preempting to accommodate a higher "
            "priority pod");
  // The preemptor reads like kube-scheduler's after a successful PostFilter.
  EXPECT_EQ(PodMessage("high"),
            "False/Unschedulable: 0/2 nodes are available: 2 Insufficient cpu.");
  FinishDelete("m0");
  FinishDelete("m1");
  mgr_.RunUntilIdle();
  EXPECT_EQ(NodeOf("high"), "n1");
  EXPECT_EQ(NominatedNode("high"), "");  // Binding clears the nomination.
}

TEST_F(PreemptionSchedulerTest, GangWithAMoreImportantMemberIsNoVictim) {
  CreateNode("n1", "2");
  CreateNode("n2", "1");
  CreatePodGroup("gang", 2);
  CreatePod(GangPod("m0", "gang", "1", 1));
  CreatePod(GangPod("m1", "gang", "1", 20));
  CreatePod(MakePod("loner", "1", 2));
  mgr_.RunUntilIdle();
  ASSERT_EQ(Bound("m", 2), 2);
  ASSERT_NE(NodeOf("loner"), "");
  // Taking m0 would break a gang whose m1 outranks the preemptor: only the
  // loner can go.
  CreatePod(MakePod("high", "1", 10));
  mgr_.RunUntilIdle();
  EXPECT_TRUE(Terminating("loner"));
  EXPECT_FALSE(Terminating("m0"));
  EXPECT_FALSE(Terminating("m1"));
  FinishDelete("loner");
  mgr_.RunUntilIdle();
  ASSERT_NE(NodeOf("high"), "");
  // Two cpu: only by taking m0 alone, which is refused.
  CreatePod(MakePod("wide", "2", 15));
  mgr_.RunUntilIdle();
  EXPECT_FALSE(Terminating("m0"));
  EXPECT_EQ(NodeOf("wide"), "");
  EXPECT_EQ(CountEvents("Preempted"), 1);
}

TEST_F(PreemptionSchedulerTest, MessagesReadLikeKubeScheduler) {
  CreateNode("n1", "1");
  CreatePod(MakePod("low", "1", 1));
  mgr_.RunUntilIdle();
  Json never = MakePod("never", "1", 10);
  never["spec"]["preemptionPolicy"] = "Never";
  CreatePod(never);
  CreatePod(MakePod("equal", "1", 1));
  mgr_.RunUntilIdle();
  EXPECT_EQ(PodMessage("never"),
            "False/Unschedulable: 0/1 nodes are available: 1 Insufficient cpu. preemption: not "
            "eligible due to preemptionPolicy=Never.");
  EXPECT_EQ(PodMessage("equal"),
            "False/Unschedulable: 0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 "
            "nodes are available: 1 No preemption victims found for incoming pod.");
  // A preemptor waiting for its victim says so when it is tried again.
  CreatePod(MakePod("high", "1", 10));
  mgr_.RunUntilIdle();
  ASSERT_TRUE(Terminating("low"));
  EXPECT_EQ(PodMessage("high"), "False/Unschedulable: 0/1 nodes are available: 1 Insufficient cpu.");
  clock_.Advance(absl::Minutes(5));  // The periodic flush retries it.
  mgr_.RunUntilIdle();
  EXPECT_EQ(PodMessage("high"),
            "False/Unschedulable: 0/1 nodes are available: 1 Insufficient cpu. preemption: not "
            "eligible due to a terminating pod on the nominated node.");
  EXPECT_EQ(NominatedNode("high"), "n1");
}

// The nomination ends when the pod binds somewhere else.
TEST_F(PreemptionSchedulerTest, NominationClearedWhenBoundElsewhere) {
  CreateNode("n1", "1");
  CreatePod(MakePod("low", "1", 1));
  mgr_.RunUntilIdle();
  CreatePod(MakePod("high", "1", 10));
  mgr_.RunUntilIdle();
  ASSERT_EQ(NominatedNode("high"), "n1");
  CreateNode("n2", "1");  // Room elsewhere before the victim is gone.
  mgr_.RunUntilIdle();
  EXPECT_EQ(NodeOf("high"), "n2");
  EXPECT_EQ(NominatedNode("high"), "");
  // n1's room is no longer held: a low-priority pod may take it.
  FinishDelete("low");
  CreatePod(MakePod("after", "1", 1));
  mgr_.RunUntilIdle();
  EXPECT_EQ(NodeOf("after"), "n1");
}

// The nomination ends when the pod is no longer a preemptor: its room went
// to a more important pod and nobody is left to preempt.
TEST_F(PreemptionSchedulerTest, NominationClearedWhenNoLongerAPreemptor) {
  CreateNode("n1", "1");
  CreatePod(MakePod("low", "1", 1));
  mgr_.RunUntilIdle();
  CreatePod(MakePod("high", "1", 10));
  mgr_.RunUntilIdle();
  ASSERT_EQ(NominatedNode("high"), "n1");
  CreatePod(MakePod("vip", "1", 20));  // Outranks the nomination.
  mgr_.RunUntilIdle();
  FinishDelete("low");
  mgr_.RunUntilIdle();
  EXPECT_EQ(NodeOf("vip"), "n1");
  EXPECT_EQ(NodeOf("high"), "");
  EXPECT_EQ(NominatedNode("high"), "");
  EXPECT_EQ(PodMessage("high"),
            "False/Unschedulable: 0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 "
            "nodes are available: 1 No preemption victims found for incoming pod.");
}

// A more important preemptor nominated to the same node displaces the
// nomination of a less important one, as kube-scheduler does.
TEST_F(PreemptionSchedulerTest, LowerPriorityNominationIsDisplaced) {
  CreateNode("n1", "2");
  CreatePod(MakePod("low1", "1", 1));
  CreatePod(MakePod("low2", "1", 1));
  mgr_.RunUntilIdle();
  CreatePod(MakePod("mid", "1", 5));
  mgr_.RunUntilIdle();
  ASSERT_EQ(NominatedNode("mid"), "n1");
  CreatePod(MakePod("high", "1", 10));
  mgr_.RunUntilIdle();
  EXPECT_EQ(NominatedNode("high"), "n1");
  EXPECT_EQ(NominatedNode("mid"), "");
  EXPECT_TRUE(Terminating("low1"));
  EXPECT_TRUE(Terminating("low2"));
}

}  // namespace
}  // namespace batchd::scheduler
