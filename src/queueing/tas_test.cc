// Topology-aware scheduling in the admission cycle (reference §3,
// "Interaction with quota"): placement after quota fits, TopologyPlacementFailed
// when no domain holds the pod set, preemption when the empty topology would
// hold it, no double booking of leaves within one cycle, implied
// unconstrained requests of TAS-only ClusterQueues, restart and release.
#include <set>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "queueing/admission.h"
#include "queueing/internal/test_util.h"

namespace batchd::queueing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using namespace batchd::queueing::testing;  // NOLINT

constexpr char kRack[] = "topology.batchd.io/rack";
constexpr char kHost[] = "kubernetes.io/hostname";

// `racks` racks of `hosts` hosts, each with `cpu` cpus and 110 pod slots.
std::vector<TopologyNode> Nodes(int racks, int hosts, int64_t cpu) {
  std::vector<TopologyNode> out;
  for (int r = 0; r < racks; ++r) {
    for (int h = 0; h < hosts; ++h) {
      TopologyNode n;
      n.name = "r" + std::to_string(r) + "-h" + std::to_string(h);
      n.labels = {{kRack, "r" + std::to_string(r)}, {kHost, n.name}, {"pool", "tas"}};
      n.free = {{"cpu", U(cpu)}, {"pods", U(110)}};
      out.push_back(std::move(n));
    }
  }
  return out;
}

ResourceFlavor TasFlavor() {
  ResourceFlavor f = Rf("tas", {{"pool", "tas"}});
  f.topology_name = "default";
  return f;
}

Workload WithTopology(Workload wl, TopologyMode mode, std::string level = kRack) {
  wl.pod_sets[0].topology = TopologyRequest{mode, mode == TopologyMode::kUnconstrained ? "" : level, {}};
  return wl;
}

Workload Required(std::string name, int32_t pods, int32_t priority = 0) {
  return WithTopology(WlBuilder(std::move(name), "cq").Cpu(1).Count(pods).Priority(priority).Obj(),
                      TopologyMode::kRequired);
}

class TasCycleTest : public ::testing::Test {
 protected:
  void SetUp() override { Setup(CqBuilder("cq").Flavor("tas", 1000).Obj()); }
  void Setup(ClusterQueue cq, int racks = 4, int hosts = 4, int64_t cpu = 4) {
    Options o;
    o.check_invariants = true;
    core_ = std::make_unique<AdmissionCore>(o);
    core_->UpsertTopology({"default", {kRack, kHost}});
    core_->UpsertResourceFlavor(TasFlavor());
    core_->UpsertClusterQueue(std::move(cq));
    for (TopologyNode& n : Nodes(racks, hosts, cpu)) core_->UpsertTopologyNode(std::move(n));
  }
  std::vector<Decision> Cycle() { return core_->RunCycle(absl::FromUnixSeconds(100)); }

  static const PodSetAssignment* Main(const std::vector<Decision>& ds, const std::string& key) {
    for (const Decision& d : ds) {
      if (d.kind == Decision::Kind::kAdmit && d.key == key) return &d.admission.pod_sets[0];
    }
    return nullptr;
  }
  // The racks an admitted pod set occupies.
  static std::set<std::string> Racks(const PodSetAssignment& a) {
    std::set<std::string> out;
    for (const TopologyDomainCount& d : a.topology->domains) out.insert(d.values[0]);
    return out;
  }
  static int32_t Pods(const PodSetAssignment& a) {
    int32_t n = 0;
    for (const TopologyDomainCount& d : a.topology->domains) n += d.count;
    return n;
  }

  std::unique_ptr<AdmissionCore> core_;
};

TEST_F(TasCycleTest, RequiredRackLandsInOneRack) {
  core_->UpsertPending(Required("w", 16));
  std::vector<Decision> ds = Cycle();
  const PodSetAssignment* a = Main(ds, "ns/w");
  ASSERT_NE(a, nullptr);
  ASSERT_TRUE(a->topology.has_value());
  EXPECT_THAT(a->topology->levels, ElementsAre(kRack, kHost));
  EXPECT_EQ(Racks(*a).size(), 1u);
  EXPECT_EQ(Pods(*a), 16);
  EXPECT_TRUE(core_->CheckInvariants().ok());
}

TEST_F(TasCycleTest, OneSlotTakenInEveryRackWaitsWithTheLevelNamed) {
  for (int r = 0; r < 4; ++r) {  // a pod outside TAS on one host of each rack
    TopologyNode n = Nodes(4, 4, 4)[r * 4];
    n.free["cpu"] = U(3);
    core_->UpsertTopologyNode(n);
  }
  core_->UpsertPending(Required("w", 16));
  Summary s = Summarize(Cycle());
  EXPECT_THAT(s.admitted, IsEmpty());
  EXPECT_EQ(s.pending["ns/w"], "TopologyPlacementFailed");
  EXPECT_THAT(s.messages["ns/w"], HasSubstr("15 out of 16"));
  EXPECT_THAT(s.messages["ns/w"], HasSubstr(kRack));
}

TEST_F(TasCycleTest, TwoWorkloadsNeverBookTheSameLeaves) {
  for (int i = 0; i < 5; ++i) core_->UpsertPending(Required("w" + std::to_string(i), 16));
  std::vector<Decision> ds = Cycle();
  std::set<std::string> racks;
  int admitted = 0;
  for (int i = 0; i < 5; ++i) {
    if (const PodSetAssignment* a = Main(ds, "ns/w" + std::to_string(i))) {
      ++admitted;
      for (const std::string& r : Racks(*a)) EXPECT_TRUE(racks.insert(r).second) << r;
    }
  }
  EXPECT_EQ(admitted, 4) << "four racks, each held by one workload";
  EXPECT_EQ(Summarize(ds).pending["ns/w4"], "TopologyPlacementFailed");
}

TEST_F(TasCycleTest, AFinishedWorkloadFreesItsLeaves) {
  for (int i = 0; i < 5; ++i) core_->UpsertPending(Required("w" + std::to_string(i), 16));
  Cycle();
  ASSERT_TRUE(core_->IsPending("ns/w4"));
  core_->Remove("ns/w0");
  Summary s = Summarize(Cycle());
  EXPECT_THAT(s.admitted, ElementsAre("ns/w4"));
}

TEST_F(TasCycleTest, RestartCountsAdmittedAssignments) {
  Admission a;
  a.cluster_queue = "cq";
  PodSetAssignment ps{"main", {{"cpu", "tas"}}, {{"cpu", U(16)}}, 16, TopologyAssignment{}};
  ps.topology->levels = {kRack, kHost};
  for (int h = 0; h < 4; ++h) ps.topology->domains.push_back({{"r0", "r0-h" + std::to_string(h)}, 4});
  a.pod_sets.push_back(ps);
  for (int r = 1; r < 4; ++r) {
    Admission b = a;
    for (int h = 0; h < 4; ++h) {
      b.pod_sets[0].topology->domains[h].values = {"r" + std::to_string(r),
                                                   "r" + std::to_string(r) + "-h" + std::to_string(h)};
    }
    core_->SetAdmitted(Required("run" + std::to_string(r), 16), b);
  }
  core_->SetAdmitted(Required("run0", 16), a);
  core_->UpsertPending(Required("w", 1));
  Summary s = Summarize(Cycle());
  EXPECT_THAT(s.admitted, IsEmpty()) << "every leaf is full";
  EXPECT_EQ(s.pending["ns/w"], "TopologyPlacementFailed");
}

TEST_F(TasCycleTest, PreemptsALowerPriorityWorkloadToFreeARack) {
  Setup(CqBuilder("cq").Flavor("tas", 1000).Within(PreemptionPolicy::kLowerPriority).Obj(),
        /*racks=*/2);
  core_->UpsertPending(Required("low-a", 16, 1));
  core_->UpsertPending(Required("low-b", 10, 0));
  Cycle();
  ASSERT_TRUE(core_->IsAdmitted("ns/low-a"));
  ASSERT_TRUE(core_->IsAdmitted("ns/low-b"));
  core_->UpsertPending(Required("high", 16, 10));
  Summary s = Summarize(Cycle());
  EXPECT_THAT(s.preempted, ElementsAre("ns/low-b")) << "the lowest priority rack is freed";
  EXPECT_EQ(s.pending["ns/high"], "WaitingForPreemptedWorkloads");
  core_->UpsertPending(Required("low-b", 10, 0));  // evicted: back to pending
  s = Summarize(Cycle());
  EXPECT_THAT(s.admitted, ElementsAre("ns/high"));
}

TEST_F(TasCycleTest, NoVictimsMeansTopologyPlacementFailed) {
  Setup(CqBuilder("cq").Flavor("tas", 1000).Obj(), /*racks=*/1);  // preemption Never
  core_->UpsertPending(Required("a", 10));
  Cycle();
  core_->UpsertPending(Required("b", 10));
  Summary s = Summarize(Cycle());
  EXPECT_THAT(s.preempted, IsEmpty());
  EXPECT_EQ(s.pending["ns/b"], "TopologyPlacementFailed");
  EXPECT_THAT(s.messages["ns/b"], HasSubstr("6 out of 10"));
}

// Reference §3: a head that needs preemption but has no victims holds its
// placement on the empty topology for the rest of the cycle, so a
// lower-priority workload of another ClusterQueue cannot take that domain
// first; the hold ends with the cycle.
TEST_F(TasCycleTest, APreemptorWithoutVictimsHoldsItsEmptyTopologyPlacement) {
  Setup(CqBuilder("cq").Flavor("tas", 1000).Obj(), /*racks=*/2);  // preemption Never
  core_->UpsertClusterQueue(CqBuilder("other").Flavor("tas", 1000).Obj());
  for (TopologyNode n : Nodes(2, 4, 4)) {  // rack r1 is full of pods outside TAS
    if (n.labels[kRack] != "r1") continue;
    n.free["cpu"] = 0;
    core_->UpsertTopologyNode(std::move(n));
  }
  core_->UpsertPending(Required("a", 6));  // 10 of rack r0's 16 slots stay free
  ASSERT_THAT(Summarize(Cycle()).admitted, ElementsAre("ns/a"));

  core_->UpsertPending(Required("p", 16, /*priority=*/10));
  Workload q = Required("q", 4);
  q.cluster_queue = "other";
  core_->UpsertPending(q);
  Summary s = Summarize(Cycle());
  EXPECT_EQ(s.pending["ns/p"], "TopologyPlacementFailed");
  EXPECT_THAT(s.admitted, IsEmpty()) << "rack r0 is held for p, which outranks q";
  EXPECT_EQ(s.pending["ns/q"], "TopologyPlacementFailed");
  EXPECT_TRUE(core_->CheckInvariants().ok());

  // The hold lasted one cycle: once p is gone, q takes the free slots of r0.
  core_->Remove("ns/p");
  core_->UpsertPending(q);
  s = Summarize(Cycle());
  EXPECT_THAT(s.admitted, ElementsAre("ns/q"));
}

// A pod set group (podSetGroupName): a leader of one pod and its workers.
Workload LeaderAndWorkers(std::string name, int32_t workers, int64_t leader_cpu,
                          TopologyMode mode = TopologyMode::kRequired) {
  Workload wl = WlBuilder(std::move(name), "cq")
                    .Cpu(leader_cpu).Count(1)
                    .PodSetNamed("workers").Cpu(1).Count(workers)
                    .Obj();
  wl.pod_sets[0].name = "leader";
  for (PodSet& ps : wl.pod_sets) ps.topology = TopologyRequest{mode, kRack, {}, "g"};
  return wl;
}

TEST_F(TasCycleTest, APodSetGroupIsPlacedInOneRack) {
  // Every rack but r3 has pods outside TAS taking 2 cores: 14 free there.
  for (int r = 0; r < 3; ++r) {
    TopologyNode n = Nodes(4, 4, 4)[r * 4];
    n.free["cpu"] = U(2);
    core_->UpsertTopologyNode(n);
  }
  core_->UpsertPending(LeaderAndWorkers("g", 13, 2));  // 15 cores: only r3 holds them
  std::vector<Decision> ds = Cycle();
  ASSERT_EQ(ds.size(), 1u);
  ASSERT_EQ(ds[0].kind, Decision::Kind::kAdmit);
  const Admission& a = ds[0].admission;
  ASSERT_EQ(a.pod_sets.size(), 2u);
  ASSERT_TRUE(a.pod_sets[0].topology && a.pod_sets[1].topology);
  EXPECT_EQ(a.pod_sets[0].name, "leader");
  EXPECT_EQ(Racks(a.pod_sets[0]), std::set<std::string>{"r3"});
  EXPECT_EQ(Racks(a.pod_sets[1]), std::set<std::string>{"r3"});
  EXPECT_EQ(Pods(a.pod_sets[0]), 1);
  EXPECT_EQ(Pods(a.pod_sets[1]), 13);
  // The leader's usage counts: r3 keeps one core, the others 14.
  core_->UpsertPending(LeaderAndWorkers("h", 14, 1));
  Summary s = Summarize(Cycle());
  EXPECT_EQ(s.pending["ns/h"], "TopologyPlacementFailed");
  EXPECT_THAT(s.messages["ns/h"], HasSubstr("14 out of 15 pod(s) in one domain"));
}

TEST_F(TasCycleTest, PodSetGroupMembersShareTheFlavorOfTheirSummedRequests) {
  Setup(CqBuilder("cq").Flavor("tas", 5).Flavor("tas2", 100).Obj());
  ResourceFlavor second = TasFlavor();
  second.name = "tas2";
  core_->UpsertResourceFlavor(second);
  auto workload = [](std::string name, bool grouped) {
    Workload wl = LeaderAndWorkers(std::move(name), 4, 2);
    if (!grouped) {
      for (PodSet& ps : wl.pod_sets) ps.topology->group.clear();
    }
    return wl;
  };
  // Alone, the leader's 2 cores fit "tas" and the workers' 4 more do not.
  core_->UpsertPending(workload("apart", false));
  std::vector<Decision> ds = Cycle();
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_EQ(ds[0].admission.pod_sets[0].flavors.at("cpu"), "tas");
  EXPECT_EQ(ds[0].admission.pod_sets[1].flavors.at("cpu"), "tas2");
  core_->Remove("ns/apart");
  // Grouped, their 6 cores decide together: both on "tas2".
  core_->UpsertPending(workload("together", true));
  ds = Cycle();
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_EQ(ds[0].admission.pod_sets[0].flavors.at("cpu"), "tas2");
  EXPECT_EQ(ds[0].admission.pod_sets[1].flavors.at("cpu"), "tas2");
}

TEST_F(TasCycleTest, TasOnlyClusterQueueImpliesUnconstrained) {
  core_->UpsertPending(WlBuilder("w", "cq").Cpu(1).Count(20).Obj());
  std::vector<Decision> ds = Cycle();
  const PodSetAssignment* a = Main(ds, "ns/w");
  ASSERT_NE(a, nullptr);
  ASSERT_TRUE(a->topology.has_value()) << "implied unconstrained placement";
  EXPECT_EQ(Pods(*a), 20);
}

TEST_F(TasCycleTest, QuotaComesFirst) {
  Setup(CqBuilder("cq").Flavor("tas", 8).Obj());
  core_->UpsertPending(Required("w", 16));
  Summary s = Summarize(Cycle());
  EXPECT_EQ(s.pending["ns/w"], "ExceedsMaxQuota");
}

TEST_F(TasCycleTest, UnknownLevelIsReportedNotIgnored) {
  core_->UpsertPending(WithTopology(WlBuilder("w", "cq").Cpu(1).Count(2).Obj(),
                                    TopologyMode::kRequired, "topology.batchd.io/block"));
  Summary s = Summarize(Cycle());
  EXPECT_EQ(s.pending["ns/w"], "NoMatchingFlavor");
  EXPECT_THAT(s.messages["ns/w"], HasSubstr("topology.batchd.io/block"));
}

TEST_F(TasCycleTest, ARequestOnAFlavorWithoutTopologyIsReported) {
  Options o;
  o.check_invariants = true;
  core_ = std::make_unique<AdmissionCore>(o);
  core_->UpsertResourceFlavor(Rf("plain"));
  core_->UpsertClusterQueue(CqBuilder("cq").Flavor("plain", 100).Obj());
  core_->UpsertPending(Required("w", 2));
  Summary s = Summarize(Cycle());
  EXPECT_EQ(s.pending["ns/w"], "NoMatchingFlavor");
  EXPECT_THAT(s.messages["ns/w"], HasSubstr("does not support TopologyAwareScheduling"));
}

TEST_F(TasCycleTest, NodesOutsideTheFlavorOrGoneDoNotCount) {
  core_->DeleteTopologyNode("r0-h0");
  TopologyNode other = Nodes(1, 1, 64)[0];
  other.name = "other";
  other.labels = {{kRack, "r0"}, {kHost, "other"}, {"pool", "cpu"}};
  core_->UpsertTopologyNode(other);
  core_->UpsertPending(Required("w", 16));
  std::vector<Decision> ds = Cycle();
  const PodSetAssignment* a = Main(ds, "ns/w");
  ASSERT_NE(a, nullptr);
  EXPECT_FALSE(Racks(*a).contains("r0")) << "r0 has 12 free slots in the flavor";
}

TEST_F(TasCycleTest, AFailedNodesPodsMoveWithinTheirRack) {
  core_->UpsertPending(Required("w", 8));
  std::vector<Decision> ds = Cycle();
  const PodSetAssignment* a = Main(ds, "ns/w");
  ASSERT_NE(a, nullptr);
  const std::string rack = *Racks(*a).begin();
  const std::string failed = a->topology->domains[0].values[1];
  EXPECT_THAT(core_->RepairTopology(), IsEmpty()) << "no node failed yet";
  core_->DeleteTopologyNode(failed);
  std::vector<TopologyRepair> repairs = core_->RepairTopology();
  ASSERT_EQ(repairs.size(), 1u);
  EXPECT_EQ(repairs[0].key, "ns/w");
  EXPECT_THAT(repairs[0].unhealthy_nodes, ElementsAre(failed));
  ASSERT_TRUE(repairs[0].replacement.has_value());
  const PodSetAssignment& moved = repairs[0].replacement->pod_sets[0];
  EXPECT_EQ(Pods(moved), 8);
  EXPECT_THAT(Racks(moved), ElementsAre(rack)) << "the pods stay in their rack";
  for (const TopologyDomainCount& d : moved.topology->domains) EXPECT_NE(d.values[1], failed);
  EXPECT_THAT(core_->RepairTopology(), IsEmpty()) << "repaired once";
  // The moved pods hold their new host: the rest of the rack has 4 slots.
  core_->UpsertPending(Required("fill", 4));
  core_->UpsertPending(Required("more", 1));
  Summary s = Summarize(Cycle());
  EXPECT_THAT(s.admitted, ElementsAre("ns/fill", "ns/more"));
}

TEST_F(TasCycleTest, NoRoomInTheRackMeansEviction) {
  core_->UpsertPending(Required("w", 16));
  std::vector<Decision> ds = Cycle();
  const PodSetAssignment* a = Main(ds, "ns/w");
  ASSERT_NE(a, nullptr);
  const std::string failed = a->topology->domains[0].values[1];
  core_->DeleteTopologyNode(failed);
  std::vector<TopologyRepair> repairs = core_->RepairTopology();
  ASSERT_EQ(repairs.size(), 1u);
  EXPECT_FALSE(repairs[0].replacement.has_value()) << "the rack is full";
  EXPECT_THAT(repairs[0].unhealthy_nodes, ElementsAre(failed));
  EXPECT_THAT(core_->RepairTopology(), IsEmpty()) << "being evicted: not reported again";
}

}  // namespace
}  // namespace batchd::queueing
