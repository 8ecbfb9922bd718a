#include "auth/rbac.h"

#include "auth/bootstrap_policy.h"
#include "common/testing/fake_clock.h"
#include "gtest/gtest.h"
#include "registry/errors.h"
#include "registry/registry.h"
#include "store/memory/memory_store.h"

namespace batchd::auth {
namespace {

using api::Json;

Attributes Res(std::string verb, std::string group, std::string resource, std::string ns = "",
               std::string name = "", std::string sub = "") {
  Attributes a;
  a.verb = std::move(verb);
  a.api_group = std::move(group);
  a.resource = std::move(resource);
  a.ns = std::move(ns);
  a.name = std::move(name);
  a.subresource = std::move(sub);
  return a;
}
Attributes Url(std::string verb, std::string path) {
  Attributes a;
  a.resource_request = false;
  a.verb = std::move(verb);
  a.path = std::move(path);
  return a;
}
PolicyRule R(std::vector<std::string> verbs, std::vector<std::string> groups,
             std::vector<std::string> resources, std::vector<std::string> names = {}) {
  return PolicyRule{std::move(verbs), std::move(groups), std::move(resources), std::move(names), {}};
}
PolicyRule U(std::vector<std::string> verbs, std::vector<std::string> urls) {
  return PolicyRule{std::move(verbs), {}, {}, {}, std::move(urls)};
}

// Kubernetes' rule matching (pkg/apis/rbac/v1/evaluation_helpers.go semantics).
TEST(RuleAllowsTest, Verbs) {
  EXPECT_TRUE(RuleAllows(Res("get", "", "pods"), R({"get"}, {""}, {"pods"})));
  EXPECT_TRUE(RuleAllows(Res("delete", "", "pods"), R({"*"}, {""}, {"pods"})));
  EXPECT_FALSE(RuleAllows(Res("delete", "", "pods"), R({"get", "list"}, {""}, {"pods"})));
  EXPECT_FALSE(RuleAllows(Res("get", "", "pods"), R({}, {""}, {"pods"})));
}

TEST(RuleAllowsTest, ApiGroups) {
  EXPECT_TRUE(RuleAllows(Res("get", "batch", "jobs"), R({"get"}, {"batch"}, {"jobs"})));
  EXPECT_TRUE(RuleAllows(Res("get", "batch", "jobs"), R({"get"}, {"*"}, {"jobs"})));
  // "" is the core group only.
  EXPECT_FALSE(RuleAllows(Res("get", "batch", "jobs"), R({"get"}, {""}, {"jobs"})));
  EXPECT_FALSE(RuleAllows(Res("get", "", "pods"), R({"get"}, {"batch"}, {"pods"})));
}

TEST(RuleAllowsTest, ResourcesAndSubresources) {
  EXPECT_TRUE(RuleAllows(Res("get", "", "pods"), R({"get"}, {""}, {"*"})));
  EXPECT_TRUE(RuleAllows(Res("get", "", "pods", "", "p", "log"), R({"get"}, {""}, {"*"})));
  EXPECT_TRUE(RuleAllows(Res("get", "", "pods", "", "p", "log"), R({"get"}, {""}, {"pods/log"})));
  // The main resource does not grant its subresources, nor the reverse.
  EXPECT_FALSE(RuleAllows(Res("get", "", "pods", "", "p", "log"), R({"get"}, {""}, {"pods"})));
  EXPECT_FALSE(RuleAllows(Res("get", "", "pods", "", "p"), R({"get"}, {""}, {"pods/log"})));
  // "*/sub" matches that subresource of any resource.
  EXPECT_TRUE(RuleAllows(Res("update", "batch", "jobs", "", "j", "status"),
                         R({"update"}, {"batch"}, {"*/status"})));
  EXPECT_FALSE(RuleAllows(Res("update", "batch", "jobs", "", "j", "scale"),
                          R({"update"}, {"batch"}, {"*/status"})));
  // "pods/*" is no wildcard.
  EXPECT_FALSE(RuleAllows(Res("get", "", "pods", "", "p", "log"), R({"get"}, {""}, {"pods/*"})));
}

TEST(RuleAllowsTest, ResourceNames) {
  PolicyRule r = R({"get", "update"}, {""}, {"configmaps"}, {"cfg"});
  EXPECT_TRUE(RuleAllows(Res("get", "", "configmaps", "ns", "cfg"), r));
  EXPECT_FALSE(RuleAllows(Res("get", "", "configmaps", "ns", "other"), r));
  // A list (no name) is not limited to names: refused.
  EXPECT_FALSE(RuleAllows(Res("list", "", "configmaps", "ns"), r));
  // create carries no name, so a rule limited to names never allows it.
  EXPECT_FALSE(RuleAllows(Res("create", "", "configmaps", "ns"),
                          R({"create"}, {""}, {"configmaps"}, {"cfg"})));
  EXPECT_TRUE(RuleAllows(Res("get", "", "configmaps", "ns", "any"), R({"get"}, {""}, {"configmaps"})));
}

TEST(RuleAllowsTest, NonResourceUrls) {
  EXPECT_TRUE(RuleAllows(Url("get", "/healthz"), U({"get"}, {"/healthz"})));
  EXPECT_TRUE(RuleAllows(Url("get", "/healthz/etcd"), U({"get"}, {"/healthz/*"})));
  // A trailing * is a prefix match of what precedes it: /healthz/* misses /healthz.
  EXPECT_FALSE(RuleAllows(Url("get", "/healthz"), U({"get"}, {"/healthz/*"})));
  EXPECT_TRUE(RuleAllows(Url("get", "/apis/batch/v1"), U({"get"}, {"/apis*"})));
  EXPECT_TRUE(RuleAllows(Url("post", "/anything"), U({"*"}, {"*"})));
  EXPECT_FALSE(RuleAllows(Url("post", "/healthz"), U({"get"}, {"/healthz"})));
  // Resource rules never match a non-resource request and the reverse.
  EXPECT_FALSE(RuleAllows(Url("get", "/api"), R({"get"}, {"*"}, {"*"})));
  EXPECT_FALSE(RuleAllows(Res("get", "", "pods"), U({"get"}, {"*"})));
}

TEST(PolicyRuleTest, CompactStringAsKubernetes) {
  EXPECT_EQ(R({"delete"}, {"batch"}, {"jobs"}).CompactString(),
            R"({APIGroups:["batch"], Resources:["jobs"], Verbs:["delete"]})");
  EXPECT_EQ(R({"get"}, {""}, {"configmaps"}, {"a"}).CompactString(),
            R"({APIGroups:[""], Resources:["configmaps"], ResourceNames:["a"], Verbs:["get"]})");
  EXPECT_EQ(U({"get"}, {"/metrics"}).CompactString(), R"({NonResourceURLs:["/metrics"], Verbs:["get"]})");
}

TEST(UncoveredRulesTest, Coverage) {
  std::vector<PolicyRule> owner = {R({"get", "list", "create"}, {"batch"}, {"jobs"}),
                                   R({"get"}, {""}, {"configmaps"}, {"cfg"}),
                                   R({"get"}, {""}, {"*/status"}), U({"get"}, {"/healthz/*"})};
  EXPECT_TRUE(UncoveredRules(owner, {R({"get", "create"}, {"batch"}, {"jobs"})}).empty());
  auto miss = UncoveredRules(owner, {R({"get", "delete", "patch"}, {"batch"}, {"jobs"})});
  ASSERT_EQ(miss.size(), 1u);
  EXPECT_EQ(miss[0].CompactString(),
            R"({APIGroups:["batch"], Resources:["jobs"], Verbs:["delete" "patch"]})");
  // Names: an owner limited to names covers those names, never "all names".
  EXPECT_TRUE(UncoveredRules(owner, {R({"get"}, {""}, {"configmaps"}, {"cfg"})}).empty());
  EXPECT_EQ(UncoveredRules(owner, {R({"get"}, {""}, {"configmaps"})}).size(), 1u);
  // */status covers pods/status; a wildcard servant needs a wildcard owner.
  EXPECT_TRUE(UncoveredRules(owner, {R({"get"}, {""}, {"pods/status"})}).empty());
  EXPECT_EQ(UncoveredRules(owner, {R({"get"}, {"batch"}, {"*"})}).size(), 1u);
  EXPECT_EQ(UncoveredRules(owner, {R({"*"}, {"batch"}, {"jobs"})}).size(), 1u);
  // URLs: prefix coverage.
  EXPECT_TRUE(UncoveredRules(owner, {U({"get"}, {"/healthz/etcd"})}).empty());
  EXPECT_EQ(UncoveredRules(owner, {U({"get"}, {"/metrics"})}).size(), 1u);
  // Everything covers everything.
  EXPECT_TRUE(UncoveredRules({R({"*"}, {"*"}, {"*"}), U({"*"}, {"*"})},
                             {R({"*"}, {"*"}, {"*"}), U({"get"}, {"/x"})})
                  .empty());
}

TEST(ForbiddenMessageTest, KubernetesText) {
  UserInfo alice{"alice", "", {"team-a", kAuthenticatedGroup}, {}};
  EXPECT_EQ(ForbiddenMessage(alice, Res("create", "batch", "jobs", "team-b"), ""),
            "jobs.batch is forbidden: User \"alice\" cannot create resource \"jobs\" in API group "
            "\"batch\" in the namespace \"team-b\"");
  EXPECT_EQ(ForbiddenMessage(alice, Res("get", "", "pods", "a", "p", "log"), ""),
            "pods \"p\" is forbidden: User \"alice\" cannot get resource \"pods/log\" in API "
            "group \"\" in the namespace \"a\"");
  EXPECT_EQ(ForbiddenMessage(alice, Res("list", "", "nodes"), ""),
            "nodes is forbidden: User \"alice\" cannot list resource \"nodes\" in API group \"\" "
            "at the cluster scope");
  EXPECT_EQ(ForbiddenMessage(alice, Url("get", "/metrics"), ""),
            "forbidden: User \"alice\" cannot get path \"/metrics\"");
  EXPECT_EQ(ForbiddenMessage(alice, Url("get", "/metrics"), "no"),
            "forbidden: User \"alice\" cannot get path \"/metrics\": no");
  absl::Status st = ForbiddenStatus(alice, Res("create", "batch", "jobs", "team-b"), "");
  EXPECT_EQ(st.code(), absl::StatusCode::kPermissionDenied);
  auto p = registry::GetPayload(st);
  EXPECT_EQ(p.reason, "Forbidden");
  EXPECT_EQ(p.details, Json({{"group", "batch"}, {"kind", "jobs"}}));
}

Json Role(const std::string& ns, const std::string& name, Json rules) {
  Json r = {{"metadata", {{"name", name}}}, {"rules", std::move(rules)}};
  if (!ns.empty()) r["metadata"]["namespace"] = ns;
  return r;
}
Json Binding(const std::string& ns, const std::string& name, const std::string& rkind,
             const std::string& rname, Json subjects) {
  Json b = {{"metadata", {{"name", name}}},
            {"roleRef", {{"apiGroup", kRbacGroup}, {"kind", rkind}, {"name", rname}}},
            {"subjects", std::move(subjects)}};
  if (!ns.empty()) b["metadata"]["namespace"] = ns;
  return b;
}
std::shared_ptr<const Json> P(Json j) { return std::make_shared<const Json>(std::move(j)); }

TEST(RbacPolicyTest, BindingsBySubjectAndNamespace) {
  RbacPolicy::Objects o;
  o.cluster_roles.push_back(P(Role("", "job-editor", Json::array({R({"*"}, {"batch"}, {"jobs"}).ToJson()}))));
  o.roles.push_back(P(Role("team-a", "pod-reader", Json::array({R({"get"}, {""}, {"pods"}).ToJson()}))));
  o.role_bindings.push_back(P(Binding("team-a", "alice-jobs", "ClusterRole", "job-editor",
                                      Json::array({{{"kind", "User"}, {"name", "alice"}}}))));
  o.role_bindings.push_back(P(Binding("team-a", "readers", "Role", "pod-reader",
                                      Json::array({{{"kind", "Group"}, {"name", "team-a"}}}))));
  o.role_bindings.push_back(P(Binding("team-a", "sa", "Role", "pod-reader",
                                      Json::array({{{"kind", "ServiceAccount"}, {"name", "bot"}}}))));
  o.cluster_role_bindings.push_back(P(Binding("", "ops", "ClusterRole", "job-editor",
                                              Json::array({{{"kind", "Group"}, {"name", "ops"}}}))));
  o.role_bindings.push_back(P(Binding("team-a", "dangling", "Role", "missing",
                                      Json::array({{{"kind", "User"}, {"name", "bob"}}}))));
  auto p = RbacPolicy::Build(o);
  UserInfo alice{"alice", "", {"team-a", kAuthenticatedGroup}, {}};
  Decision d = p->Authorize(alice, Res("create", "batch", "jobs", "team-a"));
  EXPECT_TRUE(d.allowed);
  EXPECT_EQ(d.reason, "RBAC: allowed by RoleBinding \"alice-jobs/team-a\" of ClusterRole "
                      "\"job-editor\" to User \"alice\"");
  EXPECT_FALSE(p->Authorize(alice, Res("create", "batch", "jobs", "team-b")).allowed);
  EXPECT_FALSE(p->Authorize(alice, Res("create", "batch", "jobs")).allowed);  // cluster scope
  EXPECT_TRUE(p->Authorize(alice, Res("get", "", "pods", "team-a", "x")).allowed);  // via group
  UserInfo ops{"carol", "", {"ops"}, {}};
  EXPECT_TRUE(p->Authorize(ops, Res("delete", "batch", "jobs", "anywhere", "j")).allowed);
  EXPECT_TRUE(p->Authorize(ops, Res("list", "batch", "jobs")).allowed);
  UserInfo bot = ServiceAccountUser("team-a", "bot", "u1");
  EXPECT_TRUE(p->Authorize(bot, Res("get", "", "pods", "team-a", "x")).allowed);
  EXPECT_FALSE(p->Authorize(ServiceAccountUser("team-b", "bot", "u2"),
                            Res("get", "", "pods", "team-a", "x")).allowed);
  UserInfo bob{"bob", "", {}, {}};
  EXPECT_FALSE(p->Authorize(bob, Res("get", "", "pods", "team-a", "x")).allowed);
  EXPECT_EQ(p->RulesFor(alice, "team-a").size(), 2u);
  EXPECT_EQ(p->RulesFor(alice, "team-b").size(), 0u);
}

TEST(RbacPolicyTest, AggregationBySelectorsIsRecursive) {
  RbacPolicy::Objects o;
  auto labelled = [](Json role, Json labels) {
    role["metadata"]["labels"] = std::move(labels);
    return role;
  };
  Json agg_sel = [](const char* l) {
    return Json{{"clusterRoleSelectors", Json::array({{{"matchLabels", {{l, "true"}}}}})}};
  }("x/agg-view");
  Json view = Role("", "view", Json::array());
  view["aggregationRule"] = agg_sel;
  view["metadata"]["labels"] = {{"x/agg-edit", "true"}};
  Json edit = Role("", "edit", Json::array());
  edit["aggregationRule"] = {{"clusterRoleSelectors", Json::array({{{"matchLabels", {{"x/agg-edit", "true"}}}}})}};
  o.cluster_roles.push_back(P(view));
  o.cluster_roles.push_back(P(edit));
  o.cluster_roles.push_back(P(labelled(Role("", "pods-view", Json::array({R({"get"}, {""}, {"pods"}).ToJson()})),
                                       {{"x/agg-view", "true"}})));
  o.cluster_roles.push_back(P(labelled(Role("", "jobs-edit", Json::array({R({"create"}, {"batch"}, {"jobs"}).ToJson()})),
                                       {{"x/agg-edit", "true"}})));
  o.cluster_roles.push_back(P(labelled(Role("", "unrelated", Json::array({R({"*"}, {"*"}, {"*"}).ToJson()})),
                                       {{"x/agg-view", "false"}})));
  o.cluster_role_bindings.push_back(P(Binding("", "b", "ClusterRole", "edit",
                                              Json::array({{{"kind", "User"}, {"name", "u"}}}))));
  auto p = RbacPolicy::Build(o);
  UserInfo u{"u", "", {}, {}};
  EXPECT_TRUE(p->Authorize(u, Res("create", "batch", "jobs", "ns")).allowed);
  EXPECT_TRUE(p->Authorize(u, Res("get", "", "pods", "ns", "p")).allowed);  // via view
  EXPECT_FALSE(p->Authorize(u, Res("delete", "", "pods", "ns", "p")).allowed);
  // Both aggregated roles need their stored rules rewritten.
  EXPECT_EQ(p->aggregation_updates().size(), 2u);
  auto edit_rules = p->RoleRules("ClusterRole", "", "edit");
  ASSERT_TRUE(edit_rules.has_value());
  EXPECT_EQ(edit_rules->size(), 2u);
}

TEST(RbacPolicyTest, AggregationCycleTerminates) {
  RbacPolicy::Objects o;
  Json a = Role("", "a", Json::array());
  a["metadata"]["labels"] = {{"l", "b"}};
  a["aggregationRule"] = {{"clusterRoleSelectors", Json::array({{{"matchLabels", {{"l", "a"}}}}})}};
  Json b = Role("", "b", Json::array({R({"get"}, {""}, {"pods"}).ToJson()}));
  b["metadata"]["labels"] = {{"l", "a"}};
  b["aggregationRule"] = {{"clusterRoleSelectors", Json::array({{{"matchLabels", {{"l", "b"}}}}})}};
  o.cluster_roles = {P(a), P(b)};
  auto p = RbacPolicy::Build(o);
  EXPECT_TRUE(p->RoleRules("ClusterRole", "", "a").has_value());
}

// The authorizer over a real registry: the default policy, writes seen by
// the next decision, aggregation written back, escalation checks.
class RbacAuthorizerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    reg_ = std::make_unique<registry::Registry>(store_, api::BuiltinScheme(), clock_);
    ASSERT_TRUE(reg_->Start().ok());
    auto st = EnsureDefaultPolicy(*reg_);
    ASSERT_TRUE(st.ok()) << st;
    authz_ = std::make_unique<RbacAuthorizer>(*reg_);
    authz_->ReconcileAggregation();
    for (const char* n : {"roles", "clusterroles", "rolebindings", "clusterrolebindings"}) {
      kinds_[n] = reg_->scheme().ByResource(kRbacGroup, "v1", n);
      ASSERT_NE(kinds_[n], nullptr) << n;
    }
    const api::KindDef* ns = reg_->scheme().ByResource("", "v1", "namespaces");
    for (const char* n : {"team-a", "team-b"}) {
      ASSERT_TRUE(reg_->Create(*ns, "", {{"metadata", {{"name", n}}}}, {}).ok());
    }
  }
  // Writes as the API server does: then invalidates the snapshot, so the
  // next decision sees the write.
  void Create(const char* plural, const std::string& ns, Json obj) {
    auto r = reg_->Create(*kinds_[plural], ns, std::move(obj), {});
    ASSERT_TRUE(r.ok()) << r.status();
    authz_->Invalidate();
  }

  FakeClock clock_;
  store::MemoryStore store_;
  std::unique_ptr<registry::Registry> reg_;
  std::unique_ptr<RbacAuthorizer> authz_;
  std::map<std::string, const api::KindDef*> kinds_;
  UserInfo alice_{"alice", "", {"team-a", kAuthenticatedGroup}, {}};
  UserInfo anon_ = AnonymousUser();
};

TEST_F(RbacAuthorizerTest, DefaultPolicy) {
  EXPECT_TRUE(authz_->Authorize(LocalAdminUser(), Res("delete", "", "nodes", "", "n")).allowed);
  EXPECT_TRUE(authz_->Authorize(anon_, Url("get", "/healthz")).allowed);
  EXPECT_TRUE(authz_->Authorize(anon_, Url("get", "/version")).allowed);
  EXPECT_FALSE(authz_->Authorize(anon_, Url("get", "/api")).allowed);
  EXPECT_FALSE(authz_->Authorize(anon_, Res("list", "", "pods", "default")).allowed);
  EXPECT_TRUE(authz_->Authorize(alice_, Url("get", "/apis/batch/v1")).allowed);
  EXPECT_TRUE(authz_->Authorize(alice_, Res("create", "authorization.k8s.io",
                                            "selfsubjectaccessreviews")).allowed);
  EXPECT_FALSE(authz_->Authorize(alice_, Url("get", "/metrics")).allowed);
  EXPECT_FALSE(authz_->Authorize(alice_, Res("list", "batch", "jobs", "team-a")).allowed);
}

TEST_F(RbacAuthorizerTest, AggregatedDefaultRoles) {
  auto p = authz_->Policy();
  EXPECT_TRUE(p->aggregation_updates().empty()) << p->aggregation_updates()[0].first;
  auto stored = reg_->Get(*kinds_["clusterroles"], "", "view");
  ASSERT_TRUE(stored.ok());
  EXPECT_FALSE((*stored)->Decode()["rules"].empty());
  // view reads jobs and pods/log, not secrets; edit writes jobs; admin writes roles.
  Create("clusterrolebindings", "", Binding("", "v", "ClusterRole", "view",
                                            Json::array({{{"kind", "User"}, {"name", "viewer"}}})));
  UserInfo viewer{"viewer", "", {kAuthenticatedGroup}, {}};
  EXPECT_TRUE(authz_->Authorize(viewer, Res("list", "batch", "jobs", "x")).allowed);
  EXPECT_TRUE(authz_->Authorize(viewer, Res("get", "", "pods", "x", "p", "log")).allowed);
  EXPECT_TRUE(authz_->Authorize(viewer, Res("list", "kueue.x-k8s.io", "localqueues", "x")).allowed);
  EXPECT_FALSE(authz_->Authorize(viewer, Res("get", "", "secrets", "x", "s")).allowed);
  EXPECT_FALSE(authz_->Authorize(viewer, Res("delete", "batch", "jobs", "x", "j")).allowed);
  auto edit = authz_->Policy()->RoleRules("ClusterRole", "", "edit");
  ASSERT_TRUE(edit.has_value());
  Attributes del = Res("delete", "batch", "jobs", "x", "j");
  bool edit_deletes = false, edit_views = false;
  for (const auto& r : *edit) {
    edit_deletes |= RuleAllows(del, r);
    edit_views |= RuleAllows(Res("get", "", "pods", "x", "p", "log"), r);
  }
  EXPECT_TRUE(edit_deletes);
  EXPECT_TRUE(edit_views);
  auto batch_user = authz_->Policy()->RoleRules("ClusterRole", "", "kueue-batch-user-role");
  ASSERT_TRUE(batch_user.has_value());
  EXPECT_FALSE(batch_user->empty());
}

TEST_F(RbacAuthorizerTest, WritesAreSeenByTheNextDecision) {
  Attributes create = Res("create", "batch", "jobs", "team-a");
  EXPECT_FALSE(authz_->Authorize(alice_, create).allowed);
  Create("rolebindings", "team-a", Binding("team-a", "alice-edit", "ClusterRole", "edit",
                                           Json::array({{{"kind", "User"}, {"name", "alice"},
                                                         {"apiGroup", kRbacGroup}}})));
  EXPECT_TRUE(authz_->Authorize(alice_, create).allowed);
  EXPECT_FALSE(authz_->Authorize(alice_, Res("create", "batch", "jobs", "team-b")).allowed);
  ASSERT_TRUE(reg_->Delete(*kinds_["rolebindings"], "team-a", "alice-edit", {}).ok());
  authz_->Invalidate();
  EXPECT_FALSE(authz_->Authorize(alice_, create).allowed);
}

TEST_F(RbacAuthorizerTest, InProcessWritesAreSeenThroughTheWatch) {
  // No Invalidate: the authorizer's watch of the cache notices the binding
  // (written in-process, as a namespace deletion removes RoleBindings).
  Attributes create = Res("create", "batch", "jobs", "team-a");
  EXPECT_FALSE(authz_->Authorize(alice_, create).allowed);
  auto r = reg_->Create(*kinds_["rolebindings"], "team-a",
                        Binding("team-a", "w", "ClusterRole", "edit",
                                Json::array({{{"kind", "User"}, {"name", "alice"},
                                              {"apiGroup", kRbacGroup}}})),
                        {});
  ASSERT_TRUE(r.ok()) << r.status();
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (!authz_->Authorize(alice_, create).allowed && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(5));
  }
  EXPECT_TRUE(authz_->Authorize(alice_, create).allowed);
}

TEST_F(RbacAuthorizerTest, EscalationPrevention) {
  // alice may manage roles and bindings in team-a (admin) and nothing else.
  Create("rolebindings", "team-a", Binding("team-a", "alice-admin", "ClusterRole", "admin",
                                           Json::array({{{"kind", "User"}, {"name", "alice"},
                                                         {"apiGroup", kRbacGroup}}})));
  Json within = Role("team-a", "jobs", Json::array({R({"get", "create"}, {"batch"}, {"jobs"}).ToJson()}));
  EXPECT_TRUE(authz_->CheckEscalation(alice_, "Role", "team-a", within).ok());
  Json beyond = Role("team-a", "nodes", Json::array({R({"get"}, {""}, {"nodes"}).ToJson(),
                                                     R({"get"}, {"batch"}, {"jobs"}).ToJson()}));
  absl::Status st = authz_->CheckEscalation(alice_, "Role", "team-a", beyond);
  EXPECT_EQ(st.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(st.message(),
            "roles.rbac.authorization.k8s.io \"nodes\" is forbidden: user \"alice\" "
            "(groups=[\"team-a\" \"system:authenticated\"]) is attempting to grant RBAC "
            "permissions not currently held:\n{APIGroups:[\"\"], Resources:[\"nodes\"], "
            "Verbs:[\"get\"]}");
  // The same role in team-b: alice holds nothing there.
  EXPECT_FALSE(authz_->CheckEscalation(alice_, "Role", "team-b", within).ok());
  // Bindings: to edit in team-a (held through admin) yes; cluster-admin no.
  Json bind_edit = Binding("team-a", "b", "ClusterRole", "edit",
                           Json::array({{{"kind", "User"}, {"name", "bob"}}}));
  EXPECT_TRUE(authz_->CheckEscalation(alice_, "RoleBinding", "team-a", bind_edit).ok());
  Json bind_admin = Binding("team-a", "b2", "ClusterRole", "cluster-admin",
                            Json::array({{{"kind", "User"}, {"name", "bob"}}}));
  st = authz_->CheckEscalation(alice_, "RoleBinding", "team-a", bind_admin);
  EXPECT_EQ(st.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_NE(st.message().find("rolebindings.rbac.authorization.k8s.io \"b2\" is forbidden: user "
                              "\"alice\""),
            std::string::npos)
      << st.message();
  // `bind` on that role lifts the check; `escalate` lifts the role check.
  Create("roles", "team-a", Role("team-a", "binder", Json::array({R({"bind"}, {kRbacGroup}, {"clusterroles"}, {"cluster-admin"}).ToJson(),
                                                                  R({"escalate"}, {kRbacGroup}, {"roles"}).ToJson()})));
  Create("rolebindings", "team-a", Binding("team-a", "alice-binder", "Role", "binder",
                                           Json::array({{{"kind", "User"}, {"name", "alice"},
                                                         {"apiGroup", kRbacGroup}}})));
  EXPECT_TRUE(authz_->CheckEscalation(alice_, "RoleBinding", "team-a", bind_admin).ok());
  EXPECT_TRUE(authz_->CheckEscalation(alice_, "Role", "team-a", beyond).ok());
  // Masters are never checked.
  EXPECT_TRUE(authz_->CheckEscalation(LocalAdminUser(), "ClusterRoleBinding", "", bind_admin).ok());
  // A binding to a missing role is NotFound.
  Json missing = Binding("team-a", "m", "Role", "nope", Json::array());
  EXPECT_EQ(authz_->CheckEscalation(alice_, "RoleBinding", "team-a", missing).code(),
            absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace batchd::auth
