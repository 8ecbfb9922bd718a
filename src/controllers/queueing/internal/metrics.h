// QueueMetrics: Kueue's scheduler metrics (names and labels as
// https://kueue.sigs.k8s.io/docs/reference/metrics/) kept by the queue
// manager and rendered as Prometheus text. Counters and histograms are
// updated as decisions are applied; per-ClusterQueue gauges are replaced
// for the ClusterQueues a cycle touched (UpdateClusterQueueGauges).
//
// Thread-safety: every method locks an internal mutex.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace batchd::controllers::queueing::internal {

struct ResourceGauge {
  std::string cohort, flavor, resource;
  double usage = 0, reservation = 0, nominal = 0;
  std::optional<double> borrowing_limit, lending_limit;
};

struct ClusterQueueGauges {
  std::string status = "active";  // pending | active | terminating
  int64_t pending_active = 0, pending_inadmissible = 0;
  int64_t reserving = 0, admitted = 0;
  double weighted_share = 0;
  std::vector<ResourceGauge> resources;
};

class QueueMetrics {
 public:
  void QuotaReserved(const std::string& cq, absl::Duration wait);
  void Admitted(const std::string& cq, absl::Duration wait);
  void Evicted(const std::string& cq, const std::string& reason);
  void Preempted(const std::string& preempting_cq, const std::string& reason);
  void AdmissionAttempt(bool success, absl::Duration duration);
  void SetClusterQueueGauges(std::map<std::string, ClusterQueueGauges> gauges);
  // Replaces the gauges of the ClusterQueues in `changed` and drops those in
  // `removed`; the others stay (a cycle recomputes only what it touched).
  void UpdateClusterQueueGauges(std::map<std::string, ClusterQueueGauges> changed,
                                const std::vector<std::string>& removed);

  void AppendPrometheus(std::string* out) const;

  // Test access.
  int64_t CounterValue(const std::string& name, const std::string& labels) const;

 private:
  struct Histogram {
    std::vector<double> bounds;
    std::vector<int64_t> counts;  // per bound (non-cumulative), + one for +Inf
    double sum = 0;
    int64_t count = 0;
    void Observe(double v);
  };
  static Histogram NewWaitHistogram();
  static Histogram NewDurationHistogram();

  mutable absl::Mutex mu_;
  // name -> rendered label set -> value.
  std::map<std::string, std::map<std::string, int64_t>> counters_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::map<std::string, Histogram>> histograms_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, ClusterQueueGauges> gauges_ ABSL_GUARDED_BY(mu_);
};

}  // namespace batchd::controllers::queueing::internal
