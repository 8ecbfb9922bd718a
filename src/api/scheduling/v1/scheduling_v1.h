// scheduling.k8s.io/v1 PriorityClass: schema, Kubernetes' defaulting
// (preemptionPolicy PreemptLowerPriority), validation (reserved `system-`
// names, the user-definable value ceiling, immutable value and
// preemptionPolicy) and the `kubectl get` table. Kueue workloads may take
// their priority from one (priorityClassRef.group scheduling.k8s.io).
// Stateless and thread-safe.
#pragma once

#include <vector>

#include "api/field_error.h"
#include "api/kind.h"

namespace batchd::api::scheduling_v1 {

inline constexpr char kGroup[] = "scheduling.k8s.io";
inline constexpr int64_t kHighestUserDefinablePriority = 1000000000;
inline constexpr char kPreemptLowerPriority[] = "PreemptLowerPriority";
// The built-in classes kube-apiserver creates (and keeps from deletion).
inline constexpr char kSystemClusterCritical[] = "system-cluster-critical";
inline constexpr char kSystemNodeCritical[] = "system-node-critical";
inline constexpr int32_t kSystemCriticalPriority = 2'000'000'000;  // node-critical: + 1000

// Whether `pc` has globalDefault: true.
bool IsGlobalDefault(const Json& pc);
// The global default of `classes`: the lowest-valued globalDefault one, should
// a race have made two (Kubernetes' rule), or null.
const Json* GlobalDefault(const std::vector<const Json*>& classes);

void SetDefaultsPriorityClass(Json& pc);
ErrorList ValidatePriorityClass(const Json& pc);
ErrorList ValidatePriorityClassUpdate(const Json& pc, const Json& old);
KindDef PriorityClassKind();

// Adds PriorityClass (scheduling.k8s.io/v1).
void RegisterKinds(Scheme& scheme);

}  // namespace batchd::api::scheduling_v1
