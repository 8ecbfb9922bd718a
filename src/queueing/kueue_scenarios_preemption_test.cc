// Kueue's classic-preemption scenarios (pkg/scheduler/preemption/
// preemption_test.go, TestPreemption), re-expressed against AdmissionCore.
// Kueue's test hands GetTargets a ready-made "Preempt" assignment; here the
// incoming workload goes through a whole cycle (flavor assignment, oracle,
// target search), so each case's quota is set up so the workload does not
// fit without preemption. Each case then checks the victims and reasons, and
// that the preemptor is admitted once the victims are gone.
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

constexpr PP kNever = PP::kNever;
constexpr PP kLower = PP::kLowerPriority;
constexpr PP kLowerOrNewer = PP::kLowerOrNewerEqualPriority;
constexpr PP kAny = PP::kAny;

// Kueue's defaultClusterQueues of TestPreemption (same names, quotas, policies).
std::vector<ClusterQueue> DefaultCqs() {
  auto cpu_mem = [](Amount cpu, Amount mem, std::optional<Amount> bc = std::nullopt,
                    std::optional<Amount> bm = std::nullopt) {
    return std::vector<ResourceGroup>{
        RG({FQ("default", {{"cpu", cpu, bc}, {"memory", mem, bm}})})};
  };
  auto cpu_only = [](Amount cpu, std::optional<Amount> borrow = std::nullopt,
                     std::optional<Amount> lend = std::nullopt) {
    return std::vector<ResourceGroup>{RG({FQ("default", {{"cpu", cpu, borrow, lend}})})};
  };
  const Preemption shared_thr = P(kNever, kLower, kLower, 0);
  return {
      MakeCq({.name = "standalone",
              .groups = {RG({FQ("default", {{"cpu", Cpu(6)}})}),
                         RG({FQ("alpha", {{"memory", Gi(3)}}), FQ("beta", {{"memory", Gi(3)}})})},
              .preemption = P(kLower, kNever)}),
      MakeCq({.name = "c1", .cohort = "cohort",
              .groups = cpu_mem(Cpu(6), Gi(3), Cpu(6), Gi(3)), .preemption = P(kLower, kLower)}),
      MakeCq({.name = "c2", .cohort = "cohort",
              .groups = cpu_mem(Cpu(6), Gi(3), Cpu(6), Gi(3)), .preemption = P(kNever, kAny)}),
      MakeCq({.name = "d1", .cohort = "cohort-no-limits", .groups = cpu_mem(Cpu(6), Gi(3)),
              .preemption = P(kLower, kLower)}),
      MakeCq({.name = "d2", .cohort = "cohort-no-limits", .groups = cpu_mem(Cpu(6), Gi(3)),
              .preemption = P(kNever, kAny)}),
      MakeCq({.name = "l1", .cohort = "legion",
              .groups = cpu_mem(Cpu(6), Gi(3), Cpu(12), Gi(6)), .preemption = P(kLower, kLower)}),
      MakeCq({.name = "preventStarvation", .groups = cpu_only(Cpu(6)),
              .preemption = P(kLowerOrNewer, kNever)}),
      MakeCq({.name = "a_standard", .cohort = "with_shared_cq", .groups = cpu_only(Cpu(1), Cpu(12)),
              .preemption = shared_thr}),
      MakeCq({.name = "b_standard", .cohort = "with_shared_cq", .groups = cpu_only(Cpu(1), Cpu(12)),
              .preemption = P(kLower, kAny, kLower, 0)}),
      MakeCq({.name = "a_best_effort", .cohort = "with_shared_cq",
              .groups = cpu_only(Cpu(1), Cpu(12)), .preemption = shared_thr}),
      MakeCq({.name = "b_best_effort", .cohort = "with_shared_cq",
              .groups = cpu_only(Cpu(0), Cpu(13)), .preemption = shared_thr}),
      MakeCq({.name = "shared", .cohort = "with_shared_cq", .groups = cpu_only(Cpu(10))}),
      MakeCq({.name = "lend1", .cohort = "cohort-lend",
              .groups = cpu_only(Cpu(6), std::nullopt, Cpu(4)), .preemption = P(kLower, kLower)}),
      MakeCq({.name = "lend2", .cohort = "cohort-lend",
              .groups = cpu_only(Cpu(6), std::nullopt, Cpu(2)), .preemption = P(kLower, kLower)}),
      MakeCq({.name = "a", .cohort = "cohort-three", .groups = cpu_mem(Cpu(2), 2000),
              .preemption = P(kLower, kAny)}),
      MakeCq({.name = "b", .cohort = "cohort-three", .groups = cpu_mem(Cpu(2), 2000)}),
      MakeCq({.name = "c", .cohort = "cohort-three", .groups = cpu_mem(Cpu(2), 2000)}),
  };
}

using Case = PreemptCase;

void RunCases(const std::vector<Case>& cases) { RunPreemptCases(cases, DefaultCqs()); }

std::vector<Use> C(double cpu, const char* flavor = "default") { return {{"cpu", flavor, Cpu(cpu)}}; }
std::map<std::string, Amount> ReqCpu(double cpu) { return {{"cpu", Cpu(cpu)}}; }

TEST(KueueScenariosPreemption, WithinClusterQueue) {
  RunCases({
      {"preempt lowest priority",
       {Running("low", "standalone", -1, C(2)), Running("mid", "standalone", 0, C(2)),
        Running("high", "standalone", 1, C(2))},
       Wl("in", "standalone", 1, ReqCpu(2)),
       {"ns/low:InClusterQueue"}},
      {"preempt multiple",
       {Running("low", "standalone", -1, C(2)), Running("mid", "standalone", 0, C(2)),
        Running("high", "standalone", 1, C(2))},
       Wl("in", "standalone", 1, ReqCpu(3)),
       {"ns/low:InClusterQueue", "ns/mid:InClusterQueue"}},
      {"no preemption for low priority",
       {Running("low", "standalone", -1, C(3)), Running("mid", "standalone", 0, C(3))},
       Wl("in", "standalone", -1, ReqCpu(1)),
       {}},
      {"not enough low priority workloads",
       {Running("low", "standalone", -1, C(3)), Running("mid", "standalone", 0, C(3))},
       Wl("in", "standalone", 0, ReqCpu(4)),
       {}},
      {"some free quota, preempt low priority",
       {Running("low", "standalone", -1, C(1)), Running("mid", "standalone", 0, C(1)),
        Running("high", "standalone", 1, C(3))},
       Wl("in", "standalone", 1, ReqCpu(2)),
       {"ns/low:InClusterQueue"}},
      {"minimal set excludes low priority (fill-back)",
       {Running("low", "standalone", -1, C(1)), Running("mid", "standalone", 0, C(2)),
        Running("high", "standalone", 1, C(3))},
       Wl("in", "standalone", 1, ReqCpu(2)),
       {"ns/mid:InClusterQueue"}},
      {"each podset preempts a different flavor",
       {Running("low-alpha", "standalone", -1, {{"memory", "alpha", Gi(2)}}),
        Running("low-beta", "standalone", -1, {{"memory", "beta", Gi(2)}})},
       [] {
         Workload w = Wl("in", "standalone", 0, {{"memory", Gi(2)}});
         w.pod_sets[0].name = "launcher";
         PodSet workers;
         workers.name = "workers";
         workers.count = 2;
         workers.requests = {{"memory", Gi(1)}};
         w.pod_sets.push_back(workers);
         return w;
       }(),
       {"ns/low-alpha:InClusterQueue", "ns/low-beta:InClusterQueue"}},
      // Equal priority: only workloads whose queue-order time is newer than the
      // preemptor's; the most recently admitted of those first (wl2 was
      // admitted after wl3).
      {"preempt newer workloads with the same priority",
       {Running("wl1", "preventStarvation", 2, C(2), 10),
        Running("wl3", "preventStarvation", 1, C(2), 10),
        Running("wl2", "preventStarvation", 1, C(2), 10)},
       Wl("in", "preventStarvation", 1, ReqCpu(2), 1, -5),
       {"ns/wl2:InClusterQueue"}},
      {"LowerOrNewerEqualPriority spares older equal-priority workloads",
       {Running("wl1", "preventStarvation", 1, C(6), 1)},
       Wl("in", "preventStarvation", 1, ReqCpu(2), 1, 5),
       {}},
  });
}

TEST(KueueScenariosPreemption, ReclaimWithinCohort) {
  RunCases({
      {"do not reclaim borrowed quota from same priority for reclaimWithinCohort=LowerPriority",
       {Running("c1", "c1", 0, C(2)), Running("c2-1", "c2", 0, C(4)),
        Running("c2-2", "c2", 0, C(4))},
       Wl("in", "c1", 0, ReqCpu(4)),
       {}},
      {"reclaim borrowed quota from same priority for reclaimWithinCohort=Any",
       {Running("c1-1", "c1", 0, C(4)), Running("c1-2", "c1", 1, C(4)),
        Running("c2", "c2", 0, C(2))},
       Wl("in", "c2", 0, ReqCpu(4)),
       {"ns/c1-1:InCohortReclamation"}},
      {"preempt from all ClusterQueues in cohort",
       {Running("c1-low", "c1", -1, C(3)), Running("c1-mid", "c1", 0, C(2)),
        Running("c2-low", "c2", -1, C(3)), Running("c2-mid", "c2", 0, C(4))},
       Wl("in", "c1", 0, ReqCpu(4)),
       {"ns/c1-low:InClusterQueue", "ns/c2-low:InCohortReclamation"}},
      // Kueue's case hands over a Preempt assignment while c2 could still
      // borrow; here c1 holds its whole nominal so c2 has nothing to borrow.
      {"can't preempt workloads in ClusterQueue for withinClusterQueue=Never",
       {Running("c2-low", "c2", -1, C(3)), Running("c1-all", "c1", 0, C(6))},
       Wl("in", "c2", 1, ReqCpu(4)),
       {}},
      {"workloads of a ClusterQueue within its nominal quota are not reclaimed",
       {Running("d1-low", "d1", -1, C(6)), Running("d2-a", "d2", 0, C(4))},
       Wl("in", "d2", 0, ReqCpu(4)),
       {}},
      {"reclaim from the borrowing ClusterQueue, newest admitted first",
       {Running("d1-a", "d1", 0, C(2)), Running("d1-b", "d1", 0, C(2)),
        Running("d2-a", "d2", 0, C(2)), Running("d1-c", "d1", 0, C(4))},
       Wl("in", "d2", 0, ReqCpu(4)),
       {"ns/d1-c:InCohortReclamation"}},
  });
}

TEST(KueueScenariosPreemption, BorrowWithinCohort) {
  RunCases({
      {"allow preempting a lower-priority workload from another ClusterQueue while borrowing",
       {Running("a_best_effort_low", "a_best_effort", -1, C(10)),
        Running("b_best_effort_low", "b_best_effort", -1, C(1))},
       Wl("in", "a_standard", 0, ReqCpu(10)),
       {"ns/a_best_effort_low:InCohortReclaimWhileBorrowing"}},
      {"don't preempt above maxPriorityThreshold if borrowing is required after the preemption",
       {Running("b_standard", "b_standard", 1, C(10))},
       Wl("in", "a_standard", 2, ReqCpu(10)),
       {}},
      {"preempt above maxPriorityThreshold if no borrowing is needed after the preemption",
       {Running("b_standard", "b_standard", 1, C(13))},
       Wl("in", "a_standard", 2, ReqCpu(1)),
       {"ns/b_standard:InCohortReclamation"}},
      {"don't preempt a lower-priority workload of the own ClusterQueue (withinClusterQueue=Never)",
       {Running("a_standard", "a_standard", 1, C(13))},
       Wl("in", "a_standard", 2, ReqCpu(1)),
       {}},
      {"only preempt in own CQ when no workloads below threshold and already above nominal",
       {Running("a_standard_1", "a_standard", 1, C(10)),
        Running("a_standard_2", "a_standard", 1, C(1)),
        Running("b_standard_1", "b_standard", 1, C(1)),
        Running("b_standard_2", "b_standard", 2, C(1))},
       Wl("in", "b_standard", 3, ReqCpu(1)),
       {"ns/b_standard_1:InClusterQueue"}},
      {"preempt from own CQ and from other CQs with workloads below threshold",
       {Running("b_standard_high", "b_standard", 2, C(10)),
        Running("b_standard_mid", "b_standard", 1, C(1)),
        Running("a_best_effort_low", "a_best_effort", -1, C(1)),
        Running("a_best_effort_lower", "a_best_effort", -2, C(1))},
       Wl("in", "b_standard", 2, ReqCpu(2)),
       {"ns/b_standard_mid:InClusterQueue",
        "ns/a_best_effort_lower:InCohortReclaimWhileBorrowing"}},
  });
}

TEST(KueueScenariosPreemption, LendingLimit) {
  RunCases({
      // lend1 lends 4 of 6: 2 stay local. lend2 lends 2: with its own 6 in
      // use it needs 2 back from lend1's borrower.
      {"reclaim quota from a borrower of lent quota (modelled on Kueue's lender cases)",
       {Running("lend1-low", "lend1", -1, C(3)), Running("lend2-mid", "lend2", 0, C(3)),
        Running("lend2-high", "lend2", 1, C(4))},
       Wl("in", "lend1", 1, ReqCpu(3)),
       {"ns/lend2-mid:InCohortReclamation"}},
      {"preempt from own ClusterQueue when the cohort has nothing to give",
       {Running("lend1-low", "lend1", -1, C(6)), Running("lend2-mid", "lend2", 0, C(6))},
       Wl("in", "lend1", 1, ReqCpu(3)),
       {"ns/lend1-low:InClusterQueue"}},
  });
}

}  // namespace
}  // namespace batchd::queueing
