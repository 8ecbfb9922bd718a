// Kueue's fair-sharing scenarios: admission order by dominant resource share
// (pkg/scheduler/fair_sharing_iterator_test.go, pkg/cache/scheduler/
// fair_sharing_test.go) and fair preemption with both strategies
// (TestFairPreemptions in pkg/scheduler/preemption/preemption_test.go),
// re-expressed against AdmissionCore with Options::fair_sharing on.
#include <map>
#include <set>
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

std::vector<ResourceGroup> CpuQuota(double cpu) { return {RG({FQ("default", {{"cpu", Cpu(cpu)}})})}; }
std::vector<Use> C(double cpu) { return {{"cpu", "default", Cpu(cpu)}}; }

// Two CQs with no quota of their own under a cohort holding 10 cpu.
Scenario Pool(double weight_a, bool fair) {
  Scenario s;
  s.flavors = Flavors({"default"});
  s.cohorts = {MakeCohortQ("pool", "", CpuQuota(10))};
  s.cqs = {MakeCq({.name = "a", .cohort = "pool", .groups = CpuQuota(0), .weight = weight_a}),
           MakeCq({.name = "b", .cohort = "pool", .groups = CpuQuota(0)})};
  s.admitted = {Running("a-run", "a", 0, C(4)), Running("b-run", "b", 0, C(2))};
  s.pending = {Wl("a-next", "a", 0, {{"cpu", Cpu(4)}}, 1, 1),
               Wl("b-next", "b", 0, {{"cpu", Cpu(4)}}, 1, 2)};
  s.opts.fair_sharing = fair;
  return s;
}

TEST(KueueScenariosFairSharing, AdmissionOrder) {
  struct Case {
    std::string name;
    Scenario scn;
    std::string want_admitted;
  };
  std::vector<Case> cases = {
      // DRS after admission: a (4+4)/10 = 800, b (2+4)/10 = 600.
      {"lowest share after admission goes first", Pool(1, true), "ns/b-next"},
      {"a higher weight lowers the weighted share", Pool(2, true), "ns/a-next"},
      {"without fair sharing the older head goes first", Pool(1, false), "ns/a-next"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto core = testing::Load(c.scn);
    testing::Summary s = testing::Summarize(core->RunCycle(absl::FromUnixSeconds(100)));
    EXPECT_THAT(s.admitted, ::testing::ElementsAre(c.want_admitted));
  }
}

TEST(KueueScenariosFairSharing, WeightedShareStatus) {
  // Kueue reports weightedShare = ceil(DRS / weight) per mille of lendable.
  Scenario s = Pool(2, true);
  s.pending.clear();
  auto core = testing::Load(s);
  core->RunCycle(absl::FromUnixSeconds(100));
  EXPECT_EQ(core->ClusterQueueStatusOf("a").weighted_share, 200);  // 4/10 / 2
  EXPECT_EQ(core->ClusterQueueStatusOf("b").weighted_share, 200);  // 2/10
}

// TestFairPreemptions' base: a, b, c in one cohort, 3 cpu each,
// withinClusterQueue=LowerPriority, reclaimWithinCohort=Any.
std::vector<ClusterQueue> Abc() {
  std::vector<ClusterQueue> out;
  for (const char* n : {"a", "b", "c"}) {
    out.push_back(MakeCq({.name = n, .cohort = "all", .groups = CpuQuota(3),
                          .preemption = P(PP::kLowerPriority, PP::kAny)}));
  }
  return out;
}

std::vector<std::pair<Workload, Admission>> Units(const std::string& cq, int n) {
  std::vector<std::pair<Workload, Admission>> out;
  for (int i = 1; i <= n; ++i) out.push_back(Running(cq + std::to_string(i), cq, 0, C(1)));
  return out;
}

std::vector<std::pair<Workload, Admission>> Concat(
    std::vector<std::vector<std::pair<Workload, Admission>>> parts) {
  std::vector<std::pair<Workload, Admission>> out;
  for (auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

TEST(KueueScenariosFairSharing, Preemption) {
  auto fs = [](PreemptCase c) {
    c.fair_sharing = true;
    return c;
  };
  RunPreemptCases(
      {
          // a is within nominal: the CQ with the highest share gives back
          // (FairSharingPreemptWithinNominal), newest first.
          fs({"reclaim nominal quota from the CQ using the most",
              Concat({Units("b", 6), Units("c", 3)}),
              Wl("in", "a", 0, {{"cpu", Cpu(2)}}),
              {"ns/b6:InCohortReclamation", "ns/b5:InCohortReclamation"}}),
          fs({"can't preempt when everyone is within nominal",
              Concat({Units("a", 3), Units("b", 3), Units("c", 3)}),
              Wl("in", "a", 0, {{"cpu", Cpu(1)}}),
              {}}),
          // a would borrow 1 (share 1/9) and b keeps 1/9 after losing one:
          // LessThanOrEqualToFinalShare allows it.
          fs({"preempt from a CQ with a higher share while borrowing",
              Concat({Units("a", 3), Units("b", 5), Units("c", 1)}),
              Wl("in", "a", 0, {{"cpu", Cpu(1)}}),
              {"ns/b5:InCohortFairSharing"}}),
          // a would end at 3/9 while b starts at 2/9: neither strategy allows it.
          fs({"can't preempt when it would switch the imbalance",
              Concat({Units("a", 4), Units("b", 5)}),
              Wl("in", "a", 0, {{"cpu", Cpu(2)}}),
              {}}),
          fs({"lower priority workloads of the own CQ first",
              Concat({{Running("a-low", "a", -1, C(3))}, Units("b", 3), Units("c", 3)}),
              Wl("in", "a", 0, {{"cpu", Cpu(3)}}),
              {"ns/a-low:InClusterQueue"}}),
      },
      Abc());
}

}  // namespace
}  // namespace batchd::queueing
