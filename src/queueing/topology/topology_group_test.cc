// Pod set groups in the topology library (Kueue's podset-group-name: a
// leader pod placed with its workers): the leader and the workers share one
// domain of the requested level, the leader's own filters and requests
// count, messages count the leader, and a conformance suite over every
// Algorithm checks random groups against a brute-force model.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>
#include <vector>

#include "queueing/topology/topology.h"
#include "queueing/topology/topology_test_util.h"

namespace batchd::queueing::topology {
namespace {

using testing::AlgorithmName;
using testing::CpuRequest;
using testing::kCore;
using testing::kSlot;
using testing::NodeEligible;
using testing::Only;
using testing::PodsPer;
using testing::RackListNodes;
using testing::RackListSnapshot;
using testing::RandomScenario;
using testing::Scenario;
using testing::TotalPods;

Request Group(int32_t workers, Mode mode, int level, int64_t leader_cores) {
  Request r = CpuRequest(workers, mode, level);
  r.leader = Leader{};
  r.leader->per_pod = {{"cpu", leader_cores * kCore}};
  return r;
}

TEST(GroupTest, ValidationNeedsALevelAndNoSlices) {
  const std::vector<std::string> levels = {"block", "rack", testing::kHostname};
  EXPECT_EQ(ValidateRequest(levels, Group(4, Mode::kRequired, 1, 1)), "");
  EXPECT_EQ(ValidateRequest(levels, Group(4, Mode::kUnconstrained, 0, 1)),
            "a pod set group needs a required or preferred level");
  Request sliced = Group(4, Mode::kRequired, 1, 1);
  sliced.slices = {{2, 2}};
  EXPECT_EQ(ValidateRequest(levels, sliced), "a pod set group cannot be sliced");
}

TEST(GroupTest, LeaderAndWorkersShareTheRack) {
  // Rack r1 holds 8 cores, r2 7: six 1-core workers and a 2-core leader need 8.
  Snapshot snapshot = RackListSnapshot({{4, 4}, {4, 3}});
  PlaceResult result = snapshot.Place(Group(6, Mode::kRequired, 1, 2), Profile::Mixed());
  ASSERT_TRUE(result.ok) << result.message;
  EXPECT_EQ(PodsPer(result.assignment, 1), (std::map<std::string, int>{{"r1", 6}}));
  ASSERT_EQ(result.leader_assignment.domains.size(), 1u);
  EXPECT_EQ(result.leader_assignment.domains[0].values[1], "r1");
  EXPECT_EQ(result.leader_assignment.domains[0].count, 1);
  // The leader's host keeps 2 cores for it.
  const std::string leader_host = result.leader_assignment.domains[0].values[2];
  for (const DomainCount& d : result.assignment.domains) {
    EXPECT_LE(d.count, d.values[2] == leader_host ? 2 : 4) << d.values[2];
  }
}

TEST(GroupTest, TheLeadersFiltersPickTheDomain) {
  std::vector<Node> nodes = RackListNodes({{4, 4}, {4, 4}});
  nodes[3].labels["role"] = "leader";  // r2-h2 only
  Snapshot snapshot("T", testing::BlockRackHost(), nodes);
  Request r = Group(4, Mode::kRequired, 1, 1);
  r.leader->node_selector = {{"role", "leader"}};
  PlaceResult result = snapshot.Place(r, Profile::Mixed());
  ASSERT_TRUE(result.ok) << result.message;
  EXPECT_EQ(result.leader_assignment.domains[0].values[2], "r2-h2");
  EXPECT_EQ(PodsPer(result.assignment, 1), (std::map<std::string, int>{{"r2", 4}}));
}

TEST(GroupTest, RequiredFailureCountsTheLeader) {
  Snapshot snapshot = RackListSnapshot({{4, 4}, {4, 3}});
  PlaceResult result = snapshot.Place(Group(8, Mode::kRequired, 1, 1), Profile::Mixed());
  EXPECT_FALSE(result.ok);
  EXPECT_EQ(result.message,
            "topology \"T\" allows to fit only 8 out of 9 pod(s) in one domain of level \"rack\"");
  EXPECT_EQ(result.fit, 8);
}

TEST(GroupTest, PreferredSpreadsFromTheLeadersDomain) {
  Snapshot snapshot = RackListSnapshot({{4, 4}, {4, 3}});
  PlaceResult result = snapshot.Place(Group(12, Mode::kPreferred, 1, 1), Profile::Mixed());
  ASSERT_TRUE(result.ok) << result.message;
  EXPECT_EQ(TotalPods(result.assignment), 12);
  EXPECT_FALSE(snapshot.Place(Group(15, Mode::kPreferred, 1, 1), Profile::Mixed()).ok)
      << "15 cores hold 14 workers and the leader, not 15";
}

TEST(GroupTest, UsageOfTheLeaderCounts) {
  Snapshot snapshot = RackListSnapshot({{2}, {2}});
  Request r = Group(1, Mode::kRequired, 1, 1);
  PlaceResult first = snapshot.Place(r, Profile::Mixed());
  ASSERT_TRUE(first.ok);
  snapshot.AddUsage(first.assignment, r.per_pod, +1);
  snapshot.AddUsage(first.leader_assignment, r.leader->per_pod, +1);
  PlaceResult second = snapshot.Place(r, Profile::Mixed());
  ASSERT_TRUE(second.ok);
  EXPECT_NE(second.leader_assignment.domains[0].values[1],
            first.leader_assignment.domains[0].values[1]);
  snapshot.AddUsage(second.assignment, r.per_pod, +1);
  snapshot.AddUsage(second.leader_assignment, r.leader->per_pod, +1);
  EXPECT_FALSE(snapshot.Place(Group(0, Mode::kRequired, 1, 1), Profile::Mixed()).ok)
      << "not even a lone leader is left room";
}

// ---- Conformance: every strategy keeps a group together ----

class GroupConformanceTest : public ::testing::TestWithParam<Algorithm> {};

Request RandomGroup(std::mt19937& rng, int depth) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  Request r = Group(pick(0, 20), pick(0, 1) == 0 ? Mode::kRequired : Mode::kPreferred,
                    pick(0, depth - 1), pick(0, 3));
  if (pick(0, 3) == 0) r.node_selector = {{"pool", "a"}};
  if (pick(0, 3) == 0) r.leader->node_selector = {{"pool", "b"}};
  if (pick(0, 2) == 0) {
    r.leader->tolerations.push_back(
        {"dedicated", api::core_v1::TolerationOperator::kEqual, "x", std::nullopt, {}});
  }
  return r;
}

// The model, per leaf: how many workers it takes alone and with the leader,
// and whether the leader fits (nodes aggregated per leaf, as the library does).
struct LeafModel {
  int64_t workers = 0;
  int64_t with_leader = 0;
  bool leader = false;
};

std::map<std::vector<std::string>, LeafModel> Model(const Snapshot& snapshot,
                                                    const std::vector<Node>& nodes,
                                                    const Request& r) {
  struct Sums {
    Amount all_cpu = 0, all_slots = 0, cpu = 0, slots = 0, leader_cpu = 0, leader_slots = 0;
    bool any_leader = false, shared = false;
  };
  std::map<std::vector<std::string>, Sums> sums;
  for (const Node& n : nodes) {
    Sums& s = sums[n.values];
    s.all_cpu += n.free.at("cpu");
    s.all_slots += n.free.at("pods");
    const bool w = NodeEligible(n, r);
    const bool l = NodeEligible(n, r.leader->node_selector, r.leader->required_affinity,
                                r.leader->tolerations);
    if (w) s.cpu += n.free.at("cpu"), s.slots += n.free.at("pods");
    if (l) s.leader_cpu += n.free.at("cpu"), s.leader_slots += n.free.at("pods");
    s.any_leader = s.any_leader || l;
    s.shared = s.shared || (w && l);
  }
  const Amount leader_cpu = r.leader->per_pod.at("cpu");
  std::map<std::vector<std::string>, LeafModel> out;
  for (const auto& [values, s] : sums) {
    const auto free = snapshot.FreeOf(values);
    const Amount used_cpu = s.all_cpu - free.at("cpu"), used_slots = s.all_slots - free.at("pods");
    auto fit = [&](Amount cpu, Amount slots) {
      return std::max<int64_t>(0, std::min(cpu / kCore, slots / kSlot));
    };
    LeafModel m;
    m.workers = fit(s.cpu - used_cpu, s.slots - used_slots);
    m.leader = s.any_leader && (leader_cpu == 0 || s.leader_cpu - used_cpu >= leader_cpu) &&
               s.leader_slots - used_slots >= kSlot;
    m.with_leader = !s.shared ? m.workers
                              : std::min(m.workers, fit(s.cpu - used_cpu - leader_cpu,
                                                        s.slots - used_slots - kSlot));
    out[values] = m;
  }
  return out;
}

bool SamePrefix(const std::vector<std::string>& a, const std::vector<std::string>& b, int level) {
  return std::equal(a.begin(), a.begin() + level + 1, b.begin());
}

void CheckGroup(const Snapshot& snapshot, const Scenario& s, const Request& r,
                const PlaceResult& result) {
  const std::map<std::vector<std::string>, LeafModel> model = Model(snapshot, s.nodes, r);
  if (result.ok) {
    ASSERT_EQ(result.leader_assignment.domains.size(), 1u);
    const DomainCount& leader = result.leader_assignment.domains[0];
    EXPECT_EQ(leader.count, 1);
    ASSERT_EQ(model.count(leader.values), 1u);
    EXPECT_TRUE(model.at(leader.values).leader);
    EXPECT_EQ(TotalPods(result.assignment), r.count);
    for (const DomainCount& d : result.assignment.domains) {
      const LeafModel& m = model.at(d.values);
      EXPECT_LE(d.count, d.values == leader.values ? m.with_leader : m.workers);
      if (r.mode == Mode::kRequired) {
        EXPECT_TRUE(SamePrefix(d.values, leader.values, r.level));
      }
    }
    return;
  }
  EXPECT_EQ(result.message.rfind("topology \"T\" ", 0), 0u) << result.message;
  EXPECT_LT(result.fit, r.count + 1);
  // No leaf for the leader leaves room for the workers in its domain (of the
  // level when required, of the whole topology when preferred).
  const int level = r.mode == Mode::kRequired ? r.level : -1;
  for (const auto& [values, leaf] : model) {
    if (!leaf.leader) continue;
    int64_t room = 0;
    for (const auto& [other, m] : model) {
      if (level >= 0 && !SamePrefix(values, other, level)) continue;
      room += other == values ? m.with_leader : m.workers;
    }
    EXPECT_LT(room, r.count) << "the leader would fit on " << values.back();
  }
}

TEST_P(GroupConformanceTest, RandomGroupsStayTogether) {
  const Profile profile = Only(GetParam());
  int placed = 0, refused = 0;
  for (uint32_t seed = 1; seed <= 300; ++seed) {
    std::mt19937 rng(seed);
    Scenario s = RandomScenario(rng);
    Snapshot snapshot("T", s.levels, s.nodes);
    const int depth = static_cast<int>(s.levels.size());
    Request earlier = RandomGroup(rng, depth);  // some usage first
    PlaceResult used = snapshot.Place(earlier, Profile::Mixed());
    if (used.ok) {
      snapshot.AddUsage(used.assignment, earlier.per_pod, +1);
      snapshot.AddUsage(used.leader_assignment, earlier.leader->per_pod, +1);
    }
    for (int i = 0; i < 4; ++i) {
      SCOPED_TRACE(::testing::Message() << "seed " << seed << " request " << i);
      const Request r = RandomGroup(rng, depth);
      const PlaceResult result = snapshot.Place(r, profile);
      CheckGroup(snapshot, s, r, result);
      (result.ok ? placed : refused) += 1;
    }
  }
  EXPECT_GT(placed, 200);
  EXPECT_GT(refused, 200);
}

INSTANTIATE_TEST_SUITE_P(AllAlgorithms, GroupConformanceTest,
                         ::testing::Values(Algorithm::kBestFit, Algorithm::kLeastFreeCapacity,
                                           Algorithm::kBalanced),
                         [](const ::testing::TestParamInfo<Algorithm>& info) {
                           return AlgorithmName(info.param);
                         });

}  // namespace
}  // namespace batchd::queueing::topology
