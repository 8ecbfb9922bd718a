#include "controllers/queueing/internal/metrics.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace batchd::controllers::queueing::internal {
namespace {

using ::testing::HasSubstr;

TEST(QueueMetricsTest, PrometheusText) {
  QueueMetrics m;
  m.QuotaReserved("cq", absl::Seconds(3));
  m.Admitted("cq", absl::Seconds(3));
  m.Admitted("cq", absl::Seconds(100));
  m.Evicted("cq", "Preempted");
  m.Preempted("cq2", "InClusterQueue");
  m.AdmissionAttempt(true, absl::Milliseconds(2));
  ClusterQueueGauges g;
  g.pending_active = 2;
  g.pending_inadmissible = 1;
  g.reserving = 4;
  g.admitted = 4;
  g.resources.push_back({"co", "default", "cpu", 1.5, 1.5, 4, 2.0, std::nullopt});
  m.SetClusterQueueGauges({{"cq", g}});
  std::string out;
  m.AppendPrometheus(&out);
  const std::string want[] = {
      "# TYPE kueue_admitted_workloads_total counter",
      "kueue_admitted_workloads_total{cluster_queue=\"cq\"} 2",
      "kueue_quota_reserved_workloads_total{cluster_queue=\"cq\"} 1",
      "kueue_evicted_workloads_total{cluster_queue=\"cq\",reason=\"Preempted\"} 1",
      "kueue_preempted_workloads_total{preempting_cluster_queue=\"cq2\",reason=\"InClusterQueue\"} 1",
      "kueue_admission_attempts_total{result=\"success\"} 1",
      "# TYPE kueue_admission_wait_time_seconds histogram",
      "kueue_admission_wait_time_seconds_bucket{cluster_queue=\"cq\",le=\"4\"} 1",
      "kueue_admission_wait_time_seconds_bucket{cluster_queue=\"cq\",le=\"128\"} 2",
      "kueue_admission_wait_time_seconds_bucket{cluster_queue=\"cq\",le=\"+Inf\"} 2",
      "kueue_admission_wait_time_seconds_sum{cluster_queue=\"cq\"} 103",
      "kueue_admission_wait_time_seconds_count{cluster_queue=\"cq\"} 2",
      "kueue_pending_workloads{cluster_queue=\"cq\",status=\"active\"} 2",
      "kueue_pending_workloads{cluster_queue=\"cq\",status=\"inadmissible\"} 1",
      "kueue_reserving_active_workloads{cluster_queue=\"cq\"} 4",
      "kueue_cluster_queue_status{cluster_queue=\"cq\",status=\"active\"} 1",
      "kueue_cluster_queue_status{cluster_queue=\"cq\",status=\"pending\"} 0",
      "kueue_cluster_queue_resource_usage{cohort=\"co\",cluster_queue=\"cq\",flavor=\"default\","
      "resource=\"cpu\"} 1.5",
      "kueue_cluster_queue_nominal_quota{cohort=\"co\",cluster_queue=\"cq\",flavor=\"default\","
      "resource=\"cpu\"} 4",
      "kueue_cluster_queue_borrowing_limit{cohort=\"co\",cluster_queue=\"cq\",flavor=\"default\","
      "resource=\"cpu\"} 2",
  };
  for (const std::string& w : want) EXPECT_THAT(out, HasSubstr(w + "\n"));
  EXPECT_THAT(out, ::testing::Not(HasSubstr("kueue_cluster_queue_lending_limit{")));
  EXPECT_EQ(m.CounterValue("kueue_admitted_workloads_total", "cluster_queue=\"cq\""), 2);
}

}  // namespace
}  // namespace batchd::controllers::queueing::internal
