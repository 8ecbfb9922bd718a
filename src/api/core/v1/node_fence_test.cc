#include "api/core/v1/node_fence.h"

#include <gtest/gtest.h>

namespace batchd::api::core_v1 {
namespace {

Json PodWith(Json tolerations) {
  return Json{{"spec", {{"tolerations", std::move(tolerations)}}}};
}

TEST(NodeFence, FenceAfterIsThePeriodOrTheUnreachableToleration) {
  const absl::Duration p = absl::Seconds(40);
  // No toleration: evicted once tainted; fenced after the period.
  EXPECT_EQ(FenceAfter(Json{{"spec", Json::object()}}, p), p);
  // The default 300 s toleration: fenced after 300 s.
  EXPECT_EQ(FenceAfter(PodWith(Json::parse(R"([{"key": "node.kubernetes.io/unreachable",
      "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}])")), p),
            absl::Seconds(300));
  // A shorter one: never sooner than the period.
  EXPECT_EQ(FenceAfter(PodWith(Json::parse(R"([{"key": "node.kubernetes.io/unreachable",
      "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 5}])")), p), p);
  // Negative seconds count as 0.
  EXPECT_EQ(FenceAfter(PodWith(Json::parse(R"([{"key": "node.kubernetes.io/unreachable",
      "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": -3}])")), p), p);
  // Tolerated forever (also by a wildcard): never evicted, never fenced.
  EXPECT_EQ(FenceAfter(PodWith(Json::parse(R"([{"key": "node.kubernetes.io/unreachable",
      "operator": "Exists", "effect": "NoExecute"}])")), p), std::nullopt);
  EXPECT_EQ(FenceAfter(PodWith(Json::parse(R"([{"operator": "Exists"}])")), p), std::nullopt);
  // Other tolerations do not count.
  EXPECT_EQ(FenceAfter(PodWith(Json::parse(R"([{"key": "node.kubernetes.io/not-ready",
      "operator": "Exists", "effect": "NoExecute"}])")), p), p);
  // Fencing off.
  EXPECT_EQ(FenceAfter(Json::object(), absl::ZeroDuration()), std::nullopt);
}

TEST(NodeFence, NodeFencePeriodFromTheAnnotation) {
  auto node = [](const char* v) {
    return Json{{"metadata", {{"annotations", {{kFencePeriodAnnotation, v}}}}}};
  };
  EXPECT_EQ(NodeFencePeriod(node("40")), absl::Seconds(40));
  EXPECT_EQ(NodeFencePeriod(node("0")), std::nullopt);
  EXPECT_EQ(NodeFencePeriod(node("-1")), std::nullopt);
  EXPECT_EQ(NodeFencePeriod(node("40s")), std::nullopt);
  EXPECT_EQ(NodeFencePeriod(node("99999999999999")), absl::Hours(365 * 24));
  EXPECT_EQ(NodeFencePeriod(Json{{"metadata", Json::object()}}), std::nullopt);
  EXPECT_EQ(NodeFencePeriod(Json::object()), std::nullopt);
}

}  // namespace
}  // namespace batchd::api::core_v1
