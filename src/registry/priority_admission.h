// Kubernetes' Priority admission and the built-in PriorityClasses.
//
// Pods (create): spec.priorityClassName resolves to spec.priority and
// spec.preemptionPolicy from its PriorityClass; a pod without a class gets
// the global default class (the lowest-valued one, should a race have made
// two), or priority 0 and PreemptLowerPriority when there is none. A class
// that does not exist, or a priority / preemptionPolicy in the pod that
// differs from its class's, is Forbidden. Pods (update): a body without
// priority or preemptionPolicy keeps the stored ones (validation keeps the
// spec immutable).
//
// PriorityClasses (create, update): at most one may be globalDefault;
// marking a second one is Forbidden.
#pragma once

#include "absl/status/status.h"
#include "registry/registry.h"

namespace batchd::registry {

// Registers the pod and PriorityClass hooks on `reg` (Registry::AddMutator).
// A scheme without PriorityClasses leaves pods as they are.
void AddPriorityAdmission(Registry& reg);

// Creates system-cluster-critical (2000000000) and system-node-critical
// (2000001000) when absent, as kube-apiserver does at start-up
// (api/scheduling/v1 names them).
absl::Status EnsureSystemPriorityClasses(Registry& reg);

}  // namespace batchd::registry
