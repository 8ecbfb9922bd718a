// batchd's part of Pod Security Admission (docs/security.md "Pods"): root is
// opt-in per namespace. A pod that sets runAsUser: 0 (pod or container
// level) is created only in a namespace labelled
// pod-security.kubernetes.io/enforce=privileged; elsewhere the create is
// refused with PSA's 403:
//   pods "x" is forbidden: violates PodSecurity "baseline:latest": runAsUser=0
//   (container "c" must not set runAsUser=0)
// (the level is the namespace's enforce label, "baseline" when it has none:
// batchd's default). That is the only check implemented: host namespaces
// and hostPath are what every batchd pod is (a host process), privileged
// and added capabilities are refused by validation for every namespace.
// Workload templates (Jobs...) are not checked, as with PSA: their pods are
// refused when created.
#pragma once

#include "registry/registry.h"

namespace batchd::registry {

// Registers the pod create hook on `reg` (Registry::AddMutator).
void AddPodSecurityAdmission(Registry& reg);

}  // namespace batchd::registry
