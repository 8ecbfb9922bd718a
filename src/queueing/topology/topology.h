// Topology-aware placement (Kueue's TAS, reference kueue.md §3): where the
// pods of one pod set go inside one topology-aware ResourceFlavor.
//
// A Topology is an ordered list of levels over node labels, top first
// (block, rack, kubernetes.io/hostname). A domain is the tuple of label values
// from the top level down to its own level; the leaves are the domains of
// the lowest level (one node each when the lowest level is the hostname).
// `Snapshot` holds one flavor's domain tree with the free capacity of every
// leaf (allocatable of Ready, schedulable nodes minus pods that TAS does not
// manage, given by the caller) and the usage of admitted TAS workloads;
// `Place` answers one pod set's request with pod counts per leaf, or with a
// message a user can act on.
//
// Placement runs in two phases (Kueue's findTopologyAssignment): fill in how
// many pods (and slices) each leaf can take after the pod set's node
// selector, required node affinity and tolerations filter the nodes, roll the
// counts up every level; then choose domains with a `PlacementStrategy`
// (BestFit, LeastFreeCapacity, Balanced) from the requested level down to the
// leaves. `Profile` picks the strategy per mode as Kueue's feature gates do.
//
// Pure: no I/O, no clock, no JSON. Thread-safety: none; a Snapshot is owned
// by one thread (the admission core's). Place is const.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/core/v1/taint.h"
#include "api/labels/selector.h"

namespace batchd::queueing::topology {

// api::Amount's milli value, as queueing::Amount.
using Amount = int64_t;

// The resource name of the pod slots every pod takes one of.
inline constexpr char kPodsResource[] = "pods";

// A node of the flavor (it matches the flavor's nodeLabels, is Ready and
// schedulable, and carries every level's label).
struct Node {
  std::string name;
  std::vector<std::string> values;  // the node's label value at each level, top first
  std::map<std::string, std::string> labels;
  std::vector<api::core_v1::Taint> taints;
  // allocatable minus the requests of pods TAS does not manage; "pods" is
  // the number of free pod slots. A resource missing here is 0. Amounts are
  // milli-units like every Amount: cpu 2 = 2000, pods 110 = 110000, and one
  // pod takes one slot = 1000 of "pods". Negative amounts count as 0.
  std::map<std::string, Amount> free;
};

enum class Mode {
  kRequired,       // all pods (each slice) in one domain of `level`, else no placement
  kPreferred,      // one domain of `level` if possible, else go up a level at a time, else spread
  kUnconstrained,  // any leaves (the implied mode of TAS-only ClusterQueues)
};

// Pods are grouped into slices of `size` consecutive pods; each slice lies in
// one domain of `level` (a level index at or below the request's level).
// Layers are outermost first; each size divides the one before and the
// outermost divides `count`. Requests are validated by the caller
// (ValidateRequest below).
struct SliceLayer {
  int level = 0;
  int32_t size = 1;
};

using NodeSelectorTerm = std::vector<api::labels::Requirement>;

// The leader of a pod set group (Kueue's `kueue.x-k8s.io/podset-group-name`:
// two pod sets placed together, one of them a single pod, e.g. a
// LeaderWorkerSet's leader and its workers). The leader pod has its own
// requests and node filters and lands on a leaf inside the domain (of the
// request's level) that holds the request's pods; on the leaf it shares
// with some of them it takes its share of the capacity first.
struct Leader {
  std::map<std::string, Amount> per_pod;  // one "pods" slot is added
  std::map<std::string, std::string> node_selector;
  std::vector<NodeSelectorTerm> required_affinity;
  std::vector<api::core_v1::Toleration> tolerations;
};

struct Request {
  int32_t count = 1;
  std::map<std::string, Amount> per_pod;  // requests of one pod; one "pods" slot is added
  Mode mode = Mode::kUnconstrained;
  int level = 0;  // index into levels(); for kRequired / kPreferred
  std::vector<SliceLayer> slices;  // empty = one slice of `count` pods
  std::map<std::string, std::string> node_selector;
  std::vector<NodeSelectorTerm> required_affinity;  // ORed terms; empty = none
  std::vector<api::core_v1::Toleration> tolerations;
  // A pod set group's leader placed with these pods; only with kRequired or
  // kPreferred and without slices (ValidateRequest).
  std::optional<Leader> leader;
};

// Pods on one leaf; `values` are the leaf's label values, top first.
struct DomainCount {
  std::vector<std::string> values;
  int32_t count = 0;
  friend bool operator==(const DomainCount&, const DomainCount&) = default;
};

// Leaves with at least one pod, ordered by `values`. Pod ranks (completion
// indexes) fill the leaves in this order, slice by slice.
struct Assignment {
  std::vector<DomainCount> domains;
  friend bool operator==(const Assignment&, const Assignment&) = default;
};

struct PlaceResult {
  bool ok = false;
  Assignment assignment;         // when ok
  Assignment leader_assignment;  // when ok and the request has a leader: one leaf, one pod
  // when !ok: the most pods one attempt could place (the leader counts as one
  // of them, and of the total, when there is one)
  int32_t fit = 0;
  // when !ok, Kueue's wording, naming the topology and the level:
  //   topology "T" allows to fit only 12 out of 16 pod(s) in one domain of level "rack"
  //   topology "T" allows to fit only 12 out of 16 pod(s)        (unconstrained / spread)
  //   topology "T" doesn't allow to fit any of 16 pod(s)
  //   ... slice(s) ... when slices are what does not fit
  std::string message;
};

enum class Algorithm { kBestFit, kLeastFreeCapacity, kBalanced };

// Which strategy serves which mode (Kueue's TASProfileMixed, the default:
// required and preferred -> BestFit, unconstrained -> LeastFreeCapacity;
// TASBalancedPlacement makes preferred requests Balanced, which falls back to
// BestFit when no single domain one level above fits them).
struct Profile {
  Algorithm required = Algorithm::kBestFit;
  Algorithm preferred = Algorithm::kBestFit;
  Algorithm unconstrained = Algorithm::kLeastFreeCapacity;
  static Profile Mixed() { return {}; }
  static Profile AllBestFit() { return {Algorithm::kBestFit, Algorithm::kBestFit, Algorithm::kBestFit}; }
  static Profile AllLeastFreeCapacity() {
    return {Algorithm::kLeastFreeCapacity, Algorithm::kLeastFreeCapacity, Algorithm::kLeastFreeCapacity};
  }
  static Profile Balanced() {
    return {Algorithm::kBestFit, Algorithm::kBalanced, Algorithm::kLeastFreeCapacity};
  }
};

struct PlaceOptions {
  bool ignore_usage = false;  // place as if no TAS workload were admitted ("simulate empty")
};

// Levels are distinct, non-empty label keys; at least one. "" when valid,
// else why not.
std::string ValidateLevels(const std::vector<std::string>& levels);
// Checks `r` against `levels` ("" when valid): level index in range, slice
// levels at or below the request's level and in order, sizes positive,
// each dividing the one outside it and the outermost dividing count; a
// leader only with a required or preferred level and no slices.
std::string ValidateRequest(const std::vector<std::string>& levels, const Request& r);

namespace internal {
class Tree;
}

class Snapshot {
 public:
  // `levels` must pass ValidateLevels; nodes whose `values` size differs
  // from the number of levels are skipped.
  Snapshot(std::string topology_name, std::vector<std::string> levels, std::vector<Node> nodes);
  ~Snapshot();
  Snapshot(Snapshot&&) noexcept;
  Snapshot& operator=(Snapshot&&) noexcept;

  const std::string& topology_name() const;
  const std::vector<std::string>& levels() const;
  size_t leaf_count() const;

  // Adds (sign +1) or removes (sign -1) the usage of `a` with `per_pod`
  // requests per pod (one "pods" slot each) on its leaves. Leaves that no
  // longer exist are ignored.
  void AddUsage(const Assignment& a, const std::map<std::string, Amount>& per_pod, int sign);

  // Free capacity of the leaf with `values` now (free minus usage); empty
  // when there is no such leaf. For tests and status.
  std::map<std::string, Amount> FreeOf(const std::vector<std::string>& values) const;

  PlaceResult Place(const Request& r, const Profile& profile, PlaceOptions opts = {}) const;

 private:
  std::unique_ptr<internal::Tree> tree_;
};

}  // namespace batchd::queueing::topology
