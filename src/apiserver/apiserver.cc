#include "apiserver/apiserver.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "api/codec/codec.h"
#include "api/json_access.h"
#include "apiserver/internal/discovery.h"
#include "apiserver/internal/negotiate.h"
#include "apiserver/internal/route.h"
#include "apiserver/internal/table.h"
#include "apiserver/status_mapping.h"
#include "common/logging.h"
#include "registry/errors.h"
#include "registry/server_side_apply.h"

namespace batchd::apiserver {

using api::Json;
using internal::kJsonType;
using internal::Output;

struct ApiServer::Discovery {
  Discovery(const api::Scheme& s, bool visibility) : docs(s, visibility) {}
  internal::DiscoveryDocs docs;
};

namespace {

std::string ResourceLabel(const ApiServer* /*unused*/, const api::KindDef* k,
                          const std::string& sub) {
  if (!k) return "";
  return sub.empty() ? k->plural : k->plural + "/" + sub;
}

// Splits a resource path into its kind, namespace, name and subresource.
// Returns NotFound for paths that name no served resource.
absl::Status ParseRoute(const api::Scheme& scheme, const std::string& path, ApiServer* self,
                        const api::KindDef** kind, std::string* ns, std::string* name,
                        std::string* sub) {
  std::vector<std::string> segs = absl::StrSplit(path, '/', absl::SkipEmpty());
  std::string group, version;
  size_t i = 0;
  auto not_found = [] {
    return registry::ApiError(absl::StatusCode::kNotFound, "NotFound",
                              "the server could not find the requested resource",
                              {{"causes", {{{"reason", "UnexpectedServerResponse"},
                                            {"message", "404 page not found"}}}}});
  };
  if (segs.size() >= 3 && segs[0] == "api") {
    version = segs[1];
    i = 2;
  } else if (segs.size() >= 4 && segs[0] == "apis") {
    group = segs[1];
    version = segs[2];
    i = 3;
  } else {
    return not_found();
  }
  std::vector<std::string> rest(segs.begin() + i, segs.end());
  if (rest.size() >= 3 && rest[0] == "namespaces" && rest[2] != "status" &&
      rest[2] != "finalize") {
    *ns = rest[1];
    rest.erase(rest.begin(), rest.begin() + 2);
  }
  if (rest.empty() || rest.size() > 3) return not_found();
  *kind = scheme.ByResource(group, version, rest[0]);
  if (!*kind) return not_found();
  if (!(*kind)->namespaced && !ns->empty()) return not_found();
  if (rest.size() >= 2) *name = rest[1];
  if (rest.size() == 3) {
    *sub = rest[2];
    const auto& subs = (*kind)->subresources;
    if (std::find(subs.begin(), subs.end(), *sub) == subs.end()) return not_found();
  }
  return absl::OkStatus();
}

HeaderList WarningHeaders(const std::vector<std::string>& warnings) {
  HeaderList h;
  for (const auto& w : warnings) {
    std::string esc;
    for (char c : w) {
      if (c == '"' || c == '\\') esc.push_back('\\');
      esc.push_back(c);
    }
    h.emplace_back("Warning", absl::StrCat("299 - \"", esc, "\""));
  }
  return h;
}

internal::TableOptions TableOpts(const HttpRequest& req) {
  internal::TableOptions o;
  std::string inc = req.Param("includeObject");
  if (inc == "None") o.include = internal::IncludeObject::kNone;
  if (inc == "Object") o.include = internal::IncludeObject::kObject;
  return o;
}

}  // namespace

ApiServer::ApiServer(registry::Registry& registry, Clock& clock, ApiServerOptions opts)
    : registry_(registry), clock_(clock), opts_(std::move(opts)),
      discovery_(std::make_unique<Discovery>(registry.scheme(),
                                             static_cast<bool>(opts_.pending_workloads))) {
  if (opts_.resource_metrics) discovery_->docs.AddResourceMetrics();
}

ApiServer::~ApiServer() = default;

void ApiServer::Handle(const HttpRequest& req, ResponseWriter& w) {
  absl::Time start = clock_.Now();
  std::string verb = req.method, resource;
  int code = 0;
  struct CodeCapture : ResponseWriter {
    ResponseWriter& inner;
    int* code;
    CodeCapture(ResponseWriter& i, int* c) : inner(i), code(c) {}
    void Send(int c, const HeaderList& h, std::string b) override {
      *code = c;
      inner.Send(c, h, std::move(b));
    }
    bool StartStream(int c, const HeaderList& h) override {
      *code = c;
      return inner.StartStream(c, h);
    }
    bool WriteChunk(std::string_view d) override { return inner.WriteChunk(d); }
    void EndStream() override { inner.EndStream(); }
    bool ClientGone() override { return inner.ClientGone(); }
  } capture(w, &code);
  // Query parameters and paths are echoed in messages and objects: replace
  // invalid UTF-8 there as in bodies (a copy only when some is found).
  std::optional<HttpRequest> fixed;
  bool bad = !internal::IsValidUtf8(req.path);
  for (const auto& [k, v] : req.query) bad = bad || !internal::IsValidUtf8(k) || !internal::IsValidUtf8(v);
  if (bad) {
    fixed = req;
    fixed->path = internal::ReplaceInvalidUtf8(req.path);
    fixed->query.clear();
    for (const auto& [k, v] : req.query) {
      fixed->query.emplace(internal::ReplaceInvalidUtf8(k), internal::ReplaceInvalidUtf8(v));
    }
  }
  Scope scope;
  try {
    Serve(fixed ? *fixed : req, capture, scope, &verb, &resource);
  } catch (const std::exception& e) {
    // Nothing a request sends may crash the server: report it instead.
    BATCHD_LOG_ERROR("request {} {} failed: {}", req.method, req.path, e.what());
    if (code == 0) SendError(req, capture, registry::Internal(e.what()));
  }
  // Refusals (401/403) are counted for non-resource paths too.
  if (!resource.empty() || code == 401 || code == 403) {
    metrics_.Observe(verb, resource, code, absl::ToDoubleSeconds(clock_.Now() - start));
  }
  if (opts_.audit) Audit(req, scope, code, start);
  // A client's next request sees its RBAC write (the authorizer's watch
  // would see it a moment later).
  if (opts_.authorizer && code >= 200 && code < 300 && scope.has_attrs &&
      scope.attrs.api_group == auth::kRbacGroup && scope.attrs.verb != "get" &&
      scope.attrs.verb != "list" && scope.attrs.verb != "watch") {
    opts_.authorizer->Invalidate();
  }
}

void ApiServer::Serve(const HttpRequest& req, ResponseWriter& w, Scope& scope, std::string* verb,
                      std::string* resource) {
  if (opts_.static_content && opts_.static_content(req, w)) return;
  if (opts_.pending_workloads && ServeVisibility(req, w, scope, verb, resource)) return;
  if (IsResourceMetricsPath(req.path)) return ServeResourceMetrics(req, w, scope, resource);
  Route r;
  absl::Status st = ParseRoute(registry_.scheme(), req.path, this, &r.kind, &r.ns, &r.name,
                               &r.subresource);
  if (st.ok()) *resource = ResourceLabel(this, r.kind, r.subresource);
  if (!Admit(req, st.ok() ? &r : nullptr, w, scope)) return;
  if (ServeNonResource(req, w)) return;
  if (!st.ok()) {
    SendError(req, w, st);
    return;
  }
  r.user = &scope.user;
  ServeResource(req, r, w, verb);
}

bool ApiServer::ServeNonResource(const HttpRequest& req, ResponseWriter& w) {
  const std::string& p = req.path;
  if (req.method != "GET" && req.method != "HEAD") return false;
  if (p == "/readyz" || (absl::StartsWith(p, "/readyz/") && p != "/readyz/ping")) {
    ServeReadyz(req, w);
    return true;
  }
  if (p == "/healthz" || p == "/livez" || p == "/healthz/ping" || p == "/livez/ping" ||
      p == "/readyz/ping") {
    w.Send(200, {{"Content-Type", "text/plain; charset=utf-8"}}, "ok");
    return true;
  }
  if (p == "/version") {
    Json v = {{"major", "1"},          {"minor", "32"},
              {"gitVersion", "v1.32.0-batchd"}, {"gitCommit", "batchd"},
              {"gitTreeState", "clean"}, {"buildDate", "2026-11-29T00:00:00Z"},
              {"goVersion", "none (batchd is C++)"}, {"compiler", "gcc"},
              {"platform", "linux/amd64"}};
    w.Send(200, {{"Content-Type", kJsonType}}, v.dump());
    return true;
  }
  if (p == "/metrics") {
    std::string out;
    metrics_.AppendPrometheus(&out);
    absl::StrAppend(&out,
                    "# HELP apiserver_registered_watchers Number of currently open watches.\n"
                    "# TYPE apiserver_registered_watchers gauge\n",
                    "apiserver_registered_watchers ", registry_.cache().WatcherCount(), "\n");
    if (opts_.extra_metrics) opts_.extra_metrics(&out);
    w.Send(200, {{"Content-Type", "text/plain; version=0.0.4; charset=utf-8"}}, std::move(out));
    return true;
  }
  if (p == "/openapi/v2" || p == "/openapi/v2/") {
    ServeOpenApiV2(req, w);
    return true;
  }
  if (const std::string* doc = discovery_->docs.Find(p)) {
    w.Send(200, {{"Content-Type", kJsonType}}, *doc);
    return true;
  }
  return false;
}

// /openapi/v2 in the first form the Accept header names that the server has:
// gnostic protobuf (what kubectl asks for) or JSON; 406 with a Status when
// it names neither.
void ApiServer::ServeOpenApiV2(const HttpRequest& req, ResponseWriter& w) {
  static constexpr char kProto[] = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf";
  static constexpr char kProtoAlt[] = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf";
  const std::string accept = req.Header("accept");
  if (accept.empty()) {
    w.Send(200, {{"Content-Type", kJsonType}}, discovery_->docs.OpenApiV2Json());
    return;
  }
  for (absl::string_view item : absl::StrSplit(accept, ',')) {
    absl::string_view type = absl::StripAsciiWhitespace(item.substr(0, item.find(';')));
    if (absl::EqualsIgnoreCase(type, kProto) || absl::EqualsIgnoreCase(type, kProtoAlt)) {
      // As kube-apiserver answers: "@" is no media-type character, and Go's
      // mime parser (kubectl's) refuses it.
      w.Send(200, {{"Content-Type", kProtoAlt}}, discovery_->docs.OpenApiV2Protobuf());
      return;
    }
    if (absl::EqualsIgnoreCase(type, kJsonType) || type == "application/*" || type == "*/*") {
      w.Send(200, {{"Content-Type", kJsonType}}, discovery_->docs.OpenApiV2Json());
      return;
    }
  }
  SendError(req, w,
            registry::ApiError(absl::StatusCode::kInvalidArgument, "NotAcceptable",
                               absl::StrCat("only the following media types are accepted: ",
                                            kJsonType, ", ", kProto)));
}

// kube-apiserver's /readyz: 200 "ok" when every check passes, else 500;
// `?verbose` lists each check ("[+]etcd ok", "[-]informer-sync failed:
// reason withheld") and a verdict line; /readyz/NAME runs one check.
void ApiServer::ServeReadyz(const HttpRequest& req, ResponseWriter& w) {
  std::vector<std::pair<std::string, absl::Status>> checks = {{"ping", absl::OkStatus()}};
  if (opts_.ready_checks) {
    for (auto& c : opts_.ready_checks()) checks.push_back(std::move(c));
  }
  if (req.path != "/readyz") {
    const std::string name = req.path.substr(std::string("/readyz/").size());
    auto it = std::find_if(checks.begin(), checks.end(),
                           [&](const auto& c) { return c.first == name; });
    if (it == checks.end()) {
      w.Send(404, {{"Content-Type", "text/plain; charset=utf-8"}}, "404 page not found\n");
      return;
    }
    checks = {*it};
  }
  bool ok = true;
  std::string verbose;
  for (const auto& [name, st] : checks) {
    ok = ok && st.ok();
    absl::StrAppend(&verbose, st.ok() ? "[+]" : "[-]", name,
                    st.ok() ? " ok\n" : " failed: reason withheld\n");
    if (!st.ok()) BATCHD_LOG_WARN("readyz: {} failed: {}", name, st.ToString());
  }
  std::string body;
  if (req.HasParam("verbose") || !ok) {
    body = absl::StrCat(verbose, ok ? "readyz check passed\n" : "readyz check failed\n");
  } else {
    body = "ok";
  }
  w.Send(ok ? 200 : 500, {{"Content-Type", "text/plain; charset=utf-8"}}, body);
}

void ApiServer::SendError(const HttpRequest& req, ResponseWriter& w, const absl::Status& s) {
  Json body = StatusBodyFor(s);
  HeaderList h = {{"Content-Type", kJsonType}};
  // A Status that says when to retry says it in Retry-After too, as
  // kube-apiserver's error writer does.
  const Json& details = api::MemberObject(body, "details");
  if (const auto it = details.find("retryAfterSeconds");
      it != details.end() && it->is_number_integer() && it->get<int64_t>() > 0) {
    h.emplace_back("Retry-After", std::to_string(it->get<int64_t>()));
  }
  // Replace, not throw, on invalid UTF-8 that a message may echo.
  w.Send(HttpCodeFor(s), h, body.dump(-1, ' ', false, Json::error_handler_t::replace));
}

void ApiServer::SendObject(const HttpRequest& req, ResponseWriter& w, int code, const Route& r,
                           const Json& obj, const std::vector<std::string>& warnings) {
  HeaderList h = WarningHeaders(warnings);
  Output out = internal::NegotiateOutput(req);
  if (out == Output::kTable && obj.value("kind", "") == r.kind->kind) {
    Json t = internal::BuildTable(*r.kind, {obj}, clock_.Now(), TableOpts(req));
    t["metadata"]["resourceVersion"] =
        api::MemberObject(obj, "metadata").value("resourceVersion", "");
    h.emplace_back("Content-Type", kJsonType);
    w.Send(code, h, t.dump());
    return;
  }
  if (out == Output::kYaml) {
    h.emplace_back("Content-Type", "application/yaml");
    w.Send(code, h, api::ToYaml(obj));
    return;
  }
  h.emplace_back("Content-Type", kJsonType);
  w.Send(code, h, obj.dump());
}

// The verb a request on a resource asks for, with the label the request
// metrics give it; MethodNotAllowed or NotFound when the route serves none.
absl::StatusOr<ApiServer::Verb> ApiServer::ResolveVerb(const HttpRequest& req, const Route& r,
                                                      std::string* label) {
  const api::KindDef& k = *r.kind;
  const std::string& m = req.method;
  if (r.subresource == "log" && m == "GET") {
    *label = "GET";
    return Verb::kLog;
  }
  if (r.subresource == "binding" && m == "POST") {
    *label = "CREATE";
    return Verb::kBind;
  }
  if (!r.subresource.empty() && r.subresource != "status") {
    *label = "GET";
    return registry::MethodNotAllowed(
        absl::StrCat("the subresource ", k.plural, "/", r.subresource, " is not served yet"));
  }
  if (k.namespaced && r.ns.empty() && m != "GET") return registry::NotFound(k, r.name);
  if (m == "GET" && r.name.empty()) {
    const std::string watch = req.Param("watch");
    const bool watching = watch == "true" || watch == "1";
    *label = watching ? "WATCH" : "LIST";
    return watching ? Verb::kWatch : Verb::kList;
  }
  if (m == "GET") return Verb::kGet;
  if (m == "POST" && r.name.empty()) return Verb::kCreate;
  if (m == "PUT" && !r.name.empty()) return Verb::kUpdate;
  if (m == "PATCH" && !r.name.empty()) return Verb::kPatch;
  if (m == "DELETE" && r.name.empty()) {
    *label = "DELETECOLLECTION";
    return Verb::kDeleteCollection;
  }
  if (m == "DELETE") return Verb::kDelete;
  return registry::MethodNotAllowed(
      absl::StrCat(m, " is not supported on ", k.plural, r.name.empty() ? "" : "/{name}"));
}

void ApiServer::ServeResource(const HttpRequest& req, const Route& r, ResponseWriter& w,
                              std::string* verb) {
  if (ServesReview(*r.kind, r.subresource)) {
    *verb = "CREATE";
    const bool token = r.subresource == "token";
    if (req.method != "POST" || r.name.empty() == token) {
      return SendError(req, w, registry::MethodNotAllowed(absl::StrCat(
                                   req.method, " is not supported on ", r.kind->plural)));
    }
    return token ? ServeTokenRequest(req, r, w) : ServeReview(req, r, w);
  }
  absl::StatusOr<Verb> v = ResolveVerb(req, r, verb);
  if (!v.ok()) return SendError(req, w, v.status());
  switch (*v) {
    case Verb::kGet: return ServeGet(req, r, w);
    case Verb::kList: return ServeList(req, r, w);
    case Verb::kWatch: return ServeWatch(req, r, w);
    case Verb::kCreate: return ServeCreate(req, r, w);
    case Verb::kUpdate: return ServeUpdate(req, r, w);
    case Verb::kPatch: return ServePatch(req, r, w);
    case Verb::kDelete: return ServeDelete(req, r, w);
    case Verb::kDeleteCollection: return ServeDeleteCollection(req, r, w);
    case Verb::kBind: return ServeBind(req, r, w);
    case Verb::kLog: return ServePodLog(req, r, w);
  }
}

void ApiServer::ServeGet(const HttpRequest& req, const Route& r, ResponseWriter& w) {
  // Not older than `resourceVersion`: this server's cache may wait for it,
  // never past the request's own timeout.
  auto o = registry_.Get(*r.kind, r.ns, r.name, req.Param("resourceVersion"),
                         std::min(registry::kCacheFreshWait, req.timeout));
  if (!o.ok()) return SendError(req, w, o.status());
  SendObject(req, w, 200, r, (*o)->Decode(), {});
}

void ApiServer::ServeCreate(const HttpRequest& req, const Route& r, ResponseWriter& w) {
  auto opts = internal::ParseWriteOptions(req);
  if (!opts.ok()) return SendError(req, w, opts.status());
  auto body = internal::DecodeBody(req, &opts->duplicate_fields);
  if (!body.ok()) return SendError(req, w, body.status());
  std::vector<std::string> warnings;
  opts->warnings = &warnings;
  if (auto st = CheckEscalation(r, *body); !st.ok()) return SendError(req, w, st);
  KeepNodeEndpoint(r, api::CopyStringMember(api::MemberObject(*body, "metadata"), "name"), *opts);
  auto created = registry_.Create(*r.kind, r.ns, std::move(*body), *opts);
  if (!created.ok()) return SendError(req, w, created.status());
  SendObject(req, w, 201, r, *created, warnings);
}

void ApiServer::ServeUpdate(const HttpRequest& req, const Route& r, ResponseWriter& w) {
  auto opts = internal::ParseWriteOptions(req);
  if (!opts.ok()) return SendError(req, w, opts.status());
  std::vector<std::string> warnings;
  opts->warnings = &warnings;
  auto body = internal::DecodeBody(req, &opts->duplicate_fields);
  if (!body.ok()) return SendError(req, w, body.status());
  if (auto st = CheckEscalation(r, *body); !st.ok()) return SendError(req, w, st);
  KeepNodeEndpoint(r, r.name, *opts);
  auto res = registry_.Update(*r.kind, r.ns, r.name, std::move(*body),
                              /*status=*/r.subresource == "status", *opts);
  if (!res.ok()) return SendError(req, w, res.status());
  SendObject(req, w, 200, r, *res, warnings);
}

void ApiServer::ServePatch(const HttpRequest& req, const Route& r, ResponseWriter& w) {
  auto opts = internal::ParseWriteOptions(req);
  if (!opts.ok()) return SendError(req, w, opts.status());
  std::vector<std::string> warnings;
  opts->warnings = &warnings;
  auto type = registry::PatchTypeFromContentType(req.Header("content-type"));
  if (!type) {
    return SendError(req, w,
                     registry::UnsupportedMediaType(absl::StrCat(
                         "the body of the request was in an unknown format - accepted media "
                         "types include: application/json-patch+json, "
                         "application/merge-patch+json, application/apply-patch+yaml, "
                         "application/strategic-merge-patch+json")));
  }
  KeepNodeEndpoint(r, r.name, *opts);
  std::vector<std::string>* dups =
      *type == registry::PatchType::kJson ? nullptr : &opts->duplicate_fields;
  const std::string fixed =
      internal::IsValidUtf8(req.body) ? std::string() : internal::ReplaceInvalidUtf8(req.body);
  const std::string& text = fixed.empty() ? req.body : fixed;
  absl::StatusOr<Json> patch = *type == registry::PatchType::kApply ? api::ParseYaml(text, dups)
                                                                    : api::ParseJson(text, dups);
  if (!patch.ok()) {
    return SendError(req, w, registry::BadRequest(std::string(patch.status().message())));
  }
  internal::ReplaceInvalidUtf8(*patch);
  const bool apply = *type == registry::PatchType::kApply;
  if (apply && req.Param("fieldManager").empty()) {
    return SendError(req, w,
                     registry::BadRequest(
                         "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required "
                         "value: is required for apply patch"));
  }
  const std::string force_param = req.Param("force");
  if (!force_param.empty() && force_param != "true" && force_param != "false") {
    return SendError(req, w, registry::BadRequest(absl::StrCat(
                                 "force: Invalid value: \"", force_param,
                                 "\": must be true or false")));
  }
  const bool force = force_param == "true";
  if (force && !apply) {
    return SendError(req, w,
                     registry::BadRequest("PatchOptions.meta.k8s.io \"\" is invalid: force: "
                                          "Forbidden: may not be specified for non-apply patch"));
  }
  const bool status = r.subresource == "status";
  auto run = [&](const registry::WriteOptions& o) {
    return apply ? registry::ServerSideApply(registry_, clock_, *r.kind, r.ns, r.name, *patch,
                                             status, force, o)
                 : registry_.Patch(*r.kind, r.ns, r.name, *type, *patch, status, o);
  };
  if (NeedsEscalationCheck(r)) {
    // The escalation check judges the patched object: preview it first.
    registry::WriteOptions preview = *opts;
    preview.dry_run = true;
    std::vector<std::string> ignored;
    preview.warnings = &ignored;
    auto res = run(preview);
    if (!res.ok()) return SendError(req, w, res.status());
    if (auto st = CheckEscalation(r, *res); !st.ok()) return SendError(req, w, st);
  }
  auto res = run(*opts);
  if (!res.ok()) return SendError(req, w, res.status());
  SendObject(req, w, 200, r, *res, warnings);
}

void ApiServer::ServeDelete(const HttpRequest& req, const Route& r, ResponseWriter& w) {
  const api::KindDef& k = *r.kind;
  auto opts = internal::ParseDeleteOptions(req);
  if (!opts.ok()) return SendError(req, w, opts.status());
  auto res = registry_.Delete(k, r.ns, r.name, *opts);
  if (!res.ok()) return SendError(req, w, res.status());
  // Pods, and objects that finalizers or a grace period keep, are returned
  // as they now are; others with a Success Status.
  if ((k.group.empty() && k.plural == "pods") || !res->deleted) {
    return SendObject(req, w, 200, r, res->object, {});
  }
  Json details = {{"name", r.name}, {"kind", k.plural},
                  {"uid", res->object["metadata"].value("uid", "")}};
  if (!k.group.empty()) details["group"] = k.group;
  w.Send(200, {{"Content-Type", kJsonType}}, SuccessStatus(std::move(details)).dump());
}

void ApiServer::ServeDeleteCollection(const HttpRequest& req, const Route& r, ResponseWriter& w) {
  const api::KindDef& k = *r.kind;
  auto opts = internal::ParseDeleteOptions(req);
  if (!opts.ok()) return SendError(req, w, opts.status());
  auto lopts = internal::ParseListOptions(req);
  if (!lopts.ok()) return SendError(req, w, lopts.status());
  auto res = registry_.DeleteCollection(k, r.ns, *lopts, *opts);
  if (!res.ok()) return SendError(req, w, res.status());
  Json list = {{"kind", k.kind + "List"}, {"apiVersion", k.ApiVersion()},
               {"metadata", Json::object()}, {"items", *res}};
  w.Send(200, {{"Content-Type", kJsonType}}, list.dump());
}

void ApiServer::ServeBind(const HttpRequest& req, const Route& r, ResponseWriter& w) {
  auto opts = internal::ParseWriteOptions(req);
  if (!opts.ok()) return SendError(req, w, opts.status());
  auto body = internal::DecodeBody(req, nullptr);
  if (!body.ok()) return SendError(req, w, body.status());
  auto res = registry_.Bind(r.ns, r.name, *body, *opts);
  if (!res.ok()) return SendError(req, w, res.status());
  w.Send(201, {{"Content-Type", kJsonType}}, SuccessStatus(Json::object()).dump());
}

void ApiServer::ServePodLog(const HttpRequest& req, const Route& r, ResponseWriter& w) {
  auto pod = registry_.Get(*r.kind, r.ns, r.name);
  if (!pod.ok()) return SendError(req, w, pod.status());
  Json p = (*pod)->Decode();
  PodLogSource::Options o;
  o.container = req.Param("container");
  o.follow = req.Param("follow") == "true";
  o.previous = req.Param("previous") == "true";
  o.timestamps = req.Param("timestamps") == "true";
  auto int_param = [&](const char* name, std::optional<int64_t>* out) {
    std::string v = req.Param(name);
    int64_t n = 0;
    if (!v.empty() && absl::SimpleAtoi(v, &n)) *out = n;
  };
  int_param("tailLines", &o.tail_lines);
  int_param("sinceSeconds", &o.since_seconds);
  int_param("limitBytes", &o.limit_bytes);
  // Kubernetes' container choice: the one named, or the only one.
  std::vector<std::string> names;
  for (const char* field : {"containers", "initContainers"}) {
    const Json& spec = p["spec"];
    if (!spec.contains(field)) continue;
    for (const auto& c : spec[field]) names.push_back(c.value("name", ""));
  }
  size_t app = p["spec"].contains("containers") ? p["spec"]["containers"].size() : 0;
  if (o.container.empty()) {
    if (app != 1) {
      std::string list;
      for (size_t i = 0; i < app; ++i) absl::StrAppend(&list, i ? " " : "", names[i]);
      return SendError(req, w, registry::BadRequest(absl::StrCat(
                                   "a container name must be specified for pod ", r.name,
                                   ", choose one of: [", list, "]")));
    }
    o.container = names[0];
  } else if (std::find(names.begin(), names.end(), o.container) == names.end()) {
    return SendError(req, w, registry::BadRequest(absl::StrCat(
                                 "container ", o.container, " is not valid for pod ", r.name)));
  }
  if (!opts_.logs) {
    return SendError(req, w, registry::BadRequest("pod logs are not served by this server"));
  }
  bool started = false;
  auto write = [&](std::string_view data) {
    if (data.empty()) return !w.ClientGone();  // a liveness check (PodLogSource)
    if (!started) {
      started = true;
      if (!w.StartStream(200, {{"Content-Type", "text/plain"}})) return false;
    }
    return w.WriteChunk(data) && !w.ClientGone();
  };
  absl::Status st = opts_.logs->StreamLog(p, o, write);
  if (!st.ok() && !started) return SendError(req, w, st);
  if (!started) {
    w.Send(200, {{"Content-Type", "text/plain"}}, "");
    return;
  }
  w.EndStream();
}

void ApiServer::ServeList(const HttpRequest& req, const Route& r, ResponseWriter& w) {
  const api::KindDef& k = *r.kind;
  auto opts = internal::ParseListOptions(req);
  if (!opts.ok()) return SendError(req, w, opts.status());
  // Waiting for this server's cache (NotOlderThan): never past the point
  // where the server answered 504 for the request anyway.
  opts->fresh_wait = std::min(opts->fresh_wait, req.timeout);
  auto res = registry_.List(k, r.ns, *opts);
  if (!res.ok()) return SendError(req, w, res.status());
  Output out = internal::NegotiateOutput(req);
  if (out == Output::kTable) {
    std::vector<Json> objs;
    objs.reserve(res->items.size());
    for (const auto& o : res->items) objs.push_back(o->Decode());
    Json t = internal::BuildTable(k, objs, clock_.Now(), TableOpts(req));
    t["metadata"]["resourceVersion"] = std::to_string(res->revision);
    if (!res->continue_token.empty()) t["metadata"]["continue"] = res->continue_token;
    if (res->remaining) t["metadata"]["remainingItemCount"] = *res->remaining;
    w.Send(200, {{"Content-Type", kJsonType}}, t.dump());
    return;
  }
  // Splice stored bytes straight into the list: no decode per item.
  Json meta = {{"resourceVersion", std::to_string(res->revision)}};
  if (!res->continue_token.empty()) meta["continue"] = res->continue_token;
  if (res->remaining) meta["remainingItemCount"] = *res->remaining;
  std::string body = absl::StrCat("{\"kind\":\"", k.kind, "List\",\"apiVersion\":\"",
                                  k.ApiVersion(), "\",\"metadata\":", meta.dump(),
                                  ",\"items\":[");
  size_t total = 0;
  for (const auto& o : res->items) total += o->json.size() + 40;
  body.reserve(body.size() + total + 2);
  bool first = true;
  for (const auto& o : res->items) {
    if (!first) body.push_back(',');
    first = false;
    body += o->Serialized();
  }
  body += "]}";
  if (out == Output::kYaml) {
    Json j = Json::parse(body, nullptr, false);
    w.Send(200, {{"Content-Type", "application/yaml"}}, api::ToYaml(j));
    return;
  }
  w.Send(200, {{"Content-Type", kJsonType}}, std::move(body));
}

void ApiServer::ServeWatch(const HttpRequest& req, const Route& r, ResponseWriter& w) {
  const api::KindDef& k = *r.kind;
  auto opts = internal::ParseListOptions(req);
  if (!opts.ok()) return SendError(req, w, opts.status());
  absl::Duration timeout = opts_.max_watch;
  std::string ts = req.Param("timeoutSeconds");
  int64_t secs = 0;
  if (!ts.empty() && absl::SimpleAtoi(ts, &secs) && secs >= 0) {
    timeout = std::min(timeout, absl::Seconds(secs));
  }
  const bool bookmarks = req.Param("allowWatchBookmarks") == "true";
  const bool table = internal::NegotiateOutput(req) == Output::kTable;
  auto watcher = registry_.Watch(k, r.ns, *opts);
  HeaderList headers = {{"Content-Type", kJsonType}, {"Cache-Control", "no-cache, private"}};
  if (!watcher.ok()) {
    if (registry::GetPayload(watcher.status()).reason != "Expired") {
      return SendError(req, w, watcher.status());
    }
    // Too old: Kubernetes reports it as an ERROR event inside a 200 stream.
    if (!w.StartStream(200, headers)) return;
    Json ev = {{"type", "ERROR"}, {"object", StatusBodyFor(watcher.status())}};
    w.WriteChunk(ev.dump() + "\n");
    w.EndStream();
    return;
  }
  if (!w.StartStream(200, headers)) return;
  internal::TableOptions topts = TableOpts(req);
  // The server's clock bounds the stream (a virtual clock ends it in virtual
  // time); waits for events are real, at most a second each.
  absl::Time deadline = clock_.Now() + timeout;
  absl::Time next_bookmark = clock_.Now() + opts_.bookmark_interval;
  bool first_table = true;
  for (;;) {
    absl::Time now = clock_.Now();
    if (now >= deadline) break;
    registry::Watcher::Event ev;
    absl::Duration wait = std::min(deadline - now, absl::Seconds(1));
    if (!(*watcher)->Next(&ev, wait)) {
      if ((*watcher)->done() || w.ClientGone()) break;
      if (bookmarks && clock_.Now() >= next_bookmark) {
        next_bookmark = clock_.Now() + opts_.bookmark_interval;
        Json bm = {{"type", "BOOKMARK"},
                   {"object", {{"kind", k.kind}, {"apiVersion", k.ApiVersion()},
                               {"metadata", {{"resourceVersion",
                                              std::to_string((*watcher)->Revision())}}}}}};
        if (!w.WriteChunk(bm.dump() + "\n")) break;
      }
      continue;
    }
    // Encode this event and whatever else is already queued into one chunk:
    // one write per wake-up keeps fan-out to many watchers cheap.
    std::string chunk;
    int batched = 0;
    do {
      if (ev.type == "ERROR") {
        chunk += Json({{"type", "ERROR"}, {"object", ev.error}}).dump();
      } else if (table) {
        topts.column_definitions = first_table;
        first_table = false;
        Json t = internal::BuildTable(k, {ev.object->Decode()}, clock_.Now(), topts);
        t["metadata"]["resourceVersion"] = std::to_string(ev.object->revision);
        chunk += Json({{"type", ev.type}, {"object", std::move(t)}}).dump();
      } else {
        absl::StrAppend(&chunk, "{\"type\":\"", ev.type, "\",\"object\":",
                        ev.object->Serialized(), "}");
      }
      chunk.push_back('\n');
    } while (++batched < 256 && chunk.size() < (1 << 20) &&
             (*watcher)->Next(&ev, absl::ZeroDuration()));
    if (!w.WriteChunk(chunk)) break;
  }
  w.EndStream();
}

}  // namespace batchd::apiserver
