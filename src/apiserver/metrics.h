// Request metrics for /metrics in the Prometheus text format, under
// Kubernetes' names: apiserver_request_total{verb,resource,code} and the
// apiserver_request_duration_seconds histogram. Self-contained: no metrics
// library. Thread-safe.
#pragma once
#include "absl/synchronization/mutex.h"

#include <array>
#include <map>
#include <string>
#include <tuple>

namespace batchd::apiserver {

class RequestMetrics {
 public:
  void Observe(const std::string& verb, const std::string& resource, int code, double seconds);
  void AppendPrometheus(std::string* out) const;

 private:
  static constexpr std::array<double, 12> kBuckets = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
                                                      0.05,   0.1,   0.25,   0.5,   1.0,  5.0};
  struct Histogram {
    std::array<uint64_t, kBuckets.size()> counts{};
    uint64_t count = 0;
    double sum = 0;
  };
  mutable absl::Mutex mu_;
  std::map<std::tuple<std::string, std::string, int>, uint64_t> totals_ ABSL_GUARDED_BY(mu_);
  std::map<std::pair<std::string, std::string>, Histogram> durations_ ABSL_GUARDED_BY(mu_);
};

}  // namespace batchd::apiserver
