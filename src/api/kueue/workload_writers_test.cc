#include "api/kueue/workload_writers.h"

#include "api/kueue/queue_views.h"
#include "api/meta/conditions.h"
#include "gtest/gtest.h"

namespace batchd::api::kueue {
namespace {

const absl::Time kT0 = absl::FromUnixSeconds(1000);

Json PodTemplate() {
  return Json::parse(R"({
    "metadata": {"labels": {"app": "x"}},
    "spec": {"containers": [{"name": "c", "image": "i",
                             "resources": {"limits": {"cpu": "1", "nvidia.com/gpu": "2"},
                                           "requests": {"cpu": "500m"}}}],
             "initContainers": [{"name": "init", "resources": {"limits": {"memory": "1Gi"}}},
                                {"name": "bare"}]}})");
}

TEST(WorkloadWritersTest, NewWorkloadReadsBackThroughTheViews) {
  std::vector<Json> pod_sets;
  pod_sets.push_back(NewPodSet("main", 4, 2, PodTemplate()));
  pod_sets.push_back(NewPodSet("workers", 3, std::nullopt, PodTemplate()));
  const Json wl = NewWorkload("ns", "job-a-12345", "lq", pod_sets);
  EXPECT_EQ(wl["apiVersion"], "kueue.x-k8s.io/v1beta2");
  EXPECT_EQ(wl["kind"], "Workload");

  const WorkloadView v = WorkloadView::Parse(wl);
  EXPECT_EQ(v.meta.Key(), "ns/job-a-12345");
  EXPECT_EQ(v.queue_name, "lq");
  EXPECT_TRUE(v.active);
  EXPECT_FALSE(v.has_admission);

  const WorkloadPodSetsView ps = WorkloadPodSetsView::Parse(wl);
  ASSERT_EQ(ps.pod_sets.size(), 2u);
  EXPECT_EQ(ps.pod_sets[0].name, "main");
  EXPECT_EQ(ps.pod_sets[0].count, 4);
  EXPECT_EQ(ps.pod_sets[0].min_count, 2);
  ASSERT_NE(ps.pod_sets[0].pod_template, nullptr);
  EXPECT_EQ(*ps.pod_sets[0].pod_template, PodTemplate());
  EXPECT_EQ(ps.pod_sets[1].name, "workers");
  EXPECT_EQ(ps.pod_sets[1].min_count, std::nullopt);
  EXPECT_FALSE(wl["spec"]["podSets"][1].contains("minCount")) << "absent, not null";
  EXPECT_EQ(PodSetView::Parse(pod_sets[1]).count, 3) << "a pod set parses on its own";
}

TEST(WorkloadWritersTest, SetPodSetsReplacesAndSetQueueName) {
  Json wl = NewWorkload("ns", "w", "a", {NewPodSet("main", 1, std::nullopt, Json::object())});
  SetPodSets(wl, {NewPodSet("x", 2, std::nullopt, Json::object()),
                  NewPodSet("y", 3, std::nullopt, Json::object())});
  SetQueueName(wl, "b");
  const WorkloadPodSetsView ps = WorkloadPodSetsView::Parse(wl);
  ASSERT_EQ(ps.pod_sets.size(), 2u);
  EXPECT_EQ(ps.pod_sets[0].name, "x");
  EXPECT_EQ(ps.pod_sets[1].count, 3);
  EXPECT_EQ(WorkloadView::Parse(wl).queue_name, "b");

  Json empty;  // null: made an object.
  SetPodSets(empty, {});
  EXPECT_EQ(empty, Json::parse(R"({"spec": {"podSets": []}})"));
}

TEST(WorkloadWritersTest, UseLimitsAsMissingRequests) {
  Json tmpl = PodTemplate();
  UseLimitsAsMissingRequests(tmpl);
  const Json& spec = tmpl["spec"];
  EXPECT_EQ(spec["containers"][0]["resources"]["requests"],
            Json({{"cpu", "500m"}, {"nvidia.com/gpu", "2"}}))
      << "a request wins over its limit";
  EXPECT_EQ(spec["initContainers"][0]["resources"]["requests"], Json({{"memory", "1Gi"}}));
  EXPECT_FALSE(spec["initContainers"][1].contains("resources")) << "no limits: left alone";

  Json no_spec = {{"metadata", Json::object()}};
  UseLimitsAsMissingRequests(no_spec);
  EXPECT_EQ(no_spec, Json({{"metadata", Json::object()}}));
}

TEST(WorkloadWritersTest, Priority) {
  Json wl = NewWorkload("ns", "w", "lq", {});
  const Json wpc = Json::parse(R"({"metadata": {"name": "high"}, "value": 1000})");
  SetPriorityClass(wl, PriorityClassSource::kWorkloadPriorityClass, wpc);
  EXPECT_EQ(wl["spec"]["priorityClassRef"],
            Json::parse(R"({"group": "kueue.x-k8s.io", "kind": "WorkloadPriorityClass",
                            "name": "high"})"));
  EXPECT_EQ(wl["spec"]["priority"], 1000);

  const Json pc = Json::parse(R"({"metadata": {"name": "low"}, "value": -5})");
  SetPriorityClass(wl, PriorityClassSource::kPriorityClass, pc);
  EXPECT_EQ(wl["spec"]["priorityClassRef"],
            Json::parse(R"({"group": "scheduling.k8s.io", "kind": "PriorityClass",
                            "name": "low"})"));
  EXPECT_EQ(wl["spec"]["priority"], -5);

  Json plain = NewWorkload("ns", "w", "lq", {});
  SetPriority(plain, 0);
  EXPECT_EQ(plain["spec"]["priority"], 0);
  EXPECT_FALSE(plain["spec"].contains("priorityClassRef"));
}

TEST(WorkloadWritersTest, Finished) {
  Json wl = NewWorkload("ns", "w", "lq", {});
  EXPECT_TRUE(SetFinished(wl, /*succeeded=*/false, "backoff", kT0));
  auto c = meta::GetCondition(wl, kFinished);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(*c, (meta::Condition{kFinished, meta::kConditionTrue, "Failed", "backoff"}));
  EXPECT_FALSE(SetFinished(wl, false, "backoff", kT0 + absl::Seconds(1))) << "unchanged";
  EXPECT_TRUE(SetFinished(wl, true, "done", kT0));
  EXPECT_EQ(meta::GetCondition(wl, kFinished)->reason, "Succeeded");
}

TEST(WorkloadWritersTest, PodsReady) {
  Json wl = NewWorkload("ns", "w", "lq", {});
  wl["metadata"]["generation"] = 3;
  EXPECT_TRUE(SetPodsReady(wl, PodsReadyState::kWaitForStart, kT0));
  auto c = meta::GetCondition(wl, kPodsReady);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->status, meta::kConditionFalse);
  EXPECT_EQ(c->reason, "WaitForStart");
  EXPECT_EQ(c->message, "Not all pods are ready or succeeded");

  EXPECT_TRUE(SetPodsReady(wl, PodsReadyState::kReady, kT0 + absl::Seconds(5)));
  c = meta::GetCondition(wl, kPodsReady);
  EXPECT_EQ(c->status, meta::kConditionTrue);
  EXPECT_EQ(c->reason, "PodsReady");
  EXPECT_EQ(meta::ConditionTransitionTime(wl, kPodsReady), kT0 + absl::Seconds(5));
  EXPECT_EQ(wl["status"]["conditions"][0]["observedGeneration"], 3);

  EXPECT_TRUE(SetPodsReady(wl, PodsReadyState::kWaitForRecovery, kT0 + absl::Seconds(9)));
  EXPECT_EQ(meta::GetCondition(wl, kPodsReady)->reason, "WaitForRecovery");
  EXPECT_EQ(wl["status"]["conditions"].size(), 1u);
}

TEST(WorkloadWritersTest, ClearReservation) {
  Json wl = Json::parse(R"({
    "metadata": {"name": "w", "namespace": "ns"},
    "spec": {"queueName": "lq", "active": false},
    "status": {"admission": {"clusterQueue": "cq", "podSetAssignments": [{"name": "main"}]},
               "conditions": [{"type": "QuotaReserved", "status": "True",
                               "reason": "QuotaReserved"},
                              {"type": "Admitted", "status": "True", "reason": "Admitted"},
                              {"type": "Evicted", "status": "True", "reason": "Preempted",
                               "message": "preempted by x"}]}})");
  ClearReservation(wl, "Preempted", "preempted by x", /*requeue=*/false, kT0);
  const WorkloadView v = WorkloadView::Parse(wl);
  EXPECT_FALSE(v.has_admission);
  EXPECT_TRUE(WorkloadPodSetsView::Parse(wl).assignments.empty());
  EXPECT_EQ(*meta::GetCondition(wl, kQuotaReserved),
            (meta::Condition{kQuotaReserved, meta::kConditionFalse, "Pending", "preempted by x"}));
  EXPECT_EQ(*meta::GetCondition(wl, kAdmitted),
            (meta::Condition{kAdmitted, meta::kConditionFalse, "NoReservation",
                             "The workload has no reservation"}));
  EXPECT_EQ(*meta::GetCondition(wl, kRequeued),
            (meta::Condition{kRequeued, meta::kConditionFalse, "Preempted", "preempted by x"}));
  EXPECT_TRUE(meta::IsConditionTrue(wl, kEvicted)) << "the eviction stays recorded";

  ClearReservation(wl, "Preempted", "preempted by x", /*requeue=*/true, kT0);
  EXPECT_TRUE(meta::IsConditionTrue(wl, kRequeued));
}

}  // namespace
}  // namespace batchd::api::kueue
