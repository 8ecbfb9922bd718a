// The node's resource usage for metrics.k8s.io (kubectl top): CPU rates from
// cumulative CPU time sampled over a window, as the kubelet's resource
// metrics and metrics-server compute them, and the memory working set now.
//
// The agent samples every running container and the node every
// `sample_period` (its housekeeping), and again when the summary is asked
// for: the rate is over the span back to the newest earlier sample at
// least `min_window` old (so between min_window and about one period). A
// container or node with no such sample yet has no rate and is left out,
// as metrics-server leaves out what it has scraped once.
//
// Bounded: at most `max_samples` samples per running container and for the
// node; containers that stopped running are forgotten at the next sample.
// Thread-safe.
#pragma once

#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "agent/runtime/pod_runtime.h"
#include "apiserver/resource_metrics.h"

namespace batchd::agent::internal {

// Rates from cumulative counters, per key. Not thread-safe (ResourceStats locks).
class RateTracker {
 public:
  struct Options {
    absl::Duration min_window = absl::Seconds(1);
    absl::Duration keep_every = absl::Seconds(5);
    size_t max_samples = 3;
  };
  RateTracker() : RateTracker(Options()) {}
  explicit RateTracker(Options o) : opts_(o) {}
  struct Rate {
    int64_t per_second = 0;  // counter units per second (µs/s for CPU time)
    absl::Duration window;
  };
  // Records `value` of `key` at `now`; the rate since the newest earlier
  // sample at least min_window old, if any. A counter that went down (a
  // restarted container) starts over.
  std::optional<Rate> Observe(const std::string& key, absl::Time now, int64_t value);
  // Forgets every key not in `live`.
  void Retain(const std::vector<std::string>& live);
  size_t keys() const { return samples_.size(); }
  size_t samples(const std::string& key) const;

 private:
  struct Sample {
    absl::Time t;
    int64_t v;
  };
  Options opts_;
  std::map<std::string, std::deque<Sample>> samples_;
};

struct RunningPod {
  std::string uid, ns, name;
};

class ResourceStats {
 public:
  struct Options {
    std::string node_name;
    RateTracker::Options rates;
    // The node's cumulative busy CPU time and memory in use (ReadNodeUsage("/proc")).
    std::function<Usage()> node_usage;
  };
  ResourceStats(Options o, PodRuntime& runtime);

  // Samples the node and the containers of `pods`; returns what has a rate.
  apiserver::NodeUsageSummary Collect(absl::Time now, const std::vector<RunningPod>& pods);
  size_t tracked_keys() const;

 private:
  Options opts_;
  PodRuntime& runtime_;
  mutable absl::Mutex mu_;
  RateTracker rates_ ABSL_GUARDED_BY(mu_);
};

}  // namespace batchd::agent::internal
