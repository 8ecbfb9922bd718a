// What batchd does with a pod's securityContext (docs/api.md "Pod security",
// docs/security.md "Pods"). Honoured: runAsUser, runAsGroup, runAsNonRoot,
// supplementalGroups (+ supplementalGroupsPolicy), fsGroup,
// allowPrivilegeEscalation: false (no_new_privs), capabilities.drop: [ALL].
// Refused by validation: privileged: true, capabilities.add. Accepted with a
// Warning (header at creation, event at start) because a host process cannot
// honour them: the fields UnappliedSecurityFields lists.
//
// Root is opt-in: a pod whose containers would run as uid 0 (an explicit
// runAsUser: 0, pod or container level) is admitted only in a namespace
// labelled pod-security.kubernetes.io/enforce=privileged (Pod Security
// Admission's privileged level); RootViolations lists the offenders for the
// admission check's message. Pure functions; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "api/field_error.h"

namespace batchd::api::core_v1 {

inline constexpr char kPodSecurityEnforceLabel[] = "pod-security.kubernetes.io/enforce";
inline constexpr char kPodSecurityPrivileged[] = "privileged";

// "spec.containers[0].securityContext.seccompProfile" style paths of the
// fields set in `pod` that batchd accepts but does not apply, each followed
// by ": " and why.
std::vector<std::string> UnappliedSecurityFields(const Json& pod);

// The kubelet-style details of `pod`'s explicit runAsUser: 0 settings, in
// Pod Security Admission's words: `pod must not set runAsUser=0`,
// `container "c" must not set runAsUser=0` ... Empty: nothing runs as root
// explicitly.
std::vector<std::string> RootViolations(const Json& pod);

}  // namespace batchd::api::core_v1
