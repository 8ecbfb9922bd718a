// The topology library: validation, the snapshot's bookkeeping, the three
// strategies' choices (the seeds' four-level example, tight fit, least free
// capacity, preferred going up, unconstrained spreading, slices), node
// filters, and a conformance suite every Algorithm must pass (random
// topologies with fixed seeds, checked against a brute-force model).
#include "queueing/topology/topology.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "queueing/topology/topology_test_util.h"

namespace batchd::queueing::topology {
namespace {

using testing::AsRackLists;
using testing::BlockRackHost;
using testing::CpuRequest;
using testing::kCore;
using testing::kHostname;
using testing::kSlot;
using testing::MakeNode;
using testing::NodeEligible;
using testing::RandomScenario;
using testing::Scenario;
using testing::Only;
using testing::PodsPer;
using testing::RackListSnapshot;
using testing::TotalPods;

using Lists = std::vector<std::vector<int>>;

// ---- Validation ----

TEST(ValidateLevelsTest, AcceptsDistinctNonEmptyLevels) {
  EXPECT_EQ(ValidateLevels(BlockRackHost()), "");
  EXPECT_EQ(ValidateLevels({kHostname}), "");
}

TEST(ValidateLevelsTest, RejectsEmptyDuplicateAndNoLevels) {
  EXPECT_EQ(ValidateLevels({}), "a topology needs at least one level");
  EXPECT_EQ(ValidateLevels({"block", ""}), "level 1 has an empty node label");
  EXPECT_EQ(ValidateLevels({"rack", "block", "rack"}), "level \"rack\" appears twice");
}

TEST(ValidateRequestTest, AcceptsValidRequests) {
  const auto levels = BlockRackHost();
  EXPECT_EQ(ValidateRequest(levels, CpuRequest(4, Mode::kRequired, 2)), "");
  Request sliced = CpuRequest(8, Mode::kPreferred, 0);
  sliced.slices = {{1, 4}, {2, 2}};
  EXPECT_EQ(ValidateRequest(levels, sliced), "");
  Request unconstrained = CpuRequest(6, Mode::kUnconstrained);
  unconstrained.level = 99;  // unused in this mode
  unconstrained.slices = {{0, 3}};
  EXPECT_EQ(ValidateRequest(levels, unconstrained), "");
}

TEST(ValidateRequestTest, RejectsBadLevelsAndSlices) {
  const auto levels = BlockRackHost();
  EXPECT_EQ(ValidateRequest(levels, CpuRequest(4, Mode::kRequired, 3)),
            "required level 3 is not a level of the topology (0..2)");
  EXPECT_EQ(ValidateRequest(levels, CpuRequest(4, Mode::kPreferred, -1)),
            "preferred level -1 is not a level of the topology (0..2)");
  Request r = CpuRequest(8, Mode::kRequired, 1);
  r.slices = {{0, 4}};
  EXPECT_EQ(ValidateRequest(levels, r),
            "slice level \"block\" is above the required level \"rack\"");
  r.slices = {{1, 0}};
  EXPECT_EQ(ValidateRequest(levels, r), "slice layer 0 size 0 must be positive");
  r.slices = {{1, 3}};
  EXPECT_EQ(ValidateRequest(levels, r), "slice size 3 does not divide the pod count 8");
  r.slices = {{1, 4}, {1, 2}};
  EXPECT_EQ(
      ValidateRequest(levels, r),
      "slice layer 1 level \"rack\" must be below the level of the layer before it (\"rack\")");
  r.slices = {{1, 4}, {2, 3}};
  EXPECT_EQ(ValidateRequest(levels, r),
            "slice layer 1 size 3 does not divide the size 4 of the layer before it");
  r.slices = {{1, 4}, {5, 2}};
  EXPECT_EQ(ValidateRequest(levels, r), "slice layer 1 level 5 is not a level of the topology");
  r = CpuRequest(-1, Mode::kUnconstrained);
  EXPECT_EQ(ValidateRequest(levels, r), "count -1 is negative");
}

TEST(PlaceTest, InvalidRequestIsReportedNotPlaced) {
  Snapshot snapshot = RackListSnapshot({{4}});
  PlaceResult result = snapshot.Place(CpuRequest(4, Mode::kRequired, 7), Profile::Mixed());
  EXPECT_FALSE(result.ok);
  EXPECT_EQ(result.message,
            "invalid topology request: required level 7 is not a level of the topology (0..2)");
}

// ---- Snapshot bookkeeping ----

TEST(SnapshotTest, LeavesFreeCapacityAndUsage) {
  auto nodes = testing::RackListNodes({{4, 2}, {3}});
  Node odd = MakeNode(BlockRackHost(), {"b", "r9"}, 8);  // too few values: skipped
  nodes.push_back(odd);
  Snapshot snapshot("T", BlockRackHost(), nodes);
  EXPECT_EQ(snapshot.topology_name(), "T");
  EXPECT_EQ(snapshot.levels(), BlockRackHost());
  EXPECT_EQ(snapshot.leaf_count(), 3u);
  const std::vector<std::string> leaf = {"b", "r1", "r1-h1"};
  EXPECT_EQ(snapshot.FreeOf(leaf),
            (std::map<std::string, Amount>{{"cpu", 4 * kCore}, {"pods", 110 * kSlot}}));
  EXPECT_TRUE(snapshot.FreeOf({"b", "r9", "x"}).empty());

  const Assignment used{{{leaf, 3}}};
  const std::map<std::string, Amount> per_pod = {{"cpu", kCore}, {"example.com/unknown", 5}};
  snapshot.AddUsage(used, per_pod, +1);
  EXPECT_EQ(snapshot.FreeOf(leaf),
            (std::map<std::string, Amount>{{"cpu", 1 * kCore}, {"pods", 107 * kSlot}}));
  snapshot.AddUsage(Assignment{{{{"b", "gone", "x"}, 5}}}, per_pod, +1);  // no such leaf: ignored
  snapshot.AddUsage(used, per_pod, -1);
  EXPECT_EQ(snapshot.FreeOf(leaf),
            (std::map<std::string, Amount>{{"cpu", 4 * kCore}, {"pods", 110 * kSlot}}));
}

TEST(SnapshotTest, UsageLimitsPlacementUnlessIgnored) {
  Snapshot snapshot = RackListSnapshot({{4}, {4}});
  snapshot.AddUsage(Assignment{{{{"b", "r1", "r1-h1"}, 4}, {{"b", "r2", "r2-h1"}, 3}}},
                    {{"cpu", kCore}}, +1);
  PlaceResult full = snapshot.Place(CpuRequest(4, Mode::kRequired, 1), Profile::Mixed());
  EXPECT_FALSE(full.ok);
  EXPECT_EQ(full.fit, 1);
  EXPECT_EQ(full.message,
            "topology \"T\" allows to fit only 1 out of 4 pod(s) in one domain of level \"rack\"");
  PlaceResult empty =
      snapshot.Place(CpuRequest(4, Mode::kRequired, 1), Profile::Mixed(), {.ignore_usage = true});
  ASSERT_TRUE(empty.ok) << empty.message;
  EXPECT_EQ(AsRackLists(empty.assignment, {{4}, {4}}), (Lists{{4}, {0}}));
}

TEST(SnapshotTest, MovedSnapshotKeepsItsTree) {
  Snapshot first = RackListSnapshot({{2}});
  Snapshot second = std::move(first);
  EXPECT_EQ(second.leaf_count(), 1u);
  Snapshot third = RackListSnapshot({{1}, {1}});
  third = std::move(second);
  EXPECT_TRUE(third.Place(CpuRequest(2, Mode::kRequired, 2), Profile::Mixed()).ok);
}

// When the lowest level is not the hostname, a leaf sums its nodes, and only
// the nodes that pass the filters count.
TEST(SnapshotTest, LeavesAggregateTheirNodes) {
  const std::vector<std::string> levels = {"block", "rack"};
  std::vector<Node> nodes = {MakeNode(levels, {"b", "r1", "n1"}, 2),
                             MakeNode(levels, {"b", "r1", "n2"}, 2),
                             MakeNode(levels, {"b", "r2", "n3"}, 3)};
  for (Node& n : nodes) {
    n.values.resize(2);
    n.labels["node"] = n.name;
  }
  Snapshot snapshot("T", levels, nodes);
  EXPECT_EQ(snapshot.leaf_count(), 2u);
  EXPECT_EQ(snapshot.FreeOf({"b", "r1"}).at("cpu"), 4 * kCore);
  PlaceResult four = snapshot.Place(CpuRequest(4, Mode::kRequired, 1), Profile::Mixed());
  ASSERT_TRUE(four.ok) << four.message;
  EXPECT_EQ(four.assignment, (Assignment{{{{"b", "r1"}, 4}}}));
  Request only_n1 = CpuRequest(3, Mode::kRequired, 1);
  only_n1.node_selector = {{"node", "n1"}};
  PlaceResult three = snapshot.Place(only_n1, Profile::Mixed());
  EXPECT_FALSE(three.ok);
  EXPECT_EQ(three.message,
            "topology \"T\" allows to fit only 2 out of 3 pod(s) in one domain of level \"rack\"");
}

// ---- The seeds' example ----
//
// zone z1 / block b1 / racks r1, r2, r3 / three hosts each with 2 cpu (110
// pod slots). Three 1-cpu pods are already placed on two racks: two on r2-h1
// (now full), one on r3-h1. Free cpu per rack: r1 6 (the free rack), r2 4,
// r3 5. A new request of 7 one-cpu pods, preferred rack: no rack holds 7, so
// every strategy goes up to the block (15 free) and chooses racks inside it.
class SeedsExampleTest : public ::testing::Test {
 protected:
  SeedsExampleTest() : snapshot_("T", Levels(), Nodes()) {
    snapshot_.AddUsage(Assignment{{At("r2-h1", 2), At("r3-h1", 1)}}, {{"cpu", kCore}}, +1);
  }
  static std::vector<std::string> Levels() { return {"zone", "block", "rack", kHostname}; }
  static std::vector<Node> Nodes() {
    std::vector<Node> nodes;
    for (const char* rack : {"r1", "r2", "r3"}) {
      for (const char* host : {"-h1", "-h2", "-h3"}) {
        nodes.push_back(MakeNode(Levels(), {"z1", "b1", rack, std::string(rack) + host}, 2));
      }
    }
    return nodes;
  }
  static DomainCount At(const std::string& host, int32_t count) {
    return {{"z1", "b1", host.substr(0, 2), host}, count};
  }
  Snapshot snapshot_;
};

// BestFit: the rack with most room (r1, 6) first, then the tightest rack for
// the last pod: r2 (4 free), not r3 (5), which keeps the larger hole.
TEST_F(SeedsExampleTest, BestFitFillsTheFreeRackAndTightFitsTheLastPod) {
  PlaceResult result = snapshot_.Place(CpuRequest(7, Mode::kPreferred, 2), Profile::Mixed());
  ASSERT_TRUE(result.ok) << result.message;
  EXPECT_EQ(result.assignment,
            (Assignment{{At("r1-h1", 2), At("r1-h2", 2), At("r1-h3", 2), At("r2-h2", 1)}}));
}

// LeastFreeCapacity: the fullest racks first (r2, then r3); the free rack
// stays whole. Unconstrained (LeastFreeCapacity on the hosts alone) sees no
// racks: the 1-pod fragment first, then hosts of equal room in name order.
TEST_F(SeedsExampleTest, LeastFreeCapacityPacksTheFullestRacks) {
  PlaceResult preferred =
      snapshot_.Place(CpuRequest(7, Mode::kPreferred, 2), Only(Algorithm::kLeastFreeCapacity));
  ASSERT_TRUE(preferred.ok) << preferred.message;
  const Assignment want{{At("r2-h2", 2), At("r2-h3", 2), At("r3-h1", 1), At("r3-h2", 2)}};
  EXPECT_EQ(preferred.assignment, want);
  PlaceResult unconstrained =
      snapshot_.Place(CpuRequest(7, Mode::kUnconstrained), Profile::Mixed());
  ASSERT_TRUE(unconstrained.ok) << unconstrained.message;
  EXPECT_EQ(unconstrained.assignment,
            (Assignment{{At("r1-h1", 2), At("r1-h2", 2), At("r1-h3", 2), At("r3-h1", 1)}}));
  // When one rack holds the request it is the fullest such rack: r2 for 4.
  PlaceResult four =
      snapshot_.Place(CpuRequest(4, Mode::kPreferred, 2), Only(Algorithm::kLeastFreeCapacity));
  ASSERT_TRUE(four.ok) << four.message;
  EXPECT_EQ(PodsPer(four.assignment, 2), (std::map<std::string, int>{{"r2", 4}}));
}

// Balanced: every host has room for at most 2, so the even share is 1 pod
// per host (threshold 1); the two racks with the least capacity that hold 7
// together (r2 + r3 = 9) share them 4 and 3, one pod or more on each host
// used, instead of BestFit's 6 and 1.
TEST_F(SeedsExampleTest, BalancedSpreadsEvenly) {
  PlaceResult result = snapshot_.Place(CpuRequest(7, Mode::kPreferred, 2), Profile::Balanced());
  ASSERT_TRUE(result.ok) << result.message;
  EXPECT_EQ(PodsPer(result.assignment, 2), (std::map<std::string, int>{{"r2", 4}, {"r3", 3}}));
  EXPECT_EQ(result.assignment,
            (Assignment{{At("r2-h2", 2), At("r2-h3", 2), At("r3-h1", 1), At("r3-h2", 2)}}));
}

TEST_F(SeedsExampleTest, RequiredRackIsNotAdmitted) {
  for (const Profile& profile :
       {Profile::Mixed(), Profile::Balanced(), Only(Algorithm::kLeastFreeCapacity)}) {
    PlaceResult result = snapshot_.Place(CpuRequest(7, Mode::kRequired, 2), profile);
    EXPECT_FALSE(result.ok);
    EXPECT_EQ(result.fit, 6);
    EXPECT_EQ(
        result.message,
        "topology \"T\" allows to fit only 6 out of 7 pod(s) in one domain of level \"rack\"");
  }
  PlaceResult block = snapshot_.Place(CpuRequest(7, Mode::kRequired, 1), Profile::Mixed());
  ASSERT_TRUE(block.ok) << block.message;
  EXPECT_EQ(TotalPods(block.assignment), 7);
}

// ---- BestFit and LeastFreeCapacity choices ----

// Racks with 8 (4+4), 5 and 6 free cpu.
Snapshot ThreeRacks() { return RackListSnapshot({{4, 4}, {5}, {3, 3}}); }

TEST(BestFitTest, TightFitPicksTheSmallestDomainThatHolds) {
  Snapshot snapshot = ThreeRacks();
  for (auto [count, rack] :
       std::vector<std::pair<int, std::string>>{{5, "r2"}, {6, "r3"}, {7, "r1"}, {8, "r1"}}) {
    PlaceResult result = snapshot.Place(CpuRequest(count, Mode::kRequired, 1), Profile::Mixed());
    ASSERT_TRUE(result.ok) << result.message;
    EXPECT_EQ(PodsPer(result.assignment, 1), (std::map<std::string, int>{{rack, count}})) << count;
  }
  PlaceResult nine = snapshot.Place(CpuRequest(9, Mode::kRequired, 1), Profile::Mixed());
  EXPECT_FALSE(nine.ok);
  EXPECT_EQ(nine.fit, 8);
  EXPECT_EQ(nine.message,
            "topology \"T\" allows to fit only 8 out of 9 pod(s) in one domain of level \"rack\"");
}

TEST(BestFitTest, TightFitInsideTheDomainToo) {
  Snapshot snapshot = RackListSnapshot({{8, 3, 5}});
  // Most room first (8), then the tightest host for the rest (3 for 2 pods).
  PlaceResult ten = snapshot.Place(CpuRequest(10, Mode::kRequired, 1), Profile::Mixed());
  ASSERT_TRUE(ten.ok) << ten.message;
  EXPECT_EQ(AsRackLists(ten.assignment, {{8, 3, 5}}), (Lists{{8, 2, 0}}));
  PlaceResult four = snapshot.Place(CpuRequest(4, Mode::kPreferred, 2), Profile::Mixed());
  ASSERT_TRUE(four.ok) << four.message;
  EXPECT_EQ(AsRackLists(four.assignment, {{8, 3, 5}}), (Lists{{0, 0, 4}}));
}

TEST(LeastFreeCapacityTest, PicksTheFullestDomainThatHolds) {
  Snapshot snapshot = ThreeRacks();
  const Profile lfc = Only(Algorithm::kLeastFreeCapacity);
  for (auto [count, rack] :
       std::vector<std::pair<int, std::string>>{{1, "r2"}, {5, "r2"}, {6, "r3"}, {7, "r1"}}) {
    PlaceResult result = snapshot.Place(CpuRequest(count, Mode::kPreferred, 1), lfc);
    ASSERT_TRUE(result.ok) << result.message;
    EXPECT_EQ(PodsPer(result.assignment, 1), (std::map<std::string, int>{{rack, count}})) << count;
  }
  PlaceResult nine = snapshot.Place(CpuRequest(9, Mode::kRequired, 1), lfc);
  EXPECT_FALSE(nine.ok);
  EXPECT_EQ(nine.message,
            "topology \"T\" allows to fit only 8 out of 9 pod(s) in one domain of level \"rack\"");
}

// ---- Preferred goes up a level at a time, then spreads ----

// zones z1, z2 / blocks 2 each / racks 2 each / hosts 2 each with 4 cpu:
// a rack holds 8, a block 16, a zone 32.
Snapshot Nested() {
  const std::vector<std::string> levels = {"zone", "block", "rack", kHostname};
  std::vector<Node> nodes;
  for (int z = 1; z <= 2; ++z) {
    for (int b = 1; b <= 2; ++b) {
      for (int r = 1; r <= 2; ++r) {
        for (int h = 1; h <= 2; ++h) {
          const std::string zone = "z" + std::to_string(z), block = zone + "b" + std::to_string(b);
          const std::string rack = block + "r" + std::to_string(r);
          nodes.push_back(MakeNode(levels, {zone, block, rack, rack + "h" + std::to_string(h)}, 4));
        }
      }
    }
  }
  return Snapshot("T", levels, nodes);
}

TEST(PreferredTest, GoesUpALevelAtATime) {
  Snapshot snapshot = Nested();
  for (const Profile& profile : {Profile::Mixed(), Only(Algorithm::kLeastFreeCapacity)}) {
    PlaceResult rack = snapshot.Place(CpuRequest(6, Mode::kPreferred, 2), profile);
    ASSERT_TRUE(rack.ok) << rack.message;
    EXPECT_EQ(PodsPer(rack.assignment, 2), (std::map<std::string, int>{{"z1b1r1", 6}}));
    PlaceResult block = snapshot.Place(CpuRequest(12, Mode::kPreferred, 2), profile);
    ASSERT_TRUE(block.ok) << block.message;
    EXPECT_EQ(PodsPer(block.assignment, 1), (std::map<std::string, int>{{"z1b1", 12}}));
    PlaceResult zone = snapshot.Place(CpuRequest(24, Mode::kPreferred, 2), profile);
    ASSERT_TRUE(zone.ok) << zone.message;
    EXPECT_EQ(PodsPer(zone.assignment, 0), (std::map<std::string, int>{{"z1", 24}}));
    PlaceResult spread = snapshot.Place(CpuRequest(40, Mode::kPreferred, 2), profile);
    ASSERT_TRUE(spread.ok) << spread.message;
    EXPECT_EQ(PodsPer(spread.assignment, 0), (std::map<std::string, int>{{"z1", 32}, {"z2", 8}}));
    // Inside a zone the fewest blocks and racks are used.
    EXPECT_EQ(PodsPer(spread.assignment, 2).size(), 5u);
  }
  PlaceResult too_many = snapshot.Place(CpuRequest(65, Mode::kPreferred, 2), Profile::Mixed());
  EXPECT_FALSE(too_many.ok);
  EXPECT_EQ(too_many.fit, 64);
  EXPECT_EQ(too_many.message, "topology \"T\" allows to fit only 64 out of 65 pod(s)");
}

// ---- Unconstrained spreads over the leaves ----

TEST(UnconstrainedTest, SpreadsOverLeaves) {
  const Lists racks = {{1, 2, 3, 4}};
  Snapshot snapshot = RackListSnapshot(racks);
  // LeastFreeCapacity (the Mixed profile's choice) fills the smallest hosts first.
  PlaceResult lfc = snapshot.Place(CpuRequest(5, Mode::kUnconstrained), Profile::Mixed());
  ASSERT_TRUE(lfc.ok) << lfc.message;
  EXPECT_EQ(AsRackLists(lfc.assignment, racks), (Lists{{1, 2, 2, 0}}));
  // BestFit takes the biggest host, then the tightest for the rest.
  PlaceResult best_fit = snapshot.Place(CpuRequest(5, Mode::kUnconstrained), Profile::AllBestFit());
  ASSERT_TRUE(best_fit.ok) << best_fit.message;
  EXPECT_EQ(AsRackLists(best_fit.assignment, racks), (Lists{{1, 0, 0, 4}}));
  PlaceResult all = snapshot.Place(CpuRequest(10, Mode::kUnconstrained), Profile::Mixed());
  ASSERT_TRUE(all.ok) << all.message;
  EXPECT_EQ(AsRackLists(all.assignment, racks), racks);
  PlaceResult over = snapshot.Place(CpuRequest(11, Mode::kUnconstrained), Profile::Mixed());
  EXPECT_FALSE(over.ok);
  EXPECT_EQ(over.fit, 10);
  EXPECT_EQ(over.message, "topology \"T\" allows to fit only 10 out of 11 pod(s)");
}

TEST(UnconstrainedTest, NothingFits) {
  Snapshot snapshot = RackListSnapshot({{0, 0}});
  PlaceResult result = snapshot.Place(CpuRequest(3, Mode::kUnconstrained), Profile::Mixed());
  EXPECT_FALSE(result.ok);
  EXPECT_EQ(result.fit, 0);
  EXPECT_EQ(result.message, "topology \"T\" doesn't allow to fit any of 3 pod(s)");
  Snapshot empty("T", BlockRackHost(), {});
  EXPECT_EQ(empty.leaf_count(), 0u);
  EXPECT_EQ(empty.Place(CpuRequest(3, Mode::kRequired, 1), Profile::Mixed()).message,
            "topology \"T\" doesn't allow to fit any of 3 pod(s)");
}

// ---- Resources ----

TEST(ResourcesTest, MissingResourceFitsNothingAndZeroRequestsDoNotLimit) {
  Snapshot snapshot = RackListSnapshot({{4}});
  Request gpu = CpuRequest(2, Mode::kUnconstrained);
  gpu.per_pod["nvidia.com/gpu"] = 1000;
  PlaceResult none = snapshot.Place(gpu, Profile::Mixed());
  EXPECT_FALSE(none.ok);
  EXPECT_EQ(none.message, "topology \"T\" doesn't allow to fit any of 2 pod(s)");
  Request zero = CpuRequest(4, Mode::kUnconstrained);
  zero.per_pod["nvidia.com/gpu"] = 0;
  zero.per_pod["memory"] = 0;
  EXPECT_TRUE(snapshot.Place(zero, Profile::Mixed()).ok);
  Request empty = CpuRequest(4, Mode::kUnconstrained);
  empty.count = 0;
  PlaceResult nothing = snapshot.Place(empty, Profile::Mixed());
  EXPECT_TRUE(nothing.ok);
  EXPECT_TRUE(nothing.assignment.domains.empty());
}

TEST(ResourcesTest, PodSlotsLimit) {
  std::vector<Node> nodes = {MakeNode(BlockRackHost(), {"b", "r1", "h1"}, 100, /*slots=*/3)};
  Snapshot snapshot("T", BlockRackHost(), nodes);
  PlaceResult result = snapshot.Place(CpuRequest(4, Mode::kUnconstrained), Profile::Mixed());
  EXPECT_FALSE(result.ok);
  EXPECT_EQ(result.fit, 3);
  Request with_slots = CpuRequest(1, Mode::kUnconstrained);
  with_slots.per_pod[kPodsResource] = 2 * kSlot;  // 3 slots per pod in all
  EXPECT_TRUE(snapshot.Place(with_slots, Profile::Mixed()).ok);
  with_slots.count = 2;
  EXPECT_FALSE(snapshot.Place(with_slots, Profile::Mixed()).ok);
}

// ---- Slices ----

// blocks b1, b2 / racks 2 each / hosts 2 each with 3 cpu: a rack holds 6
// pods, one slice of 4.
Snapshot SliceTopology() {
  std::vector<Node> nodes;
  for (const char* block : {"b1", "b2"}) {
    for (const char* rack : {"r1", "r2"}) {
      for (const char* host : {"h1", "h2"}) {
        const std::string r = std::string(block) + rack;
        nodes.push_back(MakeNode(BlockRackHost(), {block, r, r + host}, 3));
      }
    }
  }
  return Snapshot("T", BlockRackHost(), nodes);
}

TEST(SlicesTest, EachSliceInOneDomainOfItsLevel) {
  Snapshot snapshot = SliceTopology();
  for (const Profile& profile :
       {Profile::Mixed(), Profile::Balanced(), Only(Algorithm::kLeastFreeCapacity)}) {
    Request request = CpuRequest(8, Mode::kPreferred, 0);
    request.slices = {{1, 4}};
    PlaceResult result = snapshot.Place(request, profile);
    ASSERT_TRUE(result.ok) << result.message;
    EXPECT_EQ(PodsPer(result.assignment, 1),
              (std::map<std::string, int>{{"b1r1", 4}, {"b1r2", 4}}));
  }
  Request spread = CpuRequest(16, Mode::kUnconstrained);
  spread.slices = {{1, 4}};
  PlaceResult result = snapshot.Place(spread, Profile::Mixed());
  ASSERT_TRUE(result.ok) << result.message;
  EXPECT_EQ(PodsPer(result.assignment, 1),
            (std::map<std::string, int>{{"b1r1", 4}, {"b1r2", 4}, {"b2r1", 4}, {"b2r2", 4}}));
}

TEST(SlicesTest, NotFitMessagesCountSlices) {
  Snapshot snapshot = SliceTopology();
  Request request = CpuRequest(12, Mode::kRequired, 0);
  request.slices = {{1, 4}};
  PlaceResult result = snapshot.Place(request, Profile::Mixed());
  EXPECT_FALSE(result.ok);
  EXPECT_EQ(result.fit, 8);
  EXPECT_EQ(
      result.message,
      "topology \"T\" allows to fit only 2 out of 3 slice(s) in one domain of level \"block\"");
  Request big = CpuRequest(14, Mode::kRequired, 1);
  big.slices = {{1, 7}};
  result = snapshot.Place(big, Profile::Mixed());
  EXPECT_FALSE(result.ok);
  EXPECT_EQ(result.message, "topology \"T\" doesn't allow to fit any of 2 slice(s)");
  // The cluster has room for 24 pods but only for 4 slices of 4 (one per rack).
  Request spread = CpuRequest(24, Mode::kPreferred, 1);
  spread.slices = {{1, 4}};
  result = snapshot.Place(spread, Profile::Mixed());
  EXPECT_FALSE(result.ok);
  EXPECT_EQ(result.message, "topology \"T\" allows to fit only 4 out of 6 slice(s)");
}

// Two layers: slices of 8 per rack made of pairs per host. A host with 3 cpu
// gives the rack one pair, so a rack of four such hosts holds one slice of 8
// and not 12 pods.
TEST(SlicesTest, MultiLayerSlices) {
  std::vector<Node> nodes;
  for (const char* rack : {"r1", "r2"}) {
    for (const char* host : {"-h1", "-h2", "-h3", "-h4"}) {
      nodes.push_back(MakeNode(BlockRackHost(), {"b", rack, std::string(rack) + host}, 3));
    }
  }
  Snapshot snapshot("T", BlockRackHost(), nodes);
  Request request = CpuRequest(16, Mode::kRequired, 0);
  request.slices = {{1, 8}, {2, 2}};
  PlaceResult result = snapshot.Place(request, Profile::Mixed());
  ASSERT_TRUE(result.ok) << result.message;
  EXPECT_EQ(AsRackLists(result.assignment, {{3, 3, 3, 3}, {3, 3, 3, 3}}),
            (Lists{{2, 2, 2, 2}, {2, 2, 2, 2}}));

  Request twelve = CpuRequest(12, Mode::kRequired, 1);
  twelve.slices = {{1, 12}, {2, 2}};
  result = snapshot.Place(twelve, Profile::Mixed());
  EXPECT_FALSE(result.ok);
  EXPECT_EQ(result.message, "topology \"T\" doesn't allow to fit any of 1 slice(s)");
  twelve.slices = {{1, 12}};  // one layer: 12 pods per rack fit
  EXPECT_TRUE(snapshot.Place(twelve, Profile::Mixed()).ok);
}

// ---- Node filters ----

// One rack: h1 pool=a, h2 pool=b, h3 pool=b with a NoSchedule taint, h4
// pool=a with a PreferNoSchedule taint (ignored); 4 cpu each.
Snapshot FilterTopology() {
  std::vector<Node> nodes;
  const char* pools[] = {"a", "b", "b", "a"};
  for (int i = 0; i < 4; ++i) {
    Node n = MakeNode(BlockRackHost(), {"b", "r1", "r1-h" + std::to_string(i + 1)}, 4);
    n.labels["pool"] = pools[i];
    nodes.push_back(std::move(n));
  }
  nodes[2].taints.push_back({"dedicated", "x", api::core_v1::TaintEffect::kNoSchedule, ""});
  nodes[3].taints.push_back({"soft", "", api::core_v1::TaintEffect::kPreferNoSchedule, ""});
  return Snapshot("T", BlockRackHost(), nodes);
}

TEST(FiltersTest, NodeSelector) {
  Snapshot snapshot = FilterTopology();
  Request request = CpuRequest(4, Mode::kUnconstrained);
  request.node_selector = {{"pool", "b"}};
  PlaceResult result = snapshot.Place(request, Profile::Mixed());
  ASSERT_TRUE(result.ok) << result.message;
  EXPECT_EQ(AsRackLists(result.assignment, {{4, 4, 4, 4}}), (Lists{{0, 4, 0, 0}}));
  request.count = 5;
  result = snapshot.Place(request, Profile::Mixed());
  EXPECT_FALSE(result.ok);
  EXPECT_EQ(result.message, "topology \"T\" allows to fit only 4 out of 5 pod(s)");
}

TEST(FiltersTest, TaintsAndTolerations) {
  Snapshot snapshot = FilterTopology();
  Request request = CpuRequest(13, Mode::kUnconstrained);
  PlaceResult result = snapshot.Place(request, Profile::Mixed());
  EXPECT_FALSE(result.ok);
  EXPECT_EQ(result.fit, 12);  // h3 is tainted
  request.tolerations.push_back(
      {"dedicated", api::core_v1::TolerationOperator::kExists, "", std::nullopt, {}});
  result = snapshot.Place(request, Profile::Mixed());
  ASSERT_TRUE(result.ok) << result.message;
  EXPECT_EQ(TotalPods(result.assignment), 13);
}

TEST(FiltersTest, RequiredAffinityTermsAreOredRequirementsAnded) {
  Snapshot snapshot = FilterTopology();
  using api::labels::Operator;
  using api::labels::Requirement;
  Request request = CpuRequest(8, Mode::kUnconstrained);
  // (pool in (a) and hostname != r1-h1) or (pool in (b)): h2, h4 (h3 tainted).
  request.required_affinity = {{Requirement{"pool", Operator::kIn, {"a"}},
                                Requirement{kHostname, Operator::kNotIn, {"r1-h1"}}},
                               {Requirement{"pool", Operator::kIn, {"b"}}}};
  PlaceResult result = snapshot.Place(request, Profile::Mixed());
  ASSERT_TRUE(result.ok) << result.message;
  EXPECT_EQ(AsRackLists(result.assignment, {{4, 4, 4, 4}}), (Lists{{0, 4, 0, 4}}));
  request.required_affinity = {{}};  // an empty term matches no node
  EXPECT_EQ(snapshot.Place(request, Profile::Mixed()).message,
            "topology \"T\" doesn't allow to fit any of 8 pod(s)");
}

// ---- Conformance: invariants every strategy keeps ----

class ConformanceTest : public ::testing::TestWithParam<Algorithm> {};

Request RandomRequest(std::mt19937& rng, int depth) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  Request r = CpuRequest(pick(1, 30), static_cast<Mode>(pick(0, 2)), pick(0, depth - 1));
  const int top = r.mode == Mode::kUnconstrained ? 0 : r.level;
  const int shape = pick(0, 9);
  if (shape < 3) {
    const int size = pick(2, 3);
    r.slices = {{pick(top, depth - 1), size}};
    r.count = size * pick(1, 8);
  } else if (shape == 3 && top + 1 < depth) {
    const int outer = pick(top, depth - 2);
    r.slices = {{outer, 4}, {pick(outer + 1, depth - 1), 2}};
    r.count = 4 * pick(1, 5);
  } else if (shape == 4 && top + 2 < depth) {
    // Three layers (Kueue's most): 8 pods, then 4, then 2, each a level lower.
    const int outer = pick(top, depth - 3);
    const int middle = pick(outer + 1, depth - 2);
    r.slices = {{outer, 8}, {middle, 4}, {pick(middle + 1, depth - 1), 2}};
    r.count = 8 * pick(1, 3);
  }
  if (pick(0, 4) == 0) r.node_selector = {{"pool", "a"}};
  if (pick(0, 2) == 0) {
    r.tolerations.push_back(
        {"dedicated", api::core_v1::TolerationOperator::kEqual, "x", std::nullopt, {}});
  }
  if (pick(0, 9) == 0) {
    r.required_affinity = {
        {api::labels::Requirement{"pool", api::labels::Operator::kNotIn, {"b"}}}};
  }
  return r;
}

// The brute-force model: pods that fit each leaf, from the nodes of the leaf
// that pass the request's filters (NodeEligible), less the leaf's TAS usage.
std::map<std::vector<std::string>, int64_t> LeafCapacities(const Snapshot& snapshot,
                                                           const std::vector<Node>& nodes,
                                                           const Request& r, bool ignore_usage) {
  struct Sums {
    Amount all_cpu = 0, all_slots = 0, cpu = 0, slots = 0;
  };
  std::map<std::vector<std::string>, Sums> sums;
  for (const Node& n : nodes) {
    Sums& leaf = sums[n.values];
    leaf.all_cpu += n.free.at("cpu");
    leaf.all_slots += n.free.at("pods");
    if (NodeEligible(n, r)) {
      leaf.cpu += n.free.at("cpu");
      leaf.slots += n.free.at("pods");
    }
  }
  std::map<std::vector<std::string>, int64_t> capacity;
  for (const auto& [values, leaf] : sums) {
    Amount used_cpu = 0, used_slots = 0;
    if (!ignore_usage) {
      const auto free = snapshot.FreeOf(values);
      used_cpu = leaf.all_cpu - free.at("cpu");
      used_slots = leaf.all_slots - free.at("pods");
    }
    capacity[values] = std::max<int64_t>(
        0, std::min((leaf.cpu - used_cpu) / kCore, (leaf.slots - used_slots) / kSlot));
  }
  return capacity;
}

bool SamePrefix(const std::vector<std::string>& a, const std::vector<std::string>& b, int level) {
  return std::equal(a.begin(), a.begin() + level + 1, b.begin());
}

void CheckInvariants(const Snapshot& snapshot, const Scenario& s, const Request& r,
                     bool ignore_usage, const PlaceResult& result) {
  const int depth = static_cast<int>(s.levels.size());
  std::map<std::vector<std::string>, int64_t> capacity =
      LeafCapacities(snapshot, s.nodes, r, ignore_usage);
  if (result.ok) {
    EXPECT_EQ(TotalPods(result.assignment), r.count);
    for (size_t i = 0; i < result.assignment.domains.size(); ++i) {
      const DomainCount& d = result.assignment.domains[i];
      EXPECT_GT(d.count, 0);
      ASSERT_EQ(capacity.count(d.values), 1u);
      EXPECT_LE(d.count, capacity[d.values]) << d.values.back();
      if (i > 0) {
        EXPECT_LT(result.assignment.domains[i - 1].values, d.values);
      }
      if (r.mode == Mode::kRequired) {
        EXPECT_TRUE(SamePrefix(d.values, result.assignment.domains[0].values, r.level));
      }
    }
    // Pod ranks fill the leaves in order; each slice of each layer is inside one domain.
    std::vector<const std::vector<std::string>*> ranks;
    for (const DomainCount& d : result.assignment.domains)
      ranks.insert(ranks.end(), d.count, &d.values);
    for (const SliceLayer& layer : r.slices) {
      for (size_t first = 0; first < ranks.size(); first += layer.size) {
        for (int k = 1; k < layer.size; ++k) {
          EXPECT_TRUE(SamePrefix(*ranks[first], *ranks[first + k], layer.level))
              << "slice at rank " << first;
        }
      }
    }
    return;
  }
  EXPECT_EQ(result.message.rfind("topology \"T\" ", 0), 0u) << result.message;
  EXPECT_GE(result.fit, 0);
  EXPECT_LT(result.fit, r.count);
  if (r.slices.size() > 1) return;
  // A placement was possible exactly when the model says so.
  const int slice_level = r.slices.empty() ? depth - 1 : r.slices[0].level;
  const int64_t slice_size = r.slices.empty() ? 1 : r.slices[0].size;
  std::map<std::vector<std::string>, int64_t> slice_domain_pods;
  for (const auto& [values, pods] : capacity) {
    slice_domain_pods[std::vector<std::string>(values.begin(), values.begin() + slice_level + 1)] +=
        pods;
  }
  std::map<std::vector<std::string>, int64_t> slices_per_level_domain;
  int64_t total_slices = 0;
  for (const auto& [values, pods] : slice_domain_pods) {
    total_slices += pods / slice_size;
    if (r.mode == Mode::kRequired) {
      slices_per_level_domain[std::vector<std::string>(
          values.begin(), values.begin() + r.level + 1)] += pods / slice_size;
    }
  }
  const int64_t need = r.count / slice_size;
  if (r.mode == Mode::kRequired) {
    for (const auto& [values, slices] : slices_per_level_domain)
      EXPECT_LT(slices, need) << values.back();
  } else {
    EXPECT_LT(total_slices, need) << result.message;
  }
}

TEST_P(ConformanceTest, RandomTopologiesKeepTheInvariants) {
  const Profile profile = Only(GetParam());
  int placed = 0, refused = 0, sliced = 0;
  for (uint32_t seed = 1; seed <= 300; ++seed) {
    std::mt19937 rng(seed);
    Scenario s = RandomScenario(rng);
    Snapshot snapshot("T", s.levels, s.nodes);
    // Some usage first: a placement of the snapshot's own.
    Request earlier = RandomRequest(rng, static_cast<int>(s.levels.size()));
    PlaceResult used = snapshot.Place(earlier, Profile::Mixed());
    if (used.ok) snapshot.AddUsage(used.assignment, earlier.per_pod, +1);
    for (int i = 0; i < 5; ++i) {
      SCOPED_TRACE(::testing::Message() << "seed " << seed << " request " << i);
      const Request r = RandomRequest(rng, static_cast<int>(s.levels.size()));
      const bool ignore_usage = i == 4;
      const PlaceResult result = snapshot.Place(r, profile, {.ignore_usage = ignore_usage});
      CheckInvariants(snapshot, s, r, ignore_usage, result);
      (result.ok ? placed : refused) += 1;
      sliced += result.ok && !r.slices.empty() ? 1 : 0;
      // Deterministic: the same answer again, and from a snapshot built in another node order.
      const PlaceResult again = snapshot.Place(r, profile, {.ignore_usage = ignore_usage});
      EXPECT_EQ(again.ok, result.ok);
      EXPECT_EQ(again.assignment, result.assignment);
      EXPECT_EQ(again.message, result.message);
    }
  }
  // The generator exercises both answers, slices included.
  EXPECT_GT(placed, 300);
  EXPECT_GT(refused, 200);
  EXPECT_GT(sliced, 100);
}

TEST_P(ConformanceTest, NodeOrderDoesNotMatter) {
  std::mt19937 rng(7);
  Scenario s = RandomScenario(rng);
  Snapshot first("T", s.levels, s.nodes);
  std::reverse(s.nodes.begin(), s.nodes.end());
  Snapshot second("T", s.levels, s.nodes);
  for (int i = 0; i < 50; ++i) {
    const Request r = RandomRequest(rng, static_cast<int>(s.levels.size()));
    const PlaceResult a = first.Place(r, Only(GetParam()));
    const PlaceResult b = second.Place(r, Only(GetParam()));
    EXPECT_EQ(a.assignment, b.assignment);
    EXPECT_EQ(a.message, b.message);
  }
}

TEST_P(ConformanceTest, AddUsageRoundTripsAndBlocksThePlacedPods) {
  Snapshot snapshot = Nested();
  const Request request = CpuRequest(20, Mode::kPreferred, 1);
  const PlaceResult result = snapshot.Place(request, Only(GetParam()));
  ASSERT_TRUE(result.ok) << result.message;
  std::map<std::vector<std::string>, std::map<std::string, Amount>> before;
  for (const DomainCount& d : result.assignment.domains)
    before[d.values] = snapshot.FreeOf(d.values);
  snapshot.AddUsage(result.assignment, request.per_pod, +1);
  for (const DomainCount& d : result.assignment.domains) {
    EXPECT_EQ(snapshot.FreeOf(d.values).at("cpu"), before[d.values].at("cpu") - d.count * kCore);
    EXPECT_EQ(snapshot.FreeOf(d.values).at("pods"), before[d.values].at("pods") - d.count * kSlot);
  }
  // The cluster holds 64; 44 are left, and the placed pods' leaves are not reused beyond capacity.
  PlaceResult rest = snapshot.Place(CpuRequest(44, Mode::kUnconstrained), Only(GetParam()));
  EXPECT_TRUE(rest.ok) << rest.message;
  EXPECT_FALSE(snapshot.Place(CpuRequest(45, Mode::kUnconstrained), Only(GetParam())).ok);
  snapshot.AddUsage(result.assignment, request.per_pod, -1);
  for (const DomainCount& d : result.assignment.domains)
    EXPECT_EQ(snapshot.FreeOf(d.values), before[d.values]);
}

TEST_P(ConformanceTest, RequiredIsAllInOneDomainOrNotAtAll) {
  Snapshot snapshot = ThreeRacks();
  for (int count = 1; count <= 20; ++count) {
    const PlaceResult result =
        snapshot.Place(CpuRequest(count, Mode::kRequired, 1), Only(GetParam()));
    if (count <= 8) {
      ASSERT_TRUE(result.ok) << count;
      EXPECT_EQ(PodsPer(result.assignment, 1).size(), 1u) << count;
    } else {
      EXPECT_FALSE(result.ok);
      EXPECT_EQ(result.message, "topology \"T\" allows to fit only 8 out of " +
                                    std::to_string(count) +
                                    " pod(s) in one domain of level \"rack\"");
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllAlgorithms, ConformanceTest,
                         ::testing::Values(Algorithm::kBestFit, Algorithm::kLeastFreeCapacity,
                                           Algorithm::kBalanced),
                         [](const ::testing::TestParamInfo<Algorithm>& info) {
                           return testing::AlgorithmName(info.param);
                         });

}  // namespace
}  // namespace batchd::queueing::topology
