#include "apiserver/metrics.h"

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"

namespace batchd::apiserver {

void RequestMetrics::Observe(const std::string& verb, const std::string& resource, int code,
                             double seconds) {
  absl::MutexLock lock(&mu_);
  ++totals_[{verb, resource, code}];
  Histogram& h = durations_[{verb, resource}];
  for (size_t i = 0; i < kBuckets.size(); ++i) {
    if (seconds <= kBuckets[i]) ++h.counts[i];
  }
  ++h.count;
  h.sum += seconds;
}

void RequestMetrics::AppendPrometheus(std::string* out) const {
  absl::MutexLock lock(&mu_);
  absl::StrAppend(out,
                  "# HELP apiserver_request_total Counter of apiserver requests broken out for "
                  "each verb, resource, and HTTP response code.\n"
                  "# TYPE apiserver_request_total counter\n");
  for (const auto& [key, n] : totals_) {
    const auto& [verb, resource, code] = key;
    absl::StrAppend(out, "apiserver_request_total{verb=\"", verb, "\",resource=\"", resource,
                    "\",code=\"", code, "\"} ", n, "\n");
  }
  absl::StrAppend(out,
                  "# HELP apiserver_request_duration_seconds Response latency distribution in "
                  "seconds for each verb and resource.\n"
                  "# TYPE apiserver_request_duration_seconds histogram\n");
  for (const auto& [key, h] : durations_) {
    std::string labels = absl::StrCat("verb=\"", key.first, "\",resource=\"", key.second, "\"");
    for (size_t i = 0; i < kBuckets.size(); ++i) {
      absl::StrAppend(out, "apiserver_request_duration_seconds_bucket{", labels, ",le=\"",
                      kBuckets[i], "\"} ", h.counts[i], "\n");
    }
    absl::StrAppend(out, "apiserver_request_duration_seconds_bucket{", labels, ",le=\"+Inf\"} ",
                    h.count, "\n");
    absl::StrAppend(out, "apiserver_request_duration_seconds_sum{", labels, "} ", h.sum, "\n");
    absl::StrAppend(out, "apiserver_request_duration_seconds_count{", labels, "} ", h.count,
                    "\n");
  }
}

}  // namespace batchd::apiserver
