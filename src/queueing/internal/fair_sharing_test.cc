// Fair sharing (reference §2.8): DRS, weights, the admission tournament and
// fair-sharing preemption with both strategies.
#include "queueing/internal/fair_sharing.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "queueing/internal/test_util.h"

namespace batchd::queueing {
namespace {

using ::testing::ElementsAreArray;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAreArray;
using namespace batchd::queueing::testing;  // NOLINT

std::pair<Workload, Admission> Running(std::string name, std::string cq, int64_t cpu,
                                       int32_t prio = 0) {
  return {WlBuilder(std::move(name), cq).Cpu(cpu).Priority(prio).Obj(),
          AdmitOn(cq, "default", cpu)};
}

// a and b borrow from an idle c; only one more 2-cpu workload fits.
Scenario Contended(double a_weight, bool fair) {
  Scenario s;
  s.opts.fair_sharing = fair;
  s.cqs = {CqBuilder("a").Cohort("co").Flavor("default", 5).Weight(a_weight).Obj(),
           CqBuilder("b").Cohort("co").Flavor("default", 5).Obj(),
           CqBuilder("c").Cohort("co").Flavor("default", 10).Obj()};
  s.admitted = {Running("a1", "a", 8), Running("b1", "b", 6), Running("c1", "c", 4)};
  s.pending = {WlBuilder("wa", "a").Cpu(2).Priority(10).Obj(),
               WlBuilder("wb", "b").Cpu(2).Priority(0).Obj()};
  return s;
}

TEST(FairSharingTest, AdmissionOrder) {
  struct Case {
    std::string name;
    Scenario scn;
    std::string want;
  };
  std::vector<Case> cases = {
      // a would borrow 5 of 20 (250), b 3 of 20 (150): b wins despite priority.
      {"lowest share after admission wins", Contended(1, true), "ns/wb"},
      {"classic ordering uses priority at equal borrowing level", Contended(1, false), "ns/wa"},
      {"weight divides the share", Contended(4, true), "ns/wa"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto core = Load(c.scn);
    Summary s = Summarize(core->RunCycle(absl::FromUnixSeconds(1)));
    EXPECT_THAT(s.admitted, ElementsAreArray({c.want}));
  }
}

TEST(FairSharingTest, WeightedShareStatus) {
  auto core = Load(Contended(1, true));
  // a borrows 3 of the 20 cpu its cohort could lend: 150 per mille.
  EXPECT_EQ(core->ClusterQueueStatusOf("a").weighted_share, 150);
  EXPECT_EQ(core->ClusterQueueStatusOf("c").weighted_share, 0);
  Scenario z = Contended(0, true);
  auto zero = Load(z);
  EXPECT_EQ(zero->ClusterQueueStatusOf("a").weighted_share, std::numeric_limits<int64_t>::max());
}

TEST(FairSharingTest, PreemptionStrategies) {
  using S = FairSharingStrategy;
  struct Case {
    std::string name;
    std::vector<S> strategies;
    int64_t a_used;
    int64_t want_cpu;
    std::vector<std::string> want_victims;
    std::string want_reason = "";
  };
  // a: nominal 4; b: nominal 4 using 6 (three 2-cpu workloads, borrowing 2
  // = share 200); c lends 2. Everything is in use.
  std::vector<Case> cases = {
      {"preemptor within nominal reclaims unconditionally", {S::kLessThanOrEqualToFinalShare},
       2, 2, {"ns/b3"}, "InCohortReclamation"},
      {"final share: 100 > 0 after preemption, no victim", {S::kLessThanOrEqualToFinalShare},
       4, 1, {}},
      {"initial share: 100 < 200, preempt", {S::kLessThanInitialShare}, 4, 1, {"ns/b3"},
       "InCohortFairSharing"},
      {"both strategies: the second one applies",
       {S::kLessThanOrEqualToFinalShare, S::kLessThanInitialShare}, 4, 1, {"ns/b3"},
       "InCohortFairSharing"},
      {"equal shares: no preemption",
       {S::kLessThanOrEqualToFinalShare, S::kLessThanInitialShare}, 4, 2, {}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Scenario s;
    s.opts.fair_sharing = true;
    s.opts.fair_sharing_strategies = c.strategies;
    s.cqs = {CqBuilder("a").Cohort("co").Flavor("default", 4)
                 .Reclaim(PreemptionPolicy::kAny).Obj(),
             CqBuilder("b").Cohort("co").Flavor("default", 4).Obj(),
             CqBuilder("c").Cohort("co").Flavor("default", 2).Obj()};
    s.admitted = {Running("b1", "b", 2), Running("b2", "b", 2), Running("b3", "b", 2)};
    if (c.a_used) s.admitted.push_back(Running("a1", "a", c.a_used));
    if (c.a_used < 4) s.admitted.push_back(Running("c1", "c", 4 - c.a_used));
    s.pending = {WlBuilder("w", "a").Cpu(c.want_cpu).Obj()};
    auto core = Load(s);
    Summary r = Summarize(core->RunCycle(absl::FromUnixSeconds(1)));
    EXPECT_THAT(r.admitted, IsEmpty());
    EXPECT_THAT(r.preempted, UnorderedElementsAreArray(c.want_victims));
    for (const auto& v : c.want_victims) EXPECT_EQ(r.preempt_reason[v], c.want_reason);
  }
}

}  // namespace
}  // namespace batchd::queueing

namespace qi = ::batchd::queueing::internal;

// Kueue's DRS type (pkg/cache/scheduler/fair_sharing.go): a zero weight is
// +inf only while the node holds a share; two such nodes compare by their
// unweighted shares; a resource nothing can lend adds no share but the node
// still counts as borrowing; a root never borrows.
TEST(FairSharingTest, DominantShareAndCompare) {
  using qi::CompareDrs;
  using qi::DominantShare;
  using qi::Drs;
  qi::FlavorResourceTable table;
  qi::FlavorResourceId cpu = table.Intern("default", "cpu");
  qi::FlavorResourceId gpu = table.Intern("default", "gpu");
  qi::QuotaTree t(&table);
  qi::NodeId root = t.AddNode("root", false);
  qi::NodeId a = t.AddNode("a", true, 0);
  qi::NodeId b = t.AddNode("b", true, 0);
  qi::NodeId c = t.AddNode("c", true, 2);
  for (qi::NodeId n : {a, b, c}) t.SetParent(n, root);
  t.SetQuota(root, cpu, {10000, std::nullopt, std::nullopt});
  t.SetQuota(a, gpu, {0, std::nullopt, std::nullopt});
  t.Finalize();

  EXPECT_FALSE(DominantShare(t, root).borrowing);
  Drs idle_zero_weight = DominantShare(t, a);
  EXPECT_FALSE(idle_zero_weight.borrowing);
  EXPECT_EQ(idle_zero_weight.Weighted(), 0);

  t.AddUsage(a, cpu, 1000);  // 1 of 10 lendable: 100 per mille, weight 0
  t.AddUsage(b, cpu, 2000);  // 200 per mille, weight 0
  t.AddUsage(c, cpu, 8000);  // 800 per mille, weight 2: 400
  EXPECT_TRUE(DominantShare(t, a).ZeroWeightBorrows());
  EXPECT_DOUBLE_EQ(DominantShare(t, c).Weighted(), 400);
  EXPECT_GT(CompareDrs(DominantShare(t, a), DominantShare(t, c)), 0);  // +inf above finite
  EXPECT_LT(CompareDrs(DominantShare(t, a), DominantShare(t, b)), 0);  // 100 < 200 unweighted
  EXPECT_GT(CompareDrs(DominantShare(t, c), Drs::Negative()), 0);
  EXPECT_GT(CompareDrs(Drs{}, Drs::Negative()), 0);

  t.RemoveUsage(a, cpu, 1000);
  t.AddUsage(a, gpu, 1000);  // borrows gpu that nobody can lend
  Drs nothing_lendable = DominantShare(t, a);
  EXPECT_TRUE(nothing_lendable.borrowing);
  EXPECT_EQ(nothing_lendable.unweighted, 0);
  EXPECT_FALSE(nothing_lendable.ZeroWeightBorrows());
}
