// Balanced placement: the KEP's worked examples (block/rack/hostname, one
// block, preferred=rack; each inner list is the node capacities of one rack),
// and its fallback to BestFit.
#include <gtest/gtest.h>

#include <cstdio>

#include "queueing/topology/topology.h"
#include "queueing/topology/topology_test_util.h"

namespace batchd::queueing::topology {
namespace {

using testing::AsRackLists;
using testing::CpuRequest;
using testing::RackListSnapshot;

struct KepExample {
  std::vector<std::vector<int>> racks;
  int32_t count;
  std::vector<std::vector<int>> want;
};

class BalancedKepExample : public ::testing::TestWithParam<KepExample> {};

TEST_P(BalancedKepExample, PlacesAsTheKepSays) {
  const KepExample& example = GetParam();
  Snapshot snapshot = RackListSnapshot(example.racks);
  PlaceResult result =
      snapshot.Place(CpuRequest(example.count, Mode::kPreferred, 1), Profile::Balanced());
  ASSERT_TRUE(result.ok) << result.message;
  EXPECT_EQ(AsRackLists(result.assignment, example.racks), example.want);
}

INSTANTIATE_TEST_SUITE_P(Kep2724, BalancedKepExample,
                         ::testing::Values(KepExample{{{15}, {15}}, 25, {{13}, {12}}},
                                           KepExample{{{15, 13, 10}}, 23, {{12, 11, 0}}},
                                           KepExample{{{20, 10}, {15, 15}}, 22, {{0, 0}, {11, 11}}},
                                           KepExample{{{20, 10}, {15, 15}}, 20, {{20, 0}, {0, 0}}},
                                           KepExample{
                                               {{10, 5}, {5, 5, 5}}, 15, {{0, 0}, {5, 5, 5}}}));

// BestFit on the same examples packs instead: the contrast the KEP draws.
TEST(BalancedTest, BestFitPacksTheKepExamples) {
  Snapshot snapshot = RackListSnapshot({{15}, {15}});
  PlaceResult result = snapshot.Place(CpuRequest(25, Mode::kPreferred, 1), Profile::Mixed());
  ASSERT_TRUE(result.ok) << result.message;
  EXPECT_EQ(AsRackLists(result.assignment, {{15}, {15}}),
            (std::vector<std::vector<int>>{{15}, {10}}));

  Snapshot one_rack = RackListSnapshot({{15, 13, 10}});
  result = one_rack.Place(CpuRequest(23, Mode::kPreferred, 1), Profile::Mixed());
  ASSERT_TRUE(result.ok) << result.message;
  // 15 first, then the tightest host for the other 8: the 10.
  EXPECT_EQ(AsRackLists(result.assignment, {{15, 13, 10}}),
            (std::vector<std::vector<int>>{{15, 0, 8}}));
}

// No block holds the request: Balanced falls back to BestFit's spread.
TEST(BalancedTest, FallsBackToBestFitWhenNoDomainAboveHoldsTheRequest) {
  std::vector<Node> nodes;
  const auto levels = testing::BlockRackHost();
  nodes.push_back(testing::MakeNode(levels, {"b1", "r1", "h1"}, 4));
  nodes.push_back(testing::MakeNode(levels, {"b2", "r2", "h2"}, 4));
  Snapshot snapshot("T", levels, nodes);
  const Request request = CpuRequest(6, Mode::kPreferred, 1);
  PlaceResult balanced = snapshot.Place(request, Profile::Balanced());
  PlaceResult best_fit = snapshot.Place(request, Profile::Mixed());
  ASSERT_TRUE(balanced.ok) << balanced.message;
  EXPECT_EQ(balanced.assignment, best_fit.assignment);
  EXPECT_EQ(testing::TotalPods(balanced.assignment), 6);
}

// Required and unconstrained requests are never balanced.
TEST(BalancedTest, OnlyPreferredIsBalanced) {
  Snapshot snapshot = RackListSnapshot({{15}, {15}});
  const Profile all_balanced = testing::Only(Algorithm::kBalanced);
  PlaceResult required = snapshot.Place(CpuRequest(12, Mode::kRequired, 0), all_balanced);
  ASSERT_TRUE(required.ok) << required.message;
  EXPECT_EQ(AsRackLists(required.assignment, {{15}, {15}}),
            (std::vector<std::vector<int>>{{12}, {0}}));
  PlaceResult unconstrained = snapshot.Place(CpuRequest(20, Mode::kUnconstrained), all_balanced);
  ASSERT_TRUE(unconstrained.ok) << unconstrained.message;
  EXPECT_EQ(AsRackLists(unconstrained.assignment, {{15}, {15}}),
            (std::vector<std::vector<int>>{{15}, {5}}));
}

// The highest threshold wins across blocks: an even split in b2 beats a
// lopsided one in b1.
TEST(BalancedTest, PicksTheBlockWithTheHighestThreshold) {
  const auto levels = testing::BlockRackHost();
  std::vector<Node> nodes = {testing::MakeNode(levels, {"b1", "r1", "h1"}, 9),
                             testing::MakeNode(levels, {"b1", "r2", "h2"}, 3),
                             testing::MakeNode(levels, {"b2", "r3", "h3"}, 6),
                             testing::MakeNode(levels, {"b2", "r4", "h4"}, 6)};
  Snapshot snapshot("T", levels, nodes);
  PlaceResult result = snapshot.Place(CpuRequest(12, Mode::kPreferred, 1), Profile::Balanced());
  ASSERT_TRUE(result.ok) << result.message;
  EXPECT_EQ(testing::PodsPer(result.assignment, 1),
            (std::map<std::string, int>{{"r3", 6}, {"r4", 6}}));
}

// Balanced with slices of 2 pods per host: BestFit takes the first rack with
// room for 4 slices and packs it 6 + 2; Balanced prefers the rack whose
// hosts take 2 slices each.
TEST(BalancedTest, SpreadsWholeSlices) {
  const std::vector<std::vector<int>> racks = {{6, 2}, {4, 4}};
  Snapshot snapshot = RackListSnapshot(racks);
  Request request = CpuRequest(8, Mode::kPreferred, 1);
  request.slices = {{2, 2}};
  PlaceResult balanced = snapshot.Place(request, Profile::Balanced());
  ASSERT_TRUE(balanced.ok) << balanced.message;
  EXPECT_EQ(AsRackLists(balanced.assignment, racks),
            (std::vector<std::vector<int>>{{0, 0}, {4, 4}}));
  PlaceResult best_fit = snapshot.Place(request, Profile::Mixed());
  ASSERT_TRUE(best_fit.ok) << best_fit.message;
  EXPECT_EQ(AsRackLists(best_fit.assignment, racks),
            (std::vector<std::vector<int>>{{6, 2}, {0, 0}}));
}

// A request too large for the exact least-capacity search (1,500 one-pod
// hosts to choose) takes the largest hosts plus a tight fit instead: still
// balanced, still within capacity.
TEST(BalancedTest, LargeRequestsUseTheApproximateSet) {
  const auto levels = testing::BlockRackHost();
  std::vector<Node> nodes;
  for (const char* rack : {"r1", "r2"}) {
    for (int h = 0; h < 1000; ++h) {
      char host[32];
      std::snprintf(host, sizeof(host), "%s-h%04d", rack, h);
      nodes.push_back(testing::MakeNode(levels, {"b", rack, host}, 1));
    }
  }
  Snapshot snapshot("T", levels, nodes);
  PlaceResult result = snapshot.Place(CpuRequest(1500, Mode::kPreferred, 1), Profile::Balanced());
  ASSERT_TRUE(result.ok) << result.message;
  EXPECT_EQ(result.assignment.domains.size(), 1500u);
  for (const DomainCount& d : result.assignment.domains) EXPECT_EQ(d.count, 1);
  EXPECT_EQ(testing::PodsPer(result.assignment, 1),
            (std::map<std::string, int>{{"r1", 1000}, {"r2", 500}}));
}

}  // namespace
}  // namespace batchd::queueing::topology
