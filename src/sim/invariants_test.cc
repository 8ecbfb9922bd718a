// The invariant checker fed objects directly: each invariant holds on a
// legal history and is reported, naming the objects, when broken.
#include "sim/invariants.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace batchd::sim {
namespace {

using api::Json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

Json Cq(const std::string& name, const std::string& cpu, const std::string& cohort = "",
        Json extra = Json::object()) {
  Json res = {{"name", "cpu"}, {"nominalQuota", cpu}};
  res.update(extra);
  Json cq = {{"metadata", {{"name", name}}},
             {"spec",
              {{"resourceGroups",
                {{{"coveredResources", {"cpu"}},
                  {"flavors", {{{"name", "default"}, {"resources", {res}}}}}}}}}}};
  if (!cohort.empty()) cq["spec"]["cohortName"] = cohort;
  return cq;
}

Json Wl(const std::string& name, const std::string& cq, const std::string& cpu) {
  Json w = {{"metadata", {{"name", name}, {"namespace", "ns"}}}, {"spec", Json::object()}};
  if (!cq.empty()) {
    w["status"]["admission"] = {
        {"clusterQueue", cq},
        {"podSetAssignments",
         {{{"name", "main"}, {"flavors", {{"cpu", "default"}}}, {"resourceUsage", {{"cpu", cpu}}},
           {"count", 1}}}}};
  }
  return w;
}

Json Finished(Json w) {
  w["status"]["conditions"] = {{{"type", "Finished"}, {"status", "True"}, {"reason", "Succeeded"}}};
  return w;
}

Json Node(const std::string& name, const std::string& cpu) {
  return {{"metadata", {{"name", name}}},
          {"status", {{"allocatable", {{"cpu", cpu}, {"pods", "110"}}}}}};
}

Json Pod(const std::string& name, const std::string& node, const std::string& cpu,
         const std::string& phase = "Running") {
  Json p = {{"metadata", {{"name", name}, {"namespace", "ns"}}},
            {"spec",
             {{"containers", {{{"name", "c"}, {"resources", {{"requests", {{"cpu", cpu}}}}}}}}}},
            {"status", {{"phase", phase}}}};
  if (!node.empty()) p["spec"]["nodeName"] = node;
  return p;
}

TEST(InvariantsTest, QuotaWithinClusterQueue) {
  InvariantChecker c;
  Json cq = Cq("cq", "4");
  c.OnClusterQueue(&cq, false);
  Json a = Wl("a", "cq", "3"), b0 = Wl("b", "", ""), b = Wl("b", "cq", "2");
  c.OnWorkload(nullptr, &a);
  c.OnWorkload(nullptr, &b0);
  EXPECT_THAT(c.Check(), IsEmpty());
  c.OnWorkload(&b0, &b);
  auto v = c.Check();
  ASSERT_EQ(v.size(), 1u);
  EXPECT_THAT(v[0], HasSubstr("ClusterQueue cq over quota: default/cpu admitted 5 > nominal 4"));
  EXPECT_THAT(v[0], HasSubstr("ns/a, ns/b"));
  // A finished workload releases its quota.
  Json af = Finished(a);
  c.OnWorkload(&a, &af);
  EXPECT_THAT(c.Check(), IsEmpty());
}

TEST(InvariantsTest, CohortBorrowingAndLending) {
  InvariantChecker c;
  Json x = Cq("x", "4", "co", {{"borrowingLimit", "2"}});
  Json y = Cq("y", "4", "co", {{"lendingLimit", "1"}});
  c.OnClusterQueue(&x, false);
  c.OnClusterQueue(&y, false);
  // x borrows 1 of the 1 y lends: fine.
  Json a = Wl("a", "x", "5");
  c.OnWorkload(nullptr, &a);
  EXPECT_THAT(c.Check(), IsEmpty());
  // y uses its 3 guaranteed: fine; a fourth would take what it lent.
  Json b = Wl("b", "y", "3");
  c.OnWorkload(nullptr, &b);
  EXPECT_THAT(c.Check(), IsEmpty());
  Json c1 = Wl("c", "y", "1");
  c.OnWorkload(nullptr, &c1);
  auto v = c.Check();
  ASSERT_EQ(v.size(), 1u) << v[0];
  EXPECT_THAT(v[0], HasSubstr("cohort co lends more than it has: default/cpu"));
  // Beyond nominal + borrowingLimit.
  InvariantChecker d;
  d.OnClusterQueue(&x, false);
  Json big = Cq("z", "10", "co");
  d.OnClusterQueue(&big, false);
  Json e = Wl("e", "x", "7");
  d.OnWorkload(nullptr, &e);
  v = d.Check();
  ASSERT_EQ(v.size(), 1u);
  EXPECT_THAT(v[0], HasSubstr("ClusterQueue x over quota: default/cpu admitted 7 > nominal 4 + "
                              "borrowingLimit 2"));
}

TEST(InvariantsTest, AdmittedTwice) {
  InvariantChecker c;
  Json x = Cq("x", "4"), y = Cq("y", "4");
  c.OnClusterQueue(&x, false);
  c.OnClusterQueue(&y, false);
  Json a = Wl("a", "x", "1"), a2 = Wl("a", "y", "1");
  c.OnWorkload(nullptr, &a);
  EXPECT_THAT(c.Check(), IsEmpty());
  c.OnWorkload(&a, &a2);
  auto v = c.Check();
  ASSERT_EQ(v.size(), 1u);
  EXPECT_THAT(v[0], HasSubstr("workload ns/a admitted twice"));
  // Released (no admission), then admitted again: fine.
  Json released = Wl("a", "", "");
  c.OnWorkload(&a2, &released);
  c.OnWorkload(&released, &a);
  EXPECT_THAT(c.Check(), IsEmpty());
}

TEST(InvariantsTest, NodesAndBindings) {
  InvariantChecker c;
  Json n = Node("n1", "4"), n2 = Node("n2", "4");
  c.OnNode(&n, false);
  c.OnNode(&n2, false);
  Json p1 = Pod("p1", "n1", "3"), p2u = Pod("p2", "", "2"), p2 = Pod("p2", "n1", "2");
  c.OnPod(nullptr, &p1);
  c.OnPod(nullptr, &p2u);
  EXPECT_THAT(c.Check(), IsEmpty());
  c.OnPod(&p2u, &p2);
  auto v = c.Check();
  ASSERT_EQ(v.size(), 1u);
  EXPECT_THAT(v[0], HasSubstr("node n1 over allocatable: cpu requested 5 > allocatable 4 "
                              "(pods: ns/p1, ns/p2)"));
  // A terminal pod frees its requests.
  Json p1done = Pod("p1", "n1", "3", "Succeeded");
  c.OnPod(&p1, &p1done);
  EXPECT_THAT(c.Check(), IsEmpty());
  Json p2moved = Pod("p2", "n2", "2");
  c.OnPod(&p2, &p2moved);
  v = c.Check();
  ASSERT_EQ(v.size(), 1u);
  EXPECT_THAT(v[0], HasSubstr("pod ns/p2 bound twice: to node n1, then to node n2"));
}

TEST(InvariantsTest, GangPartlyBound) {
  InvariantChecker c([](const std::string& policy) -> std::optional<int> {
    if (policy == "pg/ns/g") return 3;
    return std::nullopt;
  });
  Json n = Node("n1", "100");
  c.OnNode(&n, false);
  std::vector<Json> unbound, bound;
  for (int i = 0; i < 3; ++i) {
    Json p = Pod("g" + std::to_string(i), "", "1");
    p["spec"]["schedulingGroup"] = {{"podGroupName", "g"}};
    unbound.push_back(p);
    c.OnPod(nullptr, &unbound.back());
    p["spec"]["nodeName"] = "n1";
    bound.push_back(p);
  }
  EXPECT_THAT(c.Check(), IsEmpty());
  // Two of three bound in one step: caught.
  c.OnPod(&unbound[0], &bound[0]);
  c.OnPod(&unbound[1], &bound[1]);
  auto v = c.Check();
  ASSERT_EQ(v.size(), 1u);
  EXPECT_THAT(v[0], HasSubstr("gang pg/ns/g partly bound: 2 of minCount 3 pods bound"));
  // All three in one step: fine.
  c.OnPod(&unbound[2], &bound[2]);
  EXPECT_THAT(c.Check(), IsEmpty());
}

}  // namespace
}  // namespace batchd::sim
