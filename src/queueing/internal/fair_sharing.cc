#include "queueing/internal/preemption.h"

namespace batchd::queueing::internal {

// TODO(kcore): fair-sharing preemption (§2.8); classic until then.
std::vector<Target> FairSharingTargets(const SnapshotView& view, const PreemptionRequest& req) {
  return ClassicalTargets(view, req);
}

}  // namespace batchd::queueing::internal
