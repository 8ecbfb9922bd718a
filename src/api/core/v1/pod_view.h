// PodView: the typed view of a core/v1 Pod that controllers, the scheduler
// and the node agent read (see api/meta/object_view.h for what a view is and
// its lifetime rule: it points into the JSON it was parsed from).
//
// Only the fields batchd's components use are here; add a field when a
// component needs it, parsed in `PodView::Parse`, never read as a string
// literal at the call site.
//
// Thread-safety: immutable after Parse.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "absl/time/time.h"
#include "api/field_error.h"
#include "api/meta/object_view.h"

namespace batchd::api::core_v1 {

enum class PodPhase { kUnknown, kPending, kRunning, kSucceeded, kFailed };
// "Pending", "Running", ...; kUnknown for anything else (and "Unknown").
PodPhase ParsePodPhase(std::string_view phase);
inline bool IsTerminal(PodPhase phase) {
  return phase == PodPhase::kSucceeded || phase == PodPhase::kFailed;
}

enum class RestartPolicy { kAlways, kOnFailure, kNever };
RestartPolicy ParseRestartPolicy(std::string_view policy);  // Default (and unknown): kAlways.

// One `state` or `lastState` of a container status.
struct ContainerStateView {
  enum class Kind { kNone, kWaiting, kRunning, kTerminated };
  Kind kind = Kind::kNone;
  std::string_view reason;   // waiting / terminated.
  std::string_view message;  // waiting / terminated.
  int32_t exit_code = 0;     // terminated.
  std::string_view started_at;   // running / terminated (RFC 3339).
  std::string_view finished_at;  // terminated (RFC 3339).

  static ContainerStateView Parse(const Json& state);
  bool terminated() const { return kind == Kind::kTerminated; }
};

struct ContainerStatusView {
  std::string_view name;
  bool ready = false;
  int32_t restart_count = 0;
  ContainerStateView state;
  ContainerStateView last_state;
};

struct PodView {
  meta::ObjectMetaView meta;
  // spec
  std::string_view node_name;
  std::string_view hostname;   // spec.hostname ("" = the pod's name is its hostname).
  std::string_view subdomain;  // spec.subdomain: a headless Service's name.
  std::string_view scheduler_name;
  std::string_view priority_class_name;
  int32_t priority = 0;
  RestartPolicy restart_policy = RestartPolicy::kAlways;
  std::optional<int64_t> termination_grace_period_seconds;
  std::optional<int64_t> active_deadline_seconds;
  bool scheduling_gated = false;  // spec.schedulingGates is non-empty.
  const Json* scheduling_gates = nullptr;  // spec.schedulingGates (an array), or nullptr.
  // status
  PodPhase phase = PodPhase::kUnknown;  // kUnknown also when status.phase is unset.
  std::string_view reason;
  std::string_view message;
  std::string_view start_time;  // RFC 3339, "" when unset.
  std::string_view pod_ip;
  std::string_view host_ip;
  const Json* conditions = nullptr;  // status.conditions, or nullptr; read with api/meta/conditions.h.
  std::vector<ContainerStatusView> container_statuses;
  std::vector<ContainerStatusView> init_container_statuses;
  // spec: what a pod template asks for (read with ContainerSpecView). A pod
  // template ({metadata, spec}) parses as a pod.
  const Json* containers = nullptr;       // spec.containers (an array), or nullptr.
  const Json* init_containers = nullptr;  // spec.initContainers (an array), or nullptr.
  const Json* node_selector = nullptr;    // spec.nodeSelector (an object), or nullptr.
  const Json* tolerations = nullptr;      // spec.tolerations (an array), or nullptr.
  const Json* node_affinity = nullptr;    // spec.affinity.nodeAffinity (an object), or nullptr.

  // REQUIRES: `pod` is a Pod object that outlives the view.
  static PodView Parse(const Json& pod);

  bool terminal() const { return IsTerminal(phase); }
  // The status of container `name`, or nullptr.
  const ContainerStatusView* ContainerStatus(std::string_view name) const;
  // The status of the condition `type` ("True", "False", "Unknown"), or "".
  std::string_view ConditionStatus(std::string_view type) const;
  // Whether spec.schedulingGates holds a gate named `name`.
  bool HasSchedulingGate(std::string_view name) const;
  // Whether any condition has `type` and `status` (every entry is looked at,
  // not only the first of its type).
  bool HasCondition(std::string_view type, std::string_view status) const;
  // The lastTransitionTime of the first condition with `type` and `status`
  // that has a parsable one; nullopt when none has.
  std::optional<absl::Time> ConditionTransitionTime(std::string_view type,
                                                    std::string_view status) const;
};

// One entry of spec.containers / spec.initContainers.
struct ContainerSpecView {
  std::string_view name;
  std::string_view image;
  const Json* requests = nullptr;  // resources.requests (an object), or nullptr.
  const Json* limits = nullptr;    // resources.limits (an object), or nullptr.

  // REQUIRES: `container` outlives the view.
  static ContainerSpecView Parse(const Json& container);
};

// --- Writers -----------------------------------------------------------------

// The JSON merge patch that removes the scheduling gate `gate` from `pod`
// and adds `node_selector` (label -> value) to its spec.nodeSelector (a pod
// still gated may gain node selector entries).
Json UngatePatch(const PodView& pod, std::string_view gate, const Json& node_selector);

// In-place edits of a pod (or a pod template, which has the same `spec`):
// adds the scheduling gate `name` unless present; returns whether it did.
bool AddSchedulingGate(Json& pod, std::string_view name);
// Removes the scheduling gate `name` (and an emptied `schedulingGates`);
// returns whether it was there.
bool RemoveSchedulingGate(Json& pod, std::string_view name);
// Merges `labels` (label -> value) into spec.nodeSelector.
void MergeNodeSelector(Json& pod, const Json& labels);
// Appends each of `tolerations` that spec.tolerations does not hold yet.
void MergeTolerations(Json& pod, const Json& tolerations);

}  // namespace batchd::api::core_v1
