// The API server's security layer end to end over BufferWriter: 401/403
// bodies, the review APIs, TokenRequest, escalation through HTTP, refusals
// in the metrics, and the audit log.
#include <filesystem>
#include <fstream>

#include "apiserver/apiserver.h"
#include "auth/audit.h"
#include "auth/authenticator.h"
#include "auth/bootstrap_policy.h"
#include "auth/rbac.h"
#include "auth/service_account_tokens.h"
#include "common/testing/fake_clock.h"
#include "gtest/gtest.h"
#include "store/memory/memory_store.h"

namespace batchd::apiserver {
namespace {

using api::Json;

class ApiServerAuthTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { sa_ = auth::ServiceAccountTokens::Generate({}).value().release(); }
  void SetUp() override {
    reg_ = std::make_unique<registry::Registry>(store_, api::BuiltinScheme(), clock_);
    ASSERT_TRUE(reg_->Start().ok());
    ASSERT_TRUE(auth::EnsureDefaultPolicy(*reg_).ok());
    auth::AuthenticatorOptions ao;
    ao.tokens.Add("admin", auth::LocalAdminUser());
    ao.tokens.Add("alice", auth::UserInfo{"alice", "1", {"team-a"}, {}});
    ao.service_accounts = sa_;
    const api::KindDef* sa_kind = reg_->scheme().ByResource("", "v1", "serviceaccounts");
    ao.service_account_uid = [this, sa_kind](const std::string& ns,
                                             const std::string& n) -> std::optional<std::string> {
      auto o = reg_->Get(*sa_kind, ns, n);
      if (!o.ok()) return std::nullopt;
      return (*o)->Decode()["metadata"].value("uid", "");
    };
    ao.now = [this] { return clock_.Now(); };
    authn_ = std::make_unique<auth::Authenticator>(ao);
    authz_ = std::make_unique<auth::RbacAuthorizer>(*reg_);
    audit_path_ = ::testing::TempDir() + "/apiserver-audit-" + auth::RandomHex(4) + ".log";
    auth::AuditOptions au;
    au.path = audit_path_;
    audit_ = auth::AuditLog::Open(au).value();
    ApiServerOptions o;
    o.authenticator = authn_.get();
    o.authorizer = authz_.get();
    o.audit = audit_.get();
    o.service_account_tokens = sa_;
    api_ = std::make_unique<ApiServer>(*reg_, clock_, o);
    for (const char* ns : {"team-a", "team-b"}) {
      ASSERT_EQ(Do("admin", "POST", "/api/v1/namespaces",
                   Json({{"metadata", {{"name", ns}}}}).dump()).code(), 201);
    }
    ASSERT_EQ(Do("admin", "POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/team-a/rolebindings",
                 R"({"metadata":{"name":"alice-edit"},"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"edit"},
                     "subjects":[{"kind":"User","name":"alice","apiGroup":"rbac.authorization.k8s.io"}]})")
                  .code(),
              201);
  }

  BufferWriter Do(const std::string& token, std::string method, std::string target,
                  std::string body = "") {
    HttpRequest r;
    r.method = std::move(method);
    size_t q = target.find('?');
    r.path = target.substr(0, q);
    if (q != std::string::npos) r.query = ParseQuery(target.substr(q + 1));
    if (!token.empty()) r.headers["authorization"] = "Bearer " + token;
    if (!body.empty()) r.headers["content-type"] = "application/json";
    r.body = std::move(body);
    r.remote = "127.0.0.1:5555";
    r.loopback = true;
    BufferWriter w;
    api_->Handle(r, w);
    return w;
  }
  Json Body(const BufferWriter& w) { return Json::parse(w.body(), nullptr, false); }
  std::string Job(const std::string& name) {
    return Json({{"metadata", {{"name", name}}},
                 {"spec", {{"suspend", true},
                           {"template", {{"spec", {{"restartPolicy", "Never"},
                                                   {"containers", Json::array({{{"name", "c"}, {"image", "x"}}})}}}}}}}})
        .dump();
  }

  static auth::ServiceAccountTokens* sa_;
  FakeClock clock_;
  store::MemoryStore store_;
  std::unique_ptr<registry::Registry> reg_;
  std::unique_ptr<auth::Authenticator> authn_;
  std::unique_ptr<auth::RbacAuthorizer> authz_;
  std::unique_ptr<auth::AuditLog> audit_;
  std::string audit_path_;
  std::unique_ptr<ApiServer> api_;
};
auth::ServiceAccountTokens* ApiServerAuthTest::sa_ = nullptr;

TEST_F(ApiServerAuthTest, UnauthorizedAndForbidden) {
  auto bad = Do("nope", "GET", "/api/v1/namespaces");
  EXPECT_EQ(bad.code(), 401);
  EXPECT_EQ(Body(bad), Json::parse(R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
                                       "message":"Unauthorized","reason":"Unauthorized","code":401})"));
  // Anonymous (no loopback admin here): /healthz yes, the rest 403.
  EXPECT_EQ(Do("", "GET", "/healthz").code(), 200);
  auto anon = Do("", "GET", "/api/v1/namespaces/default/pods");
  EXPECT_EQ(anon.code(), 403);
  EXPECT_EQ(Body(anon)["message"],
            "pods is forbidden: User \"system:anonymous\" cannot list resource \"pods\" in API "
            "group \"\" in the namespace \"default\"");
  EXPECT_EQ(Do("", "GET", "/apis").code(), 403);
  EXPECT_EQ(Body(Do("", "GET", "/metrics"))["message"],
            "forbidden: User \"system:anonymous\" cannot get path \"/metrics\"");
  // alice: jobs in team-a, not in team-b.
  EXPECT_EQ(Do("alice", "POST", "/apis/batch/v1/namespaces/team-a/jobs", Job("j")).code(), 201);
  auto denied = Do("alice", "POST", "/apis/batch/v1/namespaces/team-b/jobs", Job("j"));
  EXPECT_EQ(denied.code(), 403);
  EXPECT_EQ(Body(denied),
            Json::parse(R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
 "message":"jobs.batch is forbidden: User \"alice\" cannot create resource \"jobs\" in API group \"batch\" in the namespace \"team-b\"",
 "reason":"Forbidden","details":{"group":"batch","kind":"jobs"},"code":403})"));
  EXPECT_EQ(Body(Do("alice", "DELETE", "/apis/batch/v1/namespaces/team-b/jobs/x"))["message"],
            "jobs.batch \"x\" is forbidden: User \"alice\" cannot delete resource \"jobs\" in API "
            "group \"batch\" in the namespace \"team-b\"");
  // Discovery for authenticated users.
  EXPECT_EQ(Do("alice", "GET", "/apis/batch/v1").code(), 200);
  // Refusals are counted by code.
  std::string metrics = Do("admin", "GET", "/metrics").body();
  EXPECT_NE(metrics.find("code=\"401\""), std::string::npos);
  EXPECT_NE(metrics.find("apiserver_request_total{verb=\"POST\",resource=\"jobs\",code=\"403\"}"),
            std::string::npos)
      << metrics.substr(0, 2000);
}

TEST_F(ApiServerAuthTest, AccessReviews) {
  auto ssar = [&](const std::string& who, const std::string& verb, const std::string& ns) {
    Json body = {{"apiVersion", "authorization.k8s.io/v1"}, {"kind", "SelfSubjectAccessReview"},
                 {"spec", {{"resourceAttributes", {{"verb", verb}, {"group", "batch"},
                                                   {"resource", "jobs"}, {"namespace", ns}}}}}};
    auto w = Do(who, "POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", body.dump());
    EXPECT_EQ(w.code(), 201) << w.body();
    return Body(w)["status"];
  };
  EXPECT_EQ(ssar("alice", "create", "team-a")["allowed"], true);
  EXPECT_EQ(ssar("alice", "create", "team-a")["reason"],
            "RBAC: allowed by RoleBinding \"alice-edit/team-a\" of ClusterRole \"edit\" to User "
            "\"alice\"");
  EXPECT_EQ(ssar("alice", "create", "team-b")["allowed"], false);
  EXPECT_EQ(ssar("admin", "delete", "team-b")["allowed"], true);
  // Exactly one attribute block.
  auto bad = Do("alice", "POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
                R"({"spec":{}})");
  EXPECT_EQ(bad.code(), 422);
  EXPECT_NE(Body(bad)["message"].get<std::string>().find(
                "exactly one of nonResourceAttributes or resourceAttributes must be specified"),
            std::string::npos);
  // SubjectAccessReview (admin only) about alice.
  std::string sar = R"({"spec":{"user":"alice","groups":["team-a"],
      "resourceAttributes":{"verb":"list","group":"batch","resource":"jobs","namespace":"team-a"}}})";
  EXPECT_EQ(Body(Do("admin", "POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", sar))
                ["status"]["allowed"],
            true);
  EXPECT_EQ(Do("alice", "POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", sar).code(), 403);
  // Rules review.
  auto rules = Body(Do("alice", "POST", "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews",
                       R"({"spec":{"namespace":"team-a"}})"));
  bool jobs = false;
  for (const auto& r : rules["status"]["resourceRules"]) {
    for (const auto& res : r["resources"]) jobs |= res == "jobs";
  }
  EXPECT_TRUE(jobs) << rules.dump();
  EXPECT_FALSE(rules["status"]["nonResourceRules"].empty());
  EXPECT_EQ(Do("alice", "POST", "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews",
               R"({"spec":{}})").code(), 400);
  // whoami.
  auto who = Body(Do("alice", "POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews", "{}"));
  EXPECT_EQ(who["status"]["userInfo"]["username"], "alice");
  EXPECT_EQ(who["status"]["userInfo"]["groups"], Json::array({"team-a", "system:authenticated"}));
  // Reviews are create-only.
  EXPECT_EQ(Do("admin", "GET", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews").code(), 405);
}

TEST_F(ApiServerAuthTest, TokenRequestAndServiceAccountTokens) {
  ASSERT_EQ(Do("admin", "POST", "/api/v1/namespaces/team-a/serviceaccounts",
               R"({"metadata":{"name":"bot"}})").code(), 201);
  auto nf = Do("admin", "POST", "/api/v1/namespaces/team-a/serviceaccounts/ghost/token", "{}");
  EXPECT_EQ(nf.code(), 404);
  auto short_lived = Do("admin", "POST", "/api/v1/namespaces/team-a/serviceaccounts/bot/token",
                        R"({"spec":{"expirationSeconds":60}})");
  EXPECT_EQ(short_lived.code(), 422);
  EXPECT_EQ(Body(short_lived)["message"],
            "TokenRequest.authentication.k8s.io \"bot\" is invalid: spec.expirationSeconds: "
            "Invalid value: 60: may not specify a duration less than 10 minutes");
  auto tr = Do("admin", "POST", "/api/v1/namespaces/team-a/serviceaccounts/bot/token",
               R"({"spec":{"audiences":null,"expirationSeconds":null,"boundObjectRef":null}})");
  ASSERT_EQ(tr.code(), 201) << tr.body();
  std::string token = Body(tr)["status"]["token"];
  EXPECT_EQ(Body(tr)["status"]["expirationTimestamp"], "2026-01-01T01:00:00Z");
  // No permission yet: 403 as the service account; after a binding, allowed.
  auto sa403 = Do(token, "GET", "/apis/batch/v1/namespaces/team-a/jobs");
  EXPECT_EQ(sa403.code(), 403);
  EXPECT_NE(sa403.body().find("system:serviceaccount:team-a:bot"), std::string::npos);
  ASSERT_EQ(Do("admin", "POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/team-a/rolebindings",
               R"({"metadata":{"name":"bot"},"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"view"},
                   "subjects":[{"kind":"ServiceAccount","name":"bot"}]})").code(), 201);
  EXPECT_EQ(Do(token, "GET", "/apis/batch/v1/namespaces/team-a/jobs").code(), 200);
  // Expired.
  clock_.Advance(absl::Hours(2));
  EXPECT_EQ(Do(token, "GET", "/apis/batch/v1/namespaces/team-a/jobs").code(), 401);
  // alice (edit in team-a) may create tokens there, not in team-b.
  EXPECT_EQ(Do("alice", "POST", "/api/v1/namespaces/team-a/serviceaccounts/bot/token", "{}").code(), 201);
  EXPECT_EQ(Do("alice", "POST", "/api/v1/namespaces/team-b/serviceaccounts/bot/token", "{}").code(), 403);
}

TEST_F(ApiServerAuthTest, EscalationThroughTheApi) {
  const std::string rb = "/apis/rbac.authorization.k8s.io/v1/namespaces/team-a/rolebindings";
  auto grab = Do("alice", "POST", rb,
                 R"({"metadata":{"name":"grab"},"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"cluster-admin"},
                     "subjects":[{"kind":"User","name":"alice","apiGroup":"rbac.authorization.k8s.io"}]})");
  // edit has no rights on rolebindings at all: refused by authorization first.
  EXPECT_EQ(grab.code(), 403);
  // Give alice admin in team-a: she may bind edit, not cluster-admin.
  ASSERT_EQ(Do("admin", "POST", rb,
               R"({"metadata":{"name":"alice-admin"},"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"admin"},
                   "subjects":[{"kind":"User","name":"alice","apiGroup":"rbac.authorization.k8s.io"}]})").code(), 201);
  grab = Do("alice", "POST", rb,
            R"({"metadata":{"name":"grab"},"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"cluster-admin"},
                "subjects":[{"kind":"User","name":"alice","apiGroup":"rbac.authorization.k8s.io"}]})");
  EXPECT_EQ(grab.code(), 403);
  EXPECT_EQ(Body(grab)["message"].get<std::string>().rfind(
                "rolebindings.rbac.authorization.k8s.io \"grab\" is forbidden: user \"alice\" "
                "(groups=[\"team-a\" \"system:authenticated\"]) is attempting to grant RBAC "
                "permissions not currently held:\n",
                0),
            0u)
      << Body(grab)["message"];
  EXPECT_EQ(Do("admin", "GET", rb + "/grab").code(), 404);
  EXPECT_EQ(Do("alice", "POST", rb,
               R"({"metadata":{"name":"bob-edit"},"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"edit"},
                   "subjects":[{"kind":"User","name":"bob","apiGroup":"rbac.authorization.k8s.io"}]})").code(), 201);
  // A Role patched to grant more than alice holds is refused; nothing changes.
  const std::string roles = "/apis/rbac.authorization.k8s.io/v1/namespaces/team-a/roles";
  ASSERT_EQ(Do("alice", "POST", roles,
               R"({"metadata":{"name":"r"},"rules":[{"verbs":["get"],"apiGroups":["batch"],"resources":["jobs"]}]})").code(), 201);
  HttpRequest p;
  auto patch = [&](const std::string& body) {
    HttpRequest r;
    r.method = "PATCH";
    r.path = roles + "/r";
    r.headers["authorization"] = "Bearer alice";
    r.headers["content-type"] = "application/merge-patch+json";
    r.body = body;
    BufferWriter w;
    api_->Handle(r, w);
    return w;
  };
  EXPECT_EQ(patch(R"({"rules":[{"verbs":["get"],"apiGroups":[""],"resources":["nodes"]}]})").code(), 403);
  EXPECT_EQ(Body(Do("admin", "GET", roles + "/r"))["rules"][0]["resources"], Json::array({"jobs"}));
  EXPECT_EQ(patch(R"({"rules":[{"verbs":["list"],"apiGroups":["batch"],"resources":["jobs"]}]})").code(), 200);
}

TEST_F(ApiServerAuthTest, NodeRestriction) {
  auto node_token = [&](const std::string& n) {
    auth::ServiceAccountClaims c;
    c.node = n;
    c.issued_at = clock_.Now();
    c.expires = c.issued_at + absl::Hours(1);
    return sa_->Issue(c);
  };
  const std::string n1 = node_token("n1");
  auto node = [](const std::string& n) {
    return Json({{"metadata", {{"name", n}}}}).dump();
  };
  EXPECT_EQ(Do(n1, "POST", "/api/v1/nodes", node("n1")).code(), 201);
  auto other = Do(n1, "POST", "/api/v1/nodes", node("n2"));
  EXPECT_EQ(other.code(), 403);
  EXPECT_EQ(Body(other)["message"], "nodes \"n2\" is forbidden: node \"n1\" is not allowed to modify node \"n2\"");
  ASSERT_EQ(Do("admin", "POST", "/api/v1/nodes", node("n2")).code(), 201);
  EXPECT_EQ(Do(n1, "DELETE", "/api/v1/nodes/n2").code(), 403);
  EXPECT_EQ(Do(n1, "GET", "/api/v1/nodes/n2").code(), 200);  // reads are not restricted
  // Leases: only its own, in kube-node-lease.
  auto lease = [](const std::string& n) { return Json({{"metadata", {{"name", n}}}, {"spec", {{"holderIdentity", n}}}}).dump(); };
  EXPECT_EQ(Do(n1, "POST", "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases", lease("n1")).code(), 201);
  auto bad_lease = Do(n1, "POST", "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases", lease("n2"));
  EXPECT_EQ(bad_lease.code(), 403);
  EXPECT_NE(Body(bad_lease)["message"].get<std::string>().find(
                "can only access node lease with the same name as the requesting node"),
            std::string::npos);
  // Pods: status of its own pods only; no creates.
  auto pod = [](const std::string& name, const std::string& on) {
    return Json({{"metadata", {{"name", name}}},
                 {"spec", {{"nodeName", on}, {"containers", Json::array({{{"name", "c"}, {"image", "x"}}})}}}})
        .dump();
  };
  ASSERT_EQ(Do("admin", "POST", "/api/v1/namespaces/team-a/pods", pod("mine", "n1")).code(), 201);
  ASSERT_EQ(Do("admin", "POST", "/api/v1/namespaces/team-a/pods", pod("theirs", "n2")).code(), 201);
  EXPECT_EQ(Do(n1, "POST", "/api/v1/namespaces/team-a/pods", pod("x", "n1")).code(), 403);
  Json mine = Body(Do(n1, "GET", "/api/v1/namespaces/team-a/pods/mine"));
  mine["status"]["phase"] = "Running";
  EXPECT_EQ(Do(n1, "PUT", "/api/v1/namespaces/team-a/pods/mine/status", mine.dump()).code(), 200);
  Json theirs = Body(Do(n1, "GET", "/api/v1/namespaces/team-a/pods/theirs"));
  theirs["status"]["phase"] = "Failed";
  auto w = Do(n1, "PUT", "/api/v1/namespaces/team-a/pods/theirs/status", theirs.dump());
  EXPECT_EQ(w.code(), 403);
  EXPECT_NE(w.body().find("node \\\"n1\\\" can only update pod status for pods with spec.nodeName set to itself"),
            std::string::npos) << w.body();
  EXPECT_EQ(Do(n1, "DELETE", "/api/v1/namespaces/team-a/pods/theirs").code(), 403);
  EXPECT_EQ(Do(n1, "DELETE", "/api/v1/namespaces/team-a/pods/mine").code(), 200);
  // Nodes may not mint service account tokens.
  EXPECT_EQ(Do(n1, "POST", "/api/v1/namespaces/team-a/serviceaccounts/bot/token", "{}").code(), 403);
}

TEST_F(ApiServerAuthTest, NodeRestrictionLabelsAndTaints) {
  auth::ServiceAccountClaims c;
  c.node = "n1";
  c.issued_at = clock_.Now();
  c.expires = c.issued_at + absl::Hours(1);
  const std::string n1 = sa_->Issue(c);
  auto patch = [&](const std::string& token, const Json& body) {
    HttpRequest r;
    r.method = "PATCH";
    r.path = "/api/v1/nodes/n1";
    r.headers["authorization"] = "Bearer " + token;
    r.headers["content-type"] = "application/merge-patch+json";
    r.body = body.dump();
    r.remote = "127.0.0.1:5555";
    r.loopback = true;
    BufferWriter w;
    api_->Handle(r, w);
    return w;
  };
  auto labels = [](Json l) { return Json({{"metadata", {{"labels", std::move(l)}}}}); };
  auto stored = [&] { return Body(Do("admin", "GET", "/api/v1/nodes/n1")); };
  // Registering with a label outside kubelet's set is refused, nothing stored.
  Json node = {{"metadata", {{"name", "n1"}, {"labels", {{"node-role.kubernetes.io/gpu", ""}}}}},
               {"spec", {{"taints", Json::array({{{"key", "gpu"}, {"effect", "NoSchedule"}}})}}}};
  auto refused = Do(n1, "POST", "/api/v1/nodes", node.dump());
  EXPECT_EQ(refused.code(), 403);
  EXPECT_EQ(Body(refused)["message"],
            "nodes \"n1\" is forbidden: node \"n1\" is not allowed to set the following labels: "
            "node-role.kubernetes.io/gpu");
  EXPECT_EQ(Do("admin", "GET", "/api/v1/nodes/n1").code(), 404);
  // With its own taints and kubelet's labels: allowed.
  node["metadata"]["labels"] = {{"kubernetes.io/hostname", "n1"}, {"gpu", "a100"}};
  ASSERT_EQ(Do(n1, "POST", "/api/v1/nodes", node.dump()).code(), 201);
  // The admin labels and taints it; the node may not undo or change that.
  ASSERT_EQ(patch("admin", labels({{"node-restriction.kubernetes.io/trusted", "yes"}})).code(), 200);
  auto w = patch(n1, labels({{"node-restriction.kubernetes.io/trusted", nullptr}}));
  EXPECT_EQ(w.code(), 403);
  EXPECT_EQ(Body(w)["message"],
            "nodes \"n1\" is forbidden: is not allowed to modify labels: "
            "node-restriction.kubernetes.io/trusted");
  EXPECT_EQ(Body(w)["reason"], "Forbidden");
  EXPECT_EQ(stored()["metadata"]["labels"]["node-restriction.kubernetes.io/trusted"], "yes");
  EXPECT_EQ(patch(n1, labels({{"kubernetes.io/role", "master"}})).code(), 403);
  // Its own labels outside kubernetes.io, and kubelet's: allowed.
  EXPECT_EQ(patch(n1, labels({{"gpu", "h100"}, {"node.kubernetes.io/pool", "b"}})).code(), 200);
  EXPECT_EQ(stored()["metadata"]["labels"]["gpu"], "h100");
  // Taints: not on update, however written.
  auto t = patch(n1, Json({{"spec", {{"taints", nullptr}}}}));
  EXPECT_EQ(t.code(), 403);
  EXPECT_EQ(Body(t)["message"], "nodes \"n1\" is forbidden: node \"n1\" is not allowed to modify taints");
  Json whole = stored();
  whole["spec"]["taints"].push_back({{"key", "extra"}, {"effect", "NoExecute"}});
  EXPECT_EQ(Do(n1, "PUT", "/api/v1/nodes/n1", whole.dump()).code(), 403);
  EXPECT_EQ(stored()["spec"]["taints"].size(), 1u);
  // The admin may; its status writes and unrelated changes stay allowed.
  EXPECT_EQ(patch("admin", Json({{"spec", {{"taints", nullptr}}}})).code(), 200);
  Json st = stored();
  st["status"]["conditions"] = Json::array({{{"type", "Ready"}, {"status", "True"}}});
  EXPECT_EQ(Do(n1, "PUT", "/api/v1/nodes/n1/status", st.dump()).code(), 200);
  EXPECT_EQ(patch(n1, Json({{"metadata", {{"annotations", {{"note", "x"}}}}}})).code(), 200);
}

TEST_F(ApiServerAuthTest, OnlyTheNodeItselfSetsItsKubeletEndpoint) {
  auth::ServiceAccountClaims c;
  c.node = "n1";
  c.issued_at = clock_.Now();
  c.expires = c.issued_at + absl::Hours(1);
  const std::string n1 = sa_->Issue(c);
  const std::string key = auth::kKubeletEndpointAnnotation;
  auto node = [&](const std::string& n, const std::string& ep) {
    return Json({{"metadata", {{"name", n}, {"annotations", {{key, ep}}}}}}).dump();
  };
  auto endpoint = [&](const std::string& n) {
    Json got = Body(Do("admin", "GET", "/api/v1/nodes/" + n));
    return got["metadata"].value("annotations", Json::object()).value(key, "<none>");
  };
  ASSERT_EQ(Do(n1, "POST", "/api/v1/nodes", node("n1", "mine")).code(), 201);
  EXPECT_EQ(endpoint("n1"), "mine");
  // Anyone else's change is not taken: a patch, a full update, a create.
  auto patch = [&](const std::string& token, const std::string& n, const std::string& ep) {
    HttpRequest r;
    r.method = "PATCH";
    r.path = "/api/v1/nodes/" + n;
    r.headers["authorization"] = "Bearer " + token;
    r.headers["content-type"] = "application/merge-patch+json";
    r.body = Json({{"metadata", {{"annotations", {{key, ep}}}}}}).dump();
    r.remote = "127.0.0.1:5555";
    r.loopback = true;
    BufferWriter w;
    api_->Handle(r, w);
    return w;
  };
  auto p = patch("admin", "n1", "evil");
  EXPECT_EQ(p.code(), 200);
  EXPECT_EQ(endpoint("n1"), "mine");
  bool warned = false;
  for (const auto& [k, v] : p.headers()) warned |= k == "Warning" && v.find(key) != std::string::npos;
  EXPECT_TRUE(warned);
  Json whole = Body(Do("admin", "GET", "/api/v1/nodes/n1"));
  whole["metadata"]["annotations"].erase(key);
  EXPECT_EQ(Do("admin", "PUT", "/api/v1/nodes/n1", whole.dump()).code(), 200);
  EXPECT_EQ(endpoint("n1"), "mine");
  ASSERT_EQ(Do("admin", "POST", "/api/v1/nodes", node("n2", "evil")).code(), 201);
  EXPECT_EQ(endpoint("n2"), "<none>");
  // The node itself changes it.
  EXPECT_EQ(patch(n1, "n1", "moved").code(), 200);
  EXPECT_EQ(endpoint("n1"), "moved");
}

TEST_F(ApiServerAuthTest, AuditLogRecordsWhoDidWhat) {
  Do("alice", "POST", "/apis/batch/v1/namespaces/team-b/jobs", Job("j"));
  Do("nope", "GET", "/api/v1/namespaces");
  std::ifstream in(audit_path_);
  std::vector<Json> evs;
  for (std::string l; std::getline(in, l);) evs.push_back(Json::parse(l));
  ASSERT_GE(evs.size(), 2u);
  const Json& denied = evs[evs.size() - 2];
  EXPECT_EQ(denied["apiVersion"], "audit.k8s.io/v1");
  EXPECT_EQ(denied["level"], "Metadata");
  EXPECT_EQ(denied["stage"], "ResponseComplete");
  EXPECT_EQ(denied["verb"], "create");
  EXPECT_EQ(denied["user"]["username"], "alice");
  EXPECT_EQ(denied["objectRef"], Json({{"resource", "jobs"}, {"namespace", "team-b"},
                                       {"apiGroup", "batch"}, {"apiVersion", "v1"}}));
  EXPECT_EQ(denied["responseStatus"]["code"], 403);
  EXPECT_EQ(denied["sourceIPs"], Json::array({"127.0.0.1"}));
  EXPECT_EQ(denied["annotations"]["authorization.k8s.io/decision"], "forbid");
  EXPECT_FALSE(denied.contains("requestObject"));
  EXPECT_EQ(evs.back()["responseStatus"]["code"], 401);
  EXPECT_EQ(evs.back()["auditID"].get<std::string>().size(), 36u);
}

// The dashboard's files (static_content) load before any credential is
// checked, even with a refused token; every other path still needs one.
TEST_F(ApiServerAuthTest, StaticContentIsServedBeforeAuthentication) {
  ApiServerOptions o;
  o.authenticator = authn_.get();
  o.authorizer = authz_.get();
  o.static_content = [](const HttpRequest& req, ResponseWriter& w) {
    if (req.path != "/ui/") return false;
    w.Send(200, {{"Content-Type", "text/html"}}, "page");
    return true;
  };
  ApiServer api(*reg_, clock_, o);
  auto get = [&](const std::string& path, const std::string& token) {
    HttpRequest r;
    r.method = "GET";
    r.path = path;
    if (!token.empty()) r.headers["authorization"] = "Bearer " + token;
    r.remote = "10.0.0.9:4444";
    BufferWriter w;
    api.Handle(r, w);
    return w;
  };
  EXPECT_EQ(get("/ui/", "").code(), 200);
  EXPECT_EQ(get("/ui/", "").body(), "page");
  EXPECT_EQ(get("/ui/", "not-a-token").code(), 200);
  EXPECT_EQ(get("/api/v1/namespaces", "not-a-token").code(), 401);
  EXPECT_EQ(get("/api/v1/namespaces", "").code(), 403);  // anonymous
  EXPECT_EQ(get("/api/v1/namespaces", "admin").code(), 200);
}

}  // namespace
}  // namespace batchd::apiserver
