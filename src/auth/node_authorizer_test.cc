// The Node authorizer's graph decisions, written from Kubernetes' semantics
// (kk plugin/pkg/auth/authorizer/node: node_authorizer_test.go's cases).
#include "auth/node_authorizer.h"

#include <map>

#include "gtest/gtest.h"

namespace batchd::auth {
namespace {

using api::Json;

class FakeGraph : public NodeGraph {
 public:
  void AddPod(const std::string& ns, const std::string& name, const std::string& node, Json spec) {
    spec["nodeName"] = node;
    pods_.push_back(std::make_shared<const Json>(
        Json{{"metadata", {{"namespace", ns}, {"name", name}}}, {"spec", spec}}));
  }
  std::optional<std::string> PodNode(const std::string& ns, const std::string& name) override {
    for (const auto& p : pods_) {
      if ((*p)["metadata"]["namespace"] == ns && (*p)["metadata"]["name"] == name) {
        return (*p)["spec"]["nodeName"].get<std::string>();
      }
    }
    return std::nullopt;
  }
  std::vector<std::shared_ptr<const Json>> PodsOn(const std::string& node,
                                                  const std::string& ns) override {
    std::vector<std::shared_ptr<const Json>> out;
    for (const auto& p : pods_) {
      if ((*p)["metadata"]["namespace"] == ns && (*p)["spec"]["nodeName"] == node) out.push_back(p);
    }
    return out;
  }
  std::string ClaimVolume(const std::string& ns, const std::string& claim) override {
    auto it = claims_.find(ns + "/" + claim);
    return it == claims_.end() ? "" : it->second;
  }
  std::vector<std::string> NamespacesWithPodsOn(const std::string& node) override {
    std::set<std::string> out;
    for (const auto& p : pods_) {
      if ((*p)["spec"]["nodeName"] == node) out.insert((*p)["metadata"]["namespace"]);
    }
    return {out.begin(), out.end()};
  }
  std::map<std::string, std::string> claims_;

 private:
  std::vector<std::shared_ptr<const Json>> pods_;
};

// Allows everything it is asked (stands for RBAC's system:node role).
class Inner : public Authorizer {
 public:
  Decision Authorize(const UserInfo&, const Attributes&) override {
    ++calls;
    return {true, "RBAC"};
  }
  std::vector<PolicyRule> RulesFor(const UserInfo&, const std::string&) override { return {}; }
  absl::Status CheckEscalation(const UserInfo&, const std::string&, const std::string&,
                               const Json&) override {
    return absl::OkStatus();
  }
  int calls = 0;
};

Attributes Res(std::string verb, std::string resource, std::string ns, std::string name,
               std::string sub = "", std::string group = "") {
  Attributes a;
  a.verb = std::move(verb);
  a.resource = std::move(resource);
  a.ns = std::move(ns);
  a.name = std::move(name);
  a.subresource = std::move(sub);
  a.api_group = std::move(group);
  return a;
}

UserInfo Node(const std::string& n) { return {"system:node:" + n, "", {"system:nodes", "system:authenticated"}, {}}; }

class NodeAuthorizerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto g = std::make_unique<FakeGraph>();
    graph_ = g.get();
    // node1's pod references secret s1 (env), configmap c1 (volume), claim pvc1
    // (bound to pv1), the service account sa1 and secret pull (imagePullSecrets).
    graph_->AddPod("ns", "pod1", "node1",
                   Json::parse(R"({"serviceAccountName":"sa1","imagePullSecrets":[{"name":"pull"}],
                     "volumes":[{"name":"v","configMap":{"name":"c1"}},
                                {"name":"d","persistentVolumeClaim":{"claimName":"pvc1"}},
                                {"name":"p","projected":{"sources":[{"secret":{"name":"proj"}}]}}],
                     "initContainers":[{"name":"i","envFrom":[{"configMapRef":{"name":"c-init"}}]}],
                     "containers":[{"name":"c","env":[{"name":"X","valueFrom":{"secretKeyRef":{"name":"s1","key":"k"}}}]}]})"));
    graph_->AddPod("ns", "pod2", "node2",
                   Json::parse(R"({"volumes":[{"name":"v","secret":{"secretName":"s2"}}],"containers":[{"name":"c"}]})"));
    graph_->claims_["ns/pvc1"] = "pv1";
    authz_ = std::make_unique<NodeAuthorizer>(std::move(g), inner_);
  }
  Decision Ask(const std::string& node, const Attributes& a) { return authz_->Authorize(Node(node), a); }

  FakeGraph* graph_ = nullptr;
  Inner inner_;
  std::unique_ptr<NodeAuthorizer> authz_;
};

TEST_F(NodeAuthorizerTest, SecretsAndConfigMapsOnlyThroughItsPods) {
  for (const char* s : {"s1", "pull", "proj"}) {
    EXPECT_TRUE(Ask("node1", Res("get", "secrets", "ns", s)).allowed) << s;
  }
  EXPECT_TRUE(Ask("node1", Res("get", "configmaps", "ns", "c1")).allowed);
  EXPECT_TRUE(Ask("node1", Res("get", "configmaps", "ns", "c-init")).allowed);
  // A single-name list/watch (fieldSelector metadata.name=s1) is a read of s1.
  EXPECT_TRUE(Ask("node1", Res("list", "secrets", "ns", "s1")).allowed);
  EXPECT_TRUE(Ask("node1", Res("watch", "secrets", "ns", "s1")).allowed);
  Decision other = Ask("node1", Res("get", "secrets", "ns", "s2"));
  EXPECT_FALSE(other.allowed);
  EXPECT_EQ(other.reason, "no relationship found between node 'node1' and this object");
  EXPECT_TRUE(Ask("node2", Res("get", "secrets", "ns", "s2")).allowed);
  EXPECT_FALSE(Ask("node2", Res("get", "secrets", "ns", "s1")).allowed);
  EXPECT_FALSE(Ask("node1", Res("get", "secrets", "other-ns", "s1")).allowed);
  EXPECT_EQ(Ask("node1", Res("list", "secrets", "ns", "")).reason, "No Object name found");
  EXPECT_EQ(Ask("node1", Res("update", "secrets", "ns", "s1")).reason,
            "can only read resources of this type");
  EXPECT_EQ(Ask("node1", Res("list", "secrets", "", "s1")).reason,
            "can only read namespaced object of this type");
  EXPECT_EQ(inner_.calls, 0);  // the graph's decisions are final
}

TEST_F(NodeAuthorizerTest, ClaimsVolumesAndServiceAccounts) {
  EXPECT_TRUE(Ask("node1", Res("get", "persistentvolumeclaims", "ns", "pvc1")).allowed);
  EXPECT_EQ(Ask("node1", Res("list", "persistentvolumeclaims", "ns", "pvc1")).reason,
            "can only get individual resources of this type");
  EXPECT_TRUE(Ask("node1", Res("get", "persistentvolumes", "", "pv1")).allowed);
  EXPECT_FALSE(Ask("node2", Res("get", "persistentvolumes", "", "pv1")).allowed);
  EXPECT_TRUE(Ask("node1", Res("get", "serviceaccounts", "ns", "sa1")).allowed);
  EXPECT_FALSE(Ask("node2", Res("get", "serviceaccounts", "ns", "sa1")).allowed);
  EXPECT_TRUE(Ask("node1", Res("create", "serviceaccounts", "ns", "sa1", "token")).allowed);
  EXPECT_FALSE(Ask("node1", Res("create", "serviceaccounts", "ns", "default", "token")).allowed);
  EXPECT_EQ(Ask("node1", Res("get", "serviceaccounts", "ns", "sa1", "token")).reason,
            "can only create tokens for individual service accounts");
}

TEST_F(NodeAuthorizerTest, PodsBoundToItAndListsByItsNodeName) {
  EXPECT_TRUE(Ask("node1", Res("get", "pods", "ns", "pod1")).allowed);
  EXPECT_EQ(Ask("node1", Res("get", "pods", "ns", "pod2")).reason,
            "no relationship found between node 'node1' and this object");
  EXPECT_FALSE(Ask("node1", Res("get", "pods", "ns", "missing")).allowed);
  Attributes list = Res("list", "pods", "", "");
  EXPECT_EQ(Ask("node1", list).reason, "can only list/watch pods with spec.nodeName field selector");
  list.field_selector = "spec.nodeName=node1";
  EXPECT_TRUE(Ask("node1", list).allowed);
  list.verb = "watch";
  list.field_selector = "metadata.namespace=ns,spec.nodeName==node1";
  EXPECT_TRUE(Ask("node1", list).allowed);
  list.field_selector = "spec.nodeName=node2";
  EXPECT_FALSE(Ask("node1", list).allowed);
  list.field_selector = "spec.nodeName!=node1";
  EXPECT_FALSE(Ask("node1", list).allowed);
  // Status writes and deletes go to RBAC (then NodeRestriction).
  EXPECT_TRUE(Ask("node1", Res("update", "pods", "ns", "pod1", "status")).allowed);
  EXPECT_EQ(inner_.calls, 1);
}

TEST_F(NodeAuthorizerTest, OnlyItsOwnNodeAndLease) {
  EXPECT_TRUE(Ask("node1", Res("get", "nodes", "", "node1")).allowed);
  EXPECT_EQ(Ask("node1", Res("get", "nodes", "", "node2")).reason,
            "node 'node1' cannot read 'node2', only its own Node object");
  EXPECT_EQ(Ask("node1", Res("list", "nodes", "", "")).reason,
            "node 'node1' cannot read all nodes, only its own Node object");
  EXPECT_TRUE(Ask("node1", Res("watch", "nodes", "", "node1")).allowed);
  const std::string coord = "coordination.k8s.io";
  EXPECT_TRUE(Ask("node1", Res("update", "leases", "kube-node-lease", "node1", "", coord)).allowed);
  EXPECT_TRUE(Ask("node1", Res("create", "leases", "kube-node-lease", "", "", coord)).allowed);
  EXPECT_EQ(Ask("node1", Res("get", "leases", "kube-node-lease", "node2", "", coord)).reason,
            "can only access node lease with the same name as the requesting node");
  EXPECT_EQ(Ask("node1", Res("get", "leases", "default", "node1", "", coord)).reason,
            "can only access leases in the kube-node-lease namespace");
  EXPECT_EQ(Ask("node1", Res("list", "leases", "kube-node-lease", "", "", coord)).reason,
            "can only get, create, update, patch, or delete a node lease");
}

TEST_F(NodeAuthorizerTest, OtherUsersAndOtherResourcesGoToRbac) {
  UserInfo alice{"alice", "", {"system:authenticated"}, {}};
  EXPECT_TRUE(authz_->Authorize(alice, Res("get", "secrets", "ns", "s2")).allowed);
  // A user named like a node but outside system:nodes is no node.
  UserInfo fake{"system:node:node1", "", {"system:authenticated"}, {}};
  EXPECT_TRUE(authz_->Authorize(fake, Res("get", "secrets", "ns", "s2")).allowed);
  EXPECT_TRUE(Ask("node1", Res("create", "events", "ns", "")).allowed);
  EXPECT_EQ(inner_.calls, 3);
}

TEST(PodReferencesTest, EphemeralVolumeClaimsAreNamedAfterThePod) {
  Json pod = Json::parse(R"({"metadata":{"name":"p"},"spec":{"volumes":[{"name":"scratch","ephemeral":{}}]}})");
  EXPECT_TRUE(PodReferences(pod, "persistentvolumeclaims", "p-scratch"));
  EXPECT_FALSE(PodReferences(pod, "persistentvolumeclaims", "scratch"));
  EXPECT_FALSE(PodReferences(pod, "secrets", "p-scratch"));
}

}  // namespace
}  // namespace batchd::auth
