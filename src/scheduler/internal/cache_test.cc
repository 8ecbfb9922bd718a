#include "scheduler/internal/cache.h"

#include <random>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace batchd::scheduler::internal {
namespace {

using api::Json;

Json Node(const std::string& name, const std::string& cpu, const std::string& mem = "8Gi",
          const std::string& pods = "110") {
  return {{"metadata", {{"name", name}}},
          {"status",
           {{"allocatable", {{"cpu", cpu}, {"memory", mem}, {"pods", pods}}},
            {"conditions", Json::array({{{"type", "Ready"}, {"status", "True"}}})}}}};
}

Json Pod(const std::string& name, const std::string& cpu, Json extra_spec = Json::object()) {
  Json spec = {{"containers", Json::array({{{"name", "c"},
                                            {"resources", {{"requests", {{"cpu", cpu}}}}}}})}};
  if (extra_spec.is_object()) spec.update(extra_spec);
  return {{"metadata", {{"name", name}, {"namespace", "ns"}}},
          {"spec", spec},
          {"status", {{"phase", "Pending"}}}};
}

FitError MakeError(int nodes, std::map<std::string, int> reasons, int resolvable,
                   int unresolvable) {
  FitError e;
  e.num_nodes = nodes;
  e.reasons = std::move(reasons);
  e.resolvable_nodes = resolvable;
  e.unresolvable_nodes = unresolvable;
  return e;
}

TEST(FitErrorTest, MessageLikeKubeScheduler) {
  struct Case {
    std::string name;
    FitError err;
    std::string want;
  };
  std::vector<Case> cases;
  cases.push_back({"taint and cpu",
                   MakeError(3, {{"node(s) had untolerated taint {key: value}", 1},
                                 {"Insufficient cpu", 2}},
                             2, 1),
                   "0/3 nodes are available: 1 node(s) had untolerated taint {key: value}, 2 "
                   "Insufficient cpu. preemption: 0/3 nodes are available: 1 Preemption is not "
                   "helpful for scheduling, 2 No preemption victims found for incoming pod."});
  cases.push_back({"sorted as strings",
                   MakeError(12, {{"Insufficient memory", 10}, {"Insufficient cpu", 2}}, 12, 0),
                   "0/12 nodes are available: 10 Insufficient memory, 2 Insufficient cpu. "
                   "preemption: 0/12 nodes are available: 12 No preemption victims found for "
                   "incoming pod."});
  cases.push_back({"no nodes", MakeError(0, {}, 0, 0), "no nodes available to schedule pods"});
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(c.err.Message(), c.want);
  }
}

TEST(ParsePodTest, UnschedulableMessage) {
  struct Case {
    std::string name;
    Json conditions;
    std::string want;
  };
  const Json unsched = {{"type", "PodScheduled"}, {"status", "False"},
                        {"reason", "Unschedulable"}, {"message", "0/1 nodes are available"}};
  const std::vector<Case> cases = {
      {"no conditions", nullptr, ""},
      {"unschedulable", Json::array({unsched}), "0/1 nodes are available"},
      {"scheduled",
       Json::array({{{"type", "PodScheduled"}, {"status", "True"}, {"message", "x"}}}), ""},
      {"other reason",
       Json::array({{{"type", "PodScheduled"}, {"status", "False"}, {"reason", "SchedulingGated"},
                     {"message", "x"}}}),
       ""},
      {"other type",
       Json::array({{{"type", "Ready"}, {"status", "False"}, {"reason", "Unschedulable"},
                     {"message", "x"}}}),
       ""},
  };
  Cache cache;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Json pod = Pod("p", "1");
    if (!c.conditions.is_null()) pod["status"]["conditions"] = c.conditions;
    EXPECT_EQ(ParsePod(pod, cache.resources())->unschedulable_message, c.want);
  }
}

TEST(CacheTest, FiltersAndReasons) {
  struct Case {
    std::string name;
    Json node;
    Json pod_spec_extra;
    std::string pod_cpu;
    std::string want_reason;  // "" = fits.
  };
  Json tainted = Node("n", "4");
  tainted["spec"]["taints"] = Json::array({{{"key", "k"}, {"value", "v"}, {"effect", "NoSchedule"}}});
  Json prefer = Node("n", "4");
  prefer["spec"]["taints"] = Json::array({{{"key", "k"}, {"effect", "PreferNoSchedule"}}});
  Json cordoned = Node("n", "4");
  cordoned["spec"]["unschedulable"] = true;
  Json unknown = Node("n", "4");
  unknown["status"]["conditions"][0]["status"] = "Unknown";
  Json no_conditions = Node("n", "4");
  no_conditions["status"].erase("conditions");
  Json labelled = Node("n", "4");
  labelled["metadata"]["labels"] = {{"zone", "a"}};
  Json tol_all = {{"tolerations", Json::array({{{"operator", "Exists"}}})}};
  std::vector<Case> cases = {
      {"fits", Node("n", "4"), {}, "1", ""},
      {"insufficient cpu", Node("n", "500m"), {}, "1", "Insufficient cpu"},
      {"too many pods", Node("n", "4", "8Gi", "0"), {}, "1", "Too many pods"},
      {"untolerated taint", tainted, {}, "1", "node(s) had untolerated taint {k: v}"},
      {"tolerated taint", tainted, tol_all, "1", ""},
      {"PreferNoSchedule ignored", prefer, {}, "1", ""},
      {"cordoned", cordoned, {}, "1", "node(s) were unschedulable"},
      {"cordoned tolerated", cordoned, tol_all, "1", ""},
      {"unreachable", unknown, {}, "1", "node(s) had untolerated taint {node.kubernetes.io/unreachable: }"},
      {"never ready", no_conditions, {}, "1", "node(s) had untolerated taint {node.kubernetes.io/not-ready: }"},
      {"selector", labelled, {{"nodeSelector", {{"zone", "b"}}}}, "1",
       "node(s) didn't match Pod's node affinity/selector"},
      {"selector ok", labelled, {{"nodeSelector", {{"zone", "a"}}}}, "1", ""},
      {"extended resource missing", Node("n", "4"),
       {{"containers", Json::array({{{"name", "c"},
                                     {"resources", {{"requests", {{"nvidia.com/gpu", "1"}}}}}}})}},
       "0", "Insufficient nvidia.com/gpu"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    Cache cache;
    cache.UpsertNode(c.node);
    auto pod = ParsePod(Pod("p", c.pod_cpu, c.pod_spec_extra), cache.resources());
    ScheduleResult r = cache.Schedule(*pod);
    if (c.want_reason.empty()) {
      EXPECT_EQ(r.node, "n");
    } else {
      EXPECT_EQ(r.node, "");
      EXPECT_EQ(r.error.reasons.count(c.want_reason), 1u) << r.error.Message();
    }
  }
}

TEST(CacheTest, AssumedPodsConsumeCapacityAndSpread) {
  Cache cache;
  cache.UpsertNode(Node("a", "2"));
  cache.UpsertNode(Node("b", "2"));
  std::vector<std::string> placed;
  for (int i = 0; i < 5; ++i) {
    auto pod = ParsePod(Pod("p" + std::to_string(i), "1"), cache.resources());
    ScheduleResult r = cache.Schedule(*pod);
    placed.push_back(r.node);
    if (!r.node.empty()) cache.AddPod(*pod, r.node, /*assumed=*/true);
  }
  // Least-allocated alternates (ties go to the smaller name); the fifth does not fit.
  EXPECT_EQ(placed, (std::vector<std::string>{"a", "b", "a", "b", ""}));
  uint64_t gen = cache.generation();
  auto p0 = ParsePod(Pod("p0", "1"), cache.resources());
  cache.AddPod(*p0, "a", /*assumed=*/false);  // Confirmation frees nothing.
  EXPECT_EQ(cache.generation(), gen);
  EXPECT_FALSE(cache.IsAssumed("ns/p0"));
  cache.ForgetAssumed("ns/p0");  // Confirmed: not forgotten.
  EXPECT_EQ(cache.NodeOf("ns/p0"), "a");
  EXPECT_TRUE(cache.RemovePod("ns/p0"));
  EXPECT_GT(cache.generation(), gen);
  EXPECT_EQ(cache.node("a")->Used(kCpu), 1000);
  auto p9 = ParsePod(Pod("p9", "1"), cache.resources());
  EXPECT_EQ(cache.Schedule(*p9).node, "a");
}

// A node deleted and registered again keeps counting the pods bound to it:
// no over-commit after an agent re-registers; a pod that leaves while the
// node is gone is not counted when it comes back.
TEST(CacheTest, RecreatedNodeKeepsItsBoundPods) {
  Cache cache;
  cache.UpsertNode(Node("a", "2"));
  auto p1 = ParsePod(Pod("p1", "1"), cache.resources());
  auto p2 = ParsePod(Pod("p2", "1"), cache.resources());
  cache.AddPod(*p1, "a", false);
  cache.AddPod(*p2, "a", false);
  cache.RemoveNode("a");
  cache.UpsertNode(Node("a", "2"));
  EXPECT_EQ(cache.node("a")->Used(kCpu), 2000);
  auto p3 = ParsePod(Pod("p3", "1"), cache.resources());
  EXPECT_EQ(cache.Schedule(*p3).node, "");  // full: no over-commit
  cache.RemoveNode("a");
  EXPECT_TRUE(cache.RemovePod("ns/p2"));
  cache.UpsertNode(Node("a", "2"));
  EXPECT_EQ(cache.node("a")->Used(kCpu), 1000);
  EXPECT_EQ(cache.Schedule(*p3).node, "a");
}

TEST(CacheTest, NodeUpdateReportsRelevantChanges) {
  Cache cache;
  EXPECT_TRUE(cache.UpsertNode(Node("a", "2")));
  EXPECT_FALSE(cache.UpsertNode(Node("a", "2")));
  EXPECT_TRUE(cache.UpsertNode(Node("a", "3")));
  Json n = Node("a", "3");
  n["metadata"]["labels"] = {{"x", "y"}};
  EXPECT_TRUE(cache.UpsertNode(n));
}

// Schedule walks the node index and stops early; ScheduleByScan filters and
// scores every node. On a random cluster (three node shapes, taints, cordoned
// and not-ready nodes, zone labels) under random pods (sizes with and without
// memory, selectors, tolerations, nominations) placed and removed, both give
// the same node, or the same FitError message when none fits, every time.
TEST(CacheTest, IndexedScheduleEqualsFullScan) {
  std::mt19937 rng(15);
  auto pick = [&](int n) { return static_cast<int>(rng() % n); };
  Cache cache;
  const std::vector<std::pair<std::string, std::string>> shapes = {
      {"8", "32Gi"}, {"32", "128Gi"}, {"4", "8Gi"}};
  for (int i = 0; i < 60; ++i) {
    const auto& [cpu, mem] = shapes[pick(3)];
    Json n = Node("node-" + std::to_string(i), cpu, mem, i % 7 == 0 ? "3" : "110");
    n["metadata"]["labels"] = {{"zone", i % 2 ? "a" : "b"}};
    if (i % 11 == 0) {
      n["spec"]["taints"] = Json::array({{{"key", "k"}, {"value", "v"}, {"effect", "NoSchedule"}}});
    }
    if (i % 13 == 0) n["spec"]["unschedulable"] = true;
    if (i % 17 == 0) n["status"]["conditions"][0]["status"] = "False";
    cache.UpsertNode(n);
  }
  std::vector<std::string> placed;
  int fitted = 0, unfit = 0;
  for (int i = 0; i < 3000; ++i) {
    if (!placed.empty() && pick(5) < 2) {  // A pod ends.
      size_t j = pick(placed.size());
      cache.RemovePod(placed[j]);
      placed[j] = placed.back();
      placed.pop_back();
    }
    if (i % 500 == 250) {  // A node changes size (re-indexed).
      cache.UpsertNode(Node("node-" + std::to_string(pick(60)), "16", "64Gi"));
    }
    static const char* kCpus[] = {"100m", "500m", "1", "2", "3", "6", "12"};
    Json extra = Json::object();
    switch (pick(6)) {
      case 0:
        extra["nodeSelector"] = {{"zone", "a"}};
        break;
      case 1:
        extra["tolerations"] = Json::array({{{"operator", "Exists"}}});
        break;
      case 2:
        extra["containers"] = Json::array(
            {{{"name", "c"},
              {"resources", {{"requests", {{"cpu", kCpus[pick(7)]}, {"memory", "3Gi"}}}}}}});
        break;
      default:
        break;
    }
    auto pod = ParsePod(Pod("p" + std::to_string(i), kCpus[pick(7)], extra), cache.resources());
    if (i % 400 == 100) cache.Nominate(*pod, "node-" + std::to_string(pick(60)));
    if (i % 400 == 300) cache.ClearNomination(absl::StrCat("ns/p", i - 200));
    ScheduleResult want = cache.ScheduleByScan(*pod);
    ScheduleResult got = cache.Schedule(*pod);
    ASSERT_EQ(got.node, want.node) << "pod " << i;
    if (want.node.empty()) {
      ++unfit;
      ASSERT_EQ(got.error.Message(), want.error.Message()) << "pod " << i;
      ASSERT_EQ(got.error.resolvable_nodes, want.error.resolvable_nodes);
      continue;
    }
    ++fitted;
    cache.AddPod(*pod, got.node, /*assumed=*/pick(2) == 0);
    placed.push_back(pod->key);
  }
  // Both outcomes were exercised many times.
  EXPECT_GT(fitted, 500);
  EXPECT_GT(unfit, 100);
}

}  // namespace
}  // namespace batchd::scheduler::internal
