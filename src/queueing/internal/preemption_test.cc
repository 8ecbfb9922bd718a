// Classic preemption (reference §2.6, §2.7) through AdmissionCore.
#include "queueing/internal/preemption.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "queueing/internal/test_util.h"

namespace batchd::queueing {
namespace {

using ::testing::UnorderedElementsAreArray;
using namespace batchd::queueing::testing;  // NOLINT

std::pair<Workload, Admission> Running(std::string name, std::string cq, int64_t cpu,
                                       int32_t prio, int64_t at = 0) {
  return {WlBuilder(std::move(name), cq).Cpu(cpu).Priority(prio).At(at).Obj(),
          AdmitOn(cq, "default", cpu)};
}

TEST(PreemptionTest, ClassicTargets) {
  struct Case {
    std::string name;
    Scenario scn;
    std::vector<std::string> want_victims;
    std::map<std::string, std::string> want_reasons = {};
  };
  auto lower = PreemptionPolicy::kLowerPriority;
  std::vector<Case> cases = {
      {"within CQ: lowest priority first, minimal set by fill-back",
       {.cqs = {CqBuilder("a").Flavor("default", 4).Within(lower).Obj()},
        .admitted = {Running("p1", "a", 1, 1), Running("p2", "a", 3, 2)},
        .pending = {WlBuilder("w", "a").Cpu(3).Priority(5).Obj()}},
       {"ns/p2"},
       {{"ns/p2", "InClusterQueue"}}},
      {"within CQ: several victims when one is not enough",
       {.cqs = {CqBuilder("a").Flavor("default", 4).Within(lower).Obj()},
        .admitted = {Running("p1", "a", 2, 1), Running("p2", "a", 2, 2)},
        .pending = {WlBuilder("w", "a").Cpu(4).Priority(5).Obj()}},
       {"ns/p1", "ns/p2"}},
      {"LowerPriority never preempts equal priority",
       {.cqs = {CqBuilder("a").Flavor("default", 2).Within(lower).Obj()},
        .admitted = {Running("p", "a", 2, 5)},
        .pending = {WlBuilder("w", "a").Cpu(2).Priority(5).Obj()}},
       {}},
      {"LowerOrNewerEqualPriority preempts a newer equal-priority workload",
       {.cqs = {CqBuilder("a").Flavor("default", 2)
                    .Within(PreemptionPolicy::kLowerOrNewerEqualPriority).Obj()},
        .admitted = {Running("p", "a", 2, 5, 10)},
        .pending = {WlBuilder("w", "a").Cpu(2).Priority(5).At(1).Obj()}},
       {"ns/p"}},
      {"LowerOrNewerEqualPriority spares an older one",
       {.cqs = {CqBuilder("a").Flavor("default", 2)
                    .Within(PreemptionPolicy::kLowerOrNewerEqualPriority).Obj()},
        .admitted = {Running("p", "a", 2, 5, 0)},
        .pending = {WlBuilder("w", "a").Cpu(2).Priority(5).At(1).Obj()}},
       {}},
      {"equal priority: most recently admitted goes first",
       {.cqs = {CqBuilder("a").Flavor("default", 4).Within(lower).Obj()},
        .admitted = {Running("first", "a", 2, 1), Running("second", "a", 2, 1)},
        .pending = {WlBuilder("w", "a").Cpu(2).Priority(5).Obj()}},
       {"ns/second"}},
      {"reclaim from a borrowing CQ in the cohort",
       {.cqs = {CqBuilder("a").Cohort("co").Flavor("default", 4)
                    .Reclaim(PreemptionPolicy::kAny).Obj(),
                CqBuilder("b").Cohort("co").Flavor("default", 4).Obj()},
        .admitted = {Running("b1", "b", 3, 9), Running("b2", "b", 3, 9)},
        .pending = {WlBuilder("w", "a").Cpu(4).Obj()}},
       {"ns/b2"},
       {{"ns/b2", "InCohortReclamation"}}},
      {"no reclaim from a CQ within its nominal quota",
       {.cqs = {CqBuilder("a").Cohort("co").Flavor("default", 2)
                    .Reclaim(PreemptionPolicy::kAny).Obj(),
                CqBuilder("b").Cohort("co").Flavor("default", 4).Obj()},
        .admitted = {Running("a1", "a", 2, 0), Running("b1", "b", 4, 0)},
        .pending = {WlBuilder("w", "a").Cpu(2).Obj()}},
       {}},
      {"borrowWithinCohort: preempt lower priority below the threshold while borrowing",
       {.cqs = {CqBuilder("a").Cohort("co").Flavor("default", 2)
                    .Reclaim(lower).BorrowWithin(lower, 5).Obj(),
                CqBuilder("b").Cohort("co").Flavor("default", 2).Obj(),
                CqBuilder("c").Cohort("co").Flavor("default", 2).Obj()},
        .admitted = {Running("b1", "b", 2, 3), Running("b2", "b", 2, 3)},
        .pending = {WlBuilder("w", "a").Cpu(4).Priority(10).Obj()}},
       {"ns/b2"},
       {{"ns/b2", "InCohortReclaimWhileBorrowing"}}},
      {"borrowWithinCohort: victims above the threshold are spared",
       {.cqs = {CqBuilder("a").Cohort("co").Flavor("default", 2)
                    .Reclaim(lower).BorrowWithin(lower, 2).Obj(),
                CqBuilder("b").Cohort("co").Flavor("default", 2).Obj(),
                CqBuilder("c").Cohort("co").Flavor("default", 2).Obj()},
        .admitted = {Running("b1", "b", 2, 3), Running("b2", "b", 2, 3)},
        .pending = {WlBuilder("w", "a").Cpu(4).Priority(10).Obj()}},
       {}},
      {"reclaim without borrowing: preemptor ends within nominal",
       {.cqs = {CqBuilder("a").Cohort("co").Flavor("default", 4).Reclaim(lower).Obj(),
                CqBuilder("b").Cohort("co").Flavor("default", 2).Obj()},
        .admitted = {Running("b1", "b", 2, 1), Running("b2", "b", 2, 1), Running("b3", "b", 2, 1)},
        .pending = {WlBuilder("w", "a").Cpu(4).Priority(10).Obj()}},
       {"ns/b3", "ns/b2"},
       {{"ns/b3", "InCohortReclamation"}, {"ns/b2", "InCohortReclamation"}}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto core = Load(c.scn);
    Summary s = Summarize(core->RunCycle(absl::FromUnixSeconds(100)));
    EXPECT_TRUE(s.admitted.empty());
    EXPECT_THAT(s.preempted, UnorderedElementsAreArray(c.want_victims));
    for (const auto& [k, r] : c.want_reasons) EXPECT_EQ(s.preempt_reason[k], r) << k;
    if (c.want_victims.empty()) {
      EXPECT_EQ(s.pending["ns/w"], "WaitingForQuota");
    } else {
      EXPECT_EQ(s.pending["ns/w"], "WaitingForPreemptedWorkloads");
      EXPECT_EQ(s.messages["ns/w"], "Pending the preemption of " +
                                        std::to_string(c.want_victims.size()) + " workload(s)");
    }
  }
}

TEST(PreemptionTest, HierarchicalAdvantageReclaimsAnyPriority) {
  // root -> {left: a (4), right: b (0)}; b borrows a's quota with a higher
  // priority; a reclaims what its own subtree provides (InCohortReclamation).
  Scenario s;
  s.cohorts = {MakeCohort("root"), MakeCohort("left", "root"), MakeCohort("right", "root")};
  s.cqs = {CqBuilder("a").Cohort("left").Flavor("default", 4)
               .Reclaim(PreemptionPolicy::kAny).Obj(),
           CqBuilder("b").Cohort("right").Flavor("default", 0).Obj()};
  s.admitted = {Running("b1", "b", 2, 100), Running("b2", "b", 2, 100)};
  s.pending = {WlBuilder("w", "a").Cpu(2).Priority(0).Obj()};
  auto core = Load(s);
  Summary r = Summarize(core->RunCycle(absl::FromUnixSeconds(1)));
  EXPECT_THAT(r.preempted, UnorderedElementsAreArray({"ns/b2"}));
  EXPECT_EQ(r.preempt_reason["ns/b2"], "InCohortReclamation");
  EXPECT_EQ(r.preempt_message["ns/b2"],
            "Preempted to accommodate a workload (UID: w) due to reclamation within the cohort; "
            "preemptor path: /root/left/a; preemptee path: /root/right/b");
}

TEST(PreemptionTest, OverlappingTargetsAreNotIssuedTwice) {
  Scenario s;
  s.cqs = {CqBuilder("a").Flavor("default", 2).Within(PreemptionPolicy::kLowerPriority).Obj()};
  s.admitted = {Running("low", "a", 2, 0)};
  s.pending = {WlBuilder("h1", "a").Cpu(2).Priority(10).At(1).Obj(),
               WlBuilder("h2", "a").Cpu(2).Priority(10).At(2).Obj()};
  auto core = Load(s);
  Summary r = Summarize(core->RunCycle(absl::FromUnixSeconds(1)));
  EXPECT_THAT(r.preempted, UnorderedElementsAreArray({"ns/low"}));
  EXPECT_EQ(r.pending["ns/h1"], "WaitingForPreemptedWorkloads");
  core->Remove("ns/low");
  r = Summarize(core->RunCycle(absl::FromUnixSeconds(2)));
  EXPECT_THAT(r.admitted, UnorderedElementsAreArray({"ns/h1"}));
}

TEST(PreemptionTest, Policies) {
  Workload hi = WlBuilder("hi", "a").Priority(5).At(10).Obj();
  struct Case {
    PreemptionPolicy p;
    int32_t victim_prio;
    int64_t victim_at;
    bool want;
  };
  using P = PreemptionPolicy;
  std::vector<Case> cases = {
      {P::kNever, 0, 0, false},           {P::kLowerPriority, 4, 0, true},
      {P::kLowerPriority, 5, 20, false},  {P::kLowerOrNewerEqualPriority, 5, 20, true},
      {P::kLowerOrNewerEqualPriority, 5, 10, false}, {P::kAny, 9, 0, true},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE(i);
    Workload v = WlBuilder("v", "a").Priority(cases[i].victim_prio).At(cases[i].victim_at).Obj();
    EXPECT_EQ(internal::SatisfiesPolicy(cases[i].p, hi, v), cases[i].want);
  }
}

}  // namespace
}  // namespace batchd::queueing
