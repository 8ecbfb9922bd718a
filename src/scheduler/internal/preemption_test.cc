// Unit tests of victim selection and node choice (preemption.h) on a cache
// built in the test: no scheduler, no clock.
#include "scheduler/internal/preemption.h"

#include "absl/strings/str_join.h"
#include "gtest/gtest.h"

namespace batchd::scheduler::internal {
namespace {

using api::Json;

Json Node(const std::string& name, const std::string& cpu, Json taints = Json::array()) {
  return {{"metadata", {{"name", name}}},
          {"spec", {{"taints", taints}}},
          {"status",
           {{"allocatable", {{"cpu", cpu}, {"memory", "8Gi"}, {"pods", "110"}}},
            {"conditions", Json::array({{{"type", "Ready"}, {"status", "True"}}})}}}};
}

// A pod of `cpu` at `priority`, created at second `created`.
Json Pod(const std::string& name, const std::string& cpu, int priority, int created = 0,
         Json extra_spec = Json::object()) {
  Json spec = {{"priority", priority},
               {"containers", Json::array({{{"name", "c"},
                                            {"resources", {{"requests", {{"cpu", cpu}}}}}}})}};
  spec.update(extra_spec);
  std::string ts = "2026-01-01T00:00:0" + std::to_string(created) + "Z";
  return {{"metadata", {{"name", name}, {"namespace", "ns"}, {"creationTimestamp", ts}}},
          {"spec", spec},
          {"status", {{"phase", "Pending"}}}};
}

class PreemptionTest : public ::testing::Test {
 protected:
  std::shared_ptr<const PodInfo> Parse(const Json& pod) {
    return ParsePod(pod, cache_.resources());
  }
  void Place(const Json& pod, const std::string& node) {
    cache_.AddPod(*Parse(pod), node, /*assumed=*/false);
  }
  // "node: a,b" or "none".
  std::string Find(const Json& pod) {
    auto info = Parse(pod);
    if (!EligibleToPreempt(cache_, *info)) return "ineligible";
    std::optional<Preemption> p = FindPreemption(cache_, *info, gangs_);
    if (!p.has_value()) return "none";
    std::vector<std::string> keys;
    for (const Victim& v : p->victims) keys.push_back(v.key);
    return p->node + ": " + absl::StrJoin(keys, ",");
  }
  // A member of PodGroup `group`, placed on `node` and listed in `gangs_`.
  void PlaceMember(const std::string& name, const std::string& group, const std::string& cpu,
                   int priority, const std::string& node) {
    Json pod = Pod(name, cpu, priority, 0, {{"schedulingGroup", {{"podGroupName", group}}}});
    Place(pod, node);
    gangs_["pg/ns/" + group].push_back("ns/" + name);
  }
  Cache cache_;
  Gangs gangs_;
};

TEST_F(PreemptionTest, LowestPriorityPodIsTheVictim) {
  cache_.UpsertNode(Node("n1", "2"));
  Place(Pod("low", "1", 1), "n1");
  Place(Pod("mid", "1", 5), "n1");
  EXPECT_EQ(Find(Pod("high", "1", 10)), "n1: ns/low");
}

TEST_F(PreemptionTest, EqualOrLowerPriorityPreemptsNothing) {
  cache_.UpsertNode(Node("n1", "2"));
  Place(Pod("a", "1", 5), "n1");
  Place(Pod("b", "1", 5), "n1");
  EXPECT_EQ(Find(Pod("same", "1", 5)), "ineligible");
  cache_.UpsertNode(Node("n2", "1"));
  Place(Pod("c", "1", 1), "n2");
  // Priority 5 outranks "c" but not "a"/"b"; n2 has the victim.
  EXPECT_EQ(Find(Pod("five", "1", 5)), "n2: ns/c");
}

TEST_F(PreemptionTest, PolicyNeverIsIneligible) {
  cache_.UpsertNode(Node("n1", "1"));
  Place(Pod("low", "1", 1), "n1");
  EXPECT_EQ(Find(Pod("high", "1", 10, 0, {{"preemptionPolicy", "Never"}})), "ineligible");
}

TEST_F(PreemptionTest, MinimalSetReprievesTheMostImportant) {
  cache_.UpsertNode(Node("n1", "4"));
  Place(Pod("p1", "1", 1), "n1");
  Place(Pod("p2", "1", 2), "n1");
  Place(Pod("big", "2", 3), "n1");
  // 2 cpu needed: removing p1+p2 suffices; "big" (priority 3) is reprieved.
  EXPECT_EQ(Find(Pod("high", "2", 10)), "n1: ns/p2,ns/p1");
  // 3 cpu needed: "big" and one small one; p2 (more important) is reprieved.
  EXPECT_EQ(Find(Pod("higher", "3", 10)), "n1: ns/big,ns/p1");
}

TEST_F(PreemptionTest, NodeOrder) {
  // Lowest highest-victim priority wins.
  cache_.UpsertNode(Node("a", "1"));
  cache_.UpsertNode(Node("b", "1"));
  Place(Pod("on-a", "1", 5), "a");
  Place(Pod("on-b", "1", 3), "b");
  EXPECT_EQ(Find(Pod("high", "1", 10)), "b: ns/on-b");
}

TEST_F(PreemptionTest, NodeOrderFewerVictimsThenLaterStartThenName) {
  cache_.UpsertNode(Node("a", "2"));
  cache_.UpsertNode(Node("b", "2"));
  cache_.UpsertNode(Node("c", "2"));
  // a: two victims of priority 0 (sum equal to one victim of 0? no: offset sum is larger).
  Place(Pod("a1", "1", 0), "a");
  Place(Pod("a2", "1", 0), "a");
  Place(Pod("b1", "2", 0, 1), "b");  // One victim, started at 1s.
  Place(Pod("c1", "2", 0, 3), "c");  // One victim, started at 3s: later wins.
  EXPECT_EQ(Find(Pod("high", "2", 10)), "c: ns/c1");
}

TEST_F(PreemptionTest, UnresolvableNodesAreSkipped) {
  cache_.UpsertNode(Node("tainted", "1", Json::array({{{"key", "k"}, {"effect", "NoSchedule"}}})));
  Place(Pod("low", "1", 1), "tainted");
  EXPECT_EQ(Find(Pod("high", "1", 10)), "none");
}

// Never a part of a gang without the whole gang: taking the member on n1
// takes its partner on n2 too, and the pair costs two victims when nodes
// are compared.
TEST_F(PreemptionTest, GangIsAVictimOnlyWhole) {
  cache_.UpsertNode(Node("n1", "2"));
  cache_.UpsertNode(Node("n2", "1"));
  PlaceMember("m1", "g", "1", 1, "n1");
  PlaceMember("m2", "g", "1", 1, "n2");
  Place(Pod("loner", "1", 2), "n1");
  // One cpu: the loner (priority 2) is reprieved before the gang (priority
  // 1), which goes whole; n1 and n2 then tie (the same two victims) and the
  // name decides.
  EXPECT_EQ(Find(Pod("high", "1", 10)), "n1: ns/m1,ns/m2");
  // Two cpu on n1: the gang and the loner.
  EXPECT_EQ(Find(Pod("wide", "2", 10)), "n1: ns/loner,ns/m1,ns/m2");
}

TEST_F(PreemptionTest, GangWithAMemberOfHigherPriorityIsNoCandidate) {
  cache_.UpsertNode(Node("n1", "1"));
  cache_.UpsertNode(Node("n2", "1"));
  PlaceMember("m1", "g", "1", 1, "n1");
  PlaceMember("m2", "g", "1", 20, "n2");  // Outranks the preemptor: the gang stays.
  EXPECT_EQ(Find(Pod("high", "1", 10)), "none");
  // A basic-policy group (not in `gangs_`) is preempted pod by pod.
  Place(Pod("basic", "1", 1, 0, {{"schedulingGroup", {{"podGroupName", "b"}}}}), "n2");
  cache_.UpsertNode(Node("n3", "1"));
  Place(Pod("b2", "1", 1, 0, {{"schedulingGroup", {{"podGroupName", "b"}}}}), "n3");
  EXPECT_EQ(Find(Pod("high", "1", 10)), "n3: ns/b2");
}

TEST_F(PreemptionTest, ReprieveKeepsAWholeGangWhenASingleVictimSuffices) {
  cache_.UpsertNode(Node("n1", "3"));
  PlaceMember("m1", "g", "1", 5, "n1");
  PlaceMember("m2", "g", "1", 5, "n1");
  Place(Pod("low", "1", 1), "n1");
  // One cpu: the gang (more important) is reprieved, the loner goes.
  EXPECT_EQ(Find(Pod("high", "1", 10)), "n1: ns/low");
  // Two cpu: keeping the gang leaves one cpu, too little, so it goes whole;
  // with its two cpu free the loner is reprieved.
  EXPECT_EQ(Find(Pod("wide", "2", 10)), "n1: ns/m1,ns/m2");
}

TEST_F(PreemptionTest, TerminatingVictimsAreWaitedFor) {
  cache_.UpsertNode(Node("n1", "1"));
  Place(Pod("low", "1", 1), "n1");
  auto high = Parse(Pod("high", "1", 10));
  ASSERT_EQ(Find(Pod("high", "1", 10)), "n1: ns/low");
  cache_.Nominate(*high, "n1");
  cache_.MarkDeleting("ns/low");
  EXPECT_EQ(PreemptionEligibility(cache_, *high),
            Eligibility::kTerminatingOnNominated);  // Its room is coming.
}

TEST_F(PreemptionTest, NominatedPodKeepsItsRoomFromLowerPriority) {
  cache_.UpsertNode(Node("n1", "1"));
  auto high = Parse(Pod("high", "1", 10));
  cache_.Nominate(*high, "n1");
  EXPECT_EQ(cache_.Schedule(*Parse(Pod("low", "1", 1))).node, "");
  EXPECT_EQ(cache_.Schedule(*Parse(Pod("equal", "1", 10))).node, "");
  EXPECT_EQ(cache_.Schedule(*Parse(Pod("higher", "1", 11))).node, "n1");
  EXPECT_EQ(cache_.Schedule(*high).node, "n1");  // Its own nomination is no obstacle.
  cache_.AddPod(*high, "n1", /*assumed=*/true);  // Placing it ends the nomination.
  EXPECT_EQ(cache_.NominatedNodeOf("ns/high"), "");
}

}  // namespace
}  // namespace batchd::scheduler::internal
