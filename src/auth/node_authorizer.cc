#include "auth/node_authorizer.h"

#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "api/json_access.h"
#include "registry/registry.h"

namespace batchd::auth {

using api::Json;

namespace {

Decision Allow() { return {true, ""}; }
Decision Deny(std::string reason) { return {false, std::move(reason)}; }

std::string NoRelationship(const std::string& node) {
  return absl::StrCat("no relationship found between node '", node, "' and this object");
}

// Whether `selector` (a fieldSelector) requires spec.nodeName=<node>.
bool SelectsNode(const std::string& selector, const std::string& node) {
  for (absl::string_view term : absl::StrSplit(selector, ',', absl::SkipWhitespace())) {
    term = absl::StripAsciiWhitespace(term);
    if (!absl::ConsumePrefix(&term, "spec.nodeName")) continue;
    if (absl::ConsumePrefix(&term, "==") || absl::ConsumePrefix(&term, "=")) return term == node;
  }
  return false;
}

// The containers of every kind a pod has.
template <typename F>
void ForEachContainer(const Json& spec, F&& f) {
  for (const char* list : {"initContainers", "containers", "ephemeralContainers"}) {
    for (const Json& c : api::MemberArray(spec, list)) f(c);
  }
}

}  // namespace

std::string NodeNameOf(const UserInfo& u) {
  if (!absl::StartsWith(u.name, kNodeUserPrefix) || !u.InGroup(kNodesGroup)) return "";
  return u.name.substr(std::string_view(kNodeUserPrefix).size());
}

bool PodReferences(const Json& pod, const std::string& resource, const std::string& name) {
  const Json& spec = api::MemberObject(pod, "spec");
  if (resource == "serviceaccounts") {
    std::string sa = api::CopyStringMember(spec, "serviceAccountName");
    if (sa.empty()) sa = api::CopyStringMember(spec, "serviceAccount");
    return sa == name;
  }
  const bool secret = resource == "secrets";
  const bool configmap = resource == "configmaps";
  const bool claim = resource == "persistentvolumeclaims";
  if (secret) {
    for (const Json& s : api::MemberArray(spec, "imagePullSecrets")) {
      if (api::StringMember(s, "name") == name) return true;
    }
  }
  for (const Json& v : api::MemberArray(spec, "volumes")) {
    if (secret && api::StringMember(api::MemberObject(v, "secret"), "secretName") == name) {
      return true;
    }
    if (configmap && api::StringMember(api::MemberObject(v, "configMap"), "name") == name) {
      return true;
    }
    if (claim &&
        api::StringMember(api::MemberObject(v, "persistentVolumeClaim"), "claimName") == name) {
      return true;
    }
    if (claim && api::FindMember(v, "ephemeral") != nullptr &&
        absl::StrCat(api::CopyStringMember(api::MemberObject(pod, "metadata"), "name"), "-",
                     api::CopyStringMember(v, "name")) == name) {
      return true;
    }
    for (const Json& src : api::MemberArray(api::MemberObject(v, "projected"), "sources")) {
      if (secret && api::StringMember(api::MemberObject(src, "secret"), "name") == name) return true;
      if (configmap && api::StringMember(api::MemberObject(src, "configMap"), "name") == name) {
        return true;
      }
    }
  }
  if (!secret && !configmap) return false;
  bool found = false;
  ForEachContainer(spec, [&](const Json& c) {
    for (const Json& e : api::MemberArray(c, "envFrom")) {
      if (api::StringMember(api::MemberObject(e, secret ? "secretRef" : "configMapRef"), "name") ==
          name) {
        found = true;
      }
    }
    for (const Json& e : api::MemberArray(c, "env")) {
      const Json& from = api::MemberObject(e, "valueFrom");
      if (api::StringMember(api::MemberObject(from, secret ? "secretKeyRef" : "configMapKeyRef"),
                            "name") == name) {
        found = true;
      }
    }
  });
  return found;
}

std::optional<Decision> NodeDecision(const std::string& node, const Attributes& a,
                                     NodeGraph& graph) {
  if (!a.resource_request) return std::nullopt;
  const std::string& r = a.resource;
  const bool core = a.api_group.empty();
  const bool read = a.verb == "get" || a.verb == "list" || a.verb == "watch";
  // A named object in the namespace, reachable from one of the node's pods.
  auto reachable = [&](const std::string& resource) -> Decision {
    if (a.name.empty()) return Deny("No Object name found");
    for (const auto& pod : graph.PodsOn(node, a.ns)) {
      if (PodReferences(*pod, resource, a.name)) return Allow();
    }
    return Deny(NoRelationship(node));
  };
  if (core && (r == "secrets" || r == "configmaps")) {
    if (!read) return Deny("can only read resources of this type");
    if (!a.subresource.empty()) return Deny("cannot read subresource");
    if (a.ns.empty()) return Deny("can only read namespaced object of this type");
    return reachable(r);
  }
  if (core && (r == "persistentvolumeclaims" ||
               (r == "serviceaccounts" && a.subresource.empty()))) {
    if (a.verb != "get") return Deny("can only get individual resources of this type");
    if (!a.subresource.empty()) return Deny("cannot get subresource");
    return reachable(r);
  }
  if (core && r == "persistentvolumes") {
    if (a.verb != "get") return Deny("can only get individual resources of this type");
    if (!a.subresource.empty()) return Deny("cannot get subresource");
    if (a.name.empty()) return Deny("No Object name found");
    for (const std::string& ns : graph.NamespacesWithPodsOn(node)) {
      for (const auto& pod : graph.PodsOn(node, ns)) {
        for (const Json& v : api::MemberArray(api::MemberObject(*pod, "spec"), "volumes")) {
          std::string claim = api::CopyStringMember(
              api::MemberObject(v, "persistentVolumeClaim"), "claimName");
          if (!claim.empty() && graph.ClaimVolume(ns, claim) == a.name) return Allow();
        }
      }
    }
    return Deny(NoRelationship(node));
  }
  if (core && r == "serviceaccounts" && a.subresource == "token") {
    if (a.verb != "create" || a.name.empty()) {
      return Deny("can only create tokens for individual service accounts");
    }
    return reachable("serviceaccounts");
  }
  if (core && r == "serviceaccounts") return Deny("can only create token subresource of serviceaccount");
  if (core && r == "pods" && a.subresource.empty()) {
    if (a.verb == "get") {
      std::optional<std::string> bound = graph.PodNode(a.ns, a.name);
      if (bound && *bound == node) return Allow();
      return Deny(NoRelationship(node));
    }
    if (a.verb == "list" || a.verb == "watch") {
      if (SelectsNode(a.field_selector, node)) return Allow();
      return Deny("can only list/watch pods with spec.nodeName field selector");
    }
    return std::nullopt;  // create/delete: RBAC, then NodeRestriction
  }
  if (core && r == "nodes" && read) {
    if (a.name.empty()) {
      return Deny(absl::StrCat("node '", node, "' cannot read all nodes, only its own Node object"));
    }
    if (a.name != node) {
      return Deny(absl::StrCat("node '", node, "' cannot read '", a.name,
                               "', only its own Node object"));
    }
    return std::nullopt;
  }
  if (a.api_group == "coordination.k8s.io" && r == "leases") {
    if (a.verb != "get" && a.verb != "create" && a.verb != "update" && a.verb != "patch" &&
        a.verb != "delete") {
      return Deny("can only get, create, update, patch, or delete a node lease");
    }
    if (a.ns != "kube-node-lease") return Deny("can only access leases in the kube-node-lease namespace");
    if (a.name != node && !(a.verb == "create" && a.name.empty())) {
      return Deny("can only access node lease with the same name as the requesting node");
    }
    return std::nullopt;
  }
  return std::nullopt;
}

NodeAuthorizer::NodeAuthorizer(std::unique_ptr<NodeGraph> graph, Authorizer& inner)
    : graph_(std::move(graph)), inner_(inner) {}

Decision NodeAuthorizer::Authorize(const UserInfo& u, const Attributes& a) {
  const std::string node = NodeNameOf(u);
  if (!node.empty()) {
    std::optional<Decision> d = NodeDecision(node, a, *graph_);
    if (d && d->allowed) return *d;
    if (d) return *d;
  }
  return inner_.Authorize(u, a);
}

namespace {

class RegistryNodeGraph : public NodeGraph {
 public:
  explicit RegistryNodeGraph(registry::Registry& registry)
      : registry_(registry),
        pods_(registry.scheme().ByResource("", "v1", "pods")),
        claims_(registry.scheme().ByResource("", "v1", "persistentvolumeclaims")) {}

  std::optional<std::string> PodNode(const std::string& ns, const std::string& name) override {
    if (!pods_) return std::nullopt;
    registry::ObjectPtr p = registry_.cache().Get(registry::StoreKey(*pods_, ns, name));
    if (!p) return std::nullopt;
    return api::CopyStringMember(api::MemberObject(*p->Shared(), "spec"), "nodeName");
  }

  std::vector<std::shared_ptr<const Json>> PodsOn(const std::string& node,
                                                  const std::string& ns) override {
    std::vector<std::shared_ptr<const Json>> out;
    if (!pods_ || ns.empty()) return out;
    bool more = false;
    int64_t rev = 0;
    for (const auto& o :
         registry_.cache().List(registry::CollectionPrefix(*pods_, ns), "", 0, &more, &rev)) {
      std::shared_ptr<const Json> p = o->Shared();
      if (api::StringMember(api::MemberObject(*p, "spec"), "nodeName") == node) out.push_back(p);
    }
    return out;
  }

  std::string ClaimVolume(const std::string& ns, const std::string& claim) override {
    if (!claims_) return "";
    registry::ObjectPtr c = registry_.cache().Get(registry::StoreKey(*claims_, ns, claim));
    if (!c) return "";
    return api::CopyStringMember(api::MemberObject(*c->Shared(), "spec"), "volumeName");
  }

  std::vector<std::string> NamespacesWithPodsOn(const std::string& node) override {
    std::set<std::string> out;
    if (!pods_) return {};
    bool more = false;
    int64_t rev = 0;
    for (const auto& o :
         registry_.cache().List(registry::CollectionPrefix(*pods_, ""), "", 0, &more, &rev)) {
      std::shared_ptr<const Json> p = o->Shared();
      if (api::StringMember(api::MemberObject(*p, "spec"), "nodeName") == node) {
        out.insert(api::CopyStringMember(api::MemberObject(*p, "metadata"), "namespace"));
      }
    }
    return {out.begin(), out.end()};
  }

 private:
  registry::Registry& registry_;
  const api::KindDef* pods_;
  const api::KindDef* claims_;
};

}  // namespace

std::unique_ptr<NodeGraph> NewRegistryNodeGraph(registry::Registry& registry) {
  return std::make_unique<RegistryNodeGraph>(registry);
}

}  // namespace batchd::auth
