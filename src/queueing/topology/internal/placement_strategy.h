// Phase 2 of placement: choosing domains once phase 1 (Tree::FillCounts) has
// said how much every domain can take. One interface, three strategies
// (best_fit.cc, least_free_capacity.cc, balanced.cc), and the steps they
// share: the order domains are tried in, the greedy hand-out with the "tight
// fit" of the last domain, phase 2a (find the level and domains that hold
// the request) and phase 2b (walk down to the leaves).
//
// Capacity is counted in "units" per level: at and above the outermost slice
// level a unit is one outermost slice; below it, one grain (the innermost
// slice layer's size at that level, or one pod), so a domain's units are
// `Workspace::units` and it is handed `Demand::grain[level]` pods per unit.
#pragma once

#include <cstdint>
#include <vector>

#include "queueing/topology/internal/tree.h"
#include "queueing/topology/topology.h"

namespace batchd::queueing::topology::internal {

// The order a strategy tries domains in. Ties: pods ascending (the least
// leftover), then level values ascending (the domain index).
enum class DomainOrder {
  kMostFirst,   // BestFit (and Balanced): units descending
  kLeastFirst,  // LeastFreeCapacity: units ascending
};

// State of one Place: phase 1's counts and the pods handed to each domain.
struct Workspace {
  const Tree& tree;
  const Demand& demand;
  const Counts& counts;
  std::vector<int64_t> units;     // per domain, see the file comment
  std::vector<int64_t> assigned;  // per domain: pods handed to it

  Workspace(const Tree& t, const Demand& d, const Counts& c);
};

struct Phase2Result {
  bool ok = false;
  // When !ok: the most units (outermost slices) one attempt could place, and
  // whether the request needed them in one domain of `level` (required).
  int64_t fit_units = 0;
  bool one_domain = false;
  int level = 0;
};

class PlacementStrategy {
 public:
  virtual ~PlacementStrategy() = default;
  virtual Algorithm algorithm() const = 0;
  // Hands the request's pods to leaves (Workspace::assigned), or says why not.
  virtual Phase2Result Place(Workspace& workspace) const = 0;
};

// The strategy objects (stateless, shared).
const PlacementStrategy& BestFitStrategy();
const PlacementStrategy& LeastFreeCapacityStrategy();
const PlacementStrategy& BalancedStrategy();
const PlacementStrategy& StrategyFor(Algorithm algorithm);

// ---- Steps the strategies share (placement_strategy.cc) ----

// Sorts `domains` (global indexes) in `order` by `units`, then pods, then index.
void SortDomains(std::vector<int>& domains, const std::vector<int64_t>& units,
                 const std::vector<int64_t>& pods, DomainOrder order);

// Sorts as much of `domains` as a greedy hand-out of `need` units reads: a
// prefix, in SortDomains' order, whose units reach `need` (or all of it); the
// rest holds the other domains in no particular order. For 10,000 leaves and
// a request that needs a hundred of them this avoids most of the sort.
void SortDomainsFor(std::vector<int>& domains, const std::vector<int64_t>& units,
                    const std::vector<int64_t>& pods, DomainOrder order, int64_t need);

// The domain of [first, last) with the fewest units still >= `need` (ties:
// fewer pods, lower index), or -1.
int TightestFit(const int* first, const int* last, const std::vector<int64_t>& units,
                const std::vector<int64_t>& pods, int64_t need);

// Hands `need` units to `sorted` (sorted at least as SortDomainsFor leaves
// it) in order, each taking all it has, until one has enough for the rest; with `tight_fit` the
// rest goes to the tightest fit among the domains not yet taken instead. Appends (domain, units)
// pairs with units > 0 to `out`; returns the units left unplaced.
int64_t Distribute(const std::vector<int>& sorted, const std::vector<int64_t>& units,
                   const std::vector<int64_t>& pods, int64_t need, bool tight_fit,
                   std::vector<std::pair<int, int64_t>>& out);

// Phase 2a for BestFit (kMostFirst) and LeastFreeCapacity (kLeastFirst):
// from the request's level, one domain that holds every slice (the tightest
// fit); else required fails, preferred goes up a level at a time, and at the
// top (or for unconstrained) several domains are taken greedily in `order`.
// On success `chosen` are the domains of `level_out` with their units.
Phase2Result FindFitDomains(const Workspace& workspace, DomainOrder order,
                            std::vector<std::pair<int, int64_t>>& chosen, int& level_out);

// Phase 2b: sets `assigned` for `chosen` (units at `level`) and hands their
// pods down to the leaves. Above the outermost slice level the children of
// all chosen domains compete together (when `pooled`), else each domain's
// pods go to its own children. False if some pods found no room (a bug).
bool Descend(Workspace& workspace, DomainOrder order,
             const std::vector<std::pair<int, int64_t>>& chosen, int level, bool pooled);

// ---- A pod set group (group_placement.cc) ----

struct GroupPlacement {
  Phase2Result result;
  std::vector<int64_t> assigned;  // per domain, the request's pods (as Workspace::assigned)
  int leader_leaf = -1;           // when result.ok
};

// Places a request with a leader (Request::leader; no slices, so a unit is a
// pod). Phase 2a: from the request's level, the domain that holds the pods
// with the leader among them (the tightest fit by `LeaderCounts`); required
// fails without one, preferred goes up a level at a time and at the top
// puts the leader in the domain where it displaces the fewest pods, then
// spreads the rest over the others in `order`. The leader then walks down to the leaf
// where it displaces the fewest pods (ties in `order`), whose count (and its
// ancestors') drops by that much in `counts`, and the pods descend as they
// would without a leader (Descend).
GroupPlacement PlaceGroup(const Tree& tree, const Demand& demand, Counts& counts,
                          const LeaderCounts& leader, DomainOrder order);

}  // namespace batchd::queueing::topology::internal
