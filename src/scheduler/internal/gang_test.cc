// PlaceGang: all-or-nothing placement over the cache, and the group keys
// pods name.
#include "scheduler/internal/gang.h"

#include "gtest/gtest.h"

namespace batchd::scheduler::internal {
namespace {

using api::Json;

Json Node(const std::string& name, const std::string& cpu) {
  return {{"metadata", {{"name", name}}},
          {"status",
           {{"allocatable", {{"cpu", cpu}, {"memory", "8Gi"}, {"pods", "110"}}},
            {"conditions", Json::array({{{"type", "Ready"}, {"status", "True"}}})}}}};
}

std::vector<std::shared_ptr<const PodInfo>> Pods(Cache& cache, int n) {
  std::vector<std::shared_ptr<const PodInfo>> out;
  for (int i = 0; i < n; ++i) {
    Json pod = {{"metadata", {{"name", "p" + std::to_string(i)}, {"namespace", "ns"}}},
                {"spec",
                 {{"schedulingGroup", {{"podGroupName", "pg"}}},
                  {"containers", Json::array({{{"name", "c"},
                                               {"resources", {{"requests", {{"cpu", "1"}}}}}}})}}}};
    out.push_back(ParsePod(pod, cache.resources()));
  }
  return out;
}

TEST(PlaceGangTest, AllOrNothing) {
  struct Case {
    std::string name;
    int pods, bound, min_count;
    bool admitted;
    int placed;
  };
  // Two 2-cpu nodes: four 1-cpu slots.
  std::vector<Case> cases = {
      {"gang fits", 4, 0, 4, true, 4},
      {"gang one short", 5, 0, 5, false, 0},
      {"minCount below size: placeable ones bind", 6, 0, 3, true, 4},
      {"bound members count", 3, 2, 5, true, 3},
      {"bound members not enough", 5, 0, 6, false, 0},
      {"basic keeps what fits", 6, 0, 0, true, 4},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    Cache cache;
    cache.UpsertNode(Node("a", "2"));
    cache.UpsertNode(Node("b", "2"));
    auto pods = Pods(cache, c.pods);
    GangAttempt a = PlaceGang(cache, pods, c.bound, c.min_count);
    EXPECT_EQ(a.admitted, c.admitted);
    EXPECT_EQ(static_cast<int>(a.placed.size()), c.placed);
    EXPECT_EQ(a.placed.size() + a.unplaced.size(), pods.size());
    EXPECT_EQ(a.placeable, std::min(c.pods, 4));
    // Only kept placements are accounted; a refused gang leaves the cache as it was.
    int used = cache.node("a")->Used(kCpu) + cache.node("b")->Used(kCpu);
    EXPECT_EQ(used, c.placed * 1000);
    if (!a.unplaced.empty() && a.placeable < c.pods) {
      EXPECT_NE(a.fit_message.find("Insufficient cpu"), std::string::npos) << a.fit_message;
    }
  }
}

TEST(GroupKeyTest, PodGroupAndWorkloadReplicas) {
  Json pg = {{"metadata", {{"name", "p"}, {"namespace", "ns"}}},
             {"spec", {{"schedulingGroup", {{"podGroupName", "g"}}}}}};
  EXPECT_EQ(GroupKeyOf(pg), "pg/ns/g");
  Json wl = {{"metadata", {{"name", "p"}, {"namespace", "ns"}}},
             {"spec", {{"workloadRef", {{"name", "w"}, {"podGroup", "workers"},
                                        {"podGroupReplicaKey", "r1"}}}}}};
  EXPECT_EQ(GroupKeyOf(wl), "wl/ns/w/workers/r1");
  EXPECT_EQ(GroupKeyOf(Json{{"spec", Json::object()}}), "");
  EXPECT_EQ(GangShortfallMessage(5, 2, 8, 8), "7 of 8 pods can be placed, minCount is 8");
}

}  // namespace
}  // namespace batchd::scheduler::internal
