// kueue_admitted_workloads_total and kueue_admission_wait_time_seconds for
// admissions gated by AdmissionChecks: counted when the workload turns
// Admitted (the checks are Ready), not at quota reservation, as Kueue does;
// kueue_quota_reserved_workloads_total counts the reservation.
#include "controllers/queueing/queue_manager_test_env.h"
#include "gmock/gmock.h"

namespace batchd::controllers::queueing::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST_F(QueueManagerTest, CheckGatedAdmissionCountsWhenAdmitted) {
  Create("admissionchecks", "",
         {{"metadata", {{"name", "ac"}}}, {"spec", {{"controllerName", "example.com/e2e"}}}});
  Patch("admissionchecks", "", "ac",
        {{"status",
          {{"conditions",
            {{{"type", "Active"}, {"status", "True"}, {"reason", "Active"}, {"message", "ok"},
              {"lastTransitionTime", "2026-01-01T00:00:00Z"}}}}}}},
        true);
  Basic({{"admissionChecksStrategy", {{"admissionChecks", {{{"name", "ac"}}}}}}});
  Start();
  Workload("w", "lq", "1");
  Settle();
  Json w = Wl("w");
  ASSERT_EQ(Cond(w, "QuotaReserved"), "True/QuotaReserved") << w.dump();
  ASSERT_EQ(Cond(w, "Admitted"), "");
  EXPECT_THAT(Metrics(), HasSubstr("kueue_quota_reserved_workloads_total{cluster_queue=\"cq\"} 1\n"));
  EXPECT_THAT(Metrics(), Not(HasSubstr("kueue_admitted_workloads_total{cluster_queue=\"cq\"}")));

  // The check controller: Ready, then Admitted (10 s after creation).
  Advance(absl::Seconds(10));
  w = Wl("w");
  w["status"]["admissionChecks"] = {{{"name", "ac"},
                                     {"state", "Ready"},
                                     {"message", "ok"},
                                     {"lastTransitionTime", api::meta::FormatRfc3339(clock_.Now())}}};
  w["status"]["conditions"].push_back({{"type", "Admitted"},
                                       {"status", "True"},
                                       {"reason", "Admitted"},
                                       {"message", "The workload is admitted"},
                                       {"lastTransitionTime", api::meta::FormatRfc3339(clock_.Now())}});
  ASSERT_TRUE(client_.UpdateStatus(Kind("workloads"), w).ok());
  Settle();
  std::string m = Metrics();
  EXPECT_THAT(m, HasSubstr("kueue_admitted_workloads_total{cluster_queue=\"cq\"} 1\n"));
  EXPECT_THAT(m, HasSubstr("kueue_admission_wait_time_seconds_count{cluster_queue=\"cq\"} 1\n"));
  EXPECT_THAT(m, HasSubstr("kueue_admission_wait_time_seconds_sum{cluster_queue=\"cq\"} 10\n"));
  // More syncs of the same admission count nothing more.
  Patch("workloads", "ns", "w", {{"metadata", {{"labels", {{"touched", "yes"}}}}}});
  Settle();
  EXPECT_THAT(Metrics(), HasSubstr("kueue_admitted_workloads_total{cluster_queue=\"cq\"} 1\n"));
  // A restart (a second later) does not count admissions made before it.
  Advance(absl::Seconds(1));
  Restart();
  EXPECT_THAT(Metrics(), Not(HasSubstr("kueue_admitted_workloads_total{cluster_queue=\"cq\"}")));
}

}  // namespace
}  // namespace batchd::controllers::queueing::testing

namespace batchd::controllers::queueing::testing {
namespace {

// The admission decisions of a workload reach it as aggregated Events (one
// object per workload and reason, counting repeats): Pending while it
// waits, then QuotaReserved and Admitted.
TEST_F(QueueManagerTest, AdmissionEventsAreAggregatedPerReason) {
  Basic();  // cq: 3 cpu
  Start();
  Workload("big", "lq", "2");
  Advance(absl::Seconds(1));  // big is older: it goes first
  Workload("w", "lq", "2");
  Settle();
  ASSERT_TRUE(Admitted("big"));
  ASSERT_FALSE(Admitted("w"));
  ASSERT_TRUE(client_.Delete(Kind("workloads"), "ns", "big").ok());
  Settle();
  ASSERT_TRUE(Admitted("w"));
  std::map<std::string, int> by_reason;
  for (const auto& e : stack_->ev.events()) {
    if (e.object != "Workload ns/w") continue;
    EXPECT_TRUE(e.aggregated) << e.reason << ": " << e.message;
    ++by_reason[e.reason];
  }
  EXPECT_GE(by_reason["Pending"], 1);
  EXPECT_EQ(by_reason["QuotaReserved"], 1);
  EXPECT_EQ(by_reason["Admitted"], 1);
}

}  // namespace
}  // namespace batchd::controllers::queueing::testing
