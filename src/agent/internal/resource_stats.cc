#include "agent/internal/resource_stats.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace batchd::agent::internal {

std::optional<RateTracker::Rate> RateTracker::Observe(const std::string& key, absl::Time now,
                                                      int64_t value) {
  std::deque<Sample>& s = samples_[key];
  if (!s.empty() && (value < s.back().v || now < s.back().t)) s.clear();  // reset
  std::optional<Rate> rate;
  for (auto it = s.rbegin(); it != s.rend(); ++it) {
    const absl::Duration span = now - it->t;
    if (span < opts_.min_window) continue;
    const double seconds = absl::ToDoubleSeconds(span);
    rate = Rate{static_cast<int64_t>(static_cast<double>(value - it->v) / seconds), span};
    break;
  }
  if (s.empty() || now - s.back().t >= opts_.keep_every) {
    s.push_back({now, value});
    while (s.size() > std::max<size_t>(opts_.max_samples, 2)) s.pop_front();
  }
  return rate;
}

void RateTracker::Retain(const std::vector<std::string>& live) {
  std::map<std::string, std::deque<Sample>> kept;
  for (const std::string& k : live) {
    auto it = samples_.find(k);
    if (it != samples_.end()) kept.emplace(k, std::move(it->second));
  }
  samples_ = std::move(kept);
}

size_t RateTracker::samples(const std::string& key) const {
  auto it = samples_.find(key);
  return it == samples_.end() ? 0 : it->second.size();
}

ResourceStats::ResourceStats(Options o, PodRuntime& runtime)
    : opts_(std::move(o)), runtime_(runtime) {
  if (!opts_.node_usage) opts_.node_usage = [] { return ReadNodeUsage("/proc"); };
}

size_t ResourceStats::tracked_keys() const {
  absl::MutexLock lock(&mu_);
  return rates_.keys();
}

apiserver::NodeUsageSummary ResourceStats::Collect(absl::Time now,
                                                   const std::vector<RunningPod>& pods) {
  // Read outside the lock (files under /proc and the cgroups).
  const Usage node = opts_.node_usage();
  std::vector<std::vector<PodRuntime::ContainerUsage>> per_pod;
  per_pod.reserve(pods.size());
  for (const RunningPod& p : pods) per_pod.push_back(runtime_.ContainerUsages(p.uid));

  apiserver::NodeUsageSummary out;
  out.node_name = opts_.node_name;
  absl::MutexLock lock(&mu_);
  std::vector<std::string> live = {"@node"};
  if (node.cpu_usec >= 0) {
    if (auto r = rates_.Observe("@node", now, node.cpu_usec)) {
      out.usage = {r->per_second * 1000, std::max<int64_t>(node.memory_bytes, 0), now, r->window};
    }
  }
  for (size_t i = 0; i < pods.size(); ++i) {
    apiserver::PodUsageSummary p{pods[i].ns, pods[i].name, pods[i].uid, {}};
    for (const PodRuntime::ContainerUsage& c : per_pod[i]) {
      if (c.usage.cpu_usec < 0) continue;
      std::string key = absl::StrCat(pods[i].uid, "/", c.name);
      live.push_back(key);
      if (auto r = rates_.Observe(key, now, c.usage.cpu_usec)) {
        p.containers.push_back(
            {c.name, {r->per_second * 1000, std::max<int64_t>(c.usage.memory_bytes, 0), now,
                      r->window}});
      }
    }
    // A pod is reported only when all its running containers have a rate.
    if (!p.containers.empty() && p.containers.size() == per_pod[i].size()) {
      out.pods.push_back(std::move(p));
    }
  }
  rates_.Retain(live);
  return out;
}

}  // namespace batchd::agent::internal
