// rbac.authorization.k8s.io/v1 Role, ClusterRole, RoleBinding and
// ClusterRoleBinding (schemas, Kubernetes' validation with field paths,
// immutable roleRef, `kubectl get` columns), and the create-only review
// kinds that are never stored: authorization.k8s.io/v1
// SelfSubjectAccessReview, SelfSubjectRulesReview, SubjectAccessReview,
// LocalSubjectAccessReview and authentication.k8s.io/v1 SelfSubjectReview
// (served by the API server's authorization layer). Stateless, thread-safe.
#pragma once

#include "api/field_error.h"
#include "api/kind.h"

namespace batchd::api::rbac_v1 {

inline constexpr char kGroup[] = "rbac.authorization.k8s.io";
inline constexpr char kAuthorizationGroup[] = "authorization.k8s.io";
inline constexpr char kAuthenticationGroup[] = "authentication.k8s.io";

ErrorList ValidatePolicyRules(const Json& rules, bool namespaced, const Path& path);

// Adds the four RBAC kinds.
void RegisterKinds(Scheme& scheme);
// Adds the review kinds (authorization.k8s.io/v1, authentication.k8s.io/v1).
void RegisterReviewKinds(Scheme& scheme);
// True for a kind RegisterReviewKinds added (create-only, not stored).
bool IsReviewKind(const KindDef& k);

}  // namespace batchd::api::rbac_v1
