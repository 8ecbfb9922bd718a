// Internal to scheduler/: the scheduler's view of the cluster (nodes, what
// is bound or assumed on them, namespaces' labels) and the scheduling
// algorithm over it — filter (unschedulable, taints incl. readiness, node
// affinity, resource fit, required inter-pod affinity and anti-affinity:
// pod_affinity.h), score (least allocated, tie-break by node name), and the
// kube-scheduler style FitError message — and what preemption
// (preemption.h) needs: the pods placed on each node with their priorities,
// and the pods nominated to a node, whose requests lower-or-equal priority
// pods must leave free. Pure: no I/O, no clock.
//
// Thread-safety: none; the Scheduler serializes access with its mutex.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/time/time.h"
#include "api/field_error.h"
#include "scheduler/internal/pod_affinity.h"
#include "scheduler/predicates.h"

namespace batchd::scheduler::internal {

// Interned resource names; ids 0..3 are pods, cpu, memory, ephemeral-storage.
enum : int { kPods = 0, kCpu = 1, kMemory = 2, kEphemeralStorage = 3 };

class ResourceIndex {
 public:
  ResourceIndex();
  int Id(const std::string& name);
  const std::string& Name(int id) const { return names_[id]; }
  int size() const { return static_cast<int>(names_.size()); }

 private:
  std::vector<std::string> names_;
  absl::flat_hash_map<std::string, int> ids_;
};

using Usage = std::vector<std::pair<int, int64_t>>;  // (resource id, milli), non-zero only.

// What the scheduler needs to know about a pod, parsed once per pod version.
struct PodInfo {
  std::string key;  // "ns/name".
  std::string ns, name, uid;
  std::string node_name;
  std::string scheduler_name;
  std::string phase;
  bool deleting = false;
  bool gated = false;
  int32_t priority = 0;
  bool preempt_never = false;  // spec.preemptionPolicy Never.
  std::string nominated_node;  // status.nominatedNodeName.
  absl::Time created;
  Usage requests;  // Includes (kPods, 1000).
  int64_t nonzero_cpu = 0, nonzero_mem = 0;  // Milli; defaults for scoring.
  NodeAffinity affinity;
  std::vector<Toleration> tolerations;
  std::shared_ptr<const Labels> labels;           // metadata.labels; never null.
  std::shared_ptr<const InterPodTerms> inter_pod;  // Required pod (anti-)affinity; null: none.
  // Equal for pods with identical scheduling constraints (a pod with
  // inter-pod terms: also the same namespace and labels).
  std::string signature;
  // The pod's scheduling group (GroupKeyOf in gang.h), "" for none. Pods of a
  // group are scheduled together, by the group's policy.
  std::string group_key;
  // The pod's DisruptionTarget=True condition ("" reason when it has none):
  // a member of a disruptionMode PodGroup group takes its group with it.
  std::string disruption_reason, disruption_message;
  // The message of the pod's PodScheduled=False/Unschedulable condition as
  // observed ("" when it has none): lets the scheduler skip re-recording it.
  std::string unschedulable_message;

  bool Terminal() const { return phase == "Succeeded" || phase == "Failed"; }
};

// REQUIRES: `pod` is a Pod object.
std::shared_ptr<const PodInfo> ParsePod(const api::Json& pod, ResourceIndex& resources);

struct NodeInfo {
  std::string name;
  std::map<std::string, std::string> labels;
  std::vector<int64_t> allocatable;  // Milli by resource id.
  std::vector<int64_t> requested;
  int64_t nonzero_cpu = 0, nonzero_mem = 0;
  std::vector<Taint> taints;
  bool unschedulable = false;
  std::string ready;  // Ready condition status: True, False, Unknown or "" (none).
  int64_t Alloc(int id) const { return id < (int)allocatable.size() ? allocatable[id] : 0; }
  int64_t Used(int id) const { return id < (int)requested.size() ? requested[id] : 0; }
};

// What preemption made of an unschedulable pod, for its message.
enum class PreemptionNote {
  kNoVictims,               // Tried (or nobody to preempt): no node helps.
  kNominated,               // Victims chosen: kube-scheduler adds nothing.
  kNotEligibleNever,        // preemptionPolicy Never.
  kNotEligibleTerminating,  // Waits for a leaving pod on its nominated node.
};

// Why a pod fits nowhere: reason -> number of nodes, and how many nodes
// failed only on resources (preemption could help) vs. unresolvably.
struct FitError {
  int num_nodes = 0;
  std::map<std::string, int> reasons;
  int resolvable_nodes = 0;
  int unresolvable_nodes = 0;
  // kube-scheduler's FitError text with DefaultPreemption's PostFilter part:
  // "0/3 nodes are available: 1 node(s) had untolerated taint {k: v}, 2 Insufficient cpu.
  // preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, 2 No
  // preemption victims found for incoming pod." (kNoVictims); nothing after the
  // filter reasons when victims were chosen (kNominated); "preemption: not
  // eligible due to preemptionPolicy=Never." and "preemption: not eligible due
  // to a terminating pod on the nominated node." for the two ineligible cases.
  std::string Message(PreemptionNote note = PreemptionNote::kNoVictims) const;
};

struct ScheduleResult {
  std::string node;  // Empty when unschedulable.
  FitError error;
};

// A pod accounted on a node, with what preemption looks at.
struct PlacedPod {
  std::string node;
  Usage usage;
  int64_t nonzero_cpu = 0, nonzero_mem = 0;
  bool assumed = false;
  int32_t priority = 0;
  absl::Time start;       // Creation time: the order victims are compared in.
  std::string group_key;  // Members of a gang are never victims (preemption.h).
  bool deleting = false;  // Being deleted (or already chosen as a victim).
  // What inter-pod affinity looks at.
  std::string ns;
  std::shared_ptr<const Labels> labels;
  std::shared_ptr<const InterPodTerms> inter_pod;
};

class Cache {
 public:
  ResourceIndex& resources() { return resources_; }
  int num_nodes() const { return static_cast<int>(nodes_.size()); }
  const NodeInfo* node(const std::string& name) const;

  // Adds or replaces a node from its JSON; returns true when something that
  // can make a pending pod fit changed (always for a new node).
  bool UpsertNode(const api::Json& node);
  void RemoveNode(const std::string& name);

  // Accounts `pod` on `node` (replacing earlier accounting of the same key).
  void AddPod(const PodInfo& pod, const std::string& node, bool assumed);
  // Removes the accounting of `key`; returns whether there was any.
  bool RemovePod(const std::string& key);
  // Removes the accounting only when it is still an assumption.
  void ForgetAssumed(const std::string& key);
  bool IsAssumed(const std::string& key) const;
  std::string NodeOf(const std::string& key) const;

  // The best node for `pod`: of the nodes that pass every filter, the one
  // with the highest score, the first by name among equals (or why none
  // fits: then every node was filtered). Walks the nodes by their score
  // bound (NodeGroup below) and stops where no further node can win, so a
  // pod that fits costs ~log(nodes) plus the nodes it skips by filter, not
  // O(nodes). The same answer as ScheduleByScan.
  ScheduleResult Schedule(const PodInfo& pod);
  // Filters and scores every node in name order (the reference Schedule is
  // checked against in tests).
  ScheduleResult ScheduleByScan(const PodInfo& pod);

  // Namespaces' labels (for inter-pod terms' namespaceSelector); returns
  // whether they changed.
  bool UpsertNamespace(const std::string& name, Labels labels);
  void RemoveNamespace(const std::string& name);
  const NamespaceLabels& namespace_labels() const { return namespace_labels_; }
  // Inter-pod affinity: the pre-filter state of `pod` over the placed pods
  // (O(placed pods) when the pod has terms, O(placed pods with anti-affinity
  // terms) otherwise).
  InterPodState InterPodFor(const PodInfo& pod) const;
  // Whether `pod`'s decision depends on which pods are placed, not only on
  // capacity: it has inter-pod terms, or some placed pod has anti-affinity
  // terms. Such decisions are not shared between pods of one signature.
  bool PlacementSensitive(const PodInfo& pod) const {
    return pod.inter_pod != nullptr || !anti_affinity_pods_.empty();
  }

  // Preemption support.
  const std::map<std::string, NodeInfo>& nodes() const { return nodes_; }
  const PlacedPod* placed(const std::string& key) const;
  // Every placed pod by key. Preemption groups them by node when it runs
  // (not kept per node: that would cost every placement).
  const absl::flat_hash_map<std::string, PlacedPod>& placed_pods() const { return placed_; }
  // The lowest priority of any placed pod (INT32_MAX when none): a pod of no
  // higher priority than that has no one to preempt.
  int32_t LowestPriority() const;
  // The checks preemption cannot change: unschedulable, taints, readiness,
  // node affinity. Appends the reason when false. (Preemption checks
  // inter-pod affinity with InterPodFor: batchd does not evict pods to
  // resolve it.)
  bool PassesStaticFilters(const PodInfo& pod, const NodeInfo& n,
                           std::vector<std::string>* reasons) const;
  // Resource fit of `pod` on `n` with `freed` (milli by resource id, may be
  // null) taken off the node's usage, and the requests of the pods nominated
  // to `n` whose priority is >= the pod's (the pod's own excluded) added.
  bool FitsResources(const PodInfo& pod, const NodeInfo& n, const std::vector<int64_t>* freed,
                     std::vector<std::string>* reasons) const;
  // Marks a placed pod as leaving (a victim about to be deleted).
  void MarkDeleting(const std::string& key);
  // `pod` is nominated to `node` (replacing an earlier nomination).
  void Nominate(const PodInfo& pod, const std::string& node);
  void ClearNomination(const std::string& key);
  std::string NominatedNodeOf(const std::string& key) const;
  // The pods nominated to `node` with a priority below `priority` (they lose
  // their nomination to a more important preemptor there).
  std::vector<std::string> NominatedBelow(const std::string& node, int32_t priority) const;
  // Bumped on every change that can make a pod fit (freed capacity, node changes).
  uint64_t generation() const { return generation_; }

 private:
  using Placed = PlacedPod;
  struct Nominated {
    std::string node;
    int32_t priority = 0;
    Usage usage;
  };
  // Appends the reasons `pod` does not fit `n`; returns false when it does not
  // fit. `*resolvable` says whether only resources were missing.
  bool Filter(const PodInfo& pod, const NodeInfo& n, const InterPodState& inter_pod,
              std::vector<std::string>* reasons, bool* resolvable) const;
  int64_t Score(const PodInfo& pod, const NodeInfo& n) const;
  void Apply(NodeInfo& n, const Placed& p, int sign);

  // The node index: nodes with the same allocatable cpu and memory and the
  // same non-zero cpu and memory requests score the same for any pod
  // (Score looks at nothing else), so they form one group; a group's
  // `bound` is its score for a pod requesting nothing, which no pod's score
  // there exceeds. Groups are ordered by bound, highest first.
  struct NodeGroup {
    int64_t bound = 0;
    int64_t alloc_cpu = 0, alloc_mem = 0, nonzero_cpu = 0, nonzero_mem = 0;
    bool operator<(const NodeGroup& o) const {
      return std::tie(o.bound, alloc_cpu, alloc_mem, nonzero_cpu, nonzero_mem) <
             std::tie(bound, o.alloc_cpu, o.alloc_mem, o.nonzero_cpu, o.nonzero_mem);
    }
  };
  struct ByName {
    bool operator()(const NodeInfo* a, const NodeInfo* b) const { return a->name < b->name; }
  };
  static NodeGroup GroupOf(const NodeInfo& n);
  void Index(const NodeInfo& n);
  void Unindex(const NodeInfo& n);

  ResourceIndex resources_;
  std::map<std::string, NodeInfo> nodes_;  // Ordered: deterministic tie-breaks.
  // Every node of `nodes_` in exactly one group (pointers into `nodes_`).
  // Bound: one entry per node.
  std::map<NodeGroup, std::set<const NodeInfo*, ByName>> by_group_;
  absl::flat_hash_map<std::string, Placed> placed_;
  std::map<int32_t, int> priorities_;  // Priority -> number of placed pods.
  absl::flat_hash_map<std::string, Nominated> nominated_;
  // Placed pods with required anti-affinity terms (the symmetric check
  // looks only at these). Bound: a subset of `placed_`.
  absl::flat_hash_set<std::string> anti_affinity_pods_;
  // Bound: one entry per namespace in the informer.
  NamespaceLabels namespace_labels_;
  uint64_t generation_ = 0;
};

}  // namespace batchd::scheduler::internal
