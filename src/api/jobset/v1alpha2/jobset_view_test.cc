#include "api/jobset/v1alpha2/jobset_view.h"

#include "api/testing/jobset_builders.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace batchd::api::jobset_v1alpha2 {
namespace {

using api::testing::MakeJobSet;
using ::testing::ElementsAre;

TEST(JobSetViewTest, Spec) {
  const Json js = MakeJobSet("js")
                      .ReplicatedJob("leader", 1)
                      .ReplicatedJob("workers", 4, 2)
                      .DependsOn("workers", "leader", "Complete")
                      .SuccessPolicy("Any", {"workers"})
                      .MaxRestarts(3)
                      .RestartStrategy("BlockingRecreate")
                      .Rule("r", "RestartJobSetAndIgnoreMaxRestarts", {"PodFailurePolicy"},
                            {"workers"}, {"code 3"})
                      .Coordinator("leader", 0, 0)
                      .Subdomain("net")
                      .Ttl(30)
                      .ManagedBy("example.com/other")
                      .Set("/spec/network/enableDNSHostnames", true)
                      .Obj();
  const JobSetView v = JobSetView::Parse(js);
  ASSERT_EQ(v.spec.replicated_jobs.size(), 2u);
  EXPECT_EQ(v.spec.replicated_jobs[1].name, "workers");
  EXPECT_EQ(v.spec.replicated_jobs[1].replicas, 4);
  ASSERT_EQ(v.spec.replicated_jobs[1].depends_on.size(), 1u);
  EXPECT_EQ(v.spec.replicated_jobs[1].depends_on[0].status, DependencyStatus::kComplete);
  EXPECT_EQ(v.spec.GlobalReplicas(), 5);
  EXPECT_TRUE(v.spec.success_policy.any);
  EXPECT_TRUE(v.spec.success_policy.Targets("workers"));
  EXPECT_FALSE(v.spec.success_policy.Targets("leader"));
  ASSERT_TRUE(v.spec.failure_policy.has_value());
  EXPECT_EQ(v.spec.failure_policy->max_restarts, 3);
  EXPECT_EQ(v.spec.failure_policy->restart_strategy, RestartStrategy::kBlockingRecreate);
  ASSERT_EQ(v.spec.failure_policy->rules.size(), 1u);
  EXPECT_EQ(v.spec.failure_policy->rules[0].action,
            FailurePolicyAction::kRestartJobSetAndIgnoreMaxRestarts);
  EXPECT_THAT(v.spec.failure_policy->rules[0].on_job_failure_message_patterns,
              ElementsAre("code 3"));
  EXPECT_EQ(v.Subdomain(), "net");
  EXPECT_TRUE(v.spec.enable_dns_hostnames);
  EXPECT_EQ(v.CoordinatorEndpoint(), "js-leader-0-0.net");
  EXPECT_EQ(v.spec.ttl_seconds_after_finished, 30);
  EXPECT_TRUE(v.ManagedByOther());
}

TEST(JobSetViewTest, DefaultsOfAbsentFields) {
  const Json js = MakeJobSet("js").ReplicatedJob("w", 1).Obj();
  const JobSetView v = JobSetView::Parse(js);
  EXPECT_FALSE(v.spec.success_policy.any);
  EXPECT_FALSE(v.spec.failure_policy.has_value());
  EXPECT_FALSE(v.spec.enable_dns_hostnames);
  EXPECT_EQ(v.Subdomain(), "js");
  EXPECT_FALSE(v.ManagedByOther());
  EXPECT_EQ(v.CoordinatorEndpoint(), "");
  EXPECT_EQ(v.status.restarts, 0);
  EXPECT_FALSE(v.status.Finished());
  Json managed = js;
  managed["spec"]["managedBy"] = "jobset.sigs.k8s.io/jobset-controller";
  EXPECT_FALSE(JobSetView::Parse(managed).ManagedByOther());
}

TEST(JobSetViewTest, Status) {
  Json js = MakeJobSet("js").ReplicatedJob("w", 1).Obj();
  js["status"] = {{"restarts", 2},
                  {"restartsCountTowardsMax", 1},
                  {"replicatedJobsStatus",
                   {{{"name", "w"}, {"ready", 1}, {"succeeded", 2}, {"failed", 3}, {"active", 4},
                     {"suspended", 5}}}},
                  {"conditions",
                   {{{"type", "Failed"}, {"status", "True"},
                     {"lastTransitionTime", "2026-01-01T00:00:10Z"}}}}};
  const JobSetStatusView s = JobSetStatusView::Parse(js);
  EXPECT_EQ(s.restarts, 2);
  EXPECT_EQ(s.restarts_count_towards_max, 1);
  ASSERT_NE(s.ReplicatedJob("w"), nullptr);
  EXPECT_EQ(s.ReplicatedJob("w")->suspended, 5);
  EXPECT_TRUE(s.Finished());
  EXPECT_EQ(s.FinishedTime(), absl::FromUnixSeconds(1767225610));
}

TEST(JobSetViewTest, ChildJobName) { EXPECT_EQ(ChildJobName("js", "workers", 3), "js-workers-3"); }

}  // namespace
}  // namespace batchd::api::jobset_v1alpha2
