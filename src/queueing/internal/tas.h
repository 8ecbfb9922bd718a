// Topology-aware scheduling inside the admission core (reference §3): the
// Topologies and nodes the caller reports, one placement snapshot
// (queueing/topology) per topology-aware ResourceFlavor, the TAS usage of
// admitted workloads on those snapshots, and the step of the cycle that
// places a workload's pod sets once quota fits.
//
// Snapshots are rebuilt lazily: a change of Topologies, nodes or flavors
// marks them dirty, and the next read rebuilds every TAS flavor's snapshot
// from the nodes that match its nodeLabels and carry every level's label,
// then counts the admitted workloads' assignments again. Between rebuilds,
// admissions and releases add and remove their usage in place.
//
// Thread-safety: none (the core's caller serializes).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "queueing/topology/topology.h"
#include "queueing/types.h"

namespace batchd::queueing::internal {

struct AdmittedEntry;
struct CqInfo;
struct Assignment;

class TasState {
 public:
  explicit TasState(TopologyProfile profile);

  void UpsertTopology(Topology t);
  void DeleteTopology(const std::string& name);
  void UpsertNode(TopologyNode n);
  void DeleteNode(const std::string& name);
  // The flavors changed (a topologyName or nodeLabels may have).
  void MarkDirty() { dirty_ = true; }
  bool dirty() const { return dirty_; }
  // True when some flavor is topology-aware (the caller then requeues
  // inadmissible workloads on node changes).
  bool any_tas_flavor() const { return any_tas_flavor_; }

  // Rebuilds the snapshots if dirty, counting `admitted` again.
  void EnsureBuilt(const absl::flat_hash_map<std::string, ResourceFlavor>& flavors,
                   const absl::flat_hash_map<std::string, std::unique_ptr<AdmittedEntry>>& admitted);

  // The levels of `flavor`'s topology; nullptr when the flavor is not
  // topology-aware or its Topology is missing.
  const std::vector<std::string>* LevelsOf(const ResourceFlavor& flavor) const;
  // The snapshot of a topology-aware flavor (after EnsureBuilt); nullptr
  // when there is none (not TAS, or its Topology is missing).
  topology::Snapshot* SnapshotOf(const std::string& flavor);

  bool HasNode(const std::string& name) const { return nodes_.contains(name); }
  // The tolerations `flavor` adds to its pods (they count when filtering
  // the flavor's nodes by taints).
  const std::vector<Toleration>& TolerationsOf(const std::string& flavor) const;

  // Adds (+1) or removes (-1) the topology usage of an admission. No-op
  // while dirty (the rebuild counts it).
  void CountUsage(const Workload& wl, const Admission& a, int sign);
  // Bumps whenever usage on any snapshot changes.
  uint64_t version() const { return version_; }
  void Touch() { ++version_; }

  const topology::Profile& profile() const { return profile_; }

 private:
  topology::Profile profile_;
  std::map<std::string, Topology> topologies_;
  std::map<std::string, TopologyNode> nodes_;
  // flavor -> its topology name (TAS flavors only, as of the last build).
  std::map<std::string, std::string> flavor_topology_;
  std::map<std::string, topology::Snapshot> snapshots_;  // by flavor
  std::map<std::string, std::vector<Toleration>> flavor_tolerations_;
  bool dirty_ = true;
  bool any_tas_flavor_ = false;
  uint64_t version_ = 0;
};

// Moves the pods of `a` (admitted for `wl` in `cq`) off leaves whose
// hostname `tas` no longer has, within the same domain of the request's
// level; `unhealthy` gets those hostnames. Returns the new admission, or
// nullopt when none is needed (no failed leaf) or possible (`unhealthy` is
// then non-empty). Usage on the snapshots follows the returned admission; on
// nullopt it is unchanged.
std::optional<Admission> RepairPlacement(TasState& tas, const CqInfo& cq, const Workload& wl,
                                         const Admission& a, std::vector<std::string>* unhealthy);

// The effective topology request of `ps` in `cq`: its own, else the implied
// unconstrained request when every flavor of the CQ is topology-aware.
std::optional<TopologyRequest> EffectiveTopologyRequest(const PodSet& ps, const CqInfo& cq);

// Why `flavor` can't host `ps` for topology reasons ("" = it can): a TAS
// request on a flavor without topology, a flavor that serves only TAS
// requests, or a requested level its topology lacks.
std::string TopologyMismatch(const TasState* tas, const ResourceFlavor& flavor, const PodSet& ps,
                             const CqInfo& cq);

// The topology::Request for `ps` (count pods) against `levels`, or "" error.
topology::Request ToPlacementRequest(const PodSet& ps, const TopologyRequest& req,
                                     const std::vector<std::string>& levels, int32_t count,
                                     std::string* error);

struct PlacementOutcome {
  enum class Kind {
    kNone,              // no pod set is topology-aware
    kPlaced,            // every TAS pod set has a placement (set on the assignment)
    kNeedsPreemption,   // no placement now, but one on the empty topology
    kNoFit,             // no placement even on the empty topology
  };
  Kind kind = Kind::kNone;
  std::string message;  // kNeedsPreemption / kNoFit: "couldn't assign flavors to pod set ..."
};

// Places the TAS pod sets of `a` (flavors already chosen) with the usage of
// `removed` admitted workloads taken away (victims), or on the empty
// topology when `ignore_usage`. Sets PodSetResult::topology on success.
// Restores every snapshot before returning.
PlacementOutcome PlaceTopology(TasState& tas, const CqInfo& cq, const Workload& wl, Assignment& a,
                               const std::vector<const AdmittedEntry*>& removed,
                               bool ignore_usage);

}  // namespace batchd::queueing::internal
