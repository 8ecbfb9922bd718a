#include "agent/internal/resource_stats.h"

#include "agent/testing/fake_pod_runtime.h"
#include "gtest/gtest.h"

namespace batchd::agent::internal {
namespace {

const absl::Time kT0 = absl::FromUnixSeconds(1767225600);

TEST(RateTracker, RateOverTheNewestSampleAtLeastMinWindowOld) {
  RateTracker t;  // min 1 s, a sample kept every 5 s, 3 kept
  EXPECT_FALSE(t.Observe("k", kT0, 0).has_value());  // first sample: no rate
  // Half a second later: too short a window.
  EXPECT_FALSE(t.Observe("k", kT0 + absl::Milliseconds(500), 100).has_value());
  auto r = t.Observe("k", kT0 + absl::Seconds(2), 1000000);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->window, absl::Seconds(2));
  EXPECT_EQ(r->per_second, 500000);
  EXPECT_EQ(t.samples("k"), 1u);  // 2 s after the kept one: not kept
  r = t.Observe("k", kT0 + absl::Seconds(5), 4000000);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->window, absl::Seconds(5));
  EXPECT_EQ(t.samples("k"), 2u);  // kept (5 s after the last kept)
  // 0.5 s after the newest: the rate is over the one before it.
  r = t.Observe("k", kT0 + absl::Milliseconds(5500), 4500000);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->window, absl::Milliseconds(5500));
}

TEST(RateTracker, BoundedSamplesAndKeysAndCounterResets) {
  RateTracker t(RateTracker::Options{absl::Seconds(1), absl::Seconds(1), 3});
  for (int i = 0; i < 100; ++i) t.Observe("k", kT0 + absl::Seconds(i), i * 1000);
  EXPECT_EQ(t.samples("k"), 3u);
  // A counter that goes down (a restarted container) starts over.
  EXPECT_FALSE(t.Observe("k", kT0 + absl::Seconds(101), 5).has_value());
  EXPECT_EQ(t.samples("k"), 1u);
  t.Observe("other", kT0, 1);
  EXPECT_EQ(t.keys(), 2u);
  t.Retain({"other"});
  EXPECT_EQ(t.keys(), 1u);
  EXPECT_EQ(t.samples("k"), 0u);
}

TEST(ResourceStats, NodeAndRunningContainersWithRates) {
  testing::FakePodRuntime rt;
  Usage node{0, 3 << 20};
  ResourceStats::Options o;
  o.node_name = "n1";
  o.node_usage = [&] { return node; };
  ResourceStats stats(o, rt);
  std::vector<RunningPod> pods = {{"u1", "ns", "a"}, {"u2", "ns", "b"}};
  rt.SetContainerUsages("u1", {{"main", {0, 1000}}});
  // u2's second container has no CPU figure: the pod is left out, not half-reported.
  rt.SetContainerUsages("u2", {{"x", {0, 1}}, {"y", {-1, 1}}});
  apiserver::NodeUsageSummary first = stats.Collect(kT0, pods);
  EXPECT_EQ(first.node_name, "n1");
  EXPECT_EQ(first.usage.window, absl::ZeroDuration());  // no rate yet
  EXPECT_TRUE(first.pods.empty());
  // 10 s later: the node used 20 s of CPU (2 cores), `main` 5 s (half a core).
  node.cpu_usec = 20000000;
  rt.SetContainerUsages("u1", {{"main", {5000000, 4096}}});
  rt.SetContainerUsages("u2", {{"x", {10, 1}}, {"y", {-1, 1}}});
  apiserver::NodeUsageSummary s = stats.Collect(kT0 + absl::Seconds(10), pods);
  EXPECT_EQ(s.usage.cpu_nanocores, 2000000000);
  EXPECT_EQ(s.usage.memory_bytes, 3 << 20);
  EXPECT_EQ(s.usage.window, absl::Seconds(10));
  EXPECT_EQ(s.usage.time, kT0 + absl::Seconds(10));
  ASSERT_EQ(s.pods.size(), 1u);
  EXPECT_EQ(s.pods[0].name, "a");
  EXPECT_EQ(s.pods[0].uid, "u1");
  ASSERT_EQ(s.pods[0].containers.size(), 1u);
  EXPECT_EQ(s.pods[0].containers[0].usage.cpu_nanocores, 500000000);
  EXPECT_EQ(s.pods[0].containers[0].usage.memory_bytes, 4096);
  // Pods that stopped are forgotten: only the node and u2's measured container stay tracked.
  rt.SetContainerUsages("u1", {});
  stats.Collect(kT0 + absl::Seconds(20), pods);
  EXPECT_EQ(stats.tracked_keys(), 2u);
  stats.Collect(kT0 + absl::Seconds(30), {});
  EXPECT_EQ(stats.tracked_keys(), 1u);
}

}  // namespace
}  // namespace batchd::agent::internal
