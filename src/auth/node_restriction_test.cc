// NodeRestriction's label and taint rules (kube-apiserver's admitNode), case
// by case as its own tests phrase them.
#include "auth/node_restriction.h"

#include <nlohmann/json.hpp>

#include "gtest/gtest.h"

namespace batchd::auth {
namespace {

using api::Json;

Json Node(Json labels, Json taints = nullptr) {
  Json n = {{"metadata", {{"name", "n1"}}}, {"spec", Json::object()}};
  if (!labels.is_null()) n["metadata"]["labels"] = std::move(labels);
  if (!taints.is_null()) n["spec"]["taints"] = std::move(taints);
  return n;
}

TEST(NodeRestrictionTest, KubeletLabels) {
  for (const char* ok : {"kubernetes.io/hostname", "kubernetes.io/os", "kubernetes.io/arch",
                         "beta.kubernetes.io/os", "beta.kubernetes.io/arch",
                         "beta.kubernetes.io/instance-type", "node.kubernetes.io/instance-type",
                         "topology.kubernetes.io/zone", "topology.kubernetes.io/region",
                         "failure-domain.beta.kubernetes.io/zone",
                         "failure-domain.beta.kubernetes.io/region", "kubelet.kubernetes.io/x",
                         "a.kubelet.kubernetes.io/x", "node.kubernetes.io/anything",
                         "sub.node.kubernetes.io/y"}) {
    EXPECT_TRUE(IsKubeletLabel(ok)) << ok;
  }
  for (const char* no : {"kubernetes.io/role", "node-role.kubernetes.io/gpu", "k8s.io/x",
                         "topology.kubernetes.io/rack", "xnode.kubernetes.io/y",
                         "node-restriction.kubernetes.io/x", "example.com/x", "hostname"}) {
    EXPECT_FALSE(IsKubeletLabel(no)) << no;
  }
}

TEST(NodeRestrictionTest, CreateWithLabels) {
  // Kubelet's own labels and labels outside kubernetes.io / k8s.io: allowed.
  EXPECT_EQ(NodeSelfWriteRefusal("n1", Node({{"kubernetes.io/hostname", "n1"},
                                              {"node.kubernetes.io/pool", "a"},
                                              {"gpu", "a100"},
                                              {"example.com/team", "x"}}),
                                 nullptr),
            "");
  // Others are listed, sorted.
  EXPECT_EQ(NodeSelfWriteRefusal("n1", Node({{"node-restriction.kubernetes.io/trusted", "yes"},
                                              {"node-role.kubernetes.io/master", ""},
                                              {"a.k8s.io/x", "1"},
                                              {"gpu", "a100"}}),
                                 nullptr),
            "node \"n1\" is not allowed to set the following labels: a.k8s.io/x, "
            "node-restriction.kubernetes.io/trusted, node-role.kubernetes.io/master");
  // A subdomain of node-restriction.kubernetes.io is the same namespace.
  EXPECT_EQ(NodeSelfWriteRefusal("n1", Node({{"x.node-restriction.kubernetes.io/a", "1"}}), nullptr),
            "node \"n1\" is not allowed to set the following labels: "
            "x.node-restriction.kubernetes.io/a");
  // Taints at registration are the node's to choose.
  EXPECT_EQ(NodeSelfWriteRefusal(
                "n1", Node(nullptr, Json::array({{{"key", "gpu"}, {"effect", "NoSchedule"}}})),
                nullptr),
            "");
}

TEST(NodeRestrictionTest, UpdateLabels) {
  const Json old = Node({{"kubernetes.io/hostname", "n1"},
                         {"node-restriction.kubernetes.io/trusted", "yes"},
                         {"node-role.kubernetes.io/worker", ""},
                         {"team", "a"}});
  // Unchanged restricted labels are fine; a change elsewhere too.
  Json ok = old;
  ok["metadata"]["labels"]["team"] = "b";
  ok["metadata"]["labels"]["kubernetes.io/hostname"] = "n1-renamed";
  ok["metadata"]["labels"]["node.kubernetes.io/exclude-from-external-load-balancers"] = "";
  EXPECT_EQ(NodeSelfWriteRefusal("n1", ok, &old), "");
  // Changing, removing or adding a restricted label is refused.
  Json changed = old;
  changed["metadata"]["labels"]["node-restriction.kubernetes.io/trusted"] = "no";
  EXPECT_EQ(NodeSelfWriteRefusal("n1", changed, &old),
            "is not allowed to modify labels: node-restriction.kubernetes.io/trusted");
  Json removed = old;
  removed["metadata"]["labels"].erase("node-role.kubernetes.io/worker");
  EXPECT_EQ(NodeSelfWriteRefusal("n1", removed, &old),
            "is not allowed to modify labels: node-role.kubernetes.io/worker");
  Json added = old;
  added["metadata"]["labels"]["kubernetes.io/role"] = "master";
  added["metadata"]["labels"]["node-restriction.kubernetes.io/gpu"] = "yes";
  EXPECT_EQ(NodeSelfWriteRefusal("n1", added, &old),
            "is not allowed to modify labels: kubernetes.io/role, node-restriction.kubernetes.io/gpu");
  // All labels gone: the restricted ones count as removed.
  Json none = old;
  none["metadata"].erase("labels");
  EXPECT_EQ(NodeSelfWriteRefusal("n1", none, &old),
            "is not allowed to modify labels: node-restriction.kubernetes.io/trusted, "
            "node-role.kubernetes.io/worker");
}

TEST(NodeRestrictionTest, UpdateTaints) {
  const Json a = Json::array({{{"key", "a"}, {"value", "1"}, {"effect", "NoSchedule"}}});
  const Json b = Json::array({{{"key", "a"}, {"value", "2"}, {"effect", "NoSchedule"}}});
  const Json untainted = Node({{"team", "a"}});
  const Json tainted = Node({{"team", "a"}}, a);
  const std::string refused = "node \"n1\" is not allowed to modify taints";
  EXPECT_EQ(NodeSelfWriteRefusal("n1", tainted, &untainted), refused);                 // add
  EXPECT_EQ(NodeSelfWriteRefusal("n1", untainted, &tainted), refused);                 // remove
  EXPECT_EQ(NodeSelfWriteRefusal("n1", Node({{"team", "a"}}, b), &tainted), refused);  // change
  EXPECT_EQ(NodeSelfWriteRefusal("n1", tainted, &tainted), "");
  // An empty list and none are the same.
  EXPECT_EQ(NodeSelfWriteRefusal("n1", Node({{"team", "a"}}, Json::array()), &untainted), "");
  // The taint check comes first, as in Kubernetes.
  Json both = Node({{"node-role.kubernetes.io/x", ""}}, a);
  EXPECT_EQ(NodeSelfWriteRefusal("n1", both, &untainted), refused);
}

}  // namespace
}  // namespace batchd::auth
