// Internal model of the admission core: compiled ClusterQueues (resource
// groups resolved to flavor-resource ids, queue, admitted workloads) and
// admitted entries.
// The quota tree is rebuilt from these when configuration changes.
//
// Thread-safety: none. Ownership: CoreState owns everything; pointers between
// these structs stay valid until the owning map entry is erased.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "queueing/internal/queue.h"
#include "queueing/internal/quota_tree.h"
#include "queueing/types.h"

namespace batchd::queueing::internal {

struct CompiledFlavor {
  std::string name;
  // covered resource -> its flavor-resource id in this flavor
  std::vector<std::pair<std::string, FlavorResourceId>> resources;
};

struct CompiledGroup {
  std::vector<std::string> covered;
  std::vector<CompiledFlavor> flavors;  // preference order
};

struct CqInfo;
class TasState;

struct AdmittedEntry {
  Workload wl;
  Admission admission;
  FlavorResourceAmounts usage;
  CqInfo* cq = nullptr;  // null when its ClusterQueue is unknown (usage not counted)
  uint64_t admit_seq = 0;  // increasing; higher = admitted more recently
  bool evicting = false;   // a preemption was issued and not yet reported done
  size_t slot = 0;         // index in its CQ's AdmittedList
};

// Bit (id % 64) for every flavor-resource id the usage holds (with a positive
// amount) or the list names; exact while there are <= 64 flavor-resources.
uint64_t FlavorResourceMask(const FlavorResourceAmounts& u);
uint64_t FlavorResourceMask(const std::vector<FlavorResourceId>& ids);

// What preemption reads of an admitted workload, copied and stored
// contiguously per CQ so that scanning candidates doesn't chase a pointer per
// workload.
struct AdmittedSummary {
  AdmittedEntry* entry = nullptr;
  uint64_t flavor_resource_mask = 0;
  uint64_t admit_seq = 0;
  absl::Time queue_order_time;
  int32_t priority = 0;
  bool evicting = false;
};

class AdmittedList {
 public:
  void Insert(AdmittedEntry* e);
  void Erase(AdmittedEntry* e);  // O(1), swaps the last entry in
  void SetEvicting(AdmittedEntry* e);
  size_t size() const { return summaries_.size(); }
  std::vector<AdmittedSummary>::const_iterator begin() const { return summaries_.begin(); }
  std::vector<AdmittedSummary>::const_iterator end() const { return summaries_.end(); }

 private:
  std::vector<AdmittedSummary> summaries_;
};

struct CqInfo {
  std::string name;
  std::optional<ClusterQueue> spec;  // nullopt: referenced by workloads but not defined
  NodeId node = kNoNode;
  std::vector<CompiledGroup> groups;
  absl::flat_hash_map<std::string, int> group_of;  // resource -> group index
  bool active = false;
  bool tas_only = false;  // every flavor is topology-aware (implied unconstrained requests)
  std::string inactive_message;
  CqQueue queue;
  AdmittedList admitted;
  // BestEffortFIFO: the head that issued preemptions stays first (§2.2).
  std::string sticky_preemptor;
};

// Read-only view the flavor assigner and preemption need.
struct SnapshotView {
  QuotaTree* tree = nullptr;  // mutated reversibly during simulations
  const FlavorResourceTable* flavor_resources = nullptr;
  const absl::flat_hash_map<std::string, ResourceFlavor>* flavors = nullptr;
  const std::vector<CqInfo*>* cq_of_node = nullptr;  // node id -> CQ (null for cohorts)
  bool fair_sharing = false;
  std::vector<FairSharingStrategy> fair_sharing_strategies;
  bool exact_masks = true;  // FlavorResourceMask is exact (<= 64 flavor-resources)
  TasState* tas = nullptr;  // topology-aware scheduling; built for the cycle
  // Preemption candidates collected so far (after the policy filters that
  // read the preemptor's priority); the cycle compares it before and after an
  // evaluation to know whether the outcome could depend on the priority.
  mutable uint64_t preemption_candidates = 0;
};

}  // namespace batchd::queueing::internal
