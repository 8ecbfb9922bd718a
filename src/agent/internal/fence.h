// NodeFence: the agent's half of node fencing (api/core/v1/node_fence.h,
// docs/operations.md "Node failure and fencing"). It remembers when the last
// successful lease renewal was sent and gives each pod its fence deadline:
// that moment plus FenceAfter(pod, period). The agent hands the deadlines to
// the runtime (PodRuntime::SetFence) at every renewal and when a pod starts;
// each pod's shim kills it when its deadline passes, so fencing happens even
// when the agent itself is stopped or dead.
//
// Renewals are timed from when they were *sent*: the server can only have
// seen the renewal later, so its eviction clock (counted from what it saw)
// always runs behind this one.
//
// Thread-safety: thread-safe (one mutex).
#pragma once

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "api/field_error.h"

namespace batchd::agent::internal {

class NodeFence {
 public:
  // `period` <= 0: fencing is off (no deadlines).
  explicit NodeFence(absl::Duration period) : period_(period) {}

  bool enabled() const { return period_ > absl::ZeroDuration(); }
  absl::Duration period() const { return period_; }

  // A lease renewal sent at `sent` succeeded. Renewals may complete out of
  // order: the latest send time wins.
  void Renewed(absl::Time sent);
  // The send time of the last successful renewal (InfinitePast: none yet).
  absl::Time last_renewed() const;

  // When `pod` is fenced: InfiniteFuture when never (fencing off, or the
  // pod tolerates node.kubernetes.io/unreachable forever); before any
  // renewal, InfinitePast (a pod never runs unfenced).
  absl::Time DeadlineFor(const api::Json& pod) const;
  // The same as time left after `now`, for the runtime: InfiniteDuration
  // when never; negative once due.
  absl::Duration RemainingFor(const api::Json& pod, absl::Time now) const;

  // Whether, after a first renewal, none succeeded for longer than the
  // period at `now`: the node's pods without longer tolerations are being
  // fenced.
  bool Lapsed(absl::Time now) const;

 private:
  const absl::Duration period_;
  mutable absl::Mutex mu_;
  absl::Time last_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
};

}  // namespace batchd::agent::internal
