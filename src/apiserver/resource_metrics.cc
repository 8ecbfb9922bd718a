// metrics.k8s.io/v1beta1 (NodeMetrics, PodMetrics) over a ResourceMetricsSource,
// and the agent summary's wire format.
#include "apiserver/resource_metrics.h"

#include <map>
#include <optional>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "api/meta/time_util.h"
#include "apiserver/apiserver.h"
#include "apiserver/internal/route.h"
#include "common/logging.h"
#include "registry/errors.h"

namespace batchd::apiserver {

using api::Json;

namespace {

constexpr char kGroup[] = "metrics.k8s.io";
constexpr char kVersion[] = "v1beta1";
constexpr char kPrefix[] = "/apis/metrics.k8s.io/v1beta1/";

Json UsageJson(const ResourceUsage& u) {
  return {{"time", api::meta::FormatRfc3339(u.time)},
          {"usageNanoCores", u.cpu_nanocores},
          {"windowSeconds", absl::ToDoubleSeconds(u.window)},
          {"workingSetBytes", u.memory_bytes}};
}

absl::StatusOr<ResourceUsage> UsageFromJson(const Json& j, const std::string& where) {
  if (!j.is_object()) return absl::InvalidArgumentError(absl::StrCat(where, ": want an object"));
  ResourceUsage u;
  auto t = api::meta::ParseRfc3339(api::StringMember(j, "time"));
  if (!t.ok()) return absl::InvalidArgumentError(absl::StrCat(where, ".time: ", t.status().message()));
  u.time = *t;
  const Json& cpu = api::Member(j, "usageNanoCores");
  const Json& mem = api::Member(j, "workingSetBytes");
  const Json& win = api::Member(j, "windowSeconds");
  if (!cpu.is_number_integer() || !mem.is_number_integer() || !win.is_number()) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": usageNanoCores, workingSetBytes and windowSeconds are required"));
  }
  u.cpu_nanocores = cpu.get<int64_t>();
  u.memory_bytes = mem.get<int64_t>();
  u.window = absl::Seconds(win.get<double>());
  if (u.cpu_nanocores < 0 || u.memory_bytes < 0 || u.window < absl::ZeroDuration()) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": negative usage"));
  }
  return u;
}

// Kubernetes quantities as metrics-server writes them: cpu in nano cores
// ("1234567n"), memory in Ki when it divides ("2048Ki") else bytes.
std::string CpuQuantity(int64_t nanocores) { return absl::StrCat(nanocores, "n"); }
std::string MemoryQuantity(int64_t bytes) {
  return bytes % 1024 == 0 ? absl::StrCat(bytes / 1024, "Ki") : absl::StrCat(bytes);
}

Json UsageQuantities(const ResourceUsage& u) {
  return {{"cpu", CpuQuantity(u.cpu_nanocores)}, {"memory", MemoryQuantity(u.memory_bytes)}};
}

// Go's time.Duration.String() for the window ("10s", "1.5s", "1m0s").
std::string GoDuration(absl::Duration d) {
  if (d == absl::ZeroDuration()) return "0s";
  std::string s = absl::FormatDuration(d);
  // absl writes "1m" where Go writes "1m0s".
  if (!s.empty() && (s.back() == 'm' || s.back() == 'h')) s += s.back() == 'h' ? "0m0s" : "0s";
  return s;
}

Json MetricsMeta(const Json& obj, absl::Time now, bool namespaced) {
  const Json& meta = api::MemberObject(obj, "metadata");
  Json m = {{"name", api::StringMember(meta, "name")},
            {"creationTimestamp", api::meta::FormatRfc3339(now)}};
  if (namespaced) m["namespace"] = api::StringMember(meta, "namespace");
  const Json& labels = api::MemberObject(meta, "labels");
  if (!labels.empty()) m["labels"] = labels;
  return m;
}

// What authorization sees: the resources `nodes` and `pods` of the group
// metrics.k8s.io (as kube-apiserver's aggregator forwards them).
const api::KindDef& MetricsKind(bool pods) {
  static const api::KindDef* const kNodes = [] {
    auto* k = new api::KindDef();
    k->group = kGroup;
    k->version = kVersion;
    k->kind = "NodeMetrics";
    k->plural = "nodes";
    k->singular = "";
    k->namespaced = false;
    k->verbs = {"get", "list"};
    return k;
  }();
  static const api::KindDef* const kPods = [] {
    auto* k = new api::KindDef(*kNodes);
    k->kind = "PodMetrics";
    k->plural = "pods";
    k->namespaced = true;
    return k;
  }();
  return pods ? *kPods : *kNodes;
}

absl::Status NotFoundMetrics(bool pods, const std::string& name) {
  return registry::ApiError(absl::StatusCode::kNotFound, "NotFound",
                            absl::StrCat(pods ? "podmetrics" : "nodemetrics", ".", kGroup, " \"",
                                         name, "\" not found"),
                            {{"name", name}, {"group", kGroup}, {"kind", pods ? "pods" : "nodes"}});
}

}  // namespace

Json SummaryToJson(const NodeUsageSummary& s) {
  Json pods = Json::array();
  for (const PodUsageSummary& p : s.pods) {
    Json containers = Json::array();
    for (const ContainerUsageSummary& c : p.containers) {
      containers.push_back({{"name", c.name}, {"usage", UsageJson(c.usage)}});
    }
    pods.push_back({{"podRef", {{"name", p.name}, {"namespace", p.ns}, {"uid", p.uid}}},
                    {"containers", std::move(containers)}});
  }
  return {{"node", {{"nodeName", s.node_name}, {"usage", UsageJson(s.usage)}}},
          {"pods", std::move(pods)}};
}

absl::StatusOr<NodeUsageSummary> SummaryFromJson(const Json& j) {
  NodeUsageSummary s;
  const Json& node = api::MemberObject(j, "node");
  s.node_name = api::CopyStringMember(node, "nodeName");
  auto u = UsageFromJson(api::Member(node, "usage"), "node.usage");
  if (!u.ok()) return u.status();
  s.usage = *u;
  const Json& pods = api::MemberArray(j, "pods");
  for (size_t i = 0; i < pods.size(); ++i) {
    PodUsageSummary p;
    const Json& ref = api::MemberObject(pods[i], "podRef");
    p.name = api::CopyStringMember(ref, "name");
    p.ns = api::CopyStringMember(ref, "namespace");
    p.uid = api::CopyStringMember(ref, "uid");
    const Json& cs = api::MemberArray(pods[i], "containers");
    for (size_t k = 0; k < cs.size(); ++k) {
      auto cu = UsageFromJson(api::Member(cs[k], "usage"),
                              absl::StrCat("pods[", i, "].containers[", k, "].usage"));
      if (!cu.ok()) return cu.status();
      p.containers.push_back({api::CopyStringMember(cs[k], "name"), *cu});
    }
    s.pods.push_back(std::move(p));
  }
  return s;
}

bool ApiServer::IsResourceMetricsPath(const std::string& path) const {
  return opts_.resource_metrics != nullptr && absl::StartsWith(path, kPrefix) &&
         path.size() > sizeof(kPrefix) - 1;
}

void ApiServer::ServeResourceMetrics(const HttpRequest& req, ResponseWriter& w, Scope& scope,
                                     std::string* resource) {
  std::vector<std::string> segs =
      absl::StrSplit(req.path.substr(sizeof(kPrefix) - 1), '/', absl::SkipEmpty());
  Route r;
  bool pods = false;
  if (!segs.empty() && segs[0] == "nodes" && segs.size() <= 2) {
    if (segs.size() == 2) r.name = segs[1];
  } else if (!segs.empty() && segs[0] == "pods" && segs.size() == 1) {
    pods = true;
  } else if (segs.size() >= 3 && segs[0] == "namespaces" && segs[2] == "pods" &&
             segs.size() <= 4) {
    pods = true;
    r.ns = segs[1];
    if (segs.size() == 4) r.name = segs[3];
  } else {
    if (!Admit(req, nullptr, w, scope)) return;
    return SendError(req, w,
                     registry::ApiError(absl::StatusCode::kNotFound, "NotFound",
                                        "the server could not find the requested resource"));
  }
  r.kind = &MetricsKind(pods);
  *resource = r.kind->plural;
  if (!Admit(req, &r, w, scope)) return;
  if (req.method != "GET" && req.method != "HEAD") {
    return SendError(req, w, registry::MethodNotAllowed(absl::StrCat(
                                 req.method, " is not supported on ", kGroup, " (read-only)")));
  }
  const std::string watch = req.Param("watch");
  if (watch == "true" || watch == "1") {
    return SendError(req, w, registry::MethodNotAllowed(
                                 absl::StrCat("watch is not supported on ", kGroup)));
  }
  registry::ListOptions lo;
  lo.label_selector = req.Param("labelSelector");
  lo.field_selector = req.Param("fieldSelector");
  const absl::Time now = clock_.Now();
  const api::KindDef* node_kind = registry_.scheme().ByResource("", "v1", "nodes");
  const api::KindDef* pod_kind = registry_.scheme().ByResource("", "v1", "pods");
  if (node_kind == nullptr || pod_kind == nullptr) {
    return SendError(req, w, registry::Internal("nodes and pods are not served"));
  }
  // The objects the metrics are about (their labels are the metrics' labels).
  std::vector<std::shared_ptr<const Json>> objects;
  if (!r.name.empty()) {
    auto o = registry_.Get(pods ? *pod_kind : *node_kind, r.ns, r.name);
    if (!o.ok()) {
      if (absl::IsNotFound(o.status())) {
        return SendError(req, w, NotFoundMetrics(pods, pods ? r.ns + "/" + r.name : r.name));
      }
      return SendError(req, w, o.status());
    }
    objects.push_back((*o)->Shared());
  } else {
    auto l = registry_.List(pods ? *pod_kind : *node_kind, r.ns, lo);
    if (!l.ok()) return SendError(req, w, l.status());
    for (const auto& o : l->items) objects.push_back(o->Shared());
  }
  // Usage per node, asked once per node this request needs.
  std::map<std::string, std::optional<NodeUsageSummary>> by_node;
  auto node_usage = [&](const std::string& name,
                        const Json* node_obj) -> const NodeUsageSummary* {
    auto it = by_node.find(name);
    if (it != by_node.end()) return it->second ? &*it->second : nullptr;
    std::shared_ptr<const Json> fetched;
    if (node_obj == nullptr) {
      auto o = registry_.Get(*node_kind, "", name);
      if (o.ok()) {
        fetched = (*o)->Shared();
        node_obj = fetched.get();
      }
    }
    std::optional<NodeUsageSummary> got;
    if (node_obj != nullptr) {
      auto u = opts_.resource_metrics->NodeUsage(*node_obj);
      if (u.ok()) {
        got = std::move(*u);
      } else {
        BATCHD_LOG_WARN("metrics.k8s.io: node {} reports no usage: {}", name, u.status().ToString());
      }
    }
    auto& slot = by_node[name];
    slot = std::move(got);
    return slot ? &*slot : nullptr;
  };
  Json items = Json::array();
  for (const auto& obj : objects) {
    const Json& meta = api::MemberObject(*obj, "metadata");
    if (!pods) {
      const std::string name = api::CopyStringMember(meta, "name");
      const NodeUsageSummary* u = node_usage(name, obj.get());
      // No window: the node has no rate yet (one sample so far).
      if (u == nullptr || u->usage.window <= absl::ZeroDuration()) continue;
      Json m = {{"metadata", MetricsMeta(*obj, now, false)},
                {"timestamp", api::meta::FormatRfc3339(u->usage.time)},
                {"window", GoDuration(u->usage.window)},
                {"usage", UsageQuantities(u->usage)}};
      items.push_back(std::move(m));
      continue;
    }
    const std::string node = api::CopyStringMember(api::MemberObject(*obj, "spec"), "nodeName");
    if (node.empty() || api::StringMember(api::MemberObject(*obj, "status"), "phase") != "Running") {
      continue;
    }
    const NodeUsageSummary* u = node_usage(node, nullptr);
    if (u == nullptr) continue;
    const std::string uid(api::StringMember(meta, "uid"));
    const std::string_view ns = api::StringMember(meta, "namespace");
    const std::string_view name = api::StringMember(meta, "name");
    for (const PodUsageSummary& p : u->pods) {
      if (p.uid.empty() ? (p.ns != ns || p.name != name) : p.uid != uid) continue;
      if (p.containers.empty()) break;
      Json containers = Json::array();
      for (const ContainerUsageSummary& c : p.containers) {
        containers.push_back({{"name", c.name}, {"usage", UsageQuantities(c.usage)}});
      }
      items.push_back({{"metadata", MetricsMeta(*obj, now, true)},
                       {"timestamp", api::meta::FormatRfc3339(p.containers[0].usage.time)},
                       {"window", GoDuration(p.containers[0].usage.window)},
                       {"containers", std::move(containers)}});
      break;
    }
  }
  const char* kind = pods ? "PodMetrics" : "NodeMetrics";
  if (!r.name.empty()) {
    if (items.empty()) {
      return SendError(req, w, NotFoundMetrics(pods, pods ? r.ns + "/" + r.name : r.name));
    }
    Json one = std::move(items[0]);
    one["kind"] = kind;
    one["apiVersion"] = absl::StrCat(kGroup, "/", kVersion);
    w.Send(200, {{"Content-Type", "application/json"}}, one.dump());
    return;
  }
  for (Json& i : items) {
    i["kind"] = kind;
    i["apiVersion"] = absl::StrCat(kGroup, "/", kVersion);
  }
  Json list = {{"kind", absl::StrCat(kind, "List")},
               {"apiVersion", absl::StrCat(kGroup, "/", kVersion)},
               {"metadata", Json::object()},
               {"items", std::move(items)}};
  w.Send(200, {{"Content-Type", "application/json"}}, list.dump());
}

}  // namespace batchd::apiserver
