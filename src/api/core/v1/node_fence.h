// Node fencing (docs/operations.md "Node failure and fencing"): the rule a
// remote agent and the node lifecycle controller share so that a pod never
// runs on a cut-off node beside its replacement.
//
// An agent with a fence period P announces it on its Node (annotation
// batchd.io/fence-period-seconds). Each of its pods is fenced (its processes
// killed by its shim) FenceAfter(pod, P) after the start of the node's last
// successful lease renewal, whether or not the agent still runs. The node
// lifecycle controller evicts such a pod from an unreachable node (the
// not-ready one still renews) only when, besides its toleration
// having run out, the node's heartbeat has been silent for at least
// FenceAfter(pod, P) + kFenceEvictionMargin by the controller's own clock,
// which starts counting no earlier than the agent's (it times the change it
// observed, which the renewal caused). So the pod's copy is dead before its
// replacement can be created.
//
// Thread-safety: stateless functions.
#pragma once

#include <optional>

#include "absl/time/time.h"
#include "api/field_error.h"

namespace batchd::api::core_v1 {

inline constexpr char kFencePeriodAnnotation[] = "batchd.io/fence-period-seconds";

// What the controller waits beyond FenceAfter: the kill's latency and the
// drift between the two machines' clocks over one toleration.
inline constexpr absl::Duration kFenceEvictionMargin = absl::Seconds(5);

// How long after its node's last renewed lease the pod is fenced:
// max(period, the tolerationSeconds of its node.kubernetes.io/unreachable
// NoExecute toleration). Nullopt when it tolerates that taint without
// seconds (it is never evicted, so never fenced) or `period` is not positive.
std::optional<absl::Duration> FenceAfter(const Json& pod, absl::Duration period);

// The fence period a Node announces; nullopt when it has none (or an invalid
// or non-positive one).
std::optional<absl::Duration> NodeFencePeriod(const Json& node);

}  // namespace batchd::api::core_v1
