#include "api/core/v1/node_fence.h"

#include <algorithm>
#include <string>

#include "absl/strings/numbers.h"
#include "api/core/v1/taint.h"
#include "api/json_access.h"

namespace batchd::api::core_v1 {

std::optional<absl::Duration> FenceAfter(const Json& pod, absl::Duration period) {
  if (period <= absl::ZeroDuration()) return std::nullopt;
  const std::vector<Toleration> tols = ParseTolerations(MemberObject(pod, "spec"));
  const Taint unreachable{"node.kubernetes.io/unreachable", "", TaintEffect::kNoExecute, ""};
  const Toleration* t = FindToleration(tols, unreachable);
  if (t == nullptr) return period;                       // evicted once the node is tainted
  if (!t->toleration_seconds) return std::nullopt;       // never evicted
  return std::max(period, absl::Seconds(std::max<int64_t>(0, *t->toleration_seconds)));
}

std::optional<absl::Duration> NodeFencePeriod(const Json& node) {
  const std::string_view text =
      StringMember(MemberObject(MemberObject(node, "metadata"), "annotations"),
                   kFencePeriodAnnotation);
  int64_t seconds = 0;
  if (text.empty() || !absl::SimpleAtoi(std::string(text), &seconds) || seconds <= 0) return std::nullopt;
  // Bounded (a year): a larger one only delays evictions as much.
  return absl::Seconds(std::min<int64_t>(seconds, int64_t{365} * 24 * 3600));
}

}  // namespace batchd::api::core_v1
