#include "queueing/types.h"

namespace batchd::queueing {

const char* PreemptionReasonName(PreemptionReason r) {
  switch (r) {
    case PreemptionReason::kInClusterQueue: return "InClusterQueue";
    case PreemptionReason::kInCohortReclamation: return "InCohortReclamation";
    case PreemptionReason::kInCohortFairSharing: return "InCohortFairSharing";
    case PreemptionReason::kInCohortReclaimWhileBorrowing: return "InCohortReclaimWhileBorrowing";
  }
  return "Unknown";
}

const char* PendingReasonName(PendingReason r) {
  switch (r) {
    case PendingReason::kNoMatchingFlavor: return "NoMatchingFlavor";
    case PendingReason::kWaitingForQuota: return "WaitingForQuota";
    case PendingReason::kExceedsMaxQuota: return "ExceedsMaxQuota";
    case PendingReason::kWaitingForPreemptedWorkloads: return "WaitingForPreemptedWorkloads";
    case PendingReason::kMisconfigured: return "Misconfigured";
    case PendingReason::kNamespaceMismatch: return "NamespaceMismatch";
    case PendingReason::kLocalQueueStopped: return "LocalQueueStopped";
    case PendingReason::kInactive: return "Inactive";
    case PendingReason::kTopologyPlacementFailed: return "TopologyPlacementFailed";
  }
  return "Unknown";
}

}  // namespace batchd::queueing
