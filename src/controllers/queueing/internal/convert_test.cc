#include "controllers/queueing/internal/convert.h"

#include <string>

#include "gtest/gtest.h"

namespace batchd::controllers::queueing::internal {
namespace {

namespace q = batchd::queueing;
namespace kueue = api::kueue;

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
    const Json tmpl = {{"spec", c.spec}};
    EXPECT_EQ(PodRequests(kueue::PodSetTemplateView::Parse(tmpl)), c.want);
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
  auto convert = [](const Json& obj) {
    return ToClusterQueue(kueue::ClusterQueueView::Parse(obj), kueue::ResourceGroupsView::Parse(obj));
  };
  q::ClusterQueue out = convert(cq);
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
  EXPECT_EQ(out.resource_groups[0].covered_resources, (std::vector<std::string>{"cpu", "memory"}));
  EXPECT_EQ(out.fair_weight, 1);

  cq["spec"]["namespaceSelector"] = Json::object();
  EXPECT_TRUE(convert(cq).namespace_selector->Empty());
  cq["spec"]["namespaceSelector"] = {{"matchLabels", {{"not a key!", "x"}}}};
  EXPECT_TRUE(convert(cq).namespace_selector->IsNothing());  // Unparsable: matches nothing.
}

TEST(ConvertTest, CohortLocalQueueAndFlavor) {
  const Json cohort = Json::parse(R"({"metadata": {"name": "co"},
    "spec": {"parentName": "root", "fairSharing": {"weight": "2"},
             "resourceGroups": [{"coveredResources": ["cpu"], "flavors": [
               {"name": "default", "resources": [{"name": "cpu", "nominalQuota": "8"}]}]}]}})");
  q::Cohort c = ToCohort(kueue::CohortView::Parse(cohort), kueue::ResourceGroupsView::Parse(cohort));
  EXPECT_EQ(c.name, "co");
  EXPECT_EQ(c.parent, "root");
  EXPECT_EQ(c.fair_weight, 2);
  ASSERT_EQ(c.resource_groups.size(), 1u);
  EXPECT_EQ(c.resource_groups[0].flavors.at(0).resources.at("cpu").nominal, 8000);

  const Json lq = Json::parse(R"({"metadata": {"name": "lq", "namespace": "ns"},
                                  "spec": {"clusterQueue": "cq", "stopPolicy": "Hold"}})");
  q::LocalQueue l = ToLocalQueue(kueue::LocalQueueView::Parse(lq));
  EXPECT_EQ(l.namespace_, "ns");
  EXPECT_EQ(l.name, "lq");
  EXPECT_EQ(l.cluster_queue, "cq");
  EXPECT_EQ(l.stop_policy, q::StopPolicy::kHold);

  const Json rf = Json::parse(R"({"metadata": {"name": "spot"}, "spec": {
    "nodeLabels": {"instance": "spot"},
    "nodeTaints": [{"key": "spot", "value": "true", "effect": "NoExecute"}],
    "tolerations": [{"key": "spot", "operator": "Exists", "effect": "NoSchedule"}]}})");
  q::ResourceFlavor f = ToResourceFlavor(kueue::ResourceFlavorView::Parse(rf));
  EXPECT_EQ(f.name, "spot");
  EXPECT_EQ(f.node_labels, (std::map<std::string, std::string>{{"instance", "spot"}}));
  ASSERT_EQ(f.node_taints.size(), 1u);
  EXPECT_EQ(f.node_taints[0].key, "spot");
  EXPECT_EQ(f.node_taints[0].effect, q::TaintEffect::kNoExecute);
  ASSERT_EQ(f.tolerations.size(), 1u);
  EXPECT_EQ(f.tolerations[0].op, q::TolerationOperator::kExists);
  EXPECT_EQ(f.tolerations[0].effect, q::TaintEffect::kNoSchedule);
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
  const kueue::WorkloadView view = kueue::WorkloadView::Parse(wl);
  const kueue::WorkloadPodSetsView pod_sets = kueue::WorkloadPodSetsView::Parse(wl);
  q::Workload out = ToWorkload(view, pod_sets, ctx);
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
  EXPECT_EQ(ToWorkload(view, pod_sets, ctx).queue_order_time, absl::FromUnixSeconds(1767225600));
  EXPECT_FALSE(ToAdmission(view, pod_sets).has_value());

  // The core's Admission through the writer and back through the views.
  q::Admission a{"cq", {{"main", {{"cpu", "default"}}, {{"cpu", 3000}, {"memory", 2048000}}, 3}}};
  kueue::StatusUpdate update(wl);
  kueue::SetAdmission(update, ToAdmissionStatus(a));
  const Json with = std::move(update).Build("kueue.x-k8s.io/v1beta2", "Workload");
  EXPECT_EQ(with["status"]["admission"]["podSetAssignments"][0]["resourceUsage"]["cpu"], "3");
  EXPECT_EQ(with["status"]["admission"]["podSetAssignments"][0]["resourceUsage"]["memory"], "2Ki");
  auto back = ToAdmission(kueue::WorkloadView::Parse(with), kueue::WorkloadPodSetsView::Parse(with));
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->cluster_queue, "cq");
  ASSERT_EQ(back->pod_sets.size(), 1u);
  EXPECT_EQ(back->pod_sets[0].name, "main");
  EXPECT_EQ(back->pod_sets[0].flavors, a.pod_sets[0].flavors);
  EXPECT_EQ(back->pod_sets[0].resource_usage, a.pod_sets[0].resource_usage);
  EXPECT_EQ(back->pod_sets[0].count, 3);
}

TEST(ConvertTest, WorkloadSchedulingConstraints) {
  const Json wl = Json::parse(R"({
    "metadata": {"name": "w", "namespace": "ns"},
    "spec": {"active": false, "podSets": [
      {"name": "main", "template": {"spec": {
        "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}],
        "tolerations": [{"key": "gpu", "operator": "Exists"}],
        "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
          "nodeSelectorTerms": [{"matchExpressions": [
            {"key": "zone", "operator": "NotIn", "values": ["b", "a"]},
            {"key": "gen", "operator": "Gt", "values": ["3"]}]}]}}}}}},
      {"count": 2}]}})");
  q::Workload out = ToWorkload(kueue::WorkloadView::Parse(wl), kueue::WorkloadPodSetsView::Parse(wl),
                               WorkloadContext{});
  EXPECT_FALSE(out.active);
  EXPECT_EQ(out.priority, 0);
  EXPECT_EQ(out.creation, absl::UnixEpoch());
  ASSERT_EQ(out.pod_sets.size(), 2u);
  const q::PodSet& main = out.pod_sets[0];
  EXPECT_EQ(main.requests, (std::map<std::string, q::Amount>{{"cpu", 1000}}));
  ASSERT_EQ(main.tolerations.size(), 1u);
  EXPECT_EQ(main.tolerations[0].key, "gpu");
  ASSERT_EQ(main.required_affinity.size(), 1u);
  ASSERT_EQ(main.required_affinity[0].size(), 2u);
  EXPECT_EQ(main.required_affinity[0][0].key, "zone");
  EXPECT_EQ(main.required_affinity[0][0].op, api::labels::Operator::kNotIn);
  EXPECT_EQ(main.required_affinity[0][0].values, (std::vector<std::string>{"a", "b"}));  // Sorted.
  EXPECT_EQ(main.required_affinity[0][1].op, api::labels::Operator::kGreaterThan);
  // A pod set without a template: the default name, no requests.
  EXPECT_EQ(out.pod_sets[1].name, "main");
  EXPECT_EQ(out.pod_sets[1].count, 2);
  EXPECT_TRUE(out.pod_sets[1].requests.empty());
}

}  // namespace
}  // namespace batchd::controllers::queueing::internal
