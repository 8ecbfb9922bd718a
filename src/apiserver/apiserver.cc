#include "apiserver/apiserver.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "api/codec/codec.h"
#include "api/json_access.h"
#include "apiserver/internal/discovery.h"
#include "apiserver/internal/negotiate.h"
#include "apiserver/internal/table.h"
#include "apiserver/status_mapping.h"
#include "common/logging.h"
#include "registry/errors.h"

namespace batchd::apiserver {

using api::Json;
using internal::Output;

struct ApiServer::Discovery {
  explicit Discovery(const api::Scheme& s) : docs(s) {}
  internal::DiscoveryDocs docs;
};

struct ApiServer::Route {
  const api::KindDef* kind = nullptr;
  std::string ns;
  std::string name;
  std::string subresource;
};

namespace {

constexpr char kJson[] = "application/json";

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
      discovery_(std::make_unique<Discovery>(registry.scheme())) {}

ApiServer::~ApiServer() = default;

void ApiServer::Handle(const HttpRequest& req, ResponseWriter& w) {
  absl::Time start = absl::Now();
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
  try {
    Serve(req, capture, &verb, &resource);
  } catch (const std::exception& e) {
    // Nothing a request sends may crash the server: report it instead.
    BATCHD_LOG_ERROR("request {} {} failed: {}", req.method, req.path, e.what());
    if (code == 0) SendError(req, capture, registry::Internal(e.what()));
  }
  if (!resource.empty()) {
    metrics_.Observe(verb, resource, code, absl::ToDoubleSeconds(absl::Now() - start));
  }
}

void ApiServer::Serve(const HttpRequest& req, ResponseWriter& w, std::string* verb,
                      std::string* resource) {
  if (ServeNonResource(req, w)) return;
  Route r;
  absl::Status st = ParseRoute(registry_.scheme(), req.path, this, &r.kind, &r.ns, &r.name,
                               &r.subresource);
  if (!st.ok()) {
    SendError(req, w, st);
    return;
  }
  *resource = ResourceLabel(this, r.kind, r.subresource);
  ServeResource(req, r, w, verb);
}

bool ApiServer::ServeNonResource(const HttpRequest& req, ResponseWriter& w) {
  const std::string& p = req.path;
  if (req.method != "GET" && req.method != "HEAD") return false;
  if (p == "/healthz" || p == "/livez" || p == "/readyz" || p == "/healthz/ping" ||
      p == "/livez/ping" || p == "/readyz/ping") {
    w.Send(200, {{"Content-Type", "text/plain; charset=utf-8"}}, "ok");
    return true;
  }
  if (p == "/version") {
    Json v = {{"major", "1"},          {"minor", "32"},
              {"gitVersion", "v1.32.0-batchd"}, {"gitCommit", "batchd"},
              {"gitTreeState", "clean"}, {"buildDate", "2026-11-29T00:00:00Z"},
              {"goVersion", "none (batchd is C++)"}, {"compiler", "gcc"},
              {"platform", "linux/amd64"}};
    w.Send(200, {{"Content-Type", kJson}}, v.dump());
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
  if (const std::string* doc = discovery_->docs.Find(p)) {
    w.Send(200, {{"Content-Type", kJson}}, *doc);
    return true;
  }
  return false;
}

void ApiServer::SendError(const HttpRequest& req, ResponseWriter& w, const absl::Status& s) {
  w.Send(HttpCodeFor(s), {{"Content-Type", kJson}}, StatusBodyFor(s).dump());
}

void ApiServer::SendObject(const HttpRequest& req, ResponseWriter& w, int code, const Route& r,
                           const Json& obj, const std::vector<std::string>& warnings) {
  HeaderList h = WarningHeaders(warnings);
  Output out = internal::NegotiateOutput(req);
  if (out == Output::kTable && obj.value("kind", "") == r.kind->kind) {
    Json t = internal::BuildTable(*r.kind, {obj}, clock_.Now(), TableOpts(req));
    t["metadata"]["resourceVersion"] =
        api::MemberObject(obj, "metadata").value("resourceVersion", "");
    h.emplace_back("Content-Type", kJson);
    w.Send(code, h, t.dump());
    return;
  }
  if (out == Output::kYaml) {
    h.emplace_back("Content-Type", "application/yaml");
    w.Send(code, h, api::ToYaml(obj));
    return;
  }
  h.emplace_back("Content-Type", kJson);
  w.Send(code, h, obj.dump());
}

void ApiServer::ServeResource(const HttpRequest& req, const Route& r, ResponseWriter& w,
                              std::string* verb) {
  const api::KindDef& k = *r.kind;
  const std::string& m = req.method;
  const bool status = r.subresource == "status";
  auto fail = [&](const absl::Status& s) { SendError(req, w, s); };
  if (r.subresource == "log" && m == "GET") {
    *verb = "GET";
    ServePodLog(req, r, w);
    return;
  }
  if (r.subresource == "binding" && m == "POST") {
    *verb = "CREATE";
    auto opts = internal::ParseWriteOptions(req);
    if (!opts.ok()) return fail(opts.status());
    auto body = internal::DecodeBody(req, nullptr);
    if (!body.ok()) return fail(body.status());
    auto res = registry_.Bind(r.ns, r.name, *body, *opts);
    if (!res.ok()) return fail(res.status());
    w.Send(201, {{"Content-Type", kJson}}, SuccessStatus(Json::object()).dump());
    return;
  }
  if (!r.subresource.empty() && !status) {
    *verb = "GET";
    fail(registry::MethodNotAllowed(absl::StrCat("the subresource ", k.plural, "/",
                                                 r.subresource, " is not served yet")));
    return;
  }
  if (k.namespaced && r.ns.empty() && m != "GET") {
    fail(registry::NotFound(k, r.name));
    return;
  }
  if (m == "GET" && r.name.empty()) {
    std::string watch = req.Param("watch");
    if (watch == "true" || watch == "1") {
      *verb = "WATCH";
      ServeWatch(req, r, w);
    } else {
      *verb = "LIST";
      ServeList(req, r, w);
    }
    return;
  }
  if (m == "GET") {
    auto o = registry_.Get(k, r.ns, r.name);
    if (!o.ok()) return fail(o.status());
    SendObject(req, w, 200, r, (*o)->Decode(), {});
    return;
  }
  if (m == "POST" && r.name.empty()) {
    auto opts = internal::ParseWriteOptions(req);
    if (!opts.ok()) return fail(opts.status());
    auto body = internal::DecodeBody(req, &opts->duplicate_fields);
    if (!body.ok()) return fail(body.status());
    std::vector<std::string> warnings;
    opts->warnings = &warnings;
    auto created = registry_.Create(k, r.ns, std::move(*body), *opts);
    if (!created.ok()) return fail(created.status());
    SendObject(req, w, 201, r, *created, warnings);
    return;
  }
  if ((m == "PUT" || m == "PATCH") && !r.name.empty()) {
    auto opts = internal::ParseWriteOptions(req);
    if (!opts.ok()) return fail(opts.status());
    std::vector<std::string> warnings;
    opts->warnings = &warnings;
    absl::StatusOr<Json> res;
    if (m == "PUT") {
      auto body = internal::DecodeBody(req, &opts->duplicate_fields);
      if (!body.ok()) return fail(body.status());
      res = registry_.Update(k, r.ns, r.name, std::move(*body), status, *opts);
    } else {
      auto type = registry::PatchTypeFromContentType(req.Header("content-type"));
      if (!type) {
        return fail(registry::UnsupportedMediaType(
            absl::StrCat("the body of the request was in an unknown format - accepted media "
                         "types include: application/json-patch+json, "
                         "application/merge-patch+json, application/apply-patch+yaml, "
                         "application/strategic-merge-patch+json")));
      }
      std::vector<std::string>* dups =
          *type == registry::PatchType::kJson ? nullptr : &opts->duplicate_fields;
      absl::StatusOr<Json> patch = *type == registry::PatchType::kApply
                                       ? api::ParseYaml(req.body, dups)
                                       : api::ParseJson(req.body, dups);
      if (!patch.ok()) return fail(registry::BadRequest(std::string(patch.status().message())));
      if (*type == registry::PatchType::kApply && req.Param("fieldManager").empty()) {
        return fail(registry::BadRequest(
            "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is "
            "required for apply patch"));
      }
      res = registry_.Patch(k, r.ns, r.name, *type, *patch, status, *opts);
    }
    if (!res.ok()) return fail(res.status());
    SendObject(req, w, 200, r, *res, warnings);
    return;
  }
  if (m == "DELETE") {
    auto opts = internal::ParseDeleteOptions(req);
    if (!opts.ok()) return fail(opts.status());
    if (r.name.empty()) {
      *verb = "DELETECOLLECTION";
      auto lopts = internal::ParseListOptions(req);
      if (!lopts.ok()) return fail(lopts.status());
      auto res = registry_.DeleteCollection(k, r.ns, *lopts, *opts);
      if (!res.ok()) return fail(res.status());
      Json list = {{"kind", k.kind + "List"}, {"apiVersion", k.ApiVersion()},
                   {"metadata", Json::object()}, {"items", *res}};
      w.Send(200, {{"Content-Type", kJson}}, list.dump());
      return;
    }
    auto res = registry_.Delete(k, r.ns, r.name, *opts);
    if (!res.ok()) return fail(res.status());
    bool return_object = (k.group.empty() && k.plural == "pods") || !res->deleted;
    if (return_object) {
      SendObject(req, w, 200, r, res->object, {});
    } else {
      Json details = {{"name", r.name}, {"kind", k.plural},
                      {"uid", res->object["metadata"].value("uid", "")}};
      if (!k.group.empty()) details["group"] = k.group;
      w.Send(200, {{"Content-Type", kJson}}, SuccessStatus(std::move(details)).dump());
    }
    return;
  }
  fail(registry::MethodNotAllowed(absl::StrCat(m, " is not supported on ", k.plural,
                                               r.name.empty() ? "" : "/{name}")));
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
    w.Send(200, {{"Content-Type", kJson}}, t.dump());
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
  w.Send(200, {{"Content-Type", kJson}}, std::move(body));
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
  HeaderList headers = {{"Content-Type", kJson}, {"Cache-Control", "no-cache, private"}};
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
  // Real time bounds the stream: watches are I/O, not controller logic.
  absl::Time deadline = absl::Now() + timeout;
  absl::Time next_bookmark = absl::Now() + opts_.bookmark_interval;
  bool first_table = true;
  for (;;) {
    absl::Time now = absl::Now();
    if (now >= deadline) break;
    registry::Watcher::Event ev;
    absl::Duration wait = std::min(deadline - now, absl::Seconds(1));
    if (!(*watcher)->Next(&ev, wait)) {
      if ((*watcher)->done() || w.ClientGone()) break;
      if (bookmarks && absl::Now() >= next_bookmark) {
        next_bookmark = absl::Now() + opts_.bookmark_interval;
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
