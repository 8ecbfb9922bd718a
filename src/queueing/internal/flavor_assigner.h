// Flavor assignment (reference §2.4): for each pod set and resource group,
// scan the ClusterQueue's flavors in order, skip those whose node labels or
// taints don't suit the pod set, grade each flavor's quota fit (fit > reclaim
// > preempt > noCandidates > noFit) and pick one following the CQ's flavor
// fungibility. Returns a structured result with a Kueue-style message.
//
// Thread-safety: none; reads the quota tree (the oracle may simulate on it
// and must restore it).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "queueing/internal/state.h"

namespace batchd::queueing::internal {

enum class GranularMode { kNoFit = 0, kNoCandidates = 1, kPreempt = 2, kReclaim = 3, kFit = 4 };
enum class Mode { kNoFit = 0, kPreempt = 1, kFit = 2 };

// Answers "could preemption make `val` of flavor-resource `id` fit?" for the
// workload being assigned (Kueue's preemptionOracle). Returns kNoCandidates, kPreempt (a
// target in the own CQ) or kReclaim, and the borrowing level after.
class PreemptionOracle {
 public:
  virtual ~PreemptionOracle() = default;
  virtual std::pair<GranularMode, int> SimulatePreemption(FlavorResourceId id, Amount val) = 0;
};

struct PodSetResult {
  std::string name;
  int32_t count = 0;
  std::map<std::string, std::string> flavors;  // resource -> flavor
  std::map<std::string, Amount> usage;         // resource -> total
  Mode mode = Mode::kFit;
  std::optional<TopologyAssignment> topology;  // set by PlaceTopology (tas.h)
};

struct Assignment {
  Mode mode = Mode::kFit;  // worst over pod sets
  int borrowing = 0;       // max borrowing level over assigned flavor-resources
  std::vector<PodSetResult> pod_sets;
  FlavorResourceAmounts usage;        // total per flavor-resource
  std::vector<FlavorResourceId> need_preemption;  // ids whose quota does not fit now
  PendingReason reason = PendingReason::kWaitingForQuota;  // when not kFit
  std::string message;                                     // when not kFit

  Admission ToAdmission(const std::string& cq) const;
};

// Pure helpers, exposed for tests.
// Why `flavor` can't host `ps` ("" = it can).
std::string FlavorMismatch(const ResourceFlavor& flavor, const PodSet& ps);
std::string FormatAmount(const std::string& resource, Amount milli);

// Assigns flavors for `wl` with pod-set counts `counts` (same length as
// wl.pod_sets). `oracle` may be null (treated as "no candidates"). `sticky`
// (a workload slice's replaced admission) restricts each pod set to the
// flavors it holds there.
Assignment AssignFlavors(const SnapshotView& view, const CqInfo& cq, const Workload& wl,
                         const std::vector<int32_t>& counts, PreemptionOracle* oracle,
                         const Admission* sticky = nullptr);

}  // namespace batchd::queueing::internal
