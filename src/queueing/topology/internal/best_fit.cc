// BestFit (Kueue's default for required and preferred requests): domains
// with the most free slices first, so a request lands in as few domains as
// possible, and the last domain taken is the tightest one that still holds
// the rest ("tight fit"), which keeps the big domains whole for later
// requests.
#include "queueing/topology/internal/placement_strategy.h"

namespace batchd::queueing::topology::internal {

namespace {

class BestFit final : public PlacementStrategy {
 public:
  Algorithm algorithm() const override { return Algorithm::kBestFit; }

  Phase2Result Place(Workspace& workspace) const override {
    std::vector<std::pair<int, int64_t>> chosen;
    int level = 0;
    Phase2Result result = FindFitDomains(workspace, DomainOrder::kMostFirst, chosen, level);
    if (!result.ok) return result;
    result.ok = Descend(workspace, DomainOrder::kMostFirst, chosen, level, /*pooled=*/true);
    return result;
  }
};

}  // namespace

const PlacementStrategy& BestFitStrategy() {
  static const BestFit* const strategy = new BestFit();
  return *strategy;
}

}  // namespace batchd::queueing::topology::internal
