// Typed inputs and outputs of the admission core (Kueue's admission algorithm):
// ResourceFlavor, ClusterQueue, Cohort, LocalQueue and Workload as plain
// structs (no JSON; the queueing controller converts API objects into these),
// and the Decision a scheduling cycle returns.
//
// Amounts: the core's `Amount` is api::Amount's milli value, a plain int64
// (cpu "500m" = 500, memory "1Gi" = 1073741824000), so that quotas, requests
// and usage stay dense int64 arrays on the hot path and tests and callers can
// write literals. All quota math in the core goes through api::Amount's own
// saturating arithmetic on these values (api::SaturatingAdd / SaturatingSub
// in api/resource/amount.h): `kUnlimited` (api::Amount::Unlimited(), INT64_MAX)
// behaves as +infinity, and sums that overflow clamp instead of wrapping.
// Convert with api::Amount::FromMilli(a) / api::Amount::milli().
//
// Thread-safety: plain values; copy freely.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "api/core/v1/taint.h"
#include "api/labels/selector.h"
#include "api/resource/amount.h"

namespace batchd::queueing {

// api::Amount's milli value (see the file comment).
using Amount = int64_t;
inline constexpr Amount kUnlimited = api::Amount::Unlimited().milli();

struct ResourceQuota {
  Amount nominal = 0;
  std::optional<Amount> borrowing_limit;  // nullopt = unlimited (within the cohort)
  std::optional<Amount> lending_limit;    // nullopt = all nominal lendable
};

struct FlavorQuotas {
  std::string flavor;
  std::map<std::string, ResourceQuota> resources;  // resource name -> quota
};

// The resources in `covered_resources` must come from the same flavor for a
// pod set; `flavors` are listed in order of preference.
struct ResourceGroup {
  std::vector<std::string> covered_resources;
  std::vector<FlavorQuotas> flavors;
};

// Taints and tolerations are the API layer's, shared with the pod scheduler.
using api::core_v1::Taint;
using api::core_v1::TaintEffect;
using api::core_v1::Toleration;
using api::core_v1::TolerationOperator;

struct ResourceFlavor {
  std::string name;
  std::map<std::string, std::string> node_labels;
  std::vector<Taint> node_taints;
  std::vector<Toleration> tolerations;  // added to the pods; also tolerate node_taints
  std::string topology_name;  // non-empty: a topology-aware flavor (TAS)
};

// ---- Topology-aware scheduling (reference §3) -------------------------------

// A Topology: node label keys from the top level down (block, rack,
// kubernetes.io/hostname).
struct Topology {
  std::string name;
  std::vector<std::string> levels;
};

// A Ready node of topology-aware flavors (the caller removes nodes that are
// not Ready: their pods are repaired, see TopologyRepair). New placements
// skip unschedulable (cordoned) nodes, whose pods keep running. `free` is
// its allocatable minus the requests of pods that TAS does not manage,
// "pods" = free pod slots.
struct TopologyNode {
  std::string name;
  std::map<std::string, std::string> labels;
  std::vector<Taint> taints;
  std::map<std::string, Amount> free;
  bool schedulable = true;
};

enum class TopologyMode { kRequired, kPreferred, kUnconstrained };

// Pods in groups of `size`, each group inside one domain of `level`.
struct TopologySlice {
  std::string level;  // node label key
  int32_t size = 1;
  friend bool operator==(const TopologySlice&, const TopologySlice&) = default;
};

// A pod set's topology request (the podset-*-topology annotations).
struct TopologyRequest {
  TopologyMode mode = TopologyMode::kUnconstrained;
  std::string level;  // node label key; kRequired / kPreferred
  std::vector<TopologySlice> slices;  // outermost first, at most 3
  // Kueue's podSetGroupName: the pod sets of a workload that name one group
  // get the same flavors (their requests summed) and, for a group of two
  // whose smaller pod set has one pod (the leader), are placed together in
  // one domain of the (shared) level. The caller validates groups: at most
  // two pod sets, one of them of one pod, the same required or preferred
  // level, no slices.
  std::string group;
  friend bool operator==(const TopologyRequest&, const TopologyRequest&) = default;
};

// Pods per lowest-level domain; `values` are the domain's label values for
// `levels`, top first.
struct TopologyDomainCount {
  std::vector<std::string> values;
  int32_t count = 0;
  friend bool operator==(const TopologyDomainCount&, const TopologyDomainCount&) = default;
};

struct TopologyAssignment {
  std::vector<std::string> levels;
  std::vector<TopologyDomainCount> domains;
  friend bool operator==(const TopologyAssignment&, const TopologyAssignment&) = default;
};

// Which placement strategy serves which request (Kueue's TAS feature
// gates): kMixed (default; required/preferred BestFit, unconstrained
// LeastFreeCapacity), kBestFit, kLeastFreeCapacity, kBalanced (kMixed with
// balanced placement for preferred requests).
enum class TopologyProfile { kMixed, kBestFit, kLeastFreeCapacity, kBalanced };

enum class QueueingStrategy { kBestEffortFIFO, kStrictFIFO };
enum class PreemptionPolicy { kNever, kLowerPriority, kLowerOrNewerEqualPriority, kAny };

struct Preemption {
  PreemptionPolicy within_cluster_queue = PreemptionPolicy::kNever;
  PreemptionPolicy reclaim_within_cohort = PreemptionPolicy::kNever;
  PreemptionPolicy borrow_within_cohort = PreemptionPolicy::kNever;  // kNever or kLowerPriority
  std::optional<int32_t> max_priority_threshold;  // of borrowWithinCohort
};

struct FlavorFungibility {
  bool when_can_borrow_try_next = false;   // false = MayStopSearch (default)
  bool when_can_preempt_try_next = true;   // true = TryNextFlavor (default)
  bool preemption_over_borrowing = false;  // preference; false = BorrowingOverPreemption
};

enum class StopPolicy { kNone, kHold, kHoldAndDrain };

struct ClusterQueue {
  std::string name;
  std::string cohort;  // empty = none
  std::vector<ResourceGroup> resource_groups;
  QueueingStrategy strategy = QueueingStrategy::kBestEffortFIFO;
  // nullopt = no namespace allowed (Kueue's nil); an empty selector = all.
  std::optional<api::labels::LabelSelector> namespace_selector = api::labels::LabelSelector();
  FlavorFungibility fungibility;
  Preemption preemption;
  StopPolicy stop_policy = StopPolicy::kNone;
  double fair_weight = 1;
  // admissionScope.admissionMode UsageBasedAdmissionFairSharing: pending
  // workloads are ordered by their LocalQueue's decayed usage first (with
  // Options::admission_fair_sharing set).
  bool admission_fair_sharing = false;
};

struct Cohort {
  std::string name;
  std::string parent;  // empty = root
  std::vector<ResourceGroup> resource_groups;
  double fair_weight = 1;
};

struct LocalQueue {
  std::string namespace_;
  std::string name;
  std::string cluster_queue;
  StopPolicy stop_policy = StopPolicy::kNone;
  double fair_weight = 1;  // spec.fairSharing.weight (admission fair sharing)
};

// One term of a required node affinity: requirements ANDed (In, NotIn,
// Exists, DoesNotExist, Gt, Lt on node labels).
using NodeSelectorTerm = std::vector<api::labels::Requirement>;

struct PodSet {
  std::string name = "main";
  int32_t count = 1;
  std::optional<int32_t> min_count;          // partial admission
  std::map<std::string, Amount> requests;    // per pod
  std::map<std::string, std::string> node_selector;
  std::vector<NodeSelectorTerm> required_affinity;  // ORed terms; empty = none
  std::vector<Toleration> tolerations;
  // Topology-aware placement; nullopt = none asked for (pod sets of a
  // ClusterQueue whose flavors are all topology-aware are then unconstrained).
  std::optional<TopologyRequest> topology;
};

struct Workload {
  std::string key;  // "namespace/name"
  std::string uid;
  std::string namespace_;
  std::string local_queue;
  std::string cluster_queue;  // resolved from the LocalQueue by the caller
  int32_t priority = 0;
  absl::Time creation = absl::UnixEpoch();
  absl::Time queue_order_time = absl::UnixEpoch();  // Kueue's queue-order timestamp
  std::vector<PodSet> pod_sets;
  bool active = true;                       // spec.active; inactive ones are never admitted
  std::optional<absl::Time> requeue_at;     // backoff: not a candidate before this time
  bool evicted = false;  // SetAdmitted: already being evicted (Evicted=True; a restart)
  std::map<std::string, std::string> namespace_labels;  // for namespaceSelector
  // Kueue's workload slices (elastic Jobs scaling up): the key of the
  // admitted workload ("namespace/name", same ClusterQueue) this one
  // replaces. It is admitted as a whole with the replaced slice's usage
  // counted as its own (only the growth takes new quota), on the replaced
  // slice's flavors; when the growth does not fit it preempts like any
  // workload, never choosing the replaced slice as a victim. The admission
  // then releases the replaced slice (Decision::replaced). While the
  // replaced key is pending or being evicted in the core, this one waits.
  std::string replaces;
};

// A pending workload as the visibility API lists it.
struct PendingWorkloadInfo {
  std::string key;  // "namespace/name"
  std::string namespace_;
  std::string local_queue;
  int32_t priority = 0;
  absl::Time creation = absl::UnixEpoch();
};

struct PodSetAssignment {
  std::string name;
  std::map<std::string, std::string> flavors;         // resource -> flavor
  std::map<std::string, Amount> resource_usage;        // total over `count` pods
  int32_t count = 0;
  std::optional<TopologyAssignment> topology;          // placement in a topology-aware flavor
};

struct Admission {
  std::string cluster_queue;
  std::vector<PodSetAssignment> pod_sets;
};

enum class PreemptionReason {
  kInClusterQueue,
  kInCohortReclamation,
  kInCohortFairSharing,
  kInCohortReclaimWhileBorrowing,
};

enum class PendingReason {
  kNoMatchingFlavor,               // no flavor matches selectors/taints, or resource not covered
  kWaitingForQuota,                // fits the CQ's potential capacity but not now
  kExceedsMaxQuota,                // larger than the CQ could ever get
  kWaitingForPreemptedWorkloads,   // victims chosen; admitted once they are gone
  kMisconfigured,                  // CQ missing, inactive (stopped, flavor missing, cohort cycle)
  kNamespaceMismatch,              // the CQ's namespaceSelector rejects the namespace
  kLocalQueueStopped,
  kInactive,                       // spec.active = false
  kTopologyPlacementFailed,        // quota fits, but no placement in the flavor's topology
};

// "InClusterQueue", "WaitingForQuota", ... as Kueue spells them.
const char* PreemptionReasonName(PreemptionReason r);
const char* PendingReasonName(PendingReason r);

struct Decision {
  enum class Kind {
    kAdmit,    // `key` gets `admission` (QuotaReserved); usage is already counted
    kPreempt,  // evict victim `key` for `preemptor`; usage stays counted until the caller
               // reports the eviction (UpsertPending or Remove)
    kPending,  // `key` stays pending; `pending_reason` + `message` explain why
  };
  Kind kind = Kind::kPending;
  std::string key;
  Admission admission;                  // kAdmit
  std::string preemptor;                // kPreempt: the preemptor's key
  PreemptionReason preemption_reason = PreemptionReason::kInClusterQueue;  // kPreempt
  PendingReason pending_reason = PendingReason::kWaitingForQuota;          // kPending
  std::string message;  // kPreempt: victim message; kPending: the condition message
  // kAdmit of a workload slice: the replaced slice, already released by the
  // core (the caller marks it Finished, reason WorkloadSliceReplaced).
  std::string replaced;
};

// A topology-aware workload with pods on nodes that left the topology (not
// Ready, unschedulable, deleted): `replacement` moves those pods to nodes of
// the same domain of the requested level (the lowest level must be the
// hostname), already counted by the core; nullopt when there is no room
// there (the caller evicts the workload).
struct TopologyRepair {
  std::string key;
  std::vector<std::string> unhealthy_nodes;
  std::optional<Admission> replacement;
};

enum class FairSharingStrategy { kLessThanOrEqualToFinalShare, kLessThanInitialShare };

// Kueue's admissionFairSharing configuration (KEP-4136): each LocalQueue's
// consumed resources decay with `half_life` and take its current usage in
// every `sampling` interval: consumed = (1 - a) * consumed + a * usage with
// a = 1 - 0.5^(sampling / half_life) (a = 1 when half_life is 0). An
// admission adds a * its requests to its LocalQueue at once (the entry
// penalty) until the next sample. A LocalQueue's weighted usage is
// sum(resource_weights[r] * (consumed[r] + penalty[r])) / its weight
// (weight 1 for resources not listed; amounts in milli-units).
struct AdmissionFairSharing {
  absl::Duration half_life = absl::ZeroDuration();
  absl::Duration sampling = absl::Minutes(5);
  std::map<std::string, double> resource_weights;
};

struct Options {
  bool fair_sharing = false;
  // Set: ClusterQueues with admission_fair_sharing order by LocalQueue usage.
  std::optional<AdmissionFairSharing> admission_fair_sharing;
  std::vector<FairSharingStrategy> fair_sharing_strategies = {
      FairSharingStrategy::kLessThanOrEqualToFinalShare,
      FairSharingStrategy::kLessThanInitialShare};
  // Run CheckInvariants() after every cycle and abort on a violation; on by
  // default in debug builds (tests turn it on explicitly).
#ifdef NDEBUG
  bool check_invariants = false;
#else
  bool check_invariants = true;
#endif
  // 0 = as many as fit (batchd's default); 1 = Kueue's one head per CQ per cycle.
  int max_admissions_per_cluster_queue_per_cycle = 0;
  // Inadmissible workloads whose NoFit could not depend on their priority
  // (no preemption candidate at all) in a ClusterQueue without cohort wait in
  // one group per requirements across priorities (internal/queue.h), so a
  // finished workload costs an evaluation per group, not per pending
  // priority. Admissions and preemptions are the same either way (tests
  // compare both settings); off keeps one group per priority, as Kueue's
  // equivalence hash does.
  bool group_across_priorities = true;
  TopologyProfile topology_profile = TopologyProfile::kMixed;
};

// Read side: usage per (flavor, resource).
struct FlavorResourceUsage {
  std::string flavor;
  std::string resource;
  Amount total = 0;     // usage (reservation) of admitted workloads
  Amount borrowed = 0;  // max(0, total - nominal)
  Amount nominal = 0;
};

struct ClusterQueueStatus {
  bool exists = false;
  bool active = false;
  std::string inactive_message;  // why not active ("" when active)
  int64_t pending = 0;           // pending workloads (heap + inadmissible + backoff)
  int64_t admitted = 0;          // workloads holding quota
  std::vector<FlavorResourceUsage> usage;
  int64_t weighted_share = 0;    // fair sharing, per mille; INT64_MAX = infinite
};

struct CohortStatus {
  bool exists = false;
  std::vector<FlavorResourceUsage> usage;
  int64_t weighted_share = 0;
};

struct LocalQueueStatus {
  int64_t pending = 0;
  int64_t admitted = 0;
  std::vector<FlavorResourceUsage> usage;  // `borrowed`/`nominal` are 0 here
  // Admission fair sharing: decayed consumed resources (milli-units, by
  // resource name) as of `last_update` (nullopt before the first sample).
  std::map<std::string, double> consumed;
  std::optional<absl::Time> last_update;
  double weighted_usage = 0;  // the ordering key (see AdmissionFairSharing)
};

}  // namespace batchd::queueing
