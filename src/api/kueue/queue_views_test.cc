#include "api/kueue/queue_views.h"

#include "api/meta/time_util.h"
#include "gtest/gtest.h"

namespace batchd::api::kueue {
namespace {

TEST(WorkloadViewTest, ParsesQueueingFields) {
  const Json wl = Json::parse(R"({
    "metadata": {"name": "w", "namespace": "ns"},
    "spec": {"queueName": "lq", "active": false},
    "status": {"admission": {"clusterQueue": "cq"},
               "requeueState": {"count": 3, "requeueAt": "2026-01-01T00:00:10Z"},
               "conditions": [{"type": "QuotaReserved", "status": "True"}]}})");
  const WorkloadView v = WorkloadView::Parse(wl);
  EXPECT_EQ(v.meta.Key(), "ns/w");
  EXPECT_EQ(v.queue_name, "lq");
  EXPECT_FALSE(v.active);
  EXPECT_TRUE(v.has_admission);
  EXPECT_EQ(v.requeue_count, 3);
  EXPECT_EQ(v.requeue_at, *meta::ParseRfc3339("2026-01-01T00:00:10Z"));
  ASSERT_NE(v.conditions, nullptr);
  EXPECT_EQ(v.conditions->size(), 1u);
}

TEST(WorkloadViewTest, PodSetsAndAssignments) {
  const Json wl = Json::parse(R"({
    "spec": {"podSets": [{"name": "leader", "count": 1, "template": {"spec": {}}},
                         {"count": 4, "minCount": 2}]},
    "status": {"admission": {"clusterQueue": "cq", "podSetAssignments": [
      {"name": "leader", "flavors": {"cpu": "spot", "memory": "spot", "nvidia.com/gpu": "a100"}},
      {"count": 3, "flavors": {}}]}}})");
  EXPECT_EQ(WorkloadView::Parse(wl).admission_cluster_queue, "cq");
  const WorkloadPodSetsView v = WorkloadPodSetsView::Parse(wl);
  ASSERT_EQ(v.pod_sets.size(), 2u);
  EXPECT_EQ(v.pod_sets[0].name, "leader");
  EXPECT_EQ(v.pod_sets[0].count, 1);
  EXPECT_NE(v.pod_sets[0].pod_template, nullptr);
  EXPECT_EQ(v.pod_sets[1].name, "main");  // Kueue's default name.
  EXPECT_EQ(v.pod_sets[1].count, 4);
  EXPECT_EQ(v.pod_sets[1].min_count, 2);
  EXPECT_EQ(v.pod_sets[1].pod_template, nullptr);
  ASSERT_EQ(v.assignments.size(), 2u);
  EXPECT_EQ(v.assignments[0].name, "leader");
  EXPECT_EQ(v.assignments[0].count, std::nullopt);
  EXPECT_EQ(v.assignments[0].flavors, (std::vector<std::string_view>{"a100", "spot"}));
  EXPECT_EQ(v.assignments[1].name, "main");
  EXPECT_EQ(v.assignments[1].count, 3);
  EXPECT_TRUE(v.assignments[1].flavors.empty());
}

TEST(WorkloadViewTest, DefaultsWhenAbsentOrMistyped) {
  const Json wl = Json::parse(R"({"spec": {"active": "no", "queueName": 7},
                                  "status": {"admission": null,
                                             "requeueState": {"count": "x", "requeueAt": "soon"}}})");
  const WorkloadView v = WorkloadView::Parse(wl);
  EXPECT_EQ(v.queue_name, "");
  EXPECT_TRUE(v.active);  // Only a boolean false deactivates.
  EXPECT_FALSE(v.has_admission);
  EXPECT_EQ(v.requeue_count, 0);
  EXPECT_EQ(v.requeue_at, std::nullopt);
  EXPECT_EQ(v.conditions, nullptr);
  EXPECT_TRUE(WorkloadView::Parse(Json::object()).active);
}

TEST(WorkloadViewTest, PriorityAndConditions) {
  const Json wl = Json::parse(R"({
    "spec": {"priority": 7},
    "status": {"conditions": [
      {"type": "Evicted", "status": "True", "reason": "PodsReadyTimeout", "message": "m",
       "lastTransitionTime": "2026-01-01T00:03:00Z"},
      {"type": "PodsReady", "status": "False", "lastTransitionTime": "bad"}]}})");
  const WorkloadView v = WorkloadView::Parse(wl);
  EXPECT_EQ(v.priority, 7);
  const std::optional<ConditionView> evicted = v.Condition("Evicted");
  ASSERT_TRUE(evicted.has_value());
  EXPECT_TRUE(evicted->is_true());
  EXPECT_EQ(evicted->type, "Evicted");
  EXPECT_EQ(evicted->reason, "PodsReadyTimeout");
  EXPECT_EQ(evicted->message, "m");
  EXPECT_EQ(evicted->last_transition_time, *meta::ParseRfc3339("2026-01-01T00:03:00Z"));
  EXPECT_TRUE(v.IsConditionTrue("Evicted"));
  EXPECT_FALSE(v.IsConditionTrue("PodsReady"));
  EXPECT_EQ(v.Condition("PodsReady")->last_transition_time, std::nullopt);
  EXPECT_EQ(v.Condition("Admitted"), std::nullopt);
  EXPECT_EQ(WorkloadView::Parse(Json::object()).Condition("Evicted"), std::nullopt);
  const Json named_priority = Json::parse(R"({"spec": {"priority": "high"}})");
  EXPECT_EQ(WorkloadView::Parse(named_priority).priority, std::nullopt);
}

TEST(WorkloadViewTest, AssignmentFlavorsAndUsage) {
  const Json wl = Json::parse(R"({"status": {"admission": {"podSetAssignments": [
      {"name": "main", "count": 2, "flavors": {"memory": "spot", "cpu": "spot", "x": 1},
       "resourceUsage": {"memory": "2Ki", "cpu": "1500m", "bad": "1x"}}]}}})");
  const WorkloadPodSetsView v = WorkloadPodSetsView::Parse(wl);
  ASSERT_EQ(v.assignments.size(), 1u);
  const PodSetAssignmentView& a = v.assignments[0];
  using Pair = std::pair<std::string_view, std::string_view>;
  EXPECT_EQ(a.resource_flavors, (std::vector<Pair>{{"cpu", "spot"}, {"memory", "spot"}}));
  EXPECT_EQ(a.flavors, (std::vector<std::string_view>{"spot"}));
  ASSERT_NE(a.resource_usage, nullptr);
  EXPECT_EQ(ParseResourceList(*a.resource_usage),
            (std::vector<ResourceAmount>{{"cpu", Amount::FromMilli(1500)},
                                         {"memory", Amount::FromMilli(2048000)}}));  // "bad" skipped
  EXPECT_TRUE(ParseResourceList(Json("4")).empty());
}

TEST(PodSetTemplateViewTest, ParsesWhatAdmissionReads) {
  const Json tmpl = Json::parse(R"({"spec": {
    "containers": [{"name": "c", "resources": {"requests": {"cpu": "500m"},
                                               "limits": {"cpu": "1", "memory": "1Ki"}}}],
    "initContainers": [{"name": "s", "restartPolicy": "Always",
                        "resources": {"requests": {"cpu": "1"}}},
                       {"name": "i"}],
    "overhead": {"cpu": "100m"},
    "nodeSelector": {"zone": "a"},
    "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
      "nodeSelectorTerms": [{"matchExpressions": [
        {"key": "gpu", "operator": "In", "values": ["b", "a", 3]},
        {"key": "spot", "operator": "DoesNotExist"},
        {"key": "odd", "operator": "Near"}]}, {}]}}},
    "tolerations": [{"key": "k", "operator": "Exists"}]}})");
  const PodSetTemplateView v = PodSetTemplateView::Parse(tmpl);
  ASSERT_EQ(v.containers.size(), 1u);
  EXPECT_EQ(v.containers[0].requests,
            (std::vector<ResourceAmount>{{"cpu", Amount::FromMilli(500)}}));
  EXPECT_EQ(v.containers[0].limits,
            (std::vector<ResourceAmount>{{"cpu", Amount::FromMilli(1000)},
                                         {"memory", Amount::FromMilli(1024000)}}));
  EXPECT_FALSE(v.containers[0].restart_always);
  ASSERT_EQ(v.init_containers.size(), 2u);
  EXPECT_TRUE(v.init_containers[0].restart_always);
  EXPECT_TRUE(v.init_containers[1].requests.empty());
  EXPECT_EQ(v.overhead, (std::vector<ResourceAmount>{{"cpu", Amount::FromMilli(100)}}));
  ASSERT_NE(v.node_selector, nullptr);
  EXPECT_EQ((*v.node_selector)["zone"], "a");
  ASSERT_EQ(v.required_node_affinity.size(), 2u);
  const auto& term = v.required_node_affinity[0];
  ASSERT_EQ(term.size(), 3u);
  EXPECT_EQ(term[0].key, "gpu");
  EXPECT_EQ(term[0].op, NodeSelectorOperator::kIn);
  EXPECT_EQ(term[0].values, (std::vector<std::string_view>{"b", "a"}));  // Spec order; strings only.
  EXPECT_EQ(term[1].op, NodeSelectorOperator::kDoesNotExist);
  EXPECT_EQ(term[2].op, NodeSelectorOperator::kUnknown);
  EXPECT_TRUE(v.required_node_affinity[1].empty());
  ASSERT_NE(v.tolerations, nullptr);
  EXPECT_EQ(v.tolerations->size(), 1u);

  const PodSetTemplateView empty = PodSetTemplateView::Parse(Json::object());
  EXPECT_TRUE(empty.containers.empty());
  EXPECT_EQ(empty.node_selector, nullptr);
  EXPECT_EQ(empty.tolerations, nullptr);
  EXPECT_TRUE(empty.required_node_affinity.empty());
}

TEST(QueueViewsTest, LocalQueue) {
  const Json lq = Json::parse(R"({"metadata": {"name": "lq", "namespace": "ns"},
                                  "spec": {"clusterQueue": "cq", "stopPolicy": "Hold"}})");
  const LocalQueueView l = LocalQueueView::Parse(lq);
  EXPECT_EQ(l.meta.Key(), "ns/lq");
  EXPECT_EQ(l.cluster_queue, "cq");
  EXPECT_EQ(l.stop_policy, StopPolicy::kHold);
  EXPECT_EQ(LocalQueueView::Parse(Json::object()).stop_policy, StopPolicy::kNone);
  const Json draining = Json::parse(R"({"spec": {"stopPolicy": "HoldAndDrain"}})");
  EXPECT_EQ(LocalQueueView::Parse(draining).stop_policy, StopPolicy::kHoldAndDrain);
  EXPECT_EQ(StopPolicyOf(draining), StopPolicy::kHoldAndDrain);
  EXPECT_EQ(StopPolicyOf(lq), StopPolicy::kHold);
  EXPECT_EQ(StopPolicyOf(Json::object()), StopPolicy::kNone);
}

TEST(QueueViewsTest, ResourceGroups) {
  const Json cq = Json::parse(R"({"metadata": {"name": "cq"}, "spec": {"resourceGroups": [
      {"coveredResources": ["cpu", "memory"], "flavors": [
        {"name": "on-demand", "resources": [
          {"name": "cpu", "nominalQuota": "4", "borrowingLimit": "2"},
          {"name": "memory", "nominalQuota": "1Gi", "lendingLimit": "0"}]},
        {"name": "spot", "resources": [{"name": "cpu"}]}]},
      {"coveredResources": ["nvidia.com/gpu", 3], "flavors": [{"name": "a100"}]}]}})");
  const ResourceGroupsView v = ResourceGroupsView::Parse(cq);
  ASSERT_EQ(v.groups.size(), 2u);
  EXPECT_EQ(v.groups[0].covered_resources, (std::vector<std::string_view>{"cpu", "memory"}));
  EXPECT_EQ(v.groups[1].covered_resources,
            (std::vector<std::string_view>{"nvidia.com/gpu"}));  // Non-strings skipped.
  ASSERT_EQ(v.groups[0].flavors.size(), 2u);
  const FlavorQuotasView& od = v.groups[0].flavors[0];
  EXPECT_EQ(od.name, "on-demand");
  ASSERT_EQ(od.resources.size(), 2u);
  EXPECT_EQ(od.resources[0].name, "cpu");
  EXPECT_EQ(od.resources[0].nominal_quota, Amount::FromMilli(4000));
  EXPECT_EQ(od.resources[0].borrowing_limit, Amount::FromMilli(2000));
  EXPECT_EQ(od.resources[0].lending_limit, std::nullopt);
  EXPECT_EQ(od.resources[1].nominal_quota, Amount::FromMilli(int64_t{1073741824} * 1000));
  EXPECT_EQ(od.resources[1].lending_limit, Amount());
  EXPECT_EQ(v.groups[0].flavors[1].resources[0].nominal_quota, Amount());  // Unset.
  EXPECT_EQ(v.groups[1].flavors[0].name, "a100");
  EXPECT_TRUE(v.Covers("memory"));
  EXPECT_TRUE(v.Covers("nvidia.com/gpu"));
  EXPECT_FALSE(v.Covers("pods"));
  EXPECT_TRUE(ResourceGroupsView::Parse(Json::object()).groups.empty());
}

TEST(QueueViewsTest, ClusterQueuePolicies) {
  const Json cq = Json::parse(R"({"metadata": {"name": "cq"}, "spec": {
      "cohortName": "co", "queueingStrategy": "StrictFIFO", "stopPolicy": "HoldAndDrain",
      "namespaceSelector": {"matchLabels": {"team": "a"}},
      "flavorFungibility": {"whenCanBorrow": "TryNextFlavor", "whenCanPreempt": "MayStopSearch",
                            "preference": "PreemptionOverBorrowing"},
      "preemption": {"withinClusterQueue": "LowerPriority", "reclaimWithinCohort": "Any",
                     "borrowWithinCohort": {"policy": "LowerPriority", "maxPriorityThreshold": 5}},
      "fairSharing": {"weight": "2500m"}}})");
  const ClusterQueueView v = ClusterQueueView::Parse(cq);
  EXPECT_EQ(v.meta.name, "cq");
  EXPECT_EQ(v.cohort_name, "co");
  EXPECT_EQ(v.queueing_strategy, QueueingStrategy::kStrictFIFO);
  EXPECT_EQ(v.stop_policy, StopPolicy::kHoldAndDrain);
  ASSERT_NE(v.namespace_selector, nullptr);
  EXPECT_TRUE(v.namespace_selector->contains("matchLabels"));
  EXPECT_EQ(v.when_can_borrow, FungibilityPolicy::kTryNextFlavor);
  EXPECT_EQ(v.when_can_preempt, FungibilityPolicy::kMayStopSearch);
  EXPECT_EQ(v.fungibility_preference, FungibilityPreference::kPreemptionOverBorrowing);
  EXPECT_EQ(v.within_cluster_queue, PreemptionPolicy::kLowerPriority);
  EXPECT_EQ(v.reclaim_within_cohort, PreemptionPolicy::kAny);
  EXPECT_EQ(v.borrow_within_cohort, PreemptionPolicy::kLowerPriority);
  EXPECT_EQ(v.borrow_max_priority_threshold, 5);
  EXPECT_DOUBLE_EQ(v.fair_sharing_weight, 2.5);

  // Kueue's defaults; the v1beta1 name of the cohort.
  const Json defaulted = Json::parse(R"({"spec": {"cohort": "old", "namespaceSelector": null,
      "preemption": {"withinClusterQueue": "Sometimes"}, "fairSharing": {"weight": "x"}}})");
  const ClusterQueueView d = ClusterQueueView::Parse(defaulted);
  EXPECT_EQ(d.cohort_name, "old");
  EXPECT_EQ(d.queueing_strategy, QueueingStrategy::kBestEffortFIFO);
  EXPECT_EQ(d.stop_policy, StopPolicy::kNone);
  EXPECT_EQ(d.namespace_selector, nullptr);  // null is Kueue's nil: no namespace.
  EXPECT_EQ(d.when_can_borrow, FungibilityPolicy::kMayStopSearch);
  EXPECT_EQ(d.when_can_preempt, FungibilityPolicy::kTryNextFlavor);
  EXPECT_EQ(d.fungibility_preference, FungibilityPreference::kBorrowingOverPreemption);
  EXPECT_EQ(d.within_cluster_queue, PreemptionPolicy::kNever);  // Unknown: Never.
  EXPECT_EQ(d.borrow_max_priority_threshold, std::nullopt);
  EXPECT_DOUBLE_EQ(d.fair_sharing_weight, 1);  // Unparsable: the default.
}

TEST(QueueViewsTest, CohortAndResourceFlavor) {
  // A view points into its JSON: each object is kept for as long as its view.
  const Json cohort = Json::parse(
      R"({"metadata": {"name": "co"}, "spec": {"parentName": "root", "fairSharing": {"weight": 3}}})");
  const CohortView c = CohortView::Parse(cohort);
  EXPECT_EQ(c.meta.name, "co");
  EXPECT_EQ(c.parent_name, "root");
  EXPECT_DOUBLE_EQ(c.fair_sharing_weight, 3);
  const Json old_cohort = Json::parse(R"({"spec": {"parent": "p"}})");
  const CohortView old = CohortView::Parse(old_cohort);
  EXPECT_EQ(old.parent_name, "p");
  EXPECT_DOUBLE_EQ(old.fair_sharing_weight, 1);

  const Json flavor = Json::parse(R"({
      "metadata": {"name": "spot"},
      "spec": {"nodeLabels": {"instance": "spot"},
               "nodeTaints": [{"key": "spot", "value": "true", "effect": "NoSchedule"}],
               "tolerations": [{"key": "spot", "operator": "Exists"}]}})");
  const ResourceFlavorView rf = ResourceFlavorView::Parse(flavor);
  EXPECT_EQ(rf.meta.name, "spot");
  ASSERT_NE(rf.node_labels, nullptr);
  EXPECT_EQ((*rf.node_labels)["instance"], "spot");
  ASSERT_NE(rf.node_taints, nullptr);
  EXPECT_EQ(rf.node_taints->size(), 1u);
  ASSERT_NE(rf.tolerations, nullptr);
  EXPECT_EQ(rf.tolerations->size(), 1u);
  const Json bare_flavor = Json::parse(R"({"spec": {"nodeLabels": [], "tolerations": {}}})");
  const ResourceFlavorView bare = ResourceFlavorView::Parse(bare_flavor);
  EXPECT_EQ(bare.node_labels, nullptr);
  EXPECT_EQ(bare.node_taints, nullptr);
  EXPECT_EQ(bare.tolerations, nullptr);
}

TEST(QueueViewsTest, SpecOf) {
  const Json obj = Json::parse(R"({"spec": {"a": 1}})");
  EXPECT_EQ(&SpecOf(obj), &obj["spec"]);  // In place, no copy.
  EXPECT_TRUE(SpecOf(Json::object()).is_null());
}

TEST(PodSetViewTest, ParsesOnePodSet) {
  const PodSetView p = PodSetView::Parse(Json::parse(R"({"count": 2, "minCount": 1})"));
  EXPECT_EQ(p.name, "main");
  EXPECT_EQ(p.count, 2);
  EXPECT_EQ(p.min_count, 1);
  EXPECT_EQ(p.pod_template, nullptr);
}

}  // namespace
}  // namespace batchd::api::kueue
