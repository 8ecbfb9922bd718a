// LeastFreeCapacity (Kueue's TASProfileMixed choice for unconstrained
// requests): domains with the fewest free slices first, so a request fills
// the fragments other workloads left before it touches an empty domain.
// When one domain holds the whole request it is the fullest such domain.
#include "queueing/topology/internal/placement_strategy.h"

namespace batchd::queueing::topology::internal {

namespace {

class LeastFreeCapacity final : public PlacementStrategy {
 public:
  Algorithm algorithm() const override { return Algorithm::kLeastFreeCapacity; }

  Phase2Result Place(Workspace& workspace) const override {
    std::vector<std::pair<int, int64_t>> chosen;
    int level = 0;
    Phase2Result result = FindFitDomains(workspace, DomainOrder::kLeastFirst, chosen, level);
    if (!result.ok) return result;
    result.ok = Descend(workspace, DomainOrder::kLeastFirst, chosen, level, /*pooled=*/true);
    return result;
  }
};

}  // namespace

const PlacementStrategy& LeastFreeCapacityStrategy() {
  static const LeastFreeCapacity* const strategy = new LeastFreeCapacity();
  return *strategy;
}

}  // namespace batchd::queueing::topology::internal
