// The default RBAC policy a batch cluster needs, as Kubernetes' bootstrap
// policy and Kueue's shipped roles define it: cluster-admin; admin, edit and
// view aggregated from system:aggregate-to-{admin,edit,view} and from the
// batch roles below; Kueue's kueue-batch-admin-role / kueue-batch-user-role
// (aggregated from the kueue-*-editor/viewer roles) and JobSet's editor and
// viewer; system:node; system:basic-user, system:discovery and
// system:public-info-viewer; and their bindings (cluster-admin to
// system:masters, ...). Every object is labelled
// `kubernetes.io/bootstrapping: rbac-defaults`.
#pragma once

#include <vector>

#include "absl/status/status.h"
#include "api/field_error.h"

namespace batchd::registry {
class Registry;
}

namespace batchd::auth {

// The ClusterRoles, then the ClusterRoleBindings.
std::vector<api::Json> DefaultClusterRoles();
std::vector<api::Json> DefaultClusterRoleBindings();
// Creates each default object that does not exist (existing ones, possibly
// edited by an admin, are kept).
absl::Status EnsureDefaultPolicy(registry::Registry& registry);

}  // namespace batchd::auth
