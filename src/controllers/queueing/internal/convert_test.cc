#include "controllers/queueing/internal/convert.h"

#include <string>

#include "gtest/gtest.h"

namespace batchd::controllers::queueing::internal {
namespace {

namespace q = batchd::queueing;

Json Container(Json requests, Json limits = Json::object()) {
  return {{"name", "c"}, {"resources", {{"requests", requests}, {"limits", limits}}}};
}

TEST(ConvertTest, PodRequests) {
  struct Case {
    std::string name;
    Json spec;
    std::map<std::string, q::Amount> want;
  };
  const Case cases[] = {
      {"sum of containers",
       {{"containers", {Container({{"cpu", "500m"}}), Container({{"cpu", "1"}, {"memory", "1Ki"}})}}},
       {{"cpu", 1500}, {"memory", 1024000}}},
      {"limits stand in for requests",
       {{"containers", {Container(Json::object(), {{"cpu", "2"}})}}},
       {{"cpu", 2000}}},
      {"init container max",
       {{"containers", {Container({{"cpu", "1"}})}},
        {"initContainers", {Container({{"cpu", "3"}}), Container({{"cpu", "2"}})}}},
       {{"cpu", 3000}}},
      {"sidecar adds",
       {{"containers", {Container({{"cpu", "1"}})}},
        {"initContainers",
         {Json{{"name", "s"}, {"restartPolicy", "Always"}, {"resources", {{"requests", {{"cpu", "1"}}}}}},
          Container({{"cpu", "1500m"}})}}},
       {{"cpu", 2500}}},
      {"overhead and zero dropped",
       {{"containers", {Container({{"cpu", "1"}, {"nvidia.com/gpu", "0"}})}},
        {"overhead", {{"cpu", "100m"}}}},
       {{"cpu", 1100}}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(PodRequests({{"spec", c.spec}}), c.want);
  }
}

TEST(ConvertTest, ClusterQueue) {
  Json cq = {{"metadata", {{"name", "cq"}}},
             {"spec",
              {{"cohortName", "co"},
               {"queueingStrategy", "StrictFIFO"},
               {"stopPolicy", "HoldAndDrain"},
               {"preemption",
                {{"withinClusterQueue", "LowerPriority"},
                 {"reclaimWithinCohort", "Any"},
                 {"borrowWithinCohort", {{"policy", "LowerPriority"}, {"maxPriorityThreshold", 5}}}}},
               {"resourceGroups",
                {{{"coveredResources", {"cpu", "memory"}},
                  {"flavors",
                   {{{"name", "default"},
                     {"resources",
                      {{{"name", "cpu"}, {"nominalQuota", "4"}, {"borrowingLimit", "2"}},
                       {{"name", "memory"}, {"nominalQuota", "1Gi"}, {"lendingLimit", "0"}}}}}}}}}}}}};
  q::ClusterQueue out = ToClusterQueue(cq);
  EXPECT_EQ(out.name, "cq");
  EXPECT_EQ(out.cohort, "co");
  EXPECT_EQ(out.strategy, q::QueueingStrategy::kStrictFIFO);
  EXPECT_EQ(out.stop_policy, q::StopPolicy::kHoldAndDrain);
  EXPECT_FALSE(out.namespace_selector.has_value());  // nil selector: no namespace
  EXPECT_EQ(out.preemption.within_cluster_queue, q::PreemptionPolicy::kLowerPriority);
  EXPECT_EQ(out.preemption.reclaim_within_cohort, q::PreemptionPolicy::kAny);
  EXPECT_EQ(out.preemption.borrow_within_cohort, q::PreemptionPolicy::kLowerPriority);
  EXPECT_EQ(out.preemption.max_priority_threshold, 5);
  ASSERT_EQ(out.resource_groups.size(), 1u);
  const auto& f = out.resource_groups[0].flavors.at(0);
  EXPECT_EQ(f.flavor, "default");
  EXPECT_EQ(f.resources.at("cpu").nominal, 4000);
  EXPECT_EQ(f.resources.at("cpu").borrowing_limit, 2000);
  EXPECT_FALSE(f.resources.at("cpu").lending_limit.has_value());
  EXPECT_EQ(f.resources.at("memory").nominal, int64_t{1073741824} * 1000);
  EXPECT_EQ(f.resources.at("memory").lending_limit, 0);
  EXPECT_EQ(CoveredResources(cq), (std::set<std::string>{"cpu", "memory"}));
  EXPECT_EQ(FlavorNames(cq), (std::set<std::string>{"default"}));

  cq["spec"]["namespaceSelector"] = Json::object();
  EXPECT_TRUE(ToClusterQueue(cq).namespace_selector->Empty());
}

TEST(ConvertTest, WorkloadAndAdmissionRoundTrip) {
  Json wl = Json::parse(R"({
    "metadata": {"name": "w", "namespace": "ns", "uid": "u1",
                 "creationTimestamp": "2026-01-01T00:00:00Z"},
    "spec": {"queueName": "lq", "priority": 7,
             "podSets": [{"name": "main", "count": 3, "minCount": 1,
                          "template": {"spec": {
                            "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}],
                            "nodeSelector": {"zone": "a"}}}}]},
    "status": {"requeueState": {"count": 2, "requeueAt": "2026-01-01T00:05:00Z"},
               "conditions": [{"type": "Evicted", "status": "True", "reason": "PodsReadyTimeout",
                               "lastTransitionTime": "2026-01-01T00:03:00Z"}]}
  })");
  WorkloadContext ctx;
  ctx.cluster_queue = "cq";
  ctx.cq_covers_pods = true;
  q::Workload out = ToWorkload(wl, ctx);
  EXPECT_EQ(out.key, "ns/w");
  EXPECT_EQ(out.cluster_queue, "cq");
  EXPECT_EQ(out.priority, 7);
  EXPECT_TRUE(out.active);
  ASSERT_EQ(out.pod_sets.size(), 1u);
  EXPECT_EQ(out.pod_sets[0].count, 3);
  EXPECT_EQ(out.pod_sets[0].min_count, 1);
  EXPECT_EQ(out.pod_sets[0].requests.at("pods"), 1000);
  EXPECT_EQ(out.pod_sets[0].node_selector.at("zone"), "a");
  EXPECT_EQ(out.queue_order_time, absl::FromUnixSeconds(1767225600 + 180));  // eviction time
  EXPECT_EQ(out.requeue_at, absl::FromUnixSeconds(1767225600 + 300));
  ctx.order_by_eviction_time = false;
  EXPECT_EQ(ToWorkload(wl, ctx).queue_order_time, absl::FromUnixSeconds(1767225600));

  q::Admission a{"cq", {{"main", {{"cpu", "default"}}, {{"cpu", 3000}, {"memory", 2048000}}, 3}}};
  Json aj = AdmissionToJson(a);
  EXPECT_EQ(aj["podSetAssignments"][0]["resourceUsage"]["cpu"], "3");
  EXPECT_EQ(aj["podSetAssignments"][0]["resourceUsage"]["memory"], "2Ki");
  Json with = wl;
  with["status"]["admission"] = aj;
  auto back = AdmissionFromJson(with);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->cluster_queue, "cq");
  EXPECT_EQ(back->pod_sets[0].resource_usage, a.pod_sets[0].resource_usage);
  EXPECT_EQ(back->pod_sets[0].count, 3);
  EXPECT_FALSE(AdmissionFromJson(wl).has_value());
}

}  // namespace
}  // namespace batchd::controllers::queueing::internal
