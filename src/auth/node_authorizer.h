// Kubernetes' Node authorizer for batchd's node identities
// (system:node:<name> in system:nodes): a node reads only what its own pods
// need. Semantics of kk plugin/pkg/auth/authorizer/node (the graph
// node <- pod <- secret|configmap|pvc|serviceaccount, pvc <- pv):
//  - secrets, configmaps: get/list/watch of one named object (a list/watch
//    names it with fieldSelector=metadata.name=X) in a namespace, reachable
//    from a pod bound to the node; persistentvolumeclaims, persistentvolumes
//    and serviceaccounts: get only, the same way;
//  - serviceaccounts/token: create, for a service account of its pods;
//  - pods: get of a pod bound to it; list/watch only with the field
//    selector spec.nodeName=<its name>;
//  - nodes: get/list/watch of its own Node only;
//  - leases: get/create/update/patch/delete of kube-node-lease/<its name>.
// Anything else is decided by the inner authorizer (RBAC: the system:node
// ClusterRole). A denial carries Kubernetes' reason ("no relationship found
// between node 'n1' and this object"). Unlike Kubernetes, where a denied
// graph request may still be allowed by an explicit RBAC grant to the node,
// batchd's denial is final (the built-in system:node role grants broad reads
// that the graph narrows). Other users go straight to the inner authorizer.
//
// The graph is read from the registry's watch cache on each decision (no
// copy to keep current): a secret read scans the pods of its namespace,
// O(pods in the namespace); a pod get is one lookup.
//
// Thread-safety: thread-safe when `graph` and the inner authorizer are.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "api/field_error.h"
#include "auth/rbac.h"

namespace batchd::registry {
class Registry;
}

namespace batchd::auth {

// What the authorizer needs to know of the cluster.
class NodeGraph {
 public:
  virtual ~NodeGraph() = default;
  // The pod's spec.nodeName; nullopt when there is no such pod.
  virtual std::optional<std::string> PodNode(const std::string& ns, const std::string& name) = 0;
  // The pods of namespace `ns` bound to `node`.
  virtual std::vector<std::shared_ptr<const api::Json>> PodsOn(const std::string& node,
                                                               const std::string& ns) = 0;
  // A PersistentVolumeClaim's spec.volumeName ("" when none or missing).
  virtual std::string ClaimVolume(const std::string& ns, const std::string& claim) = 0;
  // Namespaces with a pod bound to `node` (for cluster-scoped PV lookups).
  virtual std::vector<std::string> NamespacesWithPodsOn(const std::string& node) = 0;
};

// The graph over `registry`'s watch cache.
std::unique_ptr<NodeGraph> NewRegistryNodeGraph(registry::Registry& registry);

// The names a pod references (Kubernetes' graph edges from a pod):
// resource is "secrets", "configmaps", "persistentvolumeclaims" or
// "serviceaccounts".
bool PodReferences(const api::Json& pod, const std::string& resource, const std::string& name);

// The node authorizer's own decision: allowed, denied with a reason, or no
// opinion (nullopt: the inner authorizer decides).
// (A list/watch's field selector is Attributes::field_selector.)
std::optional<Decision> NodeDecision(const std::string& node, const Attributes& a,
                                     NodeGraph& graph);

class NodeAuthorizer : public Authorizer {
 public:
  NodeAuthorizer(std::unique_ptr<NodeGraph> graph, Authorizer& inner);
  Decision Authorize(const UserInfo& u, const Attributes& a) override;
  std::vector<PolicyRule> RulesFor(const UserInfo& u, const std::string& ns) override {
    return inner_.RulesFor(u, ns);
  }
  absl::Status CheckEscalation(const UserInfo& u, const std::string& kind, const std::string& ns,
                               const api::Json& obj) override {
    return inner_.CheckEscalation(u, kind, ns, obj);
  }
  void Invalidate() override { inner_.Invalidate(); }

 private:
  std::unique_ptr<NodeGraph> graph_;
  Authorizer& inner_;
};

// The node name of a node identity (system:node:<name> in system:nodes), or "".
std::string NodeNameOf(const UserInfo& u);

}  // namespace batchd::auth
