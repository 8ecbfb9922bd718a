#include "auth/bootstrap_policy.h"

#include "absl/strings/str_cat.h"
#include "auth/rbac.h"
#include "registry/errors.h"
#include "registry/registry.h"

namespace batchd::auth {

using api::Json;

namespace {

using Strs = std::vector<std::string>;
const Strs kRead = {"get", "list", "watch"};
const Strs kWrite = {"create", "delete", "deletecollection", "patch", "update"};
const Strs kAll = {"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"};

Json Rule(const Strs& verbs, const Strs& groups, const Strs& resources) {
  return {{"verbs", verbs}, {"apiGroups", groups}, {"resources", resources}};
}
Json UrlRule(const Strs& verbs, const Strs& urls) {
  return {{"verbs", verbs}, {"nonResourceURLs", urls}};
}

constexpr char kAggAdmin[] = "rbac.authorization.k8s.io/aggregate-to-admin";
constexpr char kAggEdit[] = "rbac.authorization.k8s.io/aggregate-to-edit";
constexpr char kAggView[] = "rbac.authorization.k8s.io/aggregate-to-view";
constexpr char kKueueAdmin[] = "rbac.kueue.x-k8s.io/batch-admin";
constexpr char kKueueUser[] = "rbac.kueue.x-k8s.io/batch-user";

Json Meta(const std::string& name, Json labels = Json::object()) {
  labels["kubernetes.io/bootstrapping"] = "rbac-defaults";
  return {{"name", name},
          {"labels", std::move(labels)},
          {"annotations", {{"rbac.authorization.kubernetes.io/autoupdate", "true"}}}};
}

Json ClusterRole(const std::string& name, Json rules, Json labels = Json::object()) {
  return {{"apiVersion", "rbac.authorization.k8s.io/v1"},
          {"kind", "ClusterRole"},
          {"metadata", Meta(name, std::move(labels))},
          {"rules", std::move(rules)}};
}

Json Aggregated(const std::string& name, const std::vector<std::string>& select_labels,
                Json labels = Json::object()) {
  Json selectors = Json::array();
  for (const auto& l : select_labels) selectors.push_back({{"matchLabels", {{l, "true"}}}});
  Json r = ClusterRole(name, Json::array(), std::move(labels));
  r["aggregationRule"] = {{"clusterRoleSelectors", std::move(selectors)}};
  return r;
}

Json Binding(const std::string& name, const std::string& role, Json subjects) {
  return {{"apiVersion", "rbac.authorization.k8s.io/v1"},
          {"kind", "ClusterRoleBinding"},
          {"metadata", Meta(name)},
          {"roleRef", {{"apiGroup", kRbacGroup}, {"kind", "ClusterRole"}, {"name", role}}},
          {"subjects", std::move(subjects)}};
}

Json Group(const std::string& g) {
  return {{"kind", "Group"}, {"apiGroup", kRbacGroup}, {"name", g}};
}

}  // namespace

std::vector<Json> DefaultClusterRoles() {
  const Strs core = {""}, batch = {"batch"}, kueue = {"kueue.x-k8s.io"},
             jobset = {"jobset.x-k8s.io"};
  std::vector<Json> out;
  out.push_back(ClusterRole("cluster-admin", Json::array({Rule({"*"}, {"*"}, {"*"}),
                                                          UrlRule({"*"}, {"*"})})));
  out.push_back(Aggregated("admin", {kAggAdmin}));
  out.push_back(Aggregated("edit", {kAggEdit}, {{kAggAdmin, "true"}}));
  out.push_back(Aggregated("view", {kAggView}, {{kAggEdit, "true"}}));
  out.push_back(ClusterRole(
      "system:aggregate-to-admin",
      Json::array({Rule(kAll, {kRbacGroup}, {"rolebindings", "roles"}),
                   Rule({"create"}, {"authorization.k8s.io"}, {"localsubjectaccessreviews"})}),
      {{kAggAdmin, "true"}}));
  out.push_back(ClusterRole(
      "system:aggregate-to-edit",
      Json::array({Rule(kWrite, core, {"pods", "pods/attach", "pods/exec", "pods/portforward",
                                       "pods/proxy"}),
                   Rule({"create"}, core, {"pods/eviction"}),
                   Rule(kWrite, core, {"configmaps", "secrets", "services", "serviceaccounts",
                                       "events"}),
                   Rule({"impersonate"}, core, {"serviceaccounts"}),
                   Rule({"create"}, core, {"serviceaccounts/token"}),
                   Rule(kWrite, batch, {"jobs", "cronjobs"}),
                   Rule(kWrite, {"coordination.k8s.io"}, {"leases"})}),
      {{kAggEdit, "true"}}));
  out.push_back(ClusterRole(
      "system:aggregate-to-view",
      Json::array({Rule(kRead, core, {"configmaps", "endpoints", "events", "pods", "pods/log",
                                      "pods/status", "serviceaccounts", "services",
                                      "services/status"}),
                   Rule(kRead, core, {"namespaces", "namespaces/status"}),
                   Rule(kRead, batch, {"cronjobs", "cronjobs/status", "jobs", "jobs/status"}),
                   Rule(kRead, {"discovery.k8s.io"}, {"endpointslices"}),
                   Rule(kRead, {"coordination.k8s.io"}, {"leases"})}),
      {{kAggView, "true"}}));
  // Kueue's batch roles (config/components/rbac/) and their components.
  out.push_back(Aggregated("kueue-batch-admin-role", {kKueueAdmin}));
  out.push_back(Aggregated("kueue-batch-user-role", {kKueueUser}));
  out.push_back(ClusterRole("kueue-job-editor-role",
                            Json::array({Rule(kAll, batch, {"jobs"}),
                                         Rule({"get"}, batch, {"jobs/status"})}),
                            {{kKueueAdmin, "true"}, {kKueueUser, "true"}}));
  out.push_back(ClusterRole("kueue-localqueue-viewer-role",
                            Json::array({Rule(kRead, kueue, {"localqueues"}),
                                         Rule({"get"}, kueue, {"localqueues/status"})}),
                            {{kKueueAdmin, "true"}, {kKueueUser, "true"}, {kAggView, "true"}}));
  out.push_back(ClusterRole("kueue-localqueue-editor-role",
                            Json::array({Rule(kAll, kueue, {"localqueues"}),
                                         Rule({"get"}, kueue, {"localqueues/status"})}),
                            {{kKueueAdmin, "true"}, {kAggAdmin, "true"}}));
  out.push_back(ClusterRole("kueue-workload-viewer-role",
                            Json::array({Rule(kRead, kueue, {"workloads"}),
                                         Rule({"get"}, kueue, {"workloads/status"})}),
                            {{kKueueAdmin, "true"}, {kKueueUser, "true"}, {kAggView, "true"}}));
  out.push_back(ClusterRole("kueue-workload-editor-role",
                            Json::array({Rule(kAll, kueue, {"workloads"}),
                                         Rule({"get"}, kueue, {"workloads/status"})}),
                            {{kKueueAdmin, "true"}, {kAggEdit, "true"}}));
  out.push_back(ClusterRole(
      "kueue-clusterqueue-viewer-role",
      Json::array({Rule(kRead, kueue, {"clusterqueues", "resourceflavors", "cohorts",
                                       "workloadpriorityclasses", "admissionchecks",
                                       "topologies", "provisioningrequestconfigs"}),
                   Rule({"get"}, kueue, {"clusterqueues/status", "cohorts/status",
                                         "admissionchecks/status"})}),
      {{kKueueAdmin, "true"}}));
  out.push_back(ClusterRole(
      "kueue-clusterqueue-editor-role",
      Json::array({Rule(kAll, kueue, {"clusterqueues", "resourceflavors", "cohorts",
                                      "workloadpriorityclasses", "admissionchecks",
                                      "topologies", "provisioningrequestconfigs"})}),
      {{kKueueAdmin, "true"}}));
  out.push_back(ClusterRole("kueue-jobset-editor-role",
                            Json::array({Rule(kAll, jobset, {"jobsets"}),
                                         Rule({"get"}, jobset, {"jobsets/status"})}),
                            {{kKueueAdmin, "true"}, {kKueueUser, "true"}, {kAggEdit, "true"}}));
  out.push_back(ClusterRole("kueue-jobset-viewer-role",
                            Json::array({Rule(kRead, jobset, {"jobsets"}),
                                         Rule({"get"}, jobset, {"jobsets/status"})}),
                            {{kKueueAdmin, "true"}, {kKueueUser, "true"}, {kAggView, "true"}}));
  out.push_back(ClusterRole(
      "system:node",
      Json::array({Rule({"create", "get", "list", "watch", "update", "patch", "delete"}, core,
                        {"nodes"}),
                   Rule({"patch", "update"}, core, {"nodes/status", "pods/status"}),
                   Rule(kRead, core, {"pods", "services", "endpoints", "configmaps", "secrets",
                                      "namespaces"}),
                   Rule({"create", "delete"}, core, {"pods"}),
                   Rule({"create"}, core, {"pods/eviction", "serviceaccounts/token"}),
                   Rule({"create", "patch", "update"}, core, {"events"}),
                   Rule({"create", "get", "update", "patch", "delete"}, {"coordination.k8s.io"},
                        {"leases"}),
                   Rule(kRead, {"discovery.k8s.io"}, {"endpointslices"}),
                   Rule({"create"}, {"authorization.k8s.io"}, {"subjectaccessreviews"})})));
  out.push_back(ClusterRole(
      "system:basic-user",
      Json::array({Rule({"create"}, {"authorization.k8s.io"},
                        {"selfsubjectaccessreviews", "selfsubjectrulesreviews"}),
                   Rule({"create"}, {"authentication.k8s.io"}, {"selfsubjectreviews"})})));
  out.push_back(ClusterRole(
      "system:discovery",
      Json::array({UrlRule({"get"}, {"/api", "/api/*", "/apis", "/apis/*", "/healthz", "/livez",
                                     "/openapi", "/openapi/*", "/readyz", "/version",
                                     "/version/"})})));
  out.push_back(ClusterRole(
      "system:public-info-viewer",
      Json::array({UrlRule({"get"}, {"/healthz", "/livez", "/readyz", "/version", "/version/"})})));
  return out;
}

std::vector<Json> DefaultClusterRoleBindings() {
  return {Binding("cluster-admin", "cluster-admin", Json::array({Group(kMastersGroup)})),
          Binding("system:basic-user", "system:basic-user",
                  Json::array({Group(kAuthenticatedGroup)})),
          Binding("system:discovery", "system:discovery", Json::array({Group(kAuthenticatedGroup)})),
          Binding("system:public-info-viewer", "system:public-info-viewer",
                  Json::array({Group(kAuthenticatedGroup), Group(kUnauthenticatedGroup)})),
          // Nodes authenticate as system:node:<name> in system:nodes.
          Binding("system:node", "system:node", Json::array({Group(kNodesGroup)}))};
}

absl::Status EnsureDefaultPolicy(registry::Registry& registry) {
  const api::Scheme& s = registry.scheme();
  const api::KindDef* cr = s.ByResource(kRbacGroup, "v1", "clusterroles");
  const api::KindDef* crb = s.ByResource(kRbacGroup, "v1", "clusterrolebindings");
  if (!cr || !crb) return absl::InternalError("RBAC kinds are not in the scheme");
  auto ensure = [&](const api::KindDef& k, const Json& obj) -> absl::Status {
    std::string name = obj["metadata"]["name"].get<std::string>();
    if (registry.Get(k, "", name).ok()) return absl::OkStatus();
    registry::WriteOptions wo;
    wo.field_manager = "batchd-bootstrap";
    auto res = registry.Create(k, "", obj, wo);
    if (!res.ok() && res.status().code() != absl::StatusCode::kAlreadyExists) {
      return absl::InternalError(absl::StrCat("default RBAC policy: ", k.kind, " ", name, ": ",
                                              res.status().message()));
    }
    return absl::OkStatus();
  };
  for (const auto& r : DefaultClusterRoles()) {
    if (auto st = ensure(*cr, r); !st.ok()) return st;
  }
  for (const auto& b : DefaultClusterRoleBindings()) {
    if (auto st = ensure(*crb, b); !st.ok()) return st;
  }
  return absl::OkStatus();
}

}  // namespace batchd::auth
