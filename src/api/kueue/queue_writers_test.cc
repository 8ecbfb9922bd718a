#include "api/kueue/queue_writers.h"

#include "api/meta/time_util.h"
#include "gtest/gtest.h"

namespace batchd::api::kueue {
namespace {

const absl::Time kNow = absl::FromUnixSeconds(1767225600);  // 2026-01-01T00:00:00Z

TEST(QueueWritersTest, ResourceQuantityJsonAsKueueRendersIt) {
  EXPECT_EQ(ResourceQuantityJson("cpu", Amount::FromMilli(1500)), "1500m");
  EXPECT_EQ(ResourceQuantityJson("cpu", Amount::FromMilli(3000)), "3");
  EXPECT_EQ(ResourceQuantityJson("memory", Amount::FromMilli(2048000)), "2Ki");
  EXPECT_EQ(ResourceQuantityJson("hugepages-2Mi", Amount::FromMilli(int64_t{2097152} * 1000)),
            "2Mi");
  EXPECT_EQ(ResourceQuantityJson("nvidia.com/gpu", Amount::FromMilli(2000)), "2");
}

TEST(QueueWritersTest, StatusUpdateCopiesTheStatusOnlyAndBuildsTheObjectOnDemand) {
  const Json cq = Json::parse(R"({"metadata": {"name": "cq", "generation": 3},
                                  "spec": {"resourceGroups": []},
                                  "status": {"pendingWorkloads": 1}})");
  StatusUpdate update(cq);
  EXPECT_EQ(update.generation(), 3);
  EXPECT_FALSE(update.changed());
  update.status()["pendingWorkloads"] = 1;
  EXPECT_FALSE(update.changed());
  update.status()["pendingWorkloads"] = 2;
  EXPECT_TRUE(update.changed());
  const Json out = std::move(update).Build("kueue.x-k8s.io/v1beta2", "ClusterQueue");
  EXPECT_EQ(out["apiVersion"], "kueue.x-k8s.io/v1beta2");
  EXPECT_EQ(out["kind"], "ClusterQueue");
  EXPECT_EQ(out["metadata"], cq["metadata"]);
  EXPECT_EQ(out["spec"], cq["spec"]);
  EXPECT_EQ(out["status"], (Json{{"pendingWorkloads", 2}}));

  // An object without a status: any write changes it.
  const Json bare = {{"metadata", {{"name", "x"}}}};
  StatusUpdate fresh(bare);
  EXPECT_TRUE(fresh.status().is_object());
  EXPECT_TRUE(fresh.changed());
}

TEST(QueueWritersTest, ClusterQueueStatus) {
  const Json cq = {{"metadata", {{"name", "cq"}, {"generation", 2}}}};
  ClusterQueueStatusValues v;
  v.pending_workloads = 3;
  v.reserving_workloads = 2;
  v.admitted_workloads = 2;
  v.flavors_usage = {{"default",
                      {{"cpu", Amount::FromMilli(1500), Amount::FromMilli(500)},
                       {"memory", Amount::FromMilli(1024000), Amount()}}}};
  v.weighted_share = 250;
  v.active = {false, "Stopped", "Can't admit new workloads: is stopped."};
  StatusUpdate update(cq);
  SetClusterQueueStatus(update, v, kNow);
  const Json& s = update.status();
  EXPECT_EQ(s["pendingWorkloads"], 3);
  EXPECT_EQ(s["reservingWorkloads"], 2);
  EXPECT_EQ(s["admittedWorkloads"], 2);
  const Json usage = Json::parse(R"([{"name": "default", "resources": [
      {"name": "cpu", "total": "1500m", "borrowed": "500m"},
      {"name": "memory", "total": "1Ki", "borrowed": "0"}]}])");
  EXPECT_EQ(s["flavorsReservation"], usage);
  EXPECT_EQ(s["flavorsUsage"], usage);
  EXPECT_EQ(s["fairSharing"], (Json{{"weightedShare", 250}}));
  ASSERT_EQ(s["conditions"].size(), 1u);
  const Json& c = s["conditions"][0];
  EXPECT_EQ(c["type"], "Active");
  EXPECT_EQ(c["status"], "False");
  EXPECT_EQ(c["reason"], "Stopped");
  EXPECT_EQ(c["observedGeneration"], 2);
  EXPECT_EQ(c["lastTransitionTime"], "2026-01-01T00:00:00Z");

  // The same values a minute later change nothing (the transition time stays).
  const Json written = std::move(update).Build("v", "ClusterQueue");
  StatusUpdate again(written);
  SetClusterQueueStatus(again, v, kNow + absl::Minutes(1));
  EXPECT_FALSE(again.changed());
}

TEST(QueueWritersTest, LocalQueueStatusHasNoBorrowedOrFairSharing) {
  const Json lq = {{"metadata", {{"name", "lq"}, {"namespace", "ns"}}}};
  LocalQueueStatusValues v;
  v.pending_workloads = 1;
  v.flavors_usage = {{"default", {{"cpu", Amount::FromMilli(2000), std::nullopt}}}};
  v.active = {true, "Ready", "Can submit new workloads to localQueue"};
  StatusUpdate update(lq);
  SetLocalQueueStatus(update, v, kNow);
  const Json& s = update.status();
  EXPECT_EQ(s["pendingWorkloads"], 1);
  EXPECT_EQ(s["reservingWorkloads"], 0);
  EXPECT_EQ(s["flavorsUsage"], Json::parse(R"([{"name": "default",
                                                "resources": [{"name": "cpu", "total": "2"}]}])"));
  EXPECT_FALSE(s.contains("fairSharing"));
  EXPECT_EQ(s["conditions"][0]["status"], "True");
  EXPECT_FALSE(s["conditions"][0].contains("observedGeneration"));  // generation 0
}

TEST(QueueWritersTest, CohortFairSharing) {
  const Json cohort = {{"metadata", {{"name", "co"}}},
                       {"status", {{"fairSharing", {{"weightedShare", 1}}}}}};
  StatusUpdate update(cohort);
  SetFairSharingStatus(update, 1);
  EXPECT_FALSE(update.changed());
  SetFairSharingStatus(update, 7);
  EXPECT_EQ(update.status()["fairSharing"]["weightedShare"], 7);
}

TEST(QueueWritersTest, WorkloadAdmissionRequeueStateAndConditions) {
  const Json wl = Json::parse(R"({
    "metadata": {"name": "w", "namespace": "ns", "generation": 1},
    "spec": {"podSets": [{"name": "main", "count": 3}]},
    "status": {"requeueState": {"count": 2, "requeueAt": "2026-01-01T00:05:00Z"},
               "conditions": [{"type": "DeactivationTarget", "status": "True"},
                              {"type": "Evicted", "status": "True", "reason": "PodsReadyTimeout"}]}
  })");
  StatusUpdate update(wl);
  SetAdmission(update, {"cq",
                        {{"main",
                          {{"cpu", "default"}, {"memory", "default"}},
                          {{"cpu", Amount::FromMilli(3000)}, {"memory", Amount::FromMilli(2048000)}},
                          3}}});
  ClearRequeueAt(update);
  const Json& s = update.status();
  EXPECT_EQ(s["admission"], Json::parse(R"({"clusterQueue": "cq", "podSetAssignments": [
      {"name": "main", "flavors": {"cpu": "default", "memory": "default"},
       "resourceUsage": {"cpu": "3", "memory": "2Ki"}, "count": 3}]})"));
  EXPECT_EQ(s["requeueState"], (Json{{"count", 2}}));

  EXPECT_TRUE(SetCondition(update, {"Evicted", "False", "QuotaReserved", "Previously: x"}, kNow));
  EXPECT_FALSE(SetCondition(update, {"Evicted", "False", "QuotaReserved", "Previously: x"}, kNow));
  EXPECT_TRUE(RemoveCondition(update, "DeactivationTarget"));
  EXPECT_FALSE(RemoveCondition(update, "DeactivationTarget"));
  ASSERT_EQ(s["conditions"].size(), 1u);
  EXPECT_EQ(s["conditions"][0]["observedGeneration"], 1);

  SetRequeueState(update, 3, kNow + absl::Seconds(60));
  EXPECT_EQ(s["requeueState"],
            (Json{{"count", 3}, {"requeueAt", "2026-01-01T00:01:00Z"}}));
  ClearRequeueState(update);
  EXPECT_FALSE(s.contains("requeueState"));

  // The built object keeps the spec and carries the new status only.
  const Json out = std::move(update).Build("kueue.x-k8s.io/v1beta2", "Workload");
  EXPECT_EQ(out["spec"], wl["spec"]);
  EXPECT_EQ(out["status"]["admission"]["clusterQueue"], "cq");
}

TEST(QueueWritersTest, ActivePatch) {
  EXPECT_EQ(ActivePatch(false), Json::parse(R"({"spec": {"active": false}})"));
}

}  // namespace
}  // namespace batchd::api::kueue
