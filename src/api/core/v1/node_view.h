// NodeView: the typed view of a core/v1 Node that the pod scheduler and the
// node lifecycle controller read (see api/meta/object_view.h for what a view
// is and its lifetime rule: it points into the JSON it was parsed from), and
// the writers for what the node lifecycle controller changes on nodes and on
// the pods it evicts, so those field names live here, beside the parser.
//
// Only the fields batchd's components use are here; add a field when a
// component needs it, parsed in `NodeView::Parse`, never read as a string
// literal at the call site.
//
// Thread-safety: a view is immutable after Parse; the writers edit JSON the
// caller owns.
#pragma once

#include <string_view>
#include <utility>
#include <vector>

#include "absl/time/time.h"
#include "api/core/v1/taint.h"
#include "api/field_error.h"
#include "api/meta/object_view.h"
#include "api/resource/amount.h"

namespace batchd::api::core_v1 {

// The node condition kubelets report and the scheduler and the node
// lifecycle controller read.
inline constexpr char kNodeReady[] = "Ready";

// One entry of `status.conditions` (a NodeCondition).
struct NodeConditionView {
  std::string_view type;
  std::string_view status;  // "True", "False", "Unknown".
  std::string_view reason;
  std::string_view message;
  std::string_view last_heartbeat_time;   // RFC 3339, "" when unset.
  std::string_view last_transition_time;  // RFC 3339, "" when unset.
};

// One entry of a `{name: quantity}` resource list, exact in milli-units.
struct ResourceAmountView {
  std::string_view name;
  Amount amount;
};

struct NodeView {
  meta::ObjectMetaView meta;
  // spec
  bool unschedulable = false;
  // spec.taints with a defined effect (owned copies: see api/core/v1/taint.h).
  std::vector<Taint> taints;
  // status
  std::vector<NodeConditionView> conditions;
  // status.allocatable / status.capacity objects, or nullptr when unset;
  // parse them with Allocatable() (only the scheduler needs the amounts).
  const Json* allocatable = nullptr;
  const Json* capacity = nullptr;

  // REQUIRES: `node` is a Node object that outlives the view.
  static NodeView Parse(const Json& node);

  // The first condition of `type`, or nullptr.
  const NodeConditionView* Condition(std::string_view type) const;
  // The Ready condition's status, or "" when the node has none.
  std::string_view ReadyStatus() const;
  // The resources pods may request on the node: `status.allocatable`, or
  // `status.capacity` when allocatable is unset (a node that reports only
  // its capacity), in name order. Unparsable quantities are skipped; zero
  // amounts are kept.
  std::vector<ResourceAmountView> Allocatable() const;
};

// --- Writers (the node lifecycle controller's edits) ------------------------

// Marks every condition of `node` Unknown (reason NodeStatusUnknown,
// "Kubelet stopped posting node status.", lastTransitionTime `now`), as
// Kubernetes' node lifecycle controller does when the node's heartbeat
// stops; a node without a Ready condition gets Ready=Unknown
// (NodeStatusNeverUpdated). Conditions already Unknown are left alone.
// Returns whether anything changed.
bool MarkNodeConditionsUnknown(Json& node, absl::Time now);

// Undoes MarkNodeConditionsUnknown once the node heartbeats again: each
// condition it made Unknown becomes True (Ready: KubeletReady) or False
// (others: KubeletRecovered), with both times `now`. Conditions the kubelet
// itself reported Unknown are left alone. Returns whether anything changed.
bool RestoreNodeConditions(Json& node, absl::Time now);

// Removes from `spec.taints` every taint whose key and effect match one of
// `taints` (their values and times are not compared, as Kubernetes'
// taint utilities match), dropping `spec.taints` when it ends up empty; the
// other entries stay as written. Returns whether anything was removed.
bool RemoveNodeTaints(Json& node, const std::vector<Taint>& taints);

// Appends to `spec.taints` each of `taints` whose key and effect no taint
// there has (an existing one keeps its value and timeAdded). Returns
// whether anything was added.
bool AddMissingNodeTaints(Json& node, const std::vector<Taint>& taints);

// The taint manager's eviction of a pod, on its status: phase Failed and
// the condition DisruptionTarget=True (reason DeletionByTaintManager,
// "Taint manager: deleting pod", lastTransitionTime `now`), replacing any
// DisruptionTarget condition the pod had.
void MarkPodEvictedByTaintManager(Json& pod, absl::Time now);

}  // namespace batchd::api::core_v1
