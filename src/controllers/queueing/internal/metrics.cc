#include "controllers/queueing/internal/metrics.h"

#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "absl/synchronization/mutex.h"

namespace batchd::controllers::queueing::internal {
namespace {

std::string Escape(const std::string& v) {
  return absl::StrReplaceAll(v, {{"\\", "\\\\"}, {"\"", "\\\""}, {"\n", "\\n"}});
}

std::string Label(const std::string& k, const std::string& v) {
  return absl::StrCat(k, "=\"", Escape(v), "\"");
}

std::string Num(double v) {
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  if (v == std::floor(v) && std::fabs(v) < 1e15) return absl::StrFormat("%.0f", v);
  return absl::StrFormat("%g", v);
}

struct MetricInfo {
  const char* name;
  const char* type;
  const char* help;
};

// Each metric's name once: the tables below and the updates use these.
constexpr char kQuotaReservedWorkloadsTotal[] = "kueue_quota_reserved_workloads_total";
constexpr char kAdmittedWorkloadsTotal[] = "kueue_admitted_workloads_total";
constexpr char kEvictedWorkloadsTotal[] = "kueue_evicted_workloads_total";
constexpr char kPreemptedWorkloadsTotal[] = "kueue_preempted_workloads_total";
constexpr char kAdmissionAttemptsTotal[] = "kueue_admission_attempts_total";
constexpr char kQuotaReservedWaitTimeSeconds[] = "kueue_quota_reserved_wait_time_seconds";
constexpr char kAdmissionWaitTimeSeconds[] = "kueue_admission_wait_time_seconds";
constexpr char kAdmissionAttemptDurationSeconds[] = "kueue_admission_attempt_duration_seconds";

constexpr char kPendingWorkloads[] = "kueue_pending_workloads";
constexpr char kReservingActiveWorkloads[] = "kueue_reserving_active_workloads";
constexpr char kAdmittedActiveWorkloads[] = "kueue_admitted_active_workloads";
constexpr char kClusterQueueStatus[] = "kueue_cluster_queue_status";
constexpr char kClusterQueueWeightedShare[] = "kueue_cluster_queue_weighted_share";
constexpr char kClusterQueueResourceUsage[] = "kueue_cluster_queue_resource_usage";
constexpr char kClusterQueueResourceReservation[] = "kueue_cluster_queue_resource_reservation";
constexpr char kClusterQueueNominalQuota[] = "kueue_cluster_queue_nominal_quota";
constexpr char kClusterQueueBorrowingLimit[] = "kueue_cluster_queue_borrowing_limit";
constexpr char kClusterQueueLendingLimit[] = "kueue_cluster_queue_lending_limit";

constexpr MetricInfo kCounters[] = {
    {kQuotaReservedWorkloadsTotal, "counter",
     "The total number of quota reserved workloads per 'cluster_queue'"},
    {kAdmittedWorkloadsTotal, "counter",
     "The total number of admitted workloads per 'cluster_queue'"},
    {kEvictedWorkloadsTotal, "counter",
     "The number of evicted workloads per 'cluster_queue' and 'reason'"},
    {kPreemptedWorkloadsTotal, "counter",
     "The number of preempted workloads per 'preempting_cluster_queue' and 'reason'"},
    {kAdmissionAttemptsTotal, "counter",
     "The total number of attempts to admit workloads, by 'result' (success or inadmissible)"},
};

constexpr MetricInfo kHistograms[] = {
    {kQuotaReservedWaitTimeSeconds, "histogram",
     "The time between a workload was created or requeued until it got quota reservation, "
     "per 'cluster_queue'"},
    {kAdmissionWaitTimeSeconds, "histogram",
     "The time between a workload was created or requeued until admission, per 'cluster_queue'"},
    {kAdmissionAttemptDurationSeconds, "histogram",
     "The latency of an admission attempt, by 'result'"},
};

void Header(std::string* out, const MetricInfo& m) {
  absl::StrAppend(out, "# HELP ", m.name, " ", m.help, "\n# TYPE ", m.name, " ", m.type, "\n");
}

void Gauge(std::string* out, const char* name, const std::string& labels, double v) {
  absl::StrAppend(out, name, "{", labels, "} ", Num(v), "\n");
}

}  // namespace

void QueueMetrics::Histogram::Observe(double v) {
  size_t i = 0;
  while (i < bounds.size() && v > bounds[i]) ++i;
  ++counts[i];
  sum += v;
  ++count;
}

// Kueue: prometheus.ExponentialBuckets(1, 2, 14) for wait times.
QueueMetrics::Histogram QueueMetrics::NewWaitHistogram() {
  Histogram h;
  for (int i = 0; i < 14; ++i) h.bounds.push_back(std::ldexp(1.0, i));
  h.counts.assign(h.bounds.size() + 1, 0);
  return h;
}

QueueMetrics::Histogram QueueMetrics::NewDurationHistogram() {
  Histogram h;
  for (int i = 0; i < 14; ++i) h.bounds.push_back(0.001 * std::ldexp(1.0, i));
  h.counts.assign(h.bounds.size() + 1, 0);
  return h;
}

void QueueMetrics::QuotaReserved(const std::string& cq, absl::Duration wait) {
  absl::MutexLock lock(&mu_);
  std::string l = Label("cluster_queue", cq);
  ++counters_[kQuotaReservedWorkloadsTotal][l];
  auto& hs = histograms_[kQuotaReservedWaitTimeSeconds];
  if (!hs.count(l)) hs[l] = NewWaitHistogram();
  hs[l].Observe(absl::ToDoubleSeconds(wait));
}

void QueueMetrics::Admitted(const std::string& cq, absl::Duration wait) {
  absl::MutexLock lock(&mu_);
  std::string l = Label("cluster_queue", cq);
  ++counters_[kAdmittedWorkloadsTotal][l];
  auto& hs = histograms_[kAdmissionWaitTimeSeconds];
  if (!hs.count(l)) hs[l] = NewWaitHistogram();
  hs[l].Observe(absl::ToDoubleSeconds(wait));
}

void QueueMetrics::Evicted(const std::string& cq, const std::string& reason) {
  absl::MutexLock lock(&mu_);
  ++counters_[kEvictedWorkloadsTotal]
             [absl::StrCat(Label("cluster_queue", cq), ",", Label("reason", reason))];
}

void QueueMetrics::Preempted(const std::string& preempting_cq, const std::string& reason) {
  absl::MutexLock lock(&mu_);
  ++counters_[kPreemptedWorkloadsTotal][absl::StrCat(
      Label("preempting_cluster_queue", preempting_cq), ",", Label("reason", reason))];
}

void QueueMetrics::AdmissionAttempt(bool success, absl::Duration duration) {
  absl::MutexLock lock(&mu_);
  std::string l = Label("result", success ? "success" : "inadmissible");
  ++counters_[kAdmissionAttemptsTotal][l];
  auto& hs = histograms_[kAdmissionAttemptDurationSeconds];
  if (!hs.count(l)) hs[l] = NewDurationHistogram();
  hs[l].Observe(absl::ToDoubleSeconds(duration));
}

void QueueMetrics::SetClusterQueueGauges(std::map<std::string, ClusterQueueGauges> gauges) {
  absl::MutexLock lock(&mu_);
  gauges_ = std::move(gauges);
}

void QueueMetrics::UpdateClusterQueueGauges(std::map<std::string, ClusterQueueGauges> changed,
                                            const std::vector<std::string>& removed) {
  absl::MutexLock lock(&mu_);
  for (const std::string& name : removed) gauges_.erase(name);
  for (auto& [name, g] : changed) gauges_[name] = std::move(g);
}

int64_t QueueMetrics::CounterValue(const std::string& name, const std::string& labels) const {
  absl::MutexLock lock(&mu_);
  auto it = counters_.find(name);
  if (it == counters_.end()) return 0;
  auto jt = it->second.find(labels);
  return jt == it->second.end() ? 0 : jt->second;
}

void QueueMetrics::AppendPrometheus(std::string* out) const {
  absl::MutexLock lock(&mu_);
  for (const MetricInfo& m : kCounters) {
    Header(out, m);
    auto it = counters_.find(m.name);
    if (it == counters_.end()) continue;
    for (const auto& [labels, v] : it->second) {
      absl::StrAppend(out, m.name, "{", labels, "} ", v, "\n");
    }
  }
  for (const MetricInfo& m : kHistograms) {
    Header(out, m);
    auto it = histograms_.find(m.name);
    if (it == histograms_.end()) continue;
    for (const auto& [labels, h] : it->second) {
      int64_t cumulative = 0;
      for (size_t i = 0; i <= h.bounds.size(); ++i) {
        cumulative += h.counts[i];
        std::string le = i < h.bounds.size() ? Num(h.bounds[i]) : "+Inf";
        absl::StrAppend(out, m.name, "_bucket{", labels, ",le=\"", le, "\"} ", cumulative, "\n");
      }
      absl::StrAppend(out, m.name, "_sum{", labels, "} ", Num(h.sum), "\n");
      absl::StrAppend(out, m.name, "_count{", labels, "} ", h.count, "\n");
    }
  }
  const MetricInfo gauges[] = {
      {kPendingWorkloads, "gauge",
       "The number of pending workloads, per 'cluster_queue' and 'status' (active or "
       "inadmissible)"},
      {kReservingActiveWorkloads, "gauge",
       "The number of Workloads that are reserving quota, per 'cluster_queue'"},
      {kAdmittedActiveWorkloads, "gauge",
       "The number of admitted Workloads that are active (unsuspended and not finished), per "
       "'cluster_queue'"},
      {kClusterQueueStatus, "gauge",
       "Reports 'cluster_queue' with its 'status' (pending, active or terminating)"},
      {kClusterQueueWeightedShare, "gauge",
       "The weighted share of the 'cluster_queue' (fair sharing, per mille)"},
      {kClusterQueueResourceUsage, "gauge",
       "Reports the 'cluster_queue' total resource usage"},
      {kClusterQueueResourceReservation, "gauge",
       "Reports the 'cluster_queue' total resource reservation"},
      {kClusterQueueNominalQuota, "gauge",
       "Reports the 'cluster_queue' resource nominal quota"},
      {kClusterQueueBorrowingLimit, "gauge",
       "Reports the 'cluster_queue' resource borrowing limit"},
      {kClusterQueueLendingLimit, "gauge",
       "Reports the 'cluster_queue' resource lending limit"},
  };
  for (const MetricInfo& m : gauges) {
    Header(out, m);
    std::string name = m.name;
    for (const auto& [cq, g] : gauges_) {
      std::string l = Label("cluster_queue", cq);
      if (name == kPendingWorkloads) {
        Gauge(out, m.name, absl::StrCat(l, ",", Label("status", "active")), g.pending_active);
        Gauge(out, m.name, absl::StrCat(l, ",", Label("status", "inadmissible")),
              g.pending_inadmissible);
      } else if (name == kReservingActiveWorkloads) {
        Gauge(out, m.name, l, g.reserving);
      } else if (name == kAdmittedActiveWorkloads) {
        Gauge(out, m.name, l, g.admitted);
      } else if (name == kClusterQueueStatus) {
        for (const char* s : {"pending", "active", "terminating"}) {
          Gauge(out, m.name, absl::StrCat(l, ",", Label("status", s)), g.status == s ? 1 : 0);
        }
      } else if (name == kClusterQueueWeightedShare) {
        Gauge(out, m.name, l, g.weighted_share);
      } else {
        for (const ResourceGauge& r : g.resources) {
          std::string rl = absl::StrCat(Label("cohort", r.cohort), ",", l, ",",
                                        Label("flavor", r.flavor), ",",
                                        Label("resource", r.resource));
          if (name == kClusterQueueResourceUsage) Gauge(out, m.name, rl, r.usage);
          if (name == kClusterQueueResourceReservation) {
            Gauge(out, m.name, rl, r.reservation);
          }
          if (name == kClusterQueueNominalQuota) Gauge(out, m.name, rl, r.nominal);
          if (name == kClusterQueueBorrowingLimit && r.borrowing_limit) {
            Gauge(out, m.name, rl, *r.borrowing_limit);
          }
          if (name == kClusterQueueLendingLimit && r.lending_limit) {
            Gauge(out, m.name, rl, *r.lending_limit);
          }
        }
      }
    }
  }
}

}  // namespace batchd::controllers::queueing::internal
