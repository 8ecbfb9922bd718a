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

TEST(QueueViewsTest, LocalQueueAndClusterQueue) {
  const Json lq = Json::parse(R"({"metadata": {"name": "lq", "namespace": "ns"},
                                  "spec": {"clusterQueue": "cq", "stopPolicy": "Hold"}})");
  const LocalQueueView l = LocalQueueView::Parse(lq);
  EXPECT_EQ(l.cluster_queue, "cq");
  ASSERT_NE(l.spec, nullptr);
  EXPECT_EQ((*l.spec)["stopPolicy"], "Hold");
  EXPECT_NE(LocalQueueView::Parse(Json::object()).spec, nullptr);

  const Json cq = Json::parse(R"({"metadata": {"name": "cq"}, "spec": {"resourceGroups": [
      {"coveredResources": ["cpu", "memory"], "flavors": [{"name": "on-demand"}, {"name": "spot"}]},
      {"coveredResources": ["nvidia.com/gpu", 3], "flavors": [{"name": "a100"}]}]}})");
  const ClusterQueueView c = ClusterQueueView::Parse(cq);
  ASSERT_EQ(c.resource_groups.size(), 2u);
  EXPECT_EQ(c.resource_groups[0].covered_resources,
            (std::vector<std::string_view>{"cpu", "memory"}));
  EXPECT_EQ(c.resource_groups[0].flavors, (std::vector<std::string_view>{"on-demand", "spot"}));
  EXPECT_EQ(c.resource_groups[1].covered_resources,
            (std::vector<std::string_view>{"nvidia.com/gpu"}));  // Non-strings skipped.
  EXPECT_TRUE(ClusterQueueView::Parse(Json::object()).resource_groups.empty());
}

TEST(ResourceFlavorViewTest, SchedulingDirectives) {
  const Json rf = Json::parse(R"({"metadata": {"name": "spot"},
    "spec": {"nodeLabels": {"instance-type": "spot"},
             "tolerations": [{"key": "spot", "operator": "Exists"}]}})");
  const ResourceFlavorView v = ResourceFlavorView::Parse(rf);
  EXPECT_EQ(v.meta.name, "spot");
  ASSERT_NE(v.node_labels, nullptr);
  EXPECT_EQ((*v.node_labels)["instance-type"], "spot");
  ASSERT_NE(v.tolerations, nullptr);
  EXPECT_EQ(v.tolerations->size(), 1u);
  const ResourceFlavorView bare = ResourceFlavorView::Parse(
      Json::parse(R"({"spec": {"nodeLabels": [], "tolerations": {}}})"));
  EXPECT_EQ(bare.node_labels, nullptr);  // Mistyped: unset.
  EXPECT_EQ(bare.tolerations, nullptr);
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
