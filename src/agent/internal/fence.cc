#include "agent/internal/fence.h"

#include <algorithm>

#include "api/core/v1/node_fence.h"

namespace batchd::agent::internal {

void NodeFence::Renewed(absl::Time sent) {
  absl::MutexLock lock(&mu_);
  last_ = std::max(last_, sent);
}

absl::Time NodeFence::last_renewed() const {
  absl::MutexLock lock(&mu_);
  return last_;
}

absl::Time NodeFence::DeadlineFor(const api::Json& pod) const {
  const std::optional<absl::Duration> after = api::core_v1::FenceAfter(pod, period_);
  if (!after) return absl::InfiniteFuture();
  return last_renewed() + *after;
}

absl::Duration NodeFence::RemainingFor(const api::Json& pod, absl::Time now) const {
  const absl::Time deadline = DeadlineFor(pod);
  if (deadline == absl::InfiniteFuture()) return absl::InfiniteDuration();
  if (deadline == absl::InfinitePast()) return -absl::InfiniteDuration();
  return deadline - now;
}

bool NodeFence::Lapsed(absl::Time now) const {
  const absl::Time last = last_renewed();
  return enabled() && last != absl::InfinitePast() && now - last > period_;
}

}  // namespace batchd::agent::internal
