// Admission fair sharing (Kueue's AdmissionFairSharing, KEP-4136): within a
// ClusterQueue with admissionScope UsageBasedAdmissionFairSharing, pending
// workloads of LocalQueues that consumed less go first; usage decays with
// the configured half-life at every sample; an admission's entry penalty
// counts at once; LocalQueue weights divide usage. Time is passed in (the
// core never reads a clock).
#include <cmath>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "queueing/admission.h"
#include "queueing/internal/test_util.h"

namespace batchd::queueing {
namespace {

using namespace batchd::queueing::testing;  // NOLINT
using ::testing::ElementsAre;

const absl::Time kT0 = absl::FromUnixSeconds(1000);

Options Afs() {
  Options o;
  o.admission_fair_sharing = AdmissionFairSharing{absl::Minutes(10), absl::Minutes(5), {}};
  return o;
}

ClusterQueue Cq(int cpu, bool afs) {
  ClusterQueue cq = CqBuilder("cq").Flavor("default", cpu).Obj();
  cq.admission_fair_sharing = afs;
  return cq;
}

LocalQueue Lq(const std::string& name, double weight = 1) {
  LocalQueue lq;
  lq.namespace_ = "ns";
  lq.name = name;
  lq.cluster_queue = "cq";
  lq.fair_weight = weight;
  return lq;
}

Workload W(const std::string& name, const std::string& lq, int64_t at, int cpu = 1) {
  return WlBuilder(name, "cq").Lq(lq).Cpu(cpu).At(at).Obj();
}

std::unique_ptr<AdmissionCore> MakeCore(bool afs, int cpu, double weight_a = 1) {
  auto core = std::make_unique<AdmissionCore>(Afs());
  core->UpsertResourceFlavor(Rf("default"));
  core->UpsertClusterQueue(Cq(cpu, afs));
  core->UpsertLocalQueue(Lq("a", weight_a));
  core->UpsertLocalQueue(Lq("b"));
  // LocalQueue a runs a 2-cpu workload.
  core->SetAdmitted(W("run-a", "a", 0, 2), AdmitOn("cq", "default", 2));
  return core;
}

const double kAlpha = 1 - std::pow(0.5, 0.5);  // sampling 5m, half-life 10m

TEST(AdmissionFairSharingTest, LessConsumingLocalQueueGoesFirst) {
  for (bool afs : {true, false}) {
    SCOPED_TRACE(afs ? "admissionScope set" : "no admissionScope");
    auto core = MakeCore(afs, 3);
    core->SampleAdmissionFairSharing(kT0);
    LocalQueueStatus a = core->LocalQueueStatusOf("ns", "a");
    EXPECT_NEAR(a.consumed["cpu"], kAlpha * 2000, 1e-6);
    EXPECT_EQ(a.last_update, kT0);
    core->UpsertPending(W("a1", "a", 1));  // older, but from the busy queue
    core->UpsertPending(W("b1", "b", 2));
    Summary s = Summarize(core->RunCycle(kT0));
    EXPECT_THAT(s.admitted, ElementsAre(afs ? "ns/b1" : "ns/a1"));
  }
}

TEST(AdmissionFairSharingTest, EntryPenaltyCountsAtOnce) {
  auto core = MakeCore(true, 4);
  core->Remove("ns/run-a");  // nothing consumed yet, 4 cpu free
  core->UpsertPending(W("a1", "a", 1));
  core->UpsertPending(W("a2", "a", 2));
  core->UpsertPending(W("a3", "a", 3));
  core->UpsertPending(W("b1", "b", 4));
  Summary s = Summarize(core->RunCycle(kT0));
  // a1 first (equal usage, older); its penalty puts b1 before a2.
  EXPECT_THAT(s.admitted, ElementsAre("ns/a1", "ns/b1", "ns/a2", "ns/a3"));
  EXPECT_NEAR(core->LocalQueueStatusOf("ns", "a").weighted_usage, 3 * kAlpha * 1000, 1e-6);
  // A sample folds the penalty into the decayed usage.
  core->SampleAdmissionFairSharing(kT0 + absl::Minutes(5));
  EXPECT_NEAR(core->LocalQueueStatusOf("ns", "a").weighted_usage, kAlpha * 3000, 1e-6);
}

TEST(AdmissionFairSharingTest, UsageDecaysWithTheHalfLife) {
  auto core = MakeCore(true, 3);
  core->SampleAdmissionFairSharing(kT0);
  core->Remove("ns/run-a");
  const double after_first = kAlpha * 2000;
  // Two samples (one half-life) without usage halve it.
  core->SampleAdmissionFairSharing(kT0 + absl::Minutes(5));
  core->SampleAdmissionFairSharing(kT0 + absl::Minutes(10));
  EXPECT_NEAR(core->LocalQueueStatusOf("ns", "a").consumed["cpu"], after_first / 2, 1e-6);
}

TEST(AdmissionFairSharingTest, WeightDividesUsageAndRestoreResumes) {
  // Weight 0.5 doubles a's usage; b consumed a little more than a's raw usage.
  auto core = MakeCore(true, 3, /*weight_a=*/0.5);
  core->SampleAdmissionFairSharing(kT0);
  core->RestoreLocalQueueConsumed("ns", "b", {{"cpu", kAlpha * 2000 * 1.5}}, kT0);
  EXPECT_NEAR(core->LocalQueueStatusOf("ns", "a").weighted_usage, kAlpha * 4000, 1e-6);
  core->UpsertPending(W("a1", "a", 1));
  core->UpsertPending(W("b1", "b", 2));
  Summary s = Summarize(core->RunCycle(kT0));
  EXPECT_THAT(s.admitted, ElementsAre("ns/b1"));  // 3000*a < 4000*a
}

TEST(AdmissionFairSharingTest, ZeroHalfLifeTracksCurrentUsage) {
  Options o;
  o.admission_fair_sharing = AdmissionFairSharing{absl::ZeroDuration(), absl::Minutes(5), {{"cpu", 2}}};
  AdmissionCore core(o);
  core.UpsertResourceFlavor(Rf("default"));
  core.UpsertClusterQueue(Cq(3, true));
  core.UpsertLocalQueue(Lq("a"));
  core.SetAdmitted(W("run-a", "a", 0, 2), AdmitOn("cq", "default", 2));
  core.SampleAdmissionFairSharing(kT0);
  EXPECT_NEAR(core.LocalQueueStatusOf("ns", "a").consumed["cpu"], 2000, 1e-9);
  EXPECT_NEAR(core.LocalQueueStatusOf("ns", "a").weighted_usage, 4000, 1e-9);  // cpu weight 2
}

}  // namespace
}  // namespace batchd::queueing
