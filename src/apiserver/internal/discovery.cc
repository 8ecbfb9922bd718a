#include "apiserver/internal/discovery.h"

#include <set>
#include <tuple>

#include "api/schema_ops/openapi.h"

namespace batchd::apiserver::internal {

using api::Json;

namespace {

Json ResourceEntry(const api::KindDef& k) {
  Json r = {{"name", k.plural},
            {"singularName", k.singular},
            {"namespaced", k.namespaced},
            {"kind", k.kind},
            {"verbs", k.verbs}};
  if (!k.short_names.empty()) r["shortNames"] = k.short_names;
  if (!k.categories.empty()) r["categories"] = k.categories;
  return r;
}

Json SubresourceEntry(const api::KindDef& k, const std::string& sub) {
  Json r = {{"name", k.plural + "/" + sub}, {"singularName", ""}, {"namespaced", k.namespaced}};
  if (sub == "status") {
    r["kind"] = k.kind;
    r["verbs"] = {"get", "patch", "update"};
  } else if (sub == "log") {
    r["kind"] = "Pod";
    r["verbs"] = {"get"};
  } else if (sub == "binding") {
    r["kind"] = "Binding";
    r["verbs"] = {"create"};
  } else if (sub == "eviction") {
    r["group"] = "policy";
    r["version"] = "v1";
    r["kind"] = "Eviction";
    r["verbs"] = {"create"};
  } else {
    r["kind"] = k.kind;
    r["verbs"] = {"get"};
  }
  return r;
}

}  // namespace

// Kueue's visibility API (served by the queue manager, not stored): the
// ClusterQueue / LocalQueue pendingworkloads subresources, get only.
void DiscoveryDocs::AddVisibilityGroup(Json* group_list) {
  const std::string g = "visibility.kueue.x-k8s.io";
  Json vs = Json::array();
  for (const char* v : {"v1beta2", "v1beta1"}) {
    vs.push_back({{"groupVersion", g + "/" + v}, {"version", v}});
    Json resources = Json::array();
    for (const auto& [plural, kind, namespaced] :
         {std::tuple{"clusterqueues", "ClusterQueue", false},
          std::tuple{"localqueues", "LocalQueue", true}}) {
      resources.push_back({{"name", plural}, {"singularName", ""}, {"namespaced", namespaced},
                           {"kind", kind}, {"verbs", {"get"}}});
      resources.push_back({{"name", std::string(plural) + "/pendingworkloads"},
                           {"singularName", ""},
                           {"namespaced", namespaced},
                           {"kind", "PendingWorkloadsSummary"},
                           {"verbs", {"get"}}});
    }
    docs_["/apis/" + g + "/" + v] = Json({{"kind", "APIResourceList"}, {"apiVersion", "v1"},
                                          {"groupVersion", g + "/" + v},
                                          {"resources", resources}})
                                        .dump();
  }
  Json group = {{"name", g}, {"versions", vs}, {"preferredVersion", vs[0]}};
  docs_["/apis/" + g] = Json({{"kind", "APIGroup"}, {"apiVersion", "v1"}, {"name", g},
                              {"versions", vs}, {"preferredVersion", vs[0]}})
                            .dump();
  (*group_list)["groups"].push_back(group);
}

DiscoveryDocs::DiscoveryDocs(const api::Scheme& scheme, bool visibility) {
  // group -> versions (in registration order), and group/version -> resources.
  std::vector<std::string> groups;
  std::map<std::string, std::vector<std::string>> versions;
  std::map<std::string, Json> lists;
  for (const auto& k : scheme.All()) {
    std::string gv = k->ApiVersion();
    if (!versions.count(k->group)) groups.push_back(k->group);
    auto& vs = versions[k->group];
    if (std::find(vs.begin(), vs.end(), k->version) == vs.end()) vs.push_back(k->version);
    Json& list = lists[gv];
    if (list.is_null()) {
      list = {{"kind", "APIResourceList"}, {"apiVersion", "v1"}, {"groupVersion", gv},
              {"resources", Json::array()}};
    }
    list["resources"].push_back(ResourceEntry(*k));
    for (const auto& sub : k->subresources) list["resources"].push_back(SubresourceEntry(*k, sub));
  }
  docs_["/api"] = Json({{"kind", "APIVersions"},
                        {"versions", versions[""]},
                        {"serverAddressByClientCIDRs",
                         {{{"clientCIDR", "0.0.0.0/0"}, {"serverAddress", ""}}}}})
                      .dump();
  Json group_list = {{"kind", "APIGroupList"}, {"apiVersion", "v1"}, {"groups", Json::array()}};
  for (const auto& g : groups) {
    Json vs = Json::array();
    for (const auto& v : versions[g]) vs.push_back({{"groupVersion", g.empty() ? v : g + "/" + v},
                                                    {"version", v}});
    if (g.empty()) {
      for (const auto& v : versions[g]) docs_["/api/" + v] = lists[v].dump();
      continue;
    }
    Json group = {{"name", g}, {"versions", vs}, {"preferredVersion", vs[0]}};
    docs_["/apis/" + g] = Json({{"kind", "APIGroup"}, {"apiVersion", "v1"}, {"name", g},
                                {"versions", vs}, {"preferredVersion", vs[0]}})
                              .dump();
    group_list["groups"].push_back(group);
    for (const auto& v : versions[g]) docs_["/apis/" + g + "/" + v] = lists[g + "/" + v].dump();
  }
  if (visibility) AddVisibilityGroup(&group_list);
  docs_["/apis"] = group_list.dump();
  // OpenAPI v2: one document, served as JSON or protobuf (see ApiServer).
  Json v2 = api::schema_ops::OpenApiV2Document(scheme);
  openapi_v2_pb_ = api::schema_ops::OpenApiV2Protobuf(v2);
  openapi_v2_json_ = v2.dump();
  // OpenAPI v3: an index and one document per group-version.
  docs_["/openapi/v3"] = api::schema_ops::OpenApiV3Index(scheme).dump();
  for (const auto& g : groups) {
    for (const auto& v : versions[g]) {
      std::string path = g.empty() ? "/openapi/v3/api/" + v : "/openapi/v3/apis/" + g + "/" + v;
      docs_[path] = api::schema_ops::OpenApiV3Document(scheme, g, v).dump();
    }
  }
}

void DiscoveryDocs::AddResourceMetrics() {
  const std::string g = "metrics.k8s.io", v = "v1beta1", gv = g + "/" + v;
  Json version = {{"groupVersion", gv}, {"version", v}};
  Json group = {{"name", g}, {"versions", Json::array({version})}, {"preferredVersion", version}};
  Json list = Json::parse(docs_["/apis"]);
  list["groups"].push_back(group);
  docs_["/apis"] = list.dump();
  Json doc = group;
  doc["kind"] = "APIGroup";
  doc["apiVersion"] = "v1";
  docs_["/apis/" + g] = doc.dump();
  Json resources = Json::array();
  for (const auto& [plural, kind, namespaced] :
       {std::tuple<const char*, const char*, bool>{"nodes", "NodeMetrics", false},
        {"pods", "PodMetrics", true}}) {
    resources.push_back({{"name", plural},
                         {"singularName", ""},
                         {"namespaced", namespaced},
                         {"kind", kind},
                         {"verbs", {"get", "list"}}});
  }
  docs_["/apis/" + gv] = Json({{"kind", "APIResourceList"}, {"apiVersion", "v1"},
                               {"groupVersion", gv}, {"resources", resources}})
                             .dump();
}

const std::string* DiscoveryDocs::Find(const std::string& path) const {
  std::string p = path;
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  auto it = docs_.find(p);
  return it == docs_.end() ? nullptr : &it->second;
}

}  // namespace batchd::apiserver::internal
