// ServiceAccounts as kube-controller-manager and kube-apiserver provide them:
//  - the serviceaccounts controller creates ServiceAccount "default" in every
//    active namespace, and again when it is deleted;
//  - the ServiceAccount admission plugin (a registry mutator on pod create):
//    a pod without spec.serviceAccountName gets "default" (and the
//    deprecated spec.serviceAccount mirrors it); a pod naming a missing
//    ServiceAccount is refused, 403 `pods "p" is forbidden: service account
//    ns/name was not found, retry after the service account is created`.
//    Unlike Kubernetes, a missing `default` account of an active namespace
//    (the instant between the namespace's creation and the controller's
//    write) is created by the plugin instead of refusing the pod.
// batchd mounts no token into pods (docs/security.md), so the plugin's token
// volume is not added.
#pragma once

#include "absl/status/status.h"
#include "reconcile/context.h"

namespace batchd::registry {
class Registry;
}

namespace batchd::controllers {

inline constexpr char kDefaultServiceAccount[] = "default";

void AddServiceAccountsController(reconcile::ControllerContext& ctx);
absl::Status AddServiceAccountAdmission(registry::Registry& registry);

}  // namespace batchd::controllers
