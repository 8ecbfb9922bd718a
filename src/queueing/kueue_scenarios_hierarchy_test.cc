// Kueue's hierarchical-cohort scenarios: TestHierarchicalPreemptions
// (pkg/scheduler/preemption/preemption_test.go) and the quota semantics of
// cohort trees (cohort-level quota pools, borrowing/lending limits on
// cohorts). Kueue's CQs there have a "default" flavor with no quota; here
// they cover cpu with nominal 0, which is the same thing.
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "queueing/admission.h"
#include "queueing/kueue_scenarios_util.h"

namespace batchd::queueing {
namespace {

using namespace batchd::queueing::kueue_scenarios;  // NOLINT
using PP = PreemptionPolicy;

std::vector<ResourceGroup> CpuQuota(double cpu, std::optional<Amount> borrow = std::nullopt,
                                    std::optional<Amount> lend = std::nullopt) {
  return {RG({FQ("default", {{"cpu", Cpu(cpu), borrow, lend}})})};
}
ClusterQueue Q(std::string name, std::string cohort, double cpu, Preemption p) {
  return MakeCq({.name = std::move(name), .cohort = std::move(cohort),
                 .groups = CpuQuota(cpu), .preemption = p});
}
const Preemption kLowerAny = P(PP::kLowerPriority, PP::kAny);
const Preemption kLowerAnyBorrow0 = P(PP::kLowerPriority, PP::kAny, PP::kLowerPriority, 0);
const Preemption kLowerLowerBorrow0 =
    P(PP::kLowerPriority, PP::kLowerPriority, PP::kLowerPriority, 0);
std::vector<Use> C(double cpu) { return {{"cpu", "default", Cpu(cpu)}}; }
Workload In(double cpu, int32_t prio) { return Wl("incoming", "q", prio, {{"cpu", Cpu(cpu)}}); }

// r (no quota) <- c (2 cpu) <- q ; r <- q_borrowing
std::vector<Cohort> RC(double r_cpu, double c_cpu) {
  return {MakeCohortQ("r", "", r_cpu > 0 ? CpuQuota(r_cpu) : std::vector<ResourceGroup>{}),
          MakeCohortQ("c", "r", CpuQuota(c_cpu))};
}

TEST(KueueScenariosHierarchy, Preemption) {
  RunPreemptCases(
      {
          {"preempt with hierarchical advantage",
           {Running("admitted2", "q_borrowing", 0, C(2))},
           In(2, 0),
           {"ns/admitted2:InCohortReclamation"},
           {Q("q", "c", 0, kLowerAny), Q("q_borrowing", "r", 0, kLowerAny)},
           RC(0, 2)},
          {"avoid queues within nominal quota",
           {Running("admitted1", "q_nominal", -10, C(2)),
            Running("admitted2", "q_borrowing", 0, C(2))},
           In(2, 0),
           {"ns/admitted2:InCohortReclamation"},
           {Q("q_nominal", "r", 2, kLowerAny), Q("q", "c", 0, kLowerAny),
            Q("q_borrowing", "r", 0, kLowerAny)},
           RC(0, 2)},
          {"preempt multiple with hierarchical advantage (any priority)",
           {Running("admitted1", "q_borrowing", 1, C(1)),
            Running("admitted2", "q_borrowing", 2, C(1))},
           In(2, 0),
           {"ns/admitted1:InCohortReclamation", "ns/admitted2:InCohortReclamation"},
           {Q("q", "c", 0, kLowerAny), Q("q_borrowing", "r", 0, kLowerAny)},
           RC(0, 2)},
          // admitted_preemptible's admission says 2 cpu (its request says 1):
          // usage follows the admission.
          {"preempt in cohort and own CQ",
           {Running("admitted_not_preemptible", "q_same_cohort", 1, C(1)),
            Running("admitted_preemptible", "q_same_cohort", 0, C(2)),
            Running("admitted_own_queue", "q", -1, C(1))},
           In(2, 1),
           {"ns/admitted_preemptible:InCohortReclaimWhileBorrowing",
            "ns/admitted_own_queue:InClusterQueue"},
           {Q("q", "c", 0, kLowerAnyBorrow0), Q("q_same_cohort", "c", 0, kLowerAny)},
           RC(0, 3)},
          {"prefer to preempt hierarchical candidate over a lower-priority one in the own CQ",
           {Running("admitted_borrowing", "q_borrowing", 1, C(1)),
            Running("admitted_same_queue", "q", -2, C(1))},
           In(1, 0),
           {"ns/admitted_borrowing:InCohortReclamation"},
           {Q("q", "c", 0, kLowerAny), Q("q_borrowing", "r", 0, kLowerAny)},
           RC(0, 2)},
          {"forced to preempt priority candidate",
           {Running("admitted_nominal", "q_nominal", -10, C(2)),
            Running("admitted_same_cohort", "q_same_cohort", -1, C(2))},
           In(2, 0),
           {"ns/admitted_same_cohort:InCohortReclaimWhileBorrowing"},
           {Q("q", "c", 0, kLowerAnyBorrow0), Q("q_nominal", "r", 2, kLowerAny),
            Q("q_same_cohort", "c", 0, kLowerAny)},
           RC(0, 2)},
          {"incoming workload fits in CQ nominal quota: any priority is reclaimed",
           {Running("admitted_borrowing", "q_borrowing", 10, C(3)),
            Running("admitted_same_cohort", "q_same_cohort", 10, C(3))},
           In(4, 0),
           {"ns/admitted_borrowing:InCohortReclamation",
            "ns/admitted_same_cohort:InCohortReclamation"},
           {Q("q", "c", 4, kLowerAny), Q("q_borrowing", "r", 0, kLowerAny),
            Q("q_same_cohort", "c", 0, kLowerAny)},
           RC(0, 2)},
          {"preempt hierarchical and priority candidates",
           {Running("admitted_borrowing", "q_borrowing", -1, C(2)),
            Running("admitted_same_cohort_preemptible", "q_same_cohort", -1, C(1)),
            Running("admitted_borrowing_not_preemptible", "q_borrowing", 1, C(2))},
           In(3, 0),
           {"ns/admitted_borrowing:InCohortReclamation",
            "ns/admitted_same_cohort_preemptible:InCohortReclaimWhileBorrowing"},
           {Q("q", "c", 0, kLowerLowerBorrow0), Q("q_borrowing", "r", 0, kLowerAny),
            Q("q_same_cohort", "c", 0, kLowerAny)},
           RC(1, 4)},
          {"preempt hierarchical candidates and inside CQ",
           {Running("admitted_borrowing", "q_borrowing", -1, C(2)),
            Running("admitted_same_queue_preemptible", "q", -1, C(1)),
            Running("admitted_borrowing_not_preemptible", "q_borrowing", 1, C(2))},
           In(3, 0),
           {"ns/admitted_borrowing:InCohortReclamation",
            "ns/admitted_same_queue_preemptible:InClusterQueue"},
           {Q("q", "c", 0, kLowerLowerBorrow0), Q("q_borrowing", "r", 0, kLowerAny),
            Q("q_same_cohort", "c", 0, kLowerAny)},
           RC(1, 4)},
          {"reclaim nominal quota from lowest priority workload, excluding non-borrowing",
           {Running("admitted_borrowing_prio_8", "q_borrowing", 8, C(1)),
            Running("admitted_borrowing_prio_9", "q_borrowing", 9, C(1)),
            Running("admitted_borrowing_prio_10", "q_borrowing", 9, C(1)),
            Running("admitted_nominal", "q_nominal", -2, C(2))},
           In(1, 0),
           {"ns/admitted_borrowing_prio_8:InCohortReclamation"},
           {Q("q", "c", 0, kLowerAny), Q("q_borrowing", "r", 0, kLowerAny),
            Q("q_nominal", "r", 2, kLowerAny)},
           RC(0, 3)},
      },
      {});
}

// Quota of cohort trees (kueue.md §2.1; Kueue's hierarchical scheduler cases).
struct QuotaCase {
  std::string name;
  std::vector<Cohort> cohorts;
  std::vector<ClusterQueue> cqs;
  std::vector<std::pair<Workload, Admission>> admitted;
  std::vector<Workload> pending;
  std::vector<std::string> want_admitted;           // unordered
  std::map<std::string, std::string> want_pending;  // key -> reason
};

TEST(KueueScenariosHierarchy, CohortQuota) {
  const Preemption none;
  std::vector<QuotaCase> cases = {
      {"a CQ with no quota borrows from its grandparent cohort's pool",
       {MakeCohortQ("root", "", CpuQuota(10)), MakeCohortQ("mid", "root", {})},
       {Q("q", "mid", 0, none)},
       {},
       {Wl("w", "q", 0, {{"cpu", Cpu(10)}})},
       {"ns/w"},
       {}},
      {"a borrowing limit on the cohort caps what its subtree can take",
       {MakeCohortQ("root", "", CpuQuota(10)),
        MakeCohortQ("mid", "root", CpuQuota(0, Cpu(2)))},
       {Q("q", "mid", 0, none)},
       {},
       {Wl("big", "q", 0, {{"cpu", Cpu(3)}}), Wl("ok", "q", 0, {{"cpu", Cpu(2)}}, 1, 1)},
       {"ns/ok"},
       {{"ns/big", "ExceedsMaxQuota"}}},
      {"a lending limit on a cohort hides the rest from its siblings",
       {MakeCohortQ("root", ""), MakeCohortQ("left", "root", CpuQuota(6, std::nullopt, Cpu(2))),
        MakeCohortQ("right", "root")},
       {Q("lq", "left", 0, none), Q("rq", "right", 0, none)},
       {},
       {Wl("r3", "rq", 0, {{"cpu", Cpu(3)}}), Wl("r2", "rq", 0, {{"cpu", Cpu(2)}}, 1, 1),
        Wl("l4", "lq", 0, {{"cpu", Cpu(4)}})},
       {"ns/r2", "ns/l4"},
       {{"ns/r3", "ExceedsMaxQuota"}}},
      {"siblings share the parent's pool: the second no longer fits",
       {MakeCohortQ("root", "", CpuQuota(4)), MakeCohortQ("mid", "root", {})},
       {Q("a", "mid", 0, none), Q("b", "root", 0, none)},
       {{Running("b-run", "b", 0, C(3))}},
       {Wl("w", "a", 0, {{"cpu", Cpu(2)}})},
       {},
       {{"ns/w", "WaitingForQuota"}}},
  };
  for (const QuotaCase& c : cases) {
    SCOPED_TRACE(c.name);
    Scenario s;
    s.flavors = Flavors({"default"});
    s.cohorts = c.cohorts;
    s.cqs = c.cqs;
    s.admitted = c.admitted;
    s.pending = c.pending;
    auto core = testing::Load(s);
    testing::Summary sum = testing::Summarize(core->RunCycle(absl::FromUnixSeconds(100)));
    EXPECT_THAT(sum.admitted, ::testing::UnorderedElementsAreArray(c.want_admitted));
    EXPECT_EQ(sum.pending, c.want_pending);
    EXPECT_TRUE(core->CheckInvariants().ok());
  }
}

}  // namespace
}  // namespace batchd::queueing
