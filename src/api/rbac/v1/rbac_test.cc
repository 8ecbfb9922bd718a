#include "api/rbac/v1/rbac_v1.h"

#include "gtest/gtest.h"

namespace batchd::api::rbac_v1 {
namespace {

std::vector<std::string> Messages(const ErrorList& errs) {
  std::vector<std::string> out;
  for (const auto& e : errs) out.push_back(e.Message());
  return out;
}

const KindDef& Kind(const std::string& plural, const std::string& group = kGroup) {
  const KindDef* k = BuiltinScheme()->ByResource(group, "v1", plural);
  EXPECT_NE(k, nullptr) << plural;
  return *k;
}

TEST(RbacValidationTest, PolicyRules) {
  Json rules = Json::parse(R"([
    {"verbs": [], "apiGroups": [""], "resources": ["pods"]},
    {"verbs": ["get"], "resources": ["pods"]},
    {"verbs": ["get"], "apiGroups": [""]},
    {"verbs": ["get"], "nonResourceURLs": ["/x"], "resources": ["pods"]},
    {"verbs": ["get"], "nonResourceURLs": ["/healthz"]}
  ])");
  EXPECT_EQ(Messages(ValidatePolicyRules(rules, false, Path("rules"))),
            (std::vector<std::string>{
                "rules[0].verbs: Required value: verbs must contain at least one value",
                "rules[1].apiGroups: Required value: resource rules must supply at least one api group",
                "rules[2].resources: Required value: resource rules must supply at least one resource",
                "rules[3].nonResourceURLs: Invalid value: [\"/x\"]: rules cannot apply to both "
                "regular resources and non-resource URLs"}));
  auto ns = Messages(ValidatePolicyRules(Json::parse(R"([{"verbs":["get"],"nonResourceURLs":["/x"]}])"),
                                         true, Path("rules")));
  ASSERT_EQ(ns.size(), 1u);
  EXPECT_EQ(ns[0], "rules[0].nonResourceURLs: Invalid value: [\"/x\"]: namespaced rules cannot "
                   "apply to non-resource URLs");
}

TEST(RbacValidationTest, Bindings) {
  const KindDef& rb = Kind("rolebindings");
  Json b = Json::parse(R"({"metadata":{"name":"b","namespace":"a"},
    "roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"Deployment","name":"x"},
    "subjects":[{"kind":"User","name":"alice"},{"kind":"Robot","name":"r"},{"kind":"ServiceAccount","name":""}]})");
  rb.set_defaults(b);
  EXPECT_EQ(b["subjects"][0]["apiGroup"], kGroup);  // defaulted
  auto m = Messages(rb.validate_create(b));
  EXPECT_EQ(m, (std::vector<std::string>{
                   "roleRef.kind: Unsupported value: \"Deployment\": supported values: "
                   "\"ClusterRole\", \"Role\"",
                   "subjects[1].kind: Unsupported value: \"Robot\": supported values: "
                   "\"ServiceAccount\", \"User\", \"Group\"",
                   "subjects[2].name: Required value"}));
  // roleRef is immutable.
  Json ok = Json::parse(R"({"metadata":{"name":"b","namespace":"a"},
    "roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"view"}})");
  EXPECT_TRUE(rb.validate_create(ok).empty());
  Json changed = ok;
  changed["roleRef"]["name"] = "edit";
  auto u = Messages(rb.validate_update(changed, ok));
  ASSERT_EQ(u.size(), 1u);
  EXPECT_NE(u[0].find("roleRef: Invalid value"), std::string::npos);
  EXPECT_NE(u[0].find("cannot change roleRef"), std::string::npos);
  // A ClusterRoleBinding may only name a ClusterRole; its ServiceAccounts need a namespace.
  Json crb = Json::parse(R"({"metadata":{"name":"c"},
    "roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"Role","name":"x"},
    "subjects":[{"kind":"ServiceAccount","name":"bot"}]})");
  EXPECT_EQ(Messages(Kind("clusterrolebindings").validate_create(crb)),
            (std::vector<std::string>{
                "roleRef.kind: Unsupported value: \"Role\": supported values: \"ClusterRole\"",
                "subjects[0].namespace: Required value"}));
}

TEST(RbacKindsTest, ServedWithColumnsAndReviewKinds) {
  const KindDef& crb = Kind("clusterrolebindings");
  EXPECT_FALSE(crb.namespaced);
  Json b = Json::parse(R"({"metadata":{"name":"c"},
    "roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"view"},
    "subjects":[{"kind":"User","name":"a"},{"kind":"Group","name":"g"},
                {"kind":"ServiceAccount","name":"s","namespace":"n"}]})");
  auto cells = crb.row_cells(b, absl::Now());
  ASSERT_EQ(cells.size(), crb.columns.size());
  EXPECT_EQ(cells[0], "ClusterRole/view");
  EXPECT_EQ(cells[2], "a");
  EXPECT_EQ(cells[4], "n/s");
  EXPECT_TRUE(Kind("roles").namespaced);
  for (const char* r : {"selfsubjectaccessreviews", "selfsubjectrulesreviews", "subjectaccessreviews",
                        "localsubjectaccessreviews"}) {
    const KindDef& k = Kind(r, kAuthorizationGroup);
    EXPECT_TRUE(IsReviewKind(k)) << r;
    EXPECT_EQ(k.verbs, std::vector<std::string>{"create"});
  }
  EXPECT_TRUE(IsReviewKind(Kind("selfsubjectreviews", kAuthenticationGroup)));
  EXPECT_FALSE(IsReviewKind(Kind("roles")));
  const KindDef* sa = BuiltinScheme()->ByResource("", "v1", "serviceaccounts");
  ASSERT_NE(sa, nullptr);
  EXPECT_EQ(sa->subresources, std::vector<std::string>{"token"});
}

}  // namespace
}  // namespace batchd::api::rbac_v1
