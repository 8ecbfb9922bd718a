// Workload slices (Kueue's ElasticJobsViaWorkloadSlices): a slice that
// replaces an admitted workload is admitted as a whole while the replaced
// slice's usage counts as its own, keeps its flavors, preempts for its
// growth like any workload (never its replaced slice), and releases the
// replaced slice when admitted (Decision::replaced).
#include <algorithm>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "queueing/admission.h"
#include "queueing/internal/test_util.h"

namespace batchd::queueing {
namespace {

using namespace batchd::queueing::testing;  // NOLINT

const absl::Time kNow = absl::FromUnixSeconds(100);

// One pod set "main" of `pods` pods of 1 cpu on `flavor`.
Admission Pods(const std::string& cq, const std::string& flavor, int32_t pods) {
  Admission a = AdmitOn(cq, flavor, pods);
  a.pod_sets[0].count = pods;
  return a;
}

Workload Slice(const std::string& name, int32_t pods, const std::string& replaces) {
  Workload w = WlBuilder(name, "cq").Cpu(1).Count(pods).At(5).Obj();
  w.replaces = replaces;
  return w;
}

const Decision* Find(const std::vector<Decision>& ds, const std::string& key) {
  auto it = std::find_if(ds.begin(), ds.end(), [&](const Decision& d) { return d.key == key; });
  return it == ds.end() ? nullptr : &*it;
}

Amount CpuUsed(const AdmissionCore& core, const std::string& cq) {
  Amount total = 0;
  for (const FlavorResourceUsage& u : core.ClusterQueueStatusOf(cq).usage) {
    if (u.resource == "cpu") total += u.total;
  }
  return total;
}

TEST(WorkloadSliceTest, ScaleUpTakesOnlyTheGrowthAndReleasesTheOldSlice) {
  // 6 cpu; the old slice holds 2, another workload 1: 2 -> 5 pods needs 3 more.
  auto core = Load({.cqs = {CqBuilder("cq").Flavor("default", 6).Obj()},
                    .admitted = {{WlBuilder("old", "cq").Cpu(1).Count(2).Obj(), Pods("cq", "default", 2)},
                                 {WlBuilder("other", "cq").Cpu(1).Obj(), Pods("cq", "default", 1)}},
                    .pending = {Slice("new", 5, "ns/old")}});
  std::vector<Decision> ds = core->RunCycle(kNow);
  const Decision* d = Find(ds, "ns/new");
  ASSERT_NE(d, nullptr);
  ASSERT_EQ(d->kind, Decision::Kind::kAdmit);
  EXPECT_EQ(d->replaced, "ns/old");
  EXPECT_EQ(d->admission.pod_sets[0].count, 5);
  EXPECT_FALSE(core->IsAdmitted("ns/old"));
  EXPECT_TRUE(core->IsAdmitted("ns/new"));
  EXPECT_EQ(CpuUsed(*core, "cq"), U(6));  // 5 + 1, the old 2 no longer counted
  EXPECT_TRUE(core->CheckInvariants().ok());
}

TEST(WorkloadSliceTest, WaitsWhileTheGrowthDoesNotFitAndTheOldSliceKeepsItsQuota) {
  auto core = Load({.cqs = {CqBuilder("cq").Flavor("default", 6).Obj()},
                    .admitted = {{WlBuilder("old", "cq").Cpu(1).Count(2).Obj(), Pods("cq", "default", 2)},
                                 {WlBuilder("other", "cq").Cpu(1).Count(2).Obj(), Pods("cq", "default", 2)}},
                    .pending = {Slice("new", 6, "ns/old")}});
  Summary s = Summarize(core->RunCycle(kNow));
  EXPECT_TRUE(s.admitted.empty());
  EXPECT_EQ(s.pending["ns/new"], "WaitingForQuota");
  EXPECT_TRUE(core->IsAdmitted("ns/old"));
  EXPECT_EQ(CpuUsed(*core, "cq"), U(4));  // nothing reserved for the slice
  EXPECT_TRUE(core->CheckInvariants().ok());
  // Once room appears (the other workload finishes) the slice is admitted.
  core->Remove("ns/other");
  std::vector<Decision> ds = core->RunCycle(kNow + absl::Seconds(1));
  const Decision* d = Find(ds, "ns/new");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->kind, Decision::Kind::kAdmit);
  EXPECT_EQ(d->replaced, "ns/old");
  EXPECT_EQ(CpuUsed(*core, "cq"), U(6));
}

// Kueue's ElasticJobsViaWorkloadSlices: a slice whose growth does not fit
// preempts like any workload, for the growth only, and never its own
// replaced slice, even when that is the first candidate the policy allows
// (here the lowest priority). It keeps the replaced slice's flavor.
TEST(WorkloadSliceTest, PreemptsForItsGrowthButNeverItsReplacedSlice) {
  for (bool fair : {false, true}) {
    SCOPED_TRACE(fair ? "fair sharing" : "classic");
    // "a" is full (old 2 + low 2); "b" has room but the slice keeps "a".
    Scenario scn{.flavors = {Rf("a"), Rf("b")},
                 .cqs = {CqBuilder("cq").Flavor("a", 4).Flavor("b", 10)
                             .Within(PreemptionPolicy::kLowerPriority).Obj()},
                 .admitted = {{WlBuilder("old", "cq").Cpu(1).Count(2).Priority(-5).Obj(),
                               Pods("cq", "a", 2)},
                              {WlBuilder("low", "cq").Cpu(1).Count(2).Obj(), Pods("cq", "a", 2)}},
                 .pending = {Slice("new", 4, "ns/old")}};
    scn.pending[0].priority = 10;
    scn.opts.fair_sharing = fair;
    auto core = Load(scn);
    Summary s = Summarize(core->RunCycle(kNow));
    EXPECT_TRUE(s.admitted.empty());
    EXPECT_EQ(s.preempted, (std::vector<std::string>{"ns/low"}));
    EXPECT_EQ(s.preempt_reason["ns/low"], "InClusterQueue");
    EXPECT_EQ(s.pending["ns/new"], "WaitingForPreemptedWorkloads");
    EXPECT_TRUE(core->IsAdmitted("ns/old"));
    EXPECT_EQ(CpuUsed(*core, "cq"), U(4));  // nothing held beyond the cycle
    EXPECT_TRUE(core->CheckInvariants().ok());
    // The victim's quota is released: the slice replaces old, on "a".
    core->Remove("ns/low");
    std::vector<Decision> ds = core->RunCycle(kNow + absl::Seconds(1));
    const Decision* d = Find(ds, "ns/new");
    ASSERT_NE(d, nullptr);
    ASSERT_EQ(d->kind, Decision::Kind::kAdmit);
    EXPECT_EQ(d->replaced, "ns/old");
    EXPECT_EQ(Summarize(ds).flavor["ns/new"], "a");
    EXPECT_FALSE(core->IsAdmitted("ns/old"));
    EXPECT_EQ(CpuUsed(*core, "cq"), U(4));
    EXPECT_TRUE(core->CheckInvariants().ok());
  }
}

// Its replaced slice alone would make room, but it is not a candidate: with
// no other victim the slice waits (and keeps the replaced slice running).
TEST(WorkloadSliceTest, ItsReplacedSliceAloneIsNoVictim) {
  auto core = Load({.cqs = {CqBuilder("cq").Flavor("default", 4)
                                .Within(PreemptionPolicy::kLowerPriority).Obj()},
                    .admitted = {{WlBuilder("old", "cq").Cpu(1).Count(2).Priority(-5).Obj(),
                                  Pods("cq", "default", 2)},
                                 {WlBuilder("peer", "cq").Cpu(1).Count(2).Priority(20).Obj(),
                                  Pods("cq", "default", 2)}},
                    .pending = {Slice("new", 4, "ns/old")}});
  Summary s = Summarize(core->RunCycle(kNow));
  EXPECT_TRUE(s.admitted.empty());
  EXPECT_TRUE(s.preempted.empty());
  EXPECT_TRUE(s.pending.contains("ns/new"));
  EXPECT_TRUE(core->IsAdmitted("ns/old"));
  EXPECT_EQ(CpuUsed(*core, "cq"), U(4));
}

// Reclaim within the cohort: the growth fits the ClusterQueue's nominal
// quota, which another ClusterQueue borrows; its workload is reclaimed.
TEST(WorkloadSliceTest, ReclaimsItsNominalQuotaFromABorrowingClusterQueue) {
  auto core = Load({.cqs = {CqBuilder("cq").Cohort("co").Flavor("default", 4)
                                .Reclaim(PreemptionPolicy::kAny).Obj(),
                            CqBuilder("other").Cohort("co").Flavor("default", 0).Obj()},
                    .admitted = {{WlBuilder("old", "cq").Cpu(1).Count(2).Obj(),
                                  Pods("cq", "default", 2)},
                                 {WlBuilder("borrower", "other").Cpu(1).Count(2).Obj(),
                                  Pods("other", "default", 2)}},
                    .pending = {Slice("new", 4, "ns/old")}});
  Summary s = Summarize(core->RunCycle(kNow));
  EXPECT_EQ(s.preempted, (std::vector<std::string>{"ns/borrower"}));
  EXPECT_EQ(s.preempt_reason["ns/borrower"], "InCohortReclamation");
  EXPECT_TRUE(core->IsAdmitted("ns/old"));
  core->Remove("ns/borrower");
  std::vector<Decision> ds = core->RunCycle(kNow + absl::Seconds(1));
  const Decision* d = Find(ds, "ns/new");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->kind, Decision::Kind::kAdmit);
  EXPECT_EQ(d->replaced, "ns/old");
  EXPECT_EQ(CpuUsed(*core, "cq"), U(4));
  EXPECT_TRUE(core->CheckInvariants().ok());
}

TEST(WorkloadSliceTest, WaitsForAPendingReplacedSlice) {
  auto core = Load({.cqs = {CqBuilder("cq").Flavor("default", 10).Obj()},
                    .pending = {WlBuilder("old", "cq").Cpu(1).Count(2).At(1).Obj(),
                                Slice("new", 4, "ns/old")}});
  core->UpsertPending(WlBuilder("old", "cq").Cpu(1).Count(2).At(1).Priority(-1).Obj());
  Summary s = Summarize(core->RunCycle(kNow));
  // The slice is not admitted next to its pending predecessor.
  EXPECT_EQ(std::count(s.admitted.begin(), s.admitted.end(), "ns/new"), 0);
  EXPECT_TRUE(core->CheckInvariants().ok());
}

TEST(WorkloadSliceTest, ReplacedSliceGoneMeansAPlainWorkload) {
  auto core = Load({.cqs = {CqBuilder("cq").Flavor("default", 10).Obj()},
                    .pending = {Slice("new", 4, "ns/gone")}});
  Summary s = Summarize(core->RunCycle(kNow));
  ASSERT_EQ(s.admitted.size(), 1u);
  EXPECT_EQ(s.admitted[0], "ns/new");
  EXPECT_EQ(CpuUsed(*core, "cq"), U(4));
}

}  // namespace
}  // namespace batchd::queueing
