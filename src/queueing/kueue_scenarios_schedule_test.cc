// Kueue's scheduling-cycle and flavor-assignment scenarios, re-expressed
// against AdmissionCore: TestSchedule (pkg/scheduler/scheduler_test.go),
// TestAssignFlavors (pkg/scheduler/flavorassigner/flavorassigner_test.go) and
// the fair-sharing order (pkg/scheduler/fair_sharing_iterator_test.go).
// batchd admits several workloads per ClusterQueue per cycle; where Kueue's
// expectation relies on one head per CQ per cycle, the case runs enough
// cycles and asserts the end state (noted per case).
#include <map>
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "queueing/admission.h"
#include "queueing/kueue_scenarios_util.h"

namespace batchd::queueing {
namespace {

using namespace batchd::queueing::kueue_scenarios;  // NOLINT
using PP = PreemptionPolicy;

struct Case {
  std::string name;
  Scenario scn;
  std::map<std::string, std::string> want_admitted;  // key -> flavors (AdmittedFlavors)
  std::map<std::string, std::string> want_pending;   // still pending: key -> last reason
  std::set<std::string> want_preempted = {};         // "ns/key:Reason"
  int cycles = 1;  // victims are removed between cycles
  std::map<std::string, int32_t> want_count = {};    // admitted key -> first pod set count
};

void RunCases(const std::vector<Case>& cases) {
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto core = testing::Load(c.scn);
    std::map<std::string, std::string> admitted, reason;
    std::map<std::string, int32_t> count;
    std::set<std::string> preempted;
    for (int i = 0; i < c.cycles; ++i) {
      std::vector<Decision> ds = core->RunCycle(absl::FromUnixSeconds(100 + i));
      for (auto& [k, f] : AdmittedFlavors(ds)) admitted[k] = f;
      for (const std::string& p : PreemptedWithReason(ds)) preempted.insert(p);
      for (const Decision& d : ds) {
        if (d.kind == Decision::Kind::kPending) reason[d.key] = PendingReasonName(d.pending_reason);
        if (d.kind == Decision::Kind::kAdmit) count[d.key] = d.admission.pod_sets[0].count;
      }
      FinishPreempted(*core, ds);
      EXPECT_TRUE(core->CheckInvariants().ok()) << core->CheckInvariants();
    }
    std::map<std::string, std::string> pending;
    for (const auto& [k, r] : reason) {
      if (core->IsPending(k)) pending[k] = r;
    }
    EXPECT_EQ(admitted, c.want_admitted);
    EXPECT_EQ(pending, c.want_pending);
    EXPECT_EQ(preempted, c.want_preempted);
    for (const auto& [k, n] : c.want_count) EXPECT_EQ(count[k], n) << k;
  }
}

std::vector<ResourceGroup> Cpu2(double one, double two) {
  return {RG({FQ("one", {{"cpu", Cpu(one)}}), FQ("two", {{"cpu", Cpu(two)}})})};
}
std::map<std::string, Amount> ReqCpu(double cpu) { return {{"cpu", Cpu(cpu)}}; }

TEST(KueueScenariosSchedule, FlavorAssignment) {
  ResourceFlavor one = testing::Rf("one", {{"type", "one"}});
  ResourceFlavor two = testing::Rf("two", {{"type", "two"}});
  ResourceFlavor tainted_one = one;
  tainted_one.node_taints.push_back({"instance", "spot", TaintEffect::kNoSchedule});
  auto with = [](Workload w, auto fn) { fn(w.pod_sets[0]); return w; };
  RunCases({
      {"single flavor fits",
       {.flavors = {one, two}, .cqs = {MakeCq({.name = "a", .groups = Cpu2(4, 4)})},
        .pending = {Wl("w", "a", 0, ReqCpu(2))}},
       {{"ns/w", "cpu=one"}}, {}},
      {"first flavor too small, fits the second",
       {.flavors = {one, two}, .cqs = {MakeCq({.name = "a", .groups = Cpu2(2, 4)})},
        .pending = {Wl("w", "a", 0, ReqCpu(3))}},
       {{"ns/w", "cpu=two"}}, {}},
      {"node selector skips flavors whose labels don't match",
       {.flavors = {one, two}, .cqs = {MakeCq({.name = "a", .groups = Cpu2(4, 4)})},
        .pending = {with(Wl("w", "a", 0, ReqCpu(1)),
                         [](PodSet& ps) { ps.node_selector["type"] = "two"; })}},
       {{"ns/w", "cpu=two"}}, {}},
      {"untolerated taint skips the flavor",
       {.flavors = {tainted_one, two}, .cqs = {MakeCq({.name = "a", .groups = Cpu2(4, 4)})},
        .pending = {Wl("w", "a", 0, ReqCpu(1))}},
       {{"ns/w", "cpu=two"}}, {}},
      {"tolerated taint keeps the flavor",
       {.flavors = {tainted_one, two}, .cqs = {MakeCq({.name = "a", .groups = Cpu2(4, 4)})},
        .pending = {with(Wl("w", "a", 0, ReqCpu(1)), [](PodSet& ps) {
          ps.tolerations.push_back({"instance", TolerationOperator::kEqual, "spot", std::nullopt});
        })}},
       {{"ns/w", "cpu=one"}}, {}},
      {"pod sets of one workload add up on a flavor",
       {.flavors = {one, two}, .cqs = {MakeCq({.name = "a", .groups = Cpu2(3, 4)})},
        .pending = {[] {
          Workload w = Wl("w", "a", 0, ReqCpu(2));
          PodSet second = w.pod_sets[0];
          second.name = "second";
          w.pod_sets.push_back(second);
          return w;
        }()}},
       {{"ns/w", "cpu=one;cpu=two"}}, {}},
      {"each resource group picks its own flavor",
       {.flavors = Flavors({"one", "two", "m1", "m2"}),
        .cqs = {MakeCq({.name = "a",
                        .groups = {Cpu2(2, 4)[0], RG({FQ("m1", {{"memory", Gi(1)}}),
                                                      FQ("m2", {{"memory", Gi(4)}})})}})},
        .pending = {Wl("w", "a", 0, {{"cpu", Cpu(3)}, {"memory", Gi(2)}})}},
       {{"ns/w", "cpu=two,memory=m2"}}, {}},
      {"resource the ClusterQueue doesn't cover",
       {.flavors = {one, two}, .cqs = {MakeCq({.name = "a", .groups = Cpu2(4, 4)})},
        .pending = {Wl("w", "a", 0, {{"cpu", Cpu(1)}, {"example.com/gpu", Cpu(1)}})}},
       {}, {{"ns/w", "NoMatchingFlavor"}}},
      {"request larger than every flavor",
       {.flavors = {one, two}, .cqs = {MakeCq({.name = "a", .groups = Cpu2(4, 4)})},
        .pending = {Wl("w", "a", 0, ReqCpu(5))}},
       {}, {{"ns/w", "ExceedsMaxQuota"}}},
  });
}

// Flavor fungibility (kueue.md §2.4): whenCanBorrow, whenCanPreempt, preference.
TEST(KueueScenariosSchedule, Fungibility) {
  auto cohort = [](FlavorFungibility f) {
    return std::vector<ClusterQueue>{
        MakeCq({.name = "a", .cohort = "co", .groups = Cpu2(2, 4), .fungibility = f}),
        MakeCq({.name = "b", .cohort = "co", .groups = Cpu2(4, 0)})};
  };
  auto preempt_cq = [](FlavorFungibility f) {
    return std::vector<ClusterQueue>{MakeCq({.name = "a", .groups = Cpu2(2, 2),
                                             .preemption = P(PP::kLowerPriority, PP::kNever),
                                             .fungibility = f})};
  };
  auto mixed = [](FlavorFungibility f) {  // one: preempt in own CQ; two: borrow from b
    return std::vector<ClusterQueue>{
        MakeCq({.name = "a", .cohort = "co", .groups = Cpu2(2, 0),
                .preemption = P(PP::kLowerPriority, PP::kNever), .fungibility = f}),
        MakeCq({.name = "b", .cohort = "co", .groups = Cpu2(0, 4)})};
  };
  auto low_on_one = [] { return Running("low", "a", -1, {{"cpu", "one", Cpu(2)}}); };
  const FlavorFungibility kDefault;
  const FlavorFungibility kTryNextOnBorrow{.when_can_borrow_try_next = true};
  const FlavorFungibility kStopOnPreempt{.when_can_preempt_try_next = false};
  const FlavorFungibility kPreemptOverBorrow{.when_can_borrow_try_next = true,
                                             .preemption_over_borrowing = true};
  RunCases({
      {"whenCanBorrow=MayStopSearch: borrows in the first flavor",
       {.flavors = Flavors({"one", "two"}), .cqs = cohort(kDefault),
        .pending = {Wl("w", "a", 0, ReqCpu(3))}},
       {{"ns/w", "cpu=one"}}, {}},
      {"whenCanBorrow=TryNextFlavor: a later flavor without borrowing wins",
       {.flavors = Flavors({"one", "two"}), .cqs = cohort(kTryNextOnBorrow),
        .pending = {Wl("w", "a", 0, ReqCpu(3))}},
       {{"ns/w", "cpu=two"}}, {}},
      {"whenCanBorrow=TryNextFlavor: when every flavor borrows, the first is kept",
       {.flavors = Flavors({"one", "two"}), .cqs = cohort(kTryNextOnBorrow),
        .pending = {Wl("w", "a", 0, ReqCpu(5))}},
       {{"ns/w", "cpu=one"}}, {}},
      {"whenCanPreempt=TryNextFlavor: a fitting later flavor beats preemption",
       {.flavors = Flavors({"one", "two"}), .cqs = preempt_cq(kDefault),
        .admitted = {low_on_one()}, .pending = {Wl("w", "a", 0, ReqCpu(2))}},
       {{"ns/w", "cpu=two"}}, {}},
      {"whenCanPreempt=Preempt: stops at the first flavor that can preempt",
       {.flavors = Flavors({"one", "two"}), .cqs = preempt_cq(kStopOnPreempt),
        .admitted = {low_on_one()}, .pending = {Wl("w", "a", 0, ReqCpu(2))}},
       {{"ns/w", "cpu=one"}}, {}, {"ns/low:InClusterQueue"}, 2},
      {"BorrowingOverPreemption: borrowing in a later flavor beats preemption",
       {.flavors = Flavors({"one", "two"}), .cqs = mixed(kDefault),
        .admitted = {low_on_one()}, .pending = {Wl("w", "a", 0, ReqCpu(2))}},
       {{"ns/w", "cpu=two"}}, {}},
      {"PreemptionOverBorrowing: preemption without borrowing beats borrowing",
       {.flavors = Flavors({"one", "two"}), .cqs = mixed(kPreemptOverBorrow),
        .admitted = {low_on_one()}, .pending = {Wl("w", "a", 0, ReqCpu(2))}},
       {{"ns/w", "cpu=one"}}, {}, {"ns/low:InClusterQueue"}, 2},
  });
}

// TestSchedule's cohort cases: borrowing in one cycle against the same snapshot.
TEST(KueueScenariosSchedule, CohortBorrowingInOneCycle) {
  auto eng = [] {
    return std::vector<ClusterQueue>{
        MakeCq({.name = "eng-alpha", .cohort = "eng",
                .groups = {RG({FQ("on-demand", {{"cpu", Cpu(50), Cpu(50)}})})}}),
        MakeCq({.name = "eng-beta", .cohort = "eng",
                .groups = {RG({FQ("on-demand", {{"cpu", Cpu(50), Cpu(10)}})})}})};
  };
  auto three = [] {
    std::vector<ClusterQueue> out;
    for (const char* n : {"c1", "c2", "c3"}) {
      out.push_back(MakeCq({.name = n, .cohort = "co",
                            .groups = {RG({FQ("default", {{"cpu", Cpu(2)}, {"memory", Gi(2)}})})}}));
    }
    return out;
  };
  RunCases({
      {"cannot borrow if the cohort would be over-admitted",
       {.flavors = Flavors({"on-demand"}), .cqs = eng(),
        .pending = {Wl("a", "eng-alpha", 0, ReqCpu(45)), Wl("b", "eng-beta", 0, ReqCpu(56))}},
       {{"ns/a", "cpu=on-demand"}}, {{"ns/b", "WaitingForQuota"}}},
      {"can borrow if the cohort is not over-admitted",
       {.flavors = Flavors({"on-demand"}), .cqs = eng(),
        .pending = {Wl("a", "eng-alpha", 0, ReqCpu(45)), Wl("b", "eng-beta", 0, ReqCpu(55))}},
       {{"ns/a", "cpu=on-demand"}, {"ns/b", "cpu=on-demand"}}, {}},
      {"two workloads borrow different resources of the same flavor in one cycle",
       {.flavors = Flavors({"default"}), .cqs = three(),
        .pending = {Wl("w1", "c1", 0, {{"cpu", Cpu(3)}, {"memory", Gi(1)}}),
                    Wl("w2", "c2", 0, {{"cpu", Cpu(1)}, {"memory", Gi(3)}})}},
       {{"ns/w1", "cpu=default,memory=default"}, {"ns/w2", "cpu=default,memory=default"}}, {}},
      {"only one of two borrowers of the same resource fits the cohort (older first)",
       {.flavors = Flavors({"default"}), .cqs = three(),
        .pending = {Wl("w1", "c1", 0, ReqCpu(3), 1, 1), Wl("w2", "c2", 0, ReqCpu(4), 1, 2)}},
       {{"ns/w1", "cpu=default"}}, {{"ns/w2", "WaitingForQuota"}}},
      {"higher priority borrower goes first across ClusterQueues",
       {.flavors = Flavors({"default"}), .cqs = three(),
        .pending = {Wl("w1", "c1", 0, ReqCpu(3), 1, 1), Wl("w2", "c2", 5, ReqCpu(4), 1, 2)}},
       {{"ns/w2", "cpu=default"}}, {{"ns/w1", "WaitingForQuota"}}},
  });
}

// Preemptor and other ClusterQueues in the same cycle (TestSchedule:
// "preemption while borrowing, workload waiting for preemption should not
// block a borrowing workload in another CQ"). Kueue checks later entries'
// fit with the victims chosen this cycle already removed, so b1 is admitted
// in the same cycle while `low` is still terminating (quota briefly
// over-committed). Deliberate difference: batchd never admits against the
// usage of victims that are still running (CheckInvariants holds after every
// cycle), so b1 waits one cycle; the end state once `low` is gone is the same.
TEST(KueueScenariosSchedule, PreemptorDoesNotBlockOtherQueues) {
  RunCases({
      {"a CQ whose head preempts does not block a borrower of another CQ",
       {.flavors = Flavors({"default"}),
        .cqs = {MakeCq({.name = "a", .cohort = "co",
                        .groups = {RG({FQ("default", {{"cpu", Cpu(2), Cpu(0)}})})},
                        .preemption = P(PP::kLowerPriority, PP::kNever)}),
                MakeCq({.name = "b", .cohort = "co",
                        .groups = {RG({FQ("default", {{"cpu", Cpu(2)}})})}}),
                MakeCq({.name = "c", .cohort = "co",
                        .groups = {RG({FQ("default", {{"cpu", Cpu(2)}})})}})},
        .admitted = {Running("low", "a", -1, {{"cpu", "default", Cpu(2)}})},
        .pending = {Wl("high", "a", 1, ReqCpu(2)), Wl("b1", "b", 0, ReqCpu(3))}},
       {{"ns/b1", "cpu=default"}, {"ns/high", "cpu=default"}}, {},
       {"ns/low:InClusterQueue"}, 2},
  });
}

TEST(KueueScenariosSchedule, QueueingStrategies) {
  auto cq = [](QueueingStrategy s) {
    return std::vector<ClusterQueue>{MakeCq(
        {.name = "a", .groups = {RG({FQ("default", {{"cpu", Cpu(4)}})})}, .strategy = s})};
  };
  auto scn = [&](QueueingStrategy s) {
    return Scenario{.flavors = Flavors({"default"}), .cqs = cq(s),
                    .admitted = {Running("run", "a", 0, {{"cpu", "default", Cpu(2)}})},
                    .pending = {Wl("high", "a", 5, ReqCpu(3), 1, 2), Wl("low", "a", 0, ReqCpu(1), 1, 1)}};
  };
  RunCases({
      {"StrictFIFO: the head that doesn't fit blocks lower-priority workloads",
       scn(QueueingStrategy::kStrictFIFO), {}, {{"ns/high", "WaitingForQuota"}}},
      {"BestEffortFIFO: a lower-priority workload that fits goes ahead",
       scn(QueueingStrategy::kBestEffortFIFO), {{"ns/low", "cpu=default"}},
       {{"ns/high", "WaitingForQuota"}}},
  });
}

// Partial admission (kueue.md §2.9; TestSchedule "partial admission ..." cases).
TEST(KueueScenariosSchedule, PartialAdmission) {
  auto cq = [] {
    return std::vector<ClusterQueue>{MakeCq({.name = "a",
                                             .groups = {RG({FQ("default", {{"cpu", Cpu(10)}})})},
                                             .preemption = P(PP::kLowerPriority, PP::kNever)})};
  };
  auto partial = [](int32_t count, int32_t min) {
    Workload w = Wl("w", "a", 0, ReqCpu(2), count);
    w.pod_sets[0].min_count = min;
    return w;
  };
  RunCases({
      {"single variable pod set: the largest count that fits",
       {.flavors = Flavors({"default"}), .cqs = cq(), .pending = {partial(10, 4)}},
       {{"ns/w", "cpu=default"}}, {}, {}, 1, {{"ns/w", 5}}},
      // Kueue reports the full-size assignment's status when no reduced
      // count works: 20 cpu exceeds the 10 the CQ could ever get.
      {"below the minimum count: not admitted",
       {.flavors = Flavors({"default"}), .cqs = cq(),
        .admitted = {Running("high", "a", 5, {{"cpu", "default", Cpu(4)}})},
        .pending = {partial(10, 4)}},
       {}, {{"ns/w", "ExceedsMaxQuota"}}},
      {"full size with preemption beats a smaller size that fits",
       {.flavors = Flavors({"default"}), .cqs = cq(),
        .admitted = {Running("low", "a", -1, {{"cpu", "default", Cpu(6)}})},
        .pending = {partial(5, 1)}},
       {{"ns/w", "cpu=default"}}, {}, {"ns/low:InClusterQueue"}, 2, {{"ns/w", 5}}},
      {"reduced when preemption can't help",
       {.flavors = Flavors({"default"}), .cqs = cq(),
        .admitted = {Running("high", "a", 1, {{"cpu", "default", Cpu(6)}})},
        .pending = {partial(5, 1)}},
       {{"ns/w", "cpu=default"}}, {}, {}, 1, {{"ns/w", 2}}},
  });
}

}  // namespace
}  // namespace batchd::queueing
