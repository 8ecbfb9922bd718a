// Scheduling-cycle behaviour of AdmissionCore (reference §2.2, §2.3, §2.5).
#include <algorithm>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "queueing/admission.h"
#include "queueing/internal/test_util.h"

namespace batchd::queueing {
namespace {

using ::testing::ElementsAreArray;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAreArray;
using namespace batchd::queueing::testing;  // NOLINT

struct Case {
  std::string name;
  Scenario scn;
  std::vector<std::string> want_admitted;  // in decision order
  std::map<std::string, std::string> want_pending;  // key -> reason
  std::vector<std::string> want_preempted = {};
};

void RunCases(const std::vector<Case>& cases) {
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto core = Load(c.scn);
    Summary s = Summarize(core->RunCycle(absl::FromUnixSeconds(100)));
    EXPECT_THAT(s.admitted, ElementsAreArray(c.want_admitted));
    EXPECT_THAT(s.preempted, UnorderedElementsAreArray(c.want_preempted));
    EXPECT_EQ(s.pending, c.want_pending);
    EXPECT_TRUE(core->CheckInvariants().ok());
  }
}

TEST(CycleTest, QueueingStrategiesAndOrdering) {
  auto five = [] {
    std::vector<Workload> w;
    for (int i = 0; i < 6; ++i) w.push_back(WlBuilder("w" + std::to_string(i), "a").Cpu(2).At(i).Obj());
    return w;
  };
  RunCases({
      {"admits as many per ClusterQueue per cycle as fit",
       {.cqs = {CqBuilder("a").Flavor("default", 10).Obj()}, .pending = five()},
       {"ns/w0", "ns/w1", "ns/w2", "ns/w3", "ns/w4"},
       {{"ns/w5", "WaitingForQuota"}}},
      {"priority first, then queue-order time",
       {.cqs = {CqBuilder("a").Flavor("default", 2).Obj()},
        .pending = {WlBuilder("old", "a").Cpu(2).At(1).Obj(),
                    WlBuilder("high", "a").Cpu(2).At(5).Priority(10).Obj()}},
       {"ns/high"},
       {{"ns/old", "WaitingForQuota"}}},
      {"StrictFIFO blocks behind a head that does not fit",
       {.cqs = {CqBuilder("a").Flavor("default", 4).Strict().Obj()},
        .admitted = {{WlBuilder("run", "a").Cpu(2).Obj(), AdmitOn("a", "default", 2)}},
        .pending = {WlBuilder("big", "a").Cpu(3).At(1).Obj(),
                    WlBuilder("small", "a").Cpu(1).At(2).Obj()}},
       {},
       {{"ns/big", "WaitingForQuota"}}},
      {"BestEffortFIFO skips a head that does not fit",
       {.cqs = {CqBuilder("a").Cohort("co").Flavor("default", 2).Obj(),
                CqBuilder("b").Cohort("co").Flavor("default", 2).Obj()},
        .admitted = {{WlBuilder("run", "b").Cpu(2).Obj(), AdmitOn("b", "default", 2)}},
        .pending = {WlBuilder("big", "a").Cpu(3).At(1).Obj(),
                    WlBuilder("small", "a").Cpu(1).At(2).Obj()}},
       {"ns/small"},
       {{"ns/big", "WaitingForQuota"}}},
      {"larger than the ClusterQueue could ever get",
       {.cqs = {CqBuilder("a").Flavor("default", 4).Obj()},
        .pending = {WlBuilder("huge", "a").Cpu(5).Obj()}},
       {},
       {{"ns/huge", "ExceedsMaxQuota"}}},
      {"borrows unused quota of the cohort",
       {.cqs = {CqBuilder("a").Cohort("co").Flavor("default", 2).Obj(),
                CqBuilder("b").Cohort("co").Flavor("default", 4).Obj()},
        .pending = {WlBuilder("w", "a").Cpu(5).Obj()}},
       {"ns/w"},
       {}},
      {"non-borrowing heads go first across ClusterQueues",
       {.cqs = {CqBuilder("a").Cohort("co").Flavor("default", 2).Obj(),
                CqBuilder("b").Cohort("co").Flavor("default", 2).Obj()},
        .pending = {WlBuilder("borrower", "a").Cpu(3).At(1).Priority(5).Obj(),
                    WlBuilder("local", "b").Cpu(2).At(2).Obj()}},
       {"ns/local"},
       {{"ns/borrower", "WaitingForQuota"}}},
      {"hold stops new admissions",
       {.cqs = {CqBuilder("a").Flavor("default", 4).Stop(StopPolicy::kHold).Obj()},
        .pending = {WlBuilder("w", "a").Cpu(1).Obj()}},
       {},
       {{"ns/w", "Misconfigured"}}},
      {"inactive workloads are never admitted",
       {.cqs = {CqBuilder("a").Flavor("default", 4).Obj()},
        .pending = {WlBuilder("w", "a").Cpu(1).Inactive().Obj()}},
       {},
       {}},
      {"nil namespaceSelector admits no namespace",
       {.cqs = {CqBuilder("a").Flavor("default", 4).NoNamespaces().Obj()},
        .pending = {WlBuilder("w", "a").Cpu(1).Obj()}},
       {},
       {{"ns/w", "NamespaceMismatch"}}},
      {"missing ClusterQueue",
       {.cqs = {}, .pending = {WlBuilder("w", "nope").Cpu(1).Obj()}},
       {},
       {{"ns/w", "Misconfigured"}}},
      {"missing flavor makes the ClusterQueue inactive",
       {.flavors = {}, .cqs = {CqBuilder("a").Flavor("default", 4).Obj()},
        .pending = {WlBuilder("w", "a").Cpu(1).Obj()}},
       {},
       {{"ns/w", "Misconfigured"}}},
  });
}

// A head that could preempt but finds no candidates holds the nominal quota
// it waits for during the cycle (Kueue's resourcesToReserve) against other
// ClusterQueues; later heads of its own CQ, which Kueue would only evaluate
// in the next cycle once the head is inadmissible, see it released.
TEST(CycleTest, PreemptWithoutCandidatesReservesAgainstOtherQueues) {
  Scenario s;
  s.cqs = {CqBuilder("a").Cohort("co").Flavor("default", 4).Obj(),
           CqBuilder("b").Cohort("co").Flavor("default", 0).Obj()};
  s.admitted = {{WlBuilder("run", "a").Cpu(2).Obj(), AdmitOn("a", "default", 2)}};
  s.pending = {WlBuilder("big", "a").Cpu(3).At(1).Priority(10).Obj(),
               WlBuilder("small-a", "a").Cpu(1).At(2).Obj(),
               WlBuilder("small-b", "b").Cpu(1).At(1).Priority(5).Obj()};
  auto core = Load(s);
  Summary c1 = Summarize(core->RunCycle(absl::FromUnixSeconds(1)));
  EXPECT_THAT(c1.admitted, ElementsAreArray({"ns/small-a"}));
  EXPECT_EQ(c1.pending["ns/big"], "WaitingForQuota");
  EXPECT_EQ(c1.messages["ns/big"],
            "couldn't assign flavors to pod set main: insufficient unused quota for cpu in "
            "flavor default, 1 more needed");
  EXPECT_EQ(c1.pending["ns/small-b"], "WaitingForQuota");
  // Reservations end with the cycle.
  EXPECT_EQ(core->ClusterQueueStatusOf("a").usage[0].total, U(3));
}

TEST(CycleTest, CohortTrees) {
  Cohort pool = MakeCohort("pool");
  pool.resource_groups = {{{"cpu"}, {{"default", {{"cpu", {U(3)}}}}}}};
  Cohort capped = MakeCohort("capped", "root");
  capped.resource_groups = {{{"cpu"}, {{"default", {{"cpu", {0, U(1)}}}}}}};
  Cohort a_cycle = MakeCohort("x", "y"), b_cycle = MakeCohort("y", "x");
  RunCases({
      {"a cohort's own quota is a shared pool",
       {.cohorts = {pool},
        .cqs = {CqBuilder("a").Cohort("pool").Flavor("default", 0).Obj()},
        .pending = {WlBuilder("w", "a").Cpu(3).Obj()}},
       {"ns/w"},
       {}},
      {"a cohort's borrowing limit caps what its subtree borrows",
       {.cohorts = {MakeCohort("root"), capped},
        .cqs = {CqBuilder("a").Cohort("capped").Flavor("default", 2).Obj(),
                CqBuilder("b").Cohort("root").Flavor("default", 10).Obj()},
        .pending = {WlBuilder("fits", "a").Cpu(3).At(1).Obj(),
                    WlBuilder("over", "a").Cpu(1).At(2).Obj()}},
       {"ns/fits"},
       {{"ns/over", "WaitingForQuota"}}},
      {"lending limit keeps quota for the lender",
       {.cqs = {CqBuilder("a").Cohort("co").Flavor("default", 4, std::nullopt, 1).Obj(),
                CqBuilder("b").Cohort("co").Flavor("default", 0).Obj()},
        .pending = {WlBuilder("w", "b").Cpu(2).Obj()}},
       {},
       {{"ns/w", "ExceedsMaxQuota"}}},
      {"a cohort cycle disables its members",
       {.cohorts = {a_cycle, b_cycle},
        .cqs = {CqBuilder("a").Cohort("x").Flavor("default", 4).Obj()},
        .pending = {WlBuilder("w", "a").Cpu(1).Obj()}},
       {},
       {{"ns/w", "Misconfigured"}}},
  });
}

TEST(CycleTest, NamespaceSelectorMatchesLabels) {
  Scenario s;
  ClusterQueue cq = CqBuilder("a").Flavor("default", 4).Obj();
  cq.namespace_selector = api::labels::LabelSelector::FromSet({{"team", "x"}});
  s.cqs = {cq};
  s.pending = {WlBuilder("in", "a").Cpu(1).NsLabel("team", "x").Obj(),
               WlBuilder("out", "a").Cpu(1).NsLabel("team", "y").Obj()};
  auto core = Load(s);
  Summary r = Summarize(core->RunCycle(absl::FromUnixSeconds(1)));
  EXPECT_THAT(r.admitted, ElementsAreArray({"ns/in"}));
  EXPECT_EQ(r.pending["ns/out"], "NamespaceMismatch");
}

TEST(CycleTest, PreemptorIsAdmittedOnlyAfterItsVictimsLeave) {
  Scenario s;
  s.cqs = {CqBuilder("a").Flavor("default", 2).Within(PreemptionPolicy::kLowerPriority).Obj()};
  s.admitted = {{WlBuilder("low", "a").Cpu(2).Obj(), AdmitOn("a", "default", 2)}};
  s.pending = {WlBuilder("high", "a").Cpu(2).Priority(10).Obj()};
  auto core = Load(s);
  Summary c1 = Summarize(core->RunCycle(absl::FromUnixSeconds(1)));
  EXPECT_THAT(c1.admitted, IsEmpty());
  EXPECT_THAT(c1.preempted, ElementsAreArray({"ns/low"}));
  EXPECT_EQ(c1.pending["ns/high"], "WaitingForPreemptedWorkloads");
  // The victim is still running: no second preemption, no admission.
  Summary c2 = Summarize(core->RunCycle(absl::FromUnixSeconds(2)));
  EXPECT_THAT(c2.admitted, IsEmpty());
  EXPECT_THAT(c2.preempted, IsEmpty());
  core->Remove("ns/low");
  Summary c3 = Summarize(core->RunCycle(absl::FromUnixSeconds(3)));
  EXPECT_THAT(c3.admitted, ElementsAreArray({"ns/high"}));
}

TEST(CycleTest, InadmissibleWorkloadsReturnOnEvents) {
  Scenario s;
  s.cqs = {CqBuilder("a").Flavor("default", 2).Obj()};
  s.admitted = {{WlBuilder("run", "a").Cpu(2).Obj(), AdmitOn("a", "default", 2)}};
  s.pending = {WlBuilder("w", "a").Cpu(2).Obj()};
  auto core = Load(s);
  EXPECT_EQ(Summarize(core->RunCycle(absl::FromUnixSeconds(1))).pending["ns/w"], "WaitingForQuota");
  // Not retried without an event, and no repeated pending decision.
  EXPECT_THAT(core->RunCycle(absl::FromUnixSeconds(2)), IsEmpty());
  EXPECT_EQ(core->ClusterQueueStatusOf("a").pending, 1);
  core->Remove("ns/run");
  EXPECT_THAT(Summarize(core->RunCycle(absl::FromUnixSeconds(3))).admitted,
              ElementsAreArray({"ns/w"}));
}

// Identical inadmissible workloads return one at a time (the next follows
// when one is admitted), keeping queue order across groups.
TEST(CycleTest, IdenticalInadmissibleWorkloadsReturnInOrder) {
  Scenario s;
  s.cqs = {CqBuilder("a").Flavor("default", 2).Obj()};
  s.admitted = {{WlBuilder("run", "a").Cpu(2).Obj(), AdmitOn("a", "default", 2)}};
  s.pending = {WlBuilder("a1", "a").Cpu(1).At(1).Obj(), WlBuilder("b2", "a").Cpu(2).At(2).Obj(),
               WlBuilder("c1", "a").Cpu(1).At(3).Obj(), WlBuilder("d1", "a").Cpu(1).At(4).Obj()};
  auto core = Load(s);
  EXPECT_EQ(Summarize(core->RunCycle(absl::FromUnixSeconds(1))).pending.size(), 4u);
  EXPECT_EQ(core->ClusterQueueStatusOf("a").pending, 4);
  core->Remove("ns/run");
  Summary r = Summarize(core->RunCycle(absl::FromUnixSeconds(2)));
  EXPECT_THAT(r.admitted, ElementsAreArray({"ns/a1", "ns/c1"}));
  EXPECT_EQ(core->ClusterQueueStatusOf("a").pending, 2);
  EXPECT_EQ(core->PendingWorkloads("a", 10), (std::vector<std::string>{"ns/b2", "ns/d1"}));
}

// Every workload at its own priority, a ClusterQueue that shares nothing and
// no preemption candidate: the inadmissible ones wait in one group across
// priorities, so a finished workload costs two evaluations (the admitted
// head and the next, NoFit again), not one per pending workload; admissions
// come in priority order, and the same as with one group per priority.
TEST(CycleTest, FinishedWorkloadCostsAnEvaluationPerGroupNotPerPriority) {
  for (bool across : {true, false}) {
    SCOPED_TRACE(across ? "across priorities" : "one group per priority");
    Scenario s;
    s.opts.group_across_priorities = across;
    s.cqs = {CqBuilder("a").Flavor("default", 4).Within(PreemptionPolicy::kLowerPriority).Obj()};
    for (int i = 0; i < 4; ++i) {
      s.admitted.push_back({WlBuilder("run" + std::to_string(i), "a").Cpu(1).Priority(1000).Obj(),
                            AdmitOn("a", "default", 1)});
    }
    for (int i = 0; i < 200; ++i) {  // w0 has the highest priority
      s.pending.push_back(WlBuilder("w" + std::to_string(i), "a").Cpu(1).Priority(500 - i).At(i).Obj());
    }
    auto core = Load(s);
    EXPECT_EQ(Summarize(core->RunCycle(absl::FromUnixSeconds(1))).pending.size(), 200u);
    std::vector<std::string> admitted;
    uint64_t evaluated = 0;
    for (int i = 0; i < 4; ++i) {
      core->Remove("ns/run" + std::to_string(i));
      const uint64_t before = core->HeadsEvaluated();
      for (const std::string& k :
           Summarize(core->RunCycle(absl::FromUnixSeconds(2 + i))).admitted) {
        admitted.push_back(k);
      }
      evaluated += core->HeadsEvaluated() - before;
    }
    EXPECT_THAT(admitted, ElementsAreArray({"ns/w0", "ns/w1", "ns/w2", "ns/w3"}));
    if (across) {
      EXPECT_EQ(evaluated, 8u);
    } else {
      EXPECT_GT(evaluated, 4u * 190);
    }
    EXPECT_EQ(core->ClusterQueueStatusOf("a").pending, 196);
  }
}

TEST(CycleTest, RequeueAtDelaysCandidacy) {
  Scenario s;
  s.cqs = {CqBuilder("a").Flavor("default", 2).Obj()};
  s.pending = {WlBuilder("w", "a").Cpu(1).RequeueAt(50).Obj()};
  auto core = Load(s);
  EXPECT_EQ(core->NextRequeueAt(), absl::FromUnixSeconds(50));
  EXPECT_THAT(core->RunCycle(absl::FromUnixSeconds(49)), IsEmpty());
  EXPECT_EQ(core->ClusterQueueStatusOf("a").pending, 1);
  EXPECT_THAT(Summarize(core->RunCycle(absl::FromUnixSeconds(50))).admitted,
              ElementsAreArray({"ns/w"}));
  EXPECT_EQ(core->NextRequeueAt(), std::nullopt);
}

TEST(CycleTest, PodsResourceCountsOnePerPod) {
  Scenario s;
  s.cqs = {CqBuilder("a").FlavorRes("default", {{"cpu", {U(10)}}, {"pods", {U(3)}}}).Obj()};
  s.pending = {WlBuilder("two", "a").Cpu(1).Count(2).At(1).Obj(),
               WlBuilder("more", "a").Cpu(1).Count(2).At(2).Obj()};
  auto core = Load(s);
  auto ds = core->RunCycle(absl::FromUnixSeconds(1));
  Summary r = Summarize(ds);
  EXPECT_THAT(r.admitted, ElementsAreArray({"ns/two"}));
  EXPECT_EQ(ds[0].admission.pod_sets[0].resource_usage.at("pods"), U(2));
  EXPECT_EQ(r.pending["ns/more"], "WaitingForQuota");
}

TEST(CycleTest, LocalQueueStopAndResume) {
  Scenario s;
  s.cqs = {CqBuilder("a").Flavor("default", 2).Obj()};
  s.pending = {WlBuilder("w", "a").Cpu(1).Obj()};
  auto core = Load(s);
  core->UpsertLocalQueue({"ns", "lq", "a", StopPolicy::kHold});
  EXPECT_EQ(Summarize(core->RunCycle(absl::FromUnixSeconds(1))).pending["ns/w"],
            "LocalQueueStopped");
  core->UpsertLocalQueue({"ns", "lq", "a", StopPolicy::kNone});
  EXPECT_THAT(Summarize(core->RunCycle(absl::FromUnixSeconds(2))).admitted,
              ElementsAreArray({"ns/w"}));
  LocalQueueStatus lq = core->LocalQueueStatusOf("ns", "lq");
  EXPECT_EQ(lq.admitted, 1);
  EXPECT_EQ(lq.pending, 0);
}

TEST(CycleTest, EvictionMakesAnAdmittedWorkloadPendingAgain) {
  Scenario s;
  s.cqs = {CqBuilder("a").Flavor("default", 2).Obj()};
  s.admitted = {{WlBuilder("w", "a").Cpu(2).Obj(), AdmitOn("a", "default", 2)}};
  auto core = Load(s);
  EXPECT_EQ(core->ClusterQueueStatusOf("a").usage[0].total, U(2));
  core->UpsertPending(WlBuilder("w", "a").Cpu(2).Obj());
  EXPECT_EQ(core->ClusterQueueStatusOf("a").usage[0].total, 0);
  EXPECT_TRUE(core->IsPending("ns/w"));
  EXPECT_THAT(Summarize(core->RunCycle(absl::FromUnixSeconds(1))).admitted,
              ElementsAreArray({"ns/w"}));
}

TEST(CycleTest, ReapplyingAnAdmissionIsANoOp) {
  Scenario s;
  s.cqs = {CqBuilder("a").Flavor("default", 2).Obj()};
  s.pending = {WlBuilder("w", "a").Cpu(2).Obj(), WlBuilder("x", "a").Cpu(1).At(5).Obj()};
  auto core = Load(s);
  auto ds = core->RunCycle(absl::FromUnixSeconds(1));
  ASSERT_EQ(Summarize(ds).admitted, std::vector<std::string>{"ns/w"});
  EXPECT_THAT(core->RunCycle(absl::FromUnixSeconds(2)), IsEmpty());  // x is inadmissible
  // The controller writes the admission back and reports it: no usage change,
  // no requeue of x (nothing was freed).
  core->SetAdmitted(WlBuilder("w", "a").Cpu(2).Obj(), ds[0].admission);
  EXPECT_EQ(core->ClusterQueueStatusOf("a").usage[0].total, U(2));
  EXPECT_THAT(core->RunCycle(absl::FromUnixSeconds(3)), IsEmpty());
  // A different admission replaces the old one and frees quota.
  core->SetAdmitted(WlBuilder("w", "a").Cpu(1).Obj(), AdmitOn("a", "default", 1));
  EXPECT_EQ(core->ClusterQueueStatusOf("a").usage[0].total, U(1));
  EXPECT_THAT(Summarize(core->RunCycle(absl::FromUnixSeconds(4))).admitted,
              ElementsAreArray({"ns/x"}));
}

TEST(CycleTest, KueueCompatibleOneAdmissionPerCycle) {
  Scenario s;
  s.opts.max_admissions_per_cluster_queue_per_cycle = 1;
  s.cqs = {CqBuilder("a").Flavor("default", 10).Obj()};
  s.pending = {WlBuilder("x", "a").Cpu(1).At(1).Obj(), WlBuilder("y", "a").Cpu(1).At(2).Obj()};
  auto core = Load(s);
  EXPECT_THAT(Summarize(core->RunCycle(absl::FromUnixSeconds(1))).admitted,
              ElementsAreArray({"ns/x"}));
  EXPECT_THAT(Summarize(core->RunCycle(absl::FromUnixSeconds(2))).admitted,
              ElementsAreArray({"ns/y"}));
}

}  // namespace
}  // namespace batchd::queueing
