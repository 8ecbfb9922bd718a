#include "api/core/v1/pod_view.h"

#include "api/meta/time_util.h"
#include "gtest/gtest.h"

namespace batchd::api::core_v1 {
namespace {

TEST(PodViewTest, ParsesTheFieldsComponentsRead) {
  const Json pod = Json::parse(R"({
    "metadata": {"name": "p", "namespace": "ns", "uid": "u1", "generation": 2,
                 "labels": {"app": "x"}, "annotations": {"a": "b"},
                 "finalizers": ["batch.kubernetes.io/job-tracking"],
                 "ownerReferences": [{"uid": "j1", "controller": true}],
                 "creationTimestamp": "2024-01-01T00:00:00Z",
                 "deletionTimestamp": "2024-01-01T00:01:00Z"},
    "spec": {"nodeName": "n1", "restartPolicy": "Never", "priority": 7,
             "terminationGracePeriodSeconds": 30, "activeDeadlineSeconds": 90,
             "schedulingGates": [{"name": "g"}]},
    "status": {"phase": "Failed", "reason": "Evicted", "startTime": "2024-01-01T00:00:05Z",
               "conditions": [{"type": "DisruptionTarget", "status": "True"}],
               "containerStatuses": [{"name": "c", "restartCount": 2, "ready": false,
                                      "state": {"terminated": {"exitCode": 3,
                                                               "reason": "Error"}}}]}})");
  PodView v = PodView::Parse(pod);
  EXPECT_EQ(v.meta.Key(), "ns/p");
  EXPECT_EQ(v.meta.uid, "u1");
  EXPECT_EQ(v.meta.generation, 2);
  EXPECT_EQ(v.meta.Label("app"), "x");
  EXPECT_FALSE(v.meta.Label("nope").has_value());
  EXPECT_EQ(v.meta.Annotation("a"), "b");
  EXPECT_TRUE(v.meta.HasFinalizer("batch.kubernetes.io/job-tracking"));
  EXPECT_EQ(v.meta.ControllerUid(), "j1");
  EXPECT_TRUE(v.meta.being_deleted());
  EXPECT_EQ(*v.meta.DeletionTime() - *v.meta.CreationTime(), absl::Minutes(1));
  EXPECT_EQ(v.node_name, "n1");
  EXPECT_EQ(v.restart_policy, RestartPolicy::kNever);
  EXPECT_EQ(v.priority, 7);
  EXPECT_EQ(v.termination_grace_period_seconds, 30);
  EXPECT_EQ(v.active_deadline_seconds, 90);
  EXPECT_TRUE(v.scheduling_gated);
  EXPECT_EQ(v.phase, PodPhase::kFailed);
  EXPECT_TRUE(v.terminal());
  EXPECT_EQ(v.reason, "Evicted");
  EXPECT_EQ(v.ConditionStatus("DisruptionTarget"), "True");
  EXPECT_EQ(v.ConditionStatus("Ready"), "");
  const ContainerStatusView* c = v.ContainerStatus("c");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->restart_count, 2);
  EXPECT_TRUE(c->state.terminated());
  EXPECT_EQ(c->state.exit_code, 3);
  EXPECT_EQ(c->state.reason, "Error");
  EXPECT_EQ(c->last_state.kind, ContainerStateView::Kind::kNone);
}

TEST(PodViewTest, EmptyAndMistypedObjectsReadAsDefaults) {
  for (const Json& pod : {Json(), Json::object(),
                          Json{{"metadata", 1}, {"spec", "x"}, {"status", {{"phase", 3}}}}}) {
    PodView v = PodView::Parse(pod);
    EXPECT_EQ(v.meta.name, "");
    EXPECT_FALSE(v.meta.being_deleted());
    EXPECT_EQ(v.phase, PodPhase::kUnknown);
    EXPECT_EQ(v.restart_policy, RestartPolicy::kAlways);
    EXPECT_FALSE(v.termination_grace_period_seconds.has_value());
    EXPECT_FALSE(v.active_deadline_seconds.has_value());
    EXPECT_TRUE(v.container_statuses.empty());
    EXPECT_EQ(v.conditions, nullptr);
  }
}

TEST(PodViewTest, TemplateSpecFields) {
  const Json tmpl = Json::parse(R"({"metadata": {"labels": {"app": "x"}}, "spec": {
      "priorityClassName": "high",
      "containers": [{"name": "c", "image": "i",
                      "resources": {"requests": {"cpu": "1"}, "limits": {"cpu": "2"}}}],
      "initContainers": [{"name": "init"}],
      "nodeSelector": {"zone": "a"},
      "tolerations": [{"key": "spot", "operator": "Exists"}],
      "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {}}}}})");
  const PodView v = PodView::Parse(tmpl);
  EXPECT_EQ(v.priority_class_name, "high");
  ASSERT_NE(v.containers, nullptr);
  ASSERT_EQ(v.containers->size(), 1u);
  const ContainerSpecView c = ContainerSpecView::Parse((*v.containers)[0]);
  EXPECT_EQ(c.name, "c");
  EXPECT_EQ(c.image, "i");
  ASSERT_NE(c.requests, nullptr);
  EXPECT_EQ((*c.requests)["cpu"], "1");
  ASSERT_NE(c.limits, nullptr);
  EXPECT_EQ((*c.limits)["cpu"], "2");
  ASSERT_NE(v.init_containers, nullptr);
  const ContainerSpecView init = ContainerSpecView::Parse((*v.init_containers)[0]);
  EXPECT_EQ(init.requests, nullptr);
  EXPECT_EQ(init.limits, nullptr);
  ASSERT_NE(v.node_selector, nullptr);
  EXPECT_EQ((*v.node_selector)["zone"], "a");
  ASSERT_NE(v.tolerations, nullptr);
  EXPECT_EQ(v.tolerations->size(), 1u);
  ASSERT_NE(v.node_affinity, nullptr);

  const PodView bare = PodView::Parse(Json::parse(R"({"spec": {"nodeSelector": "x"}})"));
  EXPECT_EQ(bare.containers, nullptr);
  EXPECT_EQ(bare.node_selector, nullptr);  // Mistyped: unset.
  EXPECT_EQ(bare.node_affinity, nullptr);
}

TEST(PodViewTest, HasConditionLooksAtEveryEntry) {
  const Json pod = Json::parse(R"({"status": {"conditions": [
    {"type": "DisruptionTarget", "status": "False"},
    {"type": "DisruptionTarget", "status": "True"},
    {"type": "Ready", "status": "True"}]}})");
  const PodView v = PodView::Parse(pod);
  EXPECT_TRUE(v.HasCondition("DisruptionTarget", "True"));  // The second of its type.
  EXPECT_TRUE(v.HasCondition("DisruptionTarget", "False"));
  EXPECT_FALSE(v.HasCondition("Ready", "False"));
  EXPECT_FALSE(v.HasCondition("PodScheduled", "True"));
  EXPECT_FALSE(PodView::Parse(Json::object()).HasCondition("Ready", "True"));
}

TEST(PodViewTest, ConditionTransitionTimeIsTheFirstParsableOfTypeAndStatus) {
  const Json pod = Json::parse(R"({"status": {"conditions": [
    {"type": "Ready", "status": "True", "lastTransitionTime": "2024-01-01T00:00:01Z"},
    {"type": "Ready", "status": "False", "lastTransitionTime": "bad"},
    {"type": "Ready", "status": "False", "lastTransitionTime": "2024-01-01T00:00:02Z"},
    {"type": "Ready", "status": "False", "lastTransitionTime": "2024-01-01T00:00:03Z"}]}})");
  const PodView v = PodView::Parse(pod);
  EXPECT_EQ(v.ConditionTransitionTime("Ready", "False"),
            *meta::ParseRfc3339("2024-01-01T00:00:02Z"));
  EXPECT_EQ(v.ConditionTransitionTime("Ready", "True"),
            *meta::ParseRfc3339("2024-01-01T00:00:01Z"));
  EXPECT_EQ(v.ConditionTransitionTime("PodScheduled", "True"), std::nullopt);
  EXPECT_EQ(PodView::Parse(Json::object()).ConditionTransitionTime("Ready", "False"),
            std::nullopt);
}

}  // namespace
}  // namespace batchd::api::core_v1
