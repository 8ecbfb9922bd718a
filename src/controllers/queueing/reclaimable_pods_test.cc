// status.reclaimablePods: an admitted workload holds only the quota of its
// pods that may still run, so a waiting workload is admitted as soon as the
// job reports finished pods (Kueue's ReclaimablePods feature).
#include "controllers/queueing/queue_manager_test_env.h"

namespace batchd::controllers::queueing::testing {
namespace {

class ReclaimablePodsTest : public QueueManagerTest {
 protected:
  // status.flavorsUsage of ClusterQueue cq for cpu in flavor default.
  std::string CpuUsed() {
    Json cq = Get("clusterqueues", "", "cq");
    for (const Json& f : cq["status"].value("flavorsUsage", Json::array())) {
      for (const Json& r : f.value("resources", Json::array())) {
        if (r.value("name", "") == "cpu") return r["total"].get<std::string>();
      }
    }
    return "";
  }
};

TEST_F(ReclaimablePodsTest, ReleaseQuotaOfARunningWorkload) {
  Basic();  // cq: 3 cpu
  Start();
  Workload("big", "lq", "1", /*priority=*/0, /*count=*/3);
  Settle();
  ASSERT_TRUE(Admitted("big"));
  EXPECT_EQ(CpuUsed(), "3");
  Workload("next", "lq", "2");
  Settle();
  EXPECT_FALSE(Admitted("next"));

  // One pod finished: 2 cpu still held, 1 free — not enough yet.
  Patch("workloads", "ns", "big",
        {{"status", {{"reclaimablePods", {{{"name", "main"}, {"count", 1}}}}}}}, true);
  Settle();
  EXPECT_FALSE(Admitted("next"));
  EXPECT_EQ(CpuUsed(), "2") << Wl("big").dump();

  Patch("workloads", "ns", "big",
        {{"status", {{"reclaimablePods", {{{"name", "main"}, {"count", 2}}}}}}}, true);
  Settle();
  EXPECT_TRUE(Admitted("big")) << "the running workload keeps its admission";
  EXPECT_TRUE(Admitted("next"));
  // The status shows the reduced usage: 1 cpu of big + 2 of next.
  EXPECT_EQ(CpuUsed(), "3");

  // A restart reads the same reduced usage back.
  Restart();
  EXPECT_TRUE(Admitted("big"));
  EXPECT_TRUE(Admitted("next"));
  EXPECT_EQ(CpuUsed(), "3");
}

}  // namespace
}  // namespace batchd::controllers::queueing::testing

namespace batchd::controllers::queueing::testing {
namespace {

// An elastic workload (kueue.x-k8s.io/elastic-job: "true") scaled down in
// place holds only the quota of its new count; another workload fits at once.
// A non-elastic admitted workload's pod sets stay immutable.
TEST_F(ReclaimablePodsTest, ElasticScaleDownReleasesQuotaAtOnce) {
  Basic();  // cq: 3 cpu
  Start();
  Workload("elastic", "lq", "1", 0, /*count=*/3);
  Settle();
  Workload("plain", "lq", "1", 0, /*count=*/1);
  Settle();
  ASSERT_TRUE(Admitted("elastic"));
  ASSERT_FALSE(Admitted("plain"));
  Patch("workloads", "ns", "elastic",
        {{"metadata", {{"annotations", {{"kueue.x-k8s.io/elastic-job", "true"}}}}}});

  Json w = Wl("elastic");
  w["spec"]["podSets"][0]["count"] = 2;
  auto r = client_.Update(Kind("workloads"), w);
  ASSERT_TRUE(r.ok()) << r.status();
  Settle();
  EXPECT_TRUE(Admitted("elastic"));
  EXPECT_TRUE(Admitted("plain"));
  EXPECT_EQ(CpuUsed(), "3");  // 2 of elastic + 1 of plain

  w = Wl("elastic");
  w["spec"]["podSets"][0]["count"] = 3;
  EXPECT_FALSE(client_.Update(Kind("workloads"), w).ok()) << "no growth in place";
  w = Wl("plain");
  w["spec"]["podSets"][0]["count"] = 0;
  auto plain = client_.Update(Kind("workloads"), w);
  EXPECT_FALSE(plain.ok()) << "not elastic";
  if (!plain.ok()) EXPECT_NE(plain.status().ToString().find("immutable"), std::string::npos);
}

}  // namespace
}  // namespace batchd::controllers::queueing::testing
