// The queue manager over an in-memory registry on a FakeClock: Kueue objects
// created directly (no Jobs), decisions observed as Workload / queue status.
#include "controllers/queueing/queue_manager_test_env.h"

namespace batchd::controllers::queueing {
namespace {

using api::Json;
using testing::QueueManagerTest;
using ::testing::HasSubstr;

TEST_F(QueueManagerTest, AdmitsUpToQuotaAndReportsStatus) {
  Start();
  Basic();
  for (const char* n : {"a", "b", "c", "d"}) {
    Workload(n, "lq", "1");  // Distinct creation times: FIFO order is a, b, c, d.
    clock_.Advance(absl::Seconds(1));
  }
  Settle();
  EXPECT_TRUE(Admitted("a"));
  EXPECT_TRUE(Admitted("b"));
  EXPECT_TRUE(Admitted("c"));
  EXPECT_FALSE(Admitted("d"));
  Json a = Wl("a");
  EXPECT_EQ(a["status"]["admission"]["clusterQueue"], "cq");
  EXPECT_EQ(a["status"]["admission"]["podSetAssignments"][0]["flavors"]["cpu"], "default");
  EXPECT_EQ(a["status"]["admission"]["podSetAssignments"][0]["resourceUsage"]["cpu"], "1");
  EXPECT_EQ(Cond(a, "QuotaReserved"), "True/QuotaReserved");
  EXPECT_EQ(CondMessage(a, "QuotaReserved"), "Quota reserved in ClusterQueue cq");
  Json d = Wl("d");
  EXPECT_EQ(Cond(d, "QuotaReserved"), "False/Pending");
  EXPECT_THAT(CondMessage(d, "QuotaReserved"), HasSubstr("insufficient"));

  Json cq = Get("clusterqueues", "", "cq");
  EXPECT_EQ(cq["status"]["pendingWorkloads"], 1);
  EXPECT_EQ(cq["status"]["reservingWorkloads"], 3);
  EXPECT_EQ(cq["status"]["admittedWorkloads"], 3);
  EXPECT_EQ(cq["status"]["flavorsReservation"][0]["name"], "default");
  EXPECT_EQ(cq["status"]["flavorsReservation"][0]["resources"][0]["total"], "3");
  EXPECT_EQ(cq["status"]["flavorsUsage"][0]["resources"][0]["borrowed"], "0");
  EXPECT_EQ(Cond(cq, "Active"), "True/Ready");
  Json lq = Get("localqueues", "ns", "lq");
  EXPECT_EQ(lq["status"]["pendingWorkloads"], 1);
  EXPECT_EQ(lq["status"]["admittedWorkloads"], 3);
  EXPECT_EQ(lq["status"]["flavorsUsage"][0]["resources"][0]["total"], "3");
  EXPECT_EQ(Cond(lq, "Active"), "True/Ready");

  // Finishing one releases its quota; the pending one is admitted.
  Patch("workloads", "ns", "a",
        {{"status", {{"conditions", Json::array({{{"type", "Finished"}, {"status", "True"},
                                                  {"reason", "Succeeded"}, {"message", "done"},
                                                  {"lastTransitionTime",
                                                   api::meta::FormatRfc3339(clock_.Now())}}})}}}},
        /*status=*/true);
  Settle();
  EXPECT_TRUE(Admitted("d"));
  EXPECT_EQ(Get("clusterqueues", "", "cq")["status"]["pendingWorkloads"], 0);

  std::string m = Metrics();
  EXPECT_THAT(m, HasSubstr("kueue_admitted_workloads_total{cluster_queue=\"cq\"} 4\n"));
  EXPECT_THAT(m, HasSubstr("kueue_quota_reserved_workloads_total{cluster_queue=\"cq\"} 4\n"));
  EXPECT_THAT(m, HasSubstr("kueue_cluster_queue_nominal_quota{cohort=\"\",cluster_queue=\"cq\","
                           "flavor=\"default\",resource=\"cpu\"} 3\n"));
  EXPECT_THAT(m, HasSubstr("kueue_cluster_queue_resource_usage{cohort=\"\",cluster_queue=\"cq\","
                           "flavor=\"default\",resource=\"cpu\"} 3\n"));
  EXPECT_THAT(m, HasSubstr("kueue_admission_attempts_total{result=\"success\"} 4\n"));
}

TEST_F(QueueManagerTest, MissingQueuesArePendingWithKueueMessages) {
  Start();
  Namespace("ns");
  Flavor("default");
  Workload("w", "nolq", "1");
  Settle();
  EXPECT_EQ(Cond(Wl("w"), "QuotaReserved"), "False/Inadmissible");
  EXPECT_EQ(CondMessage(Wl("w"), "QuotaReserved"), "LocalQueue nolq doesn't exist");

  LocalQueue("ns", "nolq", "nocq");
  Settle();
  EXPECT_EQ(CondMessage(Wl("w"), "QuotaReserved"), "ClusterQueue nocq doesn't exist");
  EXPECT_EQ(Cond(Get("localqueues", "ns", "nolq"), "Active"), "False/ClusterQueueDoesNotExist");

  ClusterQueue("nocq", "2");
  Settle();
  EXPECT_TRUE(Admitted("w"));
}

TEST_F(QueueManagerTest, ClusterQueueWithMissingFlavorIsInactive) {
  Start();
  Namespace("ns");
  ClusterQueue("cq", "2");
  LocalQueue("ns", "lq", "cq");
  Workload("w", "lq", "1");
  Settle();
  Json cq = Get("clusterqueues", "", "cq");
  EXPECT_EQ(Cond(cq, "Active"), "False/FlavorNotFound");
  EXPECT_EQ(CondMessage(cq, "Active"),
            "Can't admit new workloads: references missing ResourceFlavor(s): [default].");
  EXPECT_FALSE(Admitted("w"));
  EXPECT_EQ(Cond(Get("localqueues", "ns", "lq"), "Active"), "False/ClusterQueueIsInactive");
  Flavor("default");
  Settle();
  EXPECT_TRUE(Admitted("w"));
  EXPECT_EQ(Cond(Get("clusterqueues", "", "cq"), "Active"), "True/Ready");
}

TEST_F(QueueManagerTest, PreemptionEvictsVictimThenAdmitsPreemptor) {
  Start();
  Basic({{"preemption", {{"withinClusterQueue", "LowerPriority"}}}});
  Workload("low", "lq", "3", /*priority=*/1);
  Settle();
  ASSERT_TRUE(Admitted("low"));
  Workload("high", "lq", "2", /*priority=*/10);
  Settle();
  Json low = Wl("low");
  EXPECT_EQ(Cond(low, "Evicted"), "True/Preempted");
  EXPECT_EQ(Cond(low, "Preempted"), "True/InClusterQueue");
  EXPECT_THAT(CondMessage(low, "Evicted"), HasSubstr("Preempted to accommodate"));
  EXPECT_FALSE(Admitted("high"));  // Not while the victim still holds quota.
  EXPECT_TRUE(low["status"].contains("admission"));

  ClearAdmission("low");
  EXPECT_TRUE(Admitted("high"));
  EXPECT_FALSE(Admitted("low"));
  EXPECT_THAT(Metrics(), HasSubstr("kueue_preempted_workloads_total{preempting_cluster_queue="
                                   "\"cq\",reason=\"InClusterQueue\"} 1\n"));
  EXPECT_THAT(Metrics(), HasSubstr("kueue_evicted_workloads_total{cluster_queue=\"cq\","
                                   "reason=\"Preempted\"} 1\n"));
}

TEST_F(QueueManagerTest, HoldAndDrainEvictsAndHoldBlocks) {
  Start();
  Basic();
  Workload("a", "lq", "1");
  Settle();
  ASSERT_TRUE(Admitted("a"));
  Patch("clusterqueues", "", "cq", {{"spec", {{"stopPolicy", "Hold"}}}});
  Settle();
  EXPECT_EQ(Cond(Wl("a"), "Evicted"), "");  // Hold keeps running workloads.
  Workload("b", "lq", "1");
  Settle();
  EXPECT_FALSE(Admitted("b"));
  EXPECT_EQ(CondMessage(Wl("b"), "QuotaReserved"), "ClusterQueue cq is inactive");
  EXPECT_EQ(Cond(Get("clusterqueues", "", "cq"), "Active"), "False/Stopped");

  Patch("clusterqueues", "", "cq", {{"spec", {{"stopPolicy", "HoldAndDrain"}}}});
  Settle();
  EXPECT_EQ(Cond(Wl("a"), "Evicted"), "True/ClusterQueueStopped");
  EXPECT_EQ(CondMessage(Wl("a"), "Evicted"), "The ClusterQueue is stopped");

  Patch("clusterqueues", "", "cq", {{"spec", {{"stopPolicy", "None"}}}});
  ClearAdmission("a");
  EXPECT_TRUE(Admitted("a"));
  EXPECT_TRUE(Admitted("b"));
  EXPECT_EQ(Cond(Wl("a"), "Evicted"), "False/QuotaReserved");
}

TEST_F(QueueManagerTest, LocalQueueHoldAndDrain) {
  Start();
  Basic();
  Workload("a", "lq", "1");
  Settle();
  ASSERT_TRUE(Admitted("a"));
  Patch("localqueues", "ns", "lq", {{"spec", {{"stopPolicy", "HoldAndDrain"}}}});
  Settle();
  EXPECT_EQ(Cond(Wl("a"), "Evicted"), "True/LocalQueueStopped");
  EXPECT_EQ(Cond(Get("localqueues", "ns", "lq"), "Active"), "False/Stopped");
  Workload("b", "lq", "1");
  Settle();
  EXPECT_FALSE(Admitted("b"));
}

TEST_F(QueueManagerTest, InactiveWorkloadIsEvictedAndNeverAdmitted) {
  Start();
  Basic();
  Workload("a", "lq", "1");
  Settle();
  ASSERT_TRUE(Admitted("a"));
  Patch("workloads", "ns", "a", {{"spec", {{"active", false}}}});
  Settle();
  EXPECT_EQ(Cond(Wl("a"), "Evicted"), "True/Deactivated");
  EXPECT_EQ(CondMessage(Wl("a"), "Evicted"), "The workload is deactivated");
  ClearAdmission("a");
  Settle();
  EXPECT_FALSE(Admitted("a"));
  EXPECT_FALSE(Wl("a")["status"].contains("admission"));

  Workload("b", "lq", "1");
  Patch("workloads", "ns", "b", {{"spec", {{"active", false}}}});
  Settle();
  EXPECT_FALSE(Admitted("b"));
}

TEST_F(QueueManagerTest, WaitForPodsReadyTimeoutWithBackoffAndDeactivation) {
  QueueingConfig cfg;
  cfg.wait_for_pods_ready.enable = true;
  cfg.wait_for_pods_ready.timeout = absl::Minutes(5);
  cfg.wait_for_pods_ready.requeuing.backoff_base_seconds = 10;
  cfg.wait_for_pods_ready.requeuing.backoff_limit_count = 2;
  Start(cfg);
  Basic();
  Workload("a", "lq", "1");
  Settle();
  ASSERT_TRUE(Admitted("a"));

  Advance(absl::Minutes(5) - absl::Seconds(1));
  EXPECT_EQ(Cond(Wl("a"), "Evicted"), "");
  Advance(absl::Seconds(1));
  Json a = Wl("a");
  EXPECT_EQ(Cond(a, "Evicted"), "True/PodsReadyTimeout");
  EXPECT_EQ(CondMessage(a, "Evicted"), "Exceeded the PodsReady timeout ns/a");
  EXPECT_EQ(a["status"]["requeueState"]["count"], 1);
  absl::Time requeue_at = clock_.Now() + absl::Seconds(10);  // 10 * 2^0
  EXPECT_EQ(a["status"]["requeueState"]["requeueAt"], api::meta::FormatRfc3339(requeue_at));

  ClearAdmission("a");
  EXPECT_FALSE(Admitted("a"));  // Backoff: not before requeueAt.
  Advance(absl::Seconds(10));
  ASSERT_TRUE(Admitted("a"));

  // Second timeout: backoff doubles.
  Advance(absl::Minutes(5));
  a = Wl("a");
  EXPECT_EQ(a["status"]["requeueState"]["count"], 2);
  EXPECT_EQ(a["status"]["requeueState"]["requeueAt"],
            api::meta::FormatRfc3339(clock_.Now() + absl::Seconds(20)));
  ClearAdmission("a");
  Advance(absl::Seconds(20));
  ASSERT_TRUE(Admitted("a"));

  // Third timeout exceeds backoffLimitCount=2: deactivated.
  Advance(absl::Minutes(5));
  a = Wl("a");
  EXPECT_EQ(a["spec"]["active"], false);
  EXPECT_EQ(Cond(a, "Evicted"), "True/DeactivatedDueToRequeuingLimitExceeded");
  EXPECT_EQ(CondMessage(a, "Evicted"),
            "The workload is deactivated due to exceeding the maximum number of re-queuing "
            "retries");
  EXPECT_THAT(Metrics(), HasSubstr("kueue_evicted_workloads_total{cluster_queue=\"cq\","
                                   "reason=\"PodsReadyTimeout\"} 2\n"));
}

TEST_F(QueueManagerTest, PodsReadyStopsTheTimerAndBlockAdmissionWaits) {
  QueueingConfig cfg;
  cfg.wait_for_pods_ready.enable = true;
  cfg.wait_for_pods_ready.block_admission = true;
  cfg.wait_for_pods_ready.timeout = absl::Minutes(5);
  Start(cfg);
  Basic();
  Workload("a", "lq", "1");
  Settle();
  ASSERT_TRUE(Admitted("a"));
  Workload("b", "lq", "1");
  Settle();
  EXPECT_FALSE(Admitted("b"));  // blockAdmission: `a` is not ready yet.
  SetPodsReady("a");
  EXPECT_TRUE(Admitted("b"));
  SetPodsReady("b");
  Advance(absl::Minutes(10));
  EXPECT_EQ(Cond(Wl("a"), "Evicted"), "");
  EXPECT_EQ(Cond(Wl("b"), "Evicted"), "");
}

TEST_F(QueueManagerTest, CohortBorrowingShowsInStatus) {
  Start();
  Namespace("ns");
  Flavor("default");
  ClusterQueue("cq-a", "2", {{"cohortName", "co"}});
  ClusterQueue("cq-b", "2", {{"cohortName", "co"}});
  LocalQueue("ns", "lq-a", "cq-a");
  Workload("big", "lq-a", "3");
  Settle();
  ASSERT_TRUE(Admitted("big"));  // Borrows 1 cpu of cq-b's idle quota.
  Json cq = Get("clusterqueues", "", "cq-a");
  EXPECT_EQ(cq["status"]["flavorsUsage"][0]["resources"][0]["total"], "3");
  EXPECT_EQ(cq["status"]["flavorsUsage"][0]["resources"][0]["borrowed"], "1");
  EXPECT_THAT(Metrics(), HasSubstr("kueue_cluster_queue_resource_usage{cohort=\"co\","
                                   "cluster_queue=\"cq-a\",flavor=\"default\","
                                   "resource=\"cpu\"} 3\n"));
  Workload("toobig", "lq-a", "5");
  Settle();
  EXPECT_FALSE(Admitted("toobig"));
  EXPECT_EQ(Cond(Wl("toobig"), "QuotaReserved"), "False/Pending");
}

TEST_F(QueueManagerTest, NoWritesWhenNothingChanged) {
  Start();
  Basic();
  Workload("a", "lq", "5");  // Never fits: pending.
  Settle();
  std::string rv_wl = api::meta::GetResourceVersion(Wl("a"));
  std::string rv_cq = api::meta::GetResourceVersion(Get("clusterqueues", "", "cq"));
  Advance(absl::Minutes(1));
  Workload("b", "lq", "5");  // Another cycle runs.
  Settle();
  EXPECT_EQ(api::meta::GetResourceVersion(Wl("a")), rv_wl);
  EXPECT_NE(api::meta::GetResourceVersion(Get("clusterqueues", "", "cq")), rv_cq);  // pending 2
  rv_cq = api::meta::GetResourceVersion(Get("clusterqueues", "", "cq"));
  Patch("localqueues", "ns", "lq", {{"metadata", {{"labels", {{"x", "y"}}}}}});
  Settle();
  EXPECT_EQ(api::meta::GetResourceVersion(Get("clusterqueues", "", "cq")), rv_cq);
  EXPECT_EQ(api::meta::GetResourceVersion(Wl("a")), rv_wl);
}

}  // namespace
}  // namespace batchd::controllers::queueing
