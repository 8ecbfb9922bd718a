// Admission fair sharing through the queue manager on a FakeClock: usage is
// sampled every usageSamplingInterval into LocalQueue status
// (fairSharing.admissionFairSharingStatus), a ClusterQueue with
// admissionScope UsageBasedAdmissionFairSharing admits the less-consuming
// LocalQueue's workload first, and a restart resumes from the status.
#include "api/json_access.h"
#include "controllers/queueing/config.h"
#include "controllers/queueing/queue_manager_test_env.h"

namespace batchd::controllers::queueing::testing {
namespace {

class AdmissionFairSharingTest : public QueueManagerTest {
 protected:
  static QueueingConfig Cfg() {
    QueueingConfig cfg;
    cfg.admission_fair_sharing = AdmissionFairSharingConfig{absl::Minutes(10), absl::Minutes(5), {}};
    return cfg;
  }
  std::string Consumed(const std::string& lq) {
    const Json l = Get("localqueues", "ns", lq);
    const Json* c = api::FindMemberAt(
        l, {"status", "fairSharing", "admissionFairSharingStatus", "consumedResources", "cpu"});
    return c != nullptr && c->is_string() ? c->get<std::string>() : "";
  }
  void WorkloadIn(const std::string& name, const std::string& lq, const std::string& cpu) {
    Workload(name, lq, cpu);
  }
};

TEST_F(AdmissionFairSharingTest, LessConsumingLocalQueueFirstAndUsageSurvivesRestart) {
  Namespace("ns");
  Flavor("default");
  ClusterQueue("cq", "3", {{"admissionScope", {{"admissionMode", "UsageBasedAdmissionFairSharing"}}}});
  LocalQueue("ns", "a", "cq");
  LocalQueue("ns", "b", "cq");
  Start(Cfg());
  Workload("run-a", "a", "2");
  Settle();
  ASSERT_TRUE(Admitted("run-a"));
  // The first sample ran at start (nothing used); the next one 5 minutes on
  // takes a's 2 cpu with a = 1 - 0.5^(5/10): 2 * 0.2929 = 586m.
  Advance(absl::Minutes(5));
  EXPECT_EQ(Consumed("a"), "586m");
  EXPECT_EQ(Consumed("b"), "");
  // One cpu left: a's older workload waits behind b's.
  Workload("a1", "a", "1");
  Advance(absl::Seconds(1));
  Workload("b1", "b", "1");
  Settle();
  // a1 was alone at first and took the cpu; b1 waits. Free it and retry the race.
  if (Admitted("a1")) {
    ASSERT_TRUE(client_.Delete(Kind("workloads"), "ns", "a1").ok());
    Settle();
    EXPECT_TRUE(Admitted("b1"));
    ASSERT_TRUE(client_.Delete(Kind("workloads"), "ns", "b1").ok());
    Settle();
  }
  Patch("clusterqueues", "", "cq", {{"spec", {{"stopPolicy", "Hold"}}}});
  Settle();
  Workload("a2", "a", "1");
  Advance(absl::Seconds(1));
  Workload("b2", "b", "1");
  Settle();
  Patch("clusterqueues", "", "cq", {{"spec", {{"stopPolicy", "None"}}}});
  Settle();
  EXPECT_TRUE(Admitted("b2")) << "b consumed less";
  EXPECT_FALSE(Admitted("a2"));

  // A restart resumes from the status (and samples again, a's 2 cpu still used).
  Restart(Cfg());
  EXPECT_EQ(Consumed("a"), "586m");
  Advance(absl::Minutes(5));
  // 586m * 0.7071 + 0.2929 * 2 cpu = 1.0000 cpu
  EXPECT_EQ(Consumed("a"), "1");
}

TEST_F(AdmissionFairSharingTest, AdmissionScopeWithoutConfigurationWarns) {
  Namespace("ns");
  Flavor("default");
  ClusterQueue("cq", "3", {{"admissionScope", {{"admissionMode", "UsageBasedAdmissionFairSharing"}}}});
  LocalQueue("ns", "a", "cq");
  Start();
  bool warned = false;
  for (const auto& e : stack_->ev.events()) {
    warned = warned || (e.type == "Warning" && e.reason == "AdmissionFairSharingDisabled");
  }
  EXPECT_TRUE(warned);
}

}  // namespace
}  // namespace batchd::controllers::queueing::testing
