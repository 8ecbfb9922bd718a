#include "client/http_client.h"

#include <atomic>
#include <deque>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/strings/ascii.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "common/http_transport.h"
#include "registry/errors.h"

namespace batchd::client {

using api::Json;

namespace {

absl::StatusCode CodeForReason(const std::string& reason, int http_code) {
  static const std::map<std::string, absl::StatusCode> kByReason = {
      {"NotFound", absl::StatusCode::kNotFound},
      {"AlreadyExists", absl::StatusCode::kAlreadyExists},
      {"Conflict", absl::StatusCode::kAborted},
      {"Invalid", absl::StatusCode::kInvalidArgument},
      {"BadRequest", absl::StatusCode::kInvalidArgument},
      {"Forbidden", absl::StatusCode::kPermissionDenied},
      {"Unauthorized", absl::StatusCode::kUnauthenticated},
      {"MethodNotAllowed", absl::StatusCode::kUnimplemented},
      {"UnsupportedMediaType", absl::StatusCode::kUnimplemented},
      {"Expired", absl::StatusCode::kOutOfRange},
      {"Gone", absl::StatusCode::kOutOfRange},
      {"RequestEntityTooLarge", absl::StatusCode::kResourceExhausted},
      {"TooManyRequests", absl::StatusCode::kResourceExhausted},
      {"InternalError", absl::StatusCode::kInternal},
      {"ServiceUnavailable", absl::StatusCode::kUnavailable},
      {"Timeout", absl::StatusCode::kDeadlineExceeded},
  };
  auto it = kByReason.find(reason);
  if (it != kByReason.end()) return it->second;
  switch (http_code) {
    case 400: return absl::StatusCode::kInvalidArgument;
    case 404: return absl::StatusCode::kNotFound;
    case 409: return absl::StatusCode::kAborted;
    case 410: return absl::StatusCode::kOutOfRange;
    case 422: return absl::StatusCode::kInvalidArgument;
    case 429: return absl::StatusCode::kResourceExhausted;
    case 503: return absl::StatusCode::kUnavailable;
    default: return absl::StatusCode::kUnknown;
  }
}

// A request with the client's headers (and `content_type` when it has a body).
HttpOutgoing MakeRequest(const HttpClientOptions& o, const std::string& method,
                         const std::string& target, const std::string& body = "",
                         const std::string& content_type = "") {
  HttpOutgoing req;
  req.method = method;
  req.target = target;
  req.headers = {{"User-Agent", o.user_agent}, {"Accept", "application/json"}};
  if (!o.bearer_token.empty()) req.headers.emplace_back("Authorization", "Bearer " + o.bearer_token);
  if (!body.empty()) {
    req.headers.emplace_back("Content-Type", content_type);
    req.body = body;
  }
  return req;
}

std::string SelectorQuery(const Selector& sel) {
  std::string q;
  if (!sel.labels.empty()) absl::StrAppend(&q, "&labelSelector=", UrlEncode(sel.labels));
  if (!sel.fields.empty()) absl::StrAppend(&q, "&fieldSelector=", UrlEncode(sel.fields));
  return q;
}

void SetTypeMeta(const api::KindDef& k, Json& obj) {
  if (!obj.is_object()) return;
  if (!obj.contains("apiVersion")) obj["apiVersion"] = k.ApiVersion();
  if (!obj.contains("kind")) obj["kind"] = k.kind;
}

// Reads a chunked watch stream on its own thread into a queue.
class HttpWatchStream : public WatchStream {
 public:
  HttpWatchStream(std::unique_ptr<HttpBodyStream> body, size_t max_event_bytes)
      : body_(std::move(body)), max_event_bytes_(max_event_bytes) {
    reader_ = std::thread([this] { Read(); });
  }
  ~HttpWatchStream() override {
    stop_ = true;
    body_->Stop();
    reader_.join();
  }

  bool Next(WatchEvent* ev, absl::Duration timeout) override {
    absl::MutexLock lock(&mu_);
    const absl::Time deadline = absl::Now() + timeout;
    while (queue_.empty() && !ended_ && !cv_.WaitWithDeadline(&mu_, deadline)) {
    }
    if (queue_.empty()) return false;
    *ev = std::move(queue_.front());
    queue_.pop_front();
    return true;
  }
  bool done() const override {
    absl::MutexLock lock(&mu_);
    return ended_ && queue_.empty();
  }

 private:
  void Read() {
    std::string pending;
    // No deadline: a watch may stay quiet for long; TCP keepalive ends it
    // when the server is gone.
    (void)body_->Read([&](std::string_view data) {
      pending.append(data);
      size_t start = 0;
      for (size_t nl; (nl = pending.find('\n', start)) != std::string::npos; start = nl + 1) {
        Deliver(std::string_view(pending).substr(start, nl - start));
      }
      pending.erase(0, start);
      if (pending.size() > max_event_bytes_) return false;  // One event larger than allowed.
      return !stop_.load();
    });
    if (!pending.empty() && pending.size() <= max_event_bytes_) Deliver(pending);
    absl::MutexLock lock(&mu_);
    ended_ = true;
    cv_.SignalAll();
  }
  void Deliver(std::string_view line) {
    Json j = Json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!j.is_object() || !j.contains("type") || !j["type"].is_string()) return;
    WatchEvent ev{j["type"].get<std::string>(), j.value("object", Json::object())};
    absl::MutexLock lock(&mu_);
    queue_.push_back(std::move(ev));
    cv_.SignalAll();
  }

  std::unique_ptr<HttpBodyStream> body_;
  const size_t max_event_bytes_;
  std::atomic<bool> stop_{false};
  mutable absl::Mutex mu_;
  absl::CondVar cv_;
  std::deque<WatchEvent> queue_ ABSL_GUARDED_BY(mu_);
  bool ended_ ABSL_GUARDED_BY(mu_) = false;
  std::thread reader_;
};

// Opens `req` as a stream on server `member`; a non-2xx answer is read
// (its first MiB) and decoded into the error it reports.
absl::StatusOr<std::unique_ptr<HttpBodyStream>> OpenStream(
    HttpTransport& t, size_t member, const HttpOutgoing& req,
    absl::Duration check_every = absl::InfiniteDuration(),
    const std::function<bool()>& wanted = nullptr) {
  auto s = t.OpenStream(member, req, check_every, wanted);
  if (!s.ok()) return s.status();
  const int code = (*s)->code();
  if (code >= 200 && code < 300) return s;
  std::string body;
  (void)(*s)->Read(
      [&](std::string_view d) {
        body.append(d);
        return body.size() < (1 << 20);
      },
      t.options().request_timeout);
  return StatusFromResponse(code, body);
}

HttpTransportOptions TransportOptions(const HttpClientOptions& o) {
  HttpTransportOptions t;
  t.connect_timeout = o.connect_timeout;
  t.request_timeout = o.request_timeout;
  t.idle_timeout = o.idle_timeout;
  t.max_idle = o.max_idle_connections;
  t.keepalive_idle = o.keepalive_idle;
  t.keepalive_interval = o.keepalive_interval;
  t.keepalive_count = o.keepalive_count;
  t.max_response_bytes = o.max_response_bytes;
  t.ca_file = o.ca_file;
  t.ca_data = o.ca_data;
  t.cert_file = o.client_cert_file;
  t.cert_data = o.client_cert_data;
  t.key_file = o.client_key_file;
  t.key_data = o.client_key_data;
  return t;
}

}  // namespace

std::string UrlEncode(std::string_view s) {
  static const char* kHex = "0123456789ABCDEF";
  std::string out;
  out.reserve(s.size());
  for (unsigned char ch : s) {
    if (std::isalnum(ch) || ch == '-' || ch == '_' || ch == '.' || ch == '~') {
      out.push_back(static_cast<char>(ch));
    } else {
      out.push_back('%');
      out.push_back(kHex[ch >> 4]);
      out.push_back(kHex[ch & 15]);
    }
  }
  return out;
}

std::string ResourcePath(const api::KindDef& k, const std::string& ns, const std::string& name) {
  std::string p = k.group.empty() ? absl::StrCat("/api/", k.version)
                                  : absl::StrCat("/apis/", k.group, "/", k.version);
  if (k.namespaced && !ns.empty()) absl::StrAppend(&p, "/namespaces/", ns);
  absl::StrAppend(&p, "/", k.plural);
  if (!name.empty()) absl::StrAppend(&p, "/", name);
  return p;
}

absl::Status StatusFromResponse(int http_code, const std::string& body) {
  Json j = Json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_object() && j.value("kind", "") == "Status") {
    std::string reason = j.value("reason", "");
    std::string message = j.value("message", "");
    Json details = j.contains("details") ? j["details"] : Json::object();
    if (message.empty()) message = absl::StrCat("HTTP ", http_code);
    return registry::ApiError(CodeForReason(reason, http_code), reason, message, details);
  }
  std::string msg = absl::StrCat("HTTP ", http_code, ": ", body.substr(0, 512));
  return absl::Status(CodeForReason("", http_code), msg);
}

struct HttpClient::Impl {
  // The servers ("URL,URL,..."): requests go to server `current` and move
  // on to the next when one cannot be reached.
  std::unique_ptr<HttpTransport> transport;
  std::atomic<size_t> current{0};
  HttpClientOptions opts;

  static absl::StatusOr<std::unique_ptr<Impl>> New(const std::string& server,
                                                   HttpClientOptions opts) {
    std::vector<HttpEndpoint> eps;
    for (absl::string_view one : absl::StrSplit(server, ',', absl::SkipWhitespace())) {
      auto ep = ParseHttpEndpoint(std::string(absl::StripAsciiWhitespace(one)), "server");
      if (!ep.ok()) return ep.status();
      eps.push_back(*ep);
    }
    if (eps.empty()) return absl::InvalidArgumentError("no server given");
    auto t = HttpTransport::Create(std::move(eps), TransportOptions(opts));
    if (!t.ok()) return t.status();
    auto impl = std::make_unique<Impl>();
    impl->transport = std::move(*t);
    impl->opts = std::move(opts);
    return impl;
  }

  size_t size() const { return transport->size(); }
  // Moves on from `member` (unreachable) to the next server.
  void Failed(size_t member) {
    transport->DropIdle(member);
    size_t expected = member;
    current.compare_exchange_strong(expected, (member + 1) % size());
  }
};

HttpClient::HttpClient(std::shared_ptr<const api::Scheme> scheme, std::unique_ptr<Impl> impl)
    : scheme_(std::move(scheme)), impl_(std::move(impl)) {}

HttpClient::~HttpClient() = default;

absl::StatusOr<std::unique_ptr<HttpClient>> HttpClient::Create(
    const std::string& server, std::shared_ptr<const api::Scheme> scheme, HttpClientOptions opts) {
  auto impl = Impl::New(server, std::move(opts));
  if (!impl.ok()) return impl.status();
  return std::unique_ptr<HttpClient>(new HttpClient(std::move(scheme), std::move(*impl)));
}

absl::StatusOr<HttpClient::Response> HttpClient::Do(const std::string& method,
                                                    const std::string& target,
                                                    const std::string& body,
                                                    const std::string& content_type) {
  // With several servers: a request that could not be sent moves on to the
  // next server; one that was sent and lost its answer is repeated elsewhere
  // only when it is a read (a write may have been applied).
  const bool idempotent = method == "GET" || method == "HEAD" || method == "OPTIONS";
  const size_t n = impl_->size();
  const size_t first = impl_->current.load() % n;
  absl::Status last;
  for (size_t k = 0; k < n; ++k) {
    const size_t member = (first + k) % n;
    bool sent = false;
    auto r = DoOn(member, method, target, body, content_type, &sent);
    if (r.ok() || !absl::IsUnavailable(r.status())) return r;
    impl_->Failed(member);
    last = r.status();
    if (sent && !idempotent) return r;
  }
  return last;
}

absl::StatusOr<HttpClient::Response> HttpClient::DoOn(size_t member, const std::string& method,
                                                      const std::string& target,
                                                      const std::string& body,
                                                      const std::string& content_type,
                                                      bool* sent) {
  auto r = impl_->transport->RoundTrip(
      member, MakeRequest(impl_->opts, method, target, body, content_type), sent);
  if (!r.ok()) return r.status();
  return Response{r->code, std::move(r->content_type), std::move(r->body)};
}

absl::StatusOr<Json> HttpClient::DoJson(const std::string& method, const std::string& target,
                                        const Json* body, const std::string& content_type) {
  auto res = Do(method, target, body ? body->dump() : "", content_type);
  if (!res.ok()) return res.status();
  if (res->code < 200 || res->code >= 300) return StatusFromResponse(res->code, res->body);
  Json j = Json::parse(res->body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    return registry::Internal(absl::StrCat("invalid JSON in the response to ", method, " ",
                                           target));
  }
  return j;
}

absl::StatusOr<Json> HttpClient::Get(const api::KindDef& k, const std::string& ns,
                                     const std::string& name) {
  auto j = DoJson("GET", ResourcePath(k, ns, name), nullptr);
  if (j.ok()) SetTypeMeta(k, *j);
  return j;
}

absl::StatusOr<ListResult> HttpClient::List(const api::KindDef& k, const std::string& ns,
                                            const Selector& sel) {
  std::string target = ResourcePath(k, ns);
  std::string q = SelectorQuery(sel);
  if (!q.empty()) absl::StrAppend(&target, "?", q.substr(1));
  auto j = DoJson("GET", target, nullptr);
  if (!j.ok()) return j.status();
  ListResult out;
  if (j->contains("metadata")) out.resource_version = (*j)["metadata"].value("resourceVersion", "");
  if (j->contains("items") && (*j)["items"].is_array()) {
    out.items.reserve((*j)["items"].size());
    for (auto& item : (*j)["items"]) {
      SetTypeMeta(k, item);
      out.items.push_back(std::move(item));
    }
  }
  return out;
}

absl::StatusOr<Json> HttpClient::Create(const api::KindDef& k, const std::string& ns, Json obj) {
  SetTypeMeta(k, obj);
  return DoJson("POST", ResourcePath(k, ns), &obj);
}

absl::StatusOr<Json> HttpClient::Update(const api::KindDef& k, Json obj) {
  SetTypeMeta(k, obj);
  const Json& m = obj.value("metadata", Json::object());
  return DoJson("PUT", ResourcePath(k, m.value("namespace", ""), m.value("name", "")), &obj);
}

absl::StatusOr<Json> HttpClient::UpdateStatus(const api::KindDef& k, Json obj) {
  SetTypeMeta(k, obj);
  const Json& m = obj.value("metadata", Json::object());
  return DoJson("PUT",
                ResourcePath(k, m.value("namespace", ""), m.value("name", "")) + "/status",
                &obj);
}

absl::StatusOr<Json> HttpClient::MergePatch(const api::KindDef& k, const std::string& ns,
                                            const std::string& name, const Json& patch,
                                            bool status) {
  std::string target = ResourcePath(k, ns, name) + (status ? "/status" : "");
  return DoJson("PATCH", target, &patch, "application/merge-patch+json");
}

absl::Status HttpClient::Delete(const api::KindDef& k, const std::string& ns,
                                const std::string& name, const DeleteOptions& opts) {
  Json body = {{"kind", "DeleteOptions"}, {"apiVersion", "v1"}};
  if (opts.grace_period_seconds) body["gracePeriodSeconds"] = *opts.grace_period_seconds;
  if (!opts.propagation_policy.empty()) body["propagationPolicy"] = opts.propagation_policy;
  if (opts.precondition_uid) body["preconditions"] = {{"uid", *opts.precondition_uid}};
  auto j = DoJson("DELETE", ResourcePath(k, ns, name), &body);
  return j.status();
}

absl::StatusOr<std::unique_ptr<WatchStream>> HttpClient::Watch(const api::KindDef& k,
                                                               const std::string& ns,
                                                               const Selector& sel,
                                                               const std::string& rv) {
  std::string target = ResourcePath(k, ns) + "?watch=true&allowWatchBookmarks=true";
  if (!rv.empty()) absl::StrAppend(&target, "&resourceVersion=", UrlEncode(rv));
  absl::StrAppend(&target, SelectorQuery(sel));
  // The first server that answers (see Do); the caller resumes a watch
  // that ended from its last resourceVersion, on whichever server is up.
  const size_t n = impl_->size();
  const size_t first = impl_->current.load() % n;
  const HttpOutgoing req = MakeRequest(impl_->opts, "GET", target);
  absl::Status last;
  for (size_t k = 0; k < n; ++k) {
    const size_t member = (first + k) % n;
    auto s = OpenStream(*impl_->transport, member, req);
    if (!s.ok()) {
      if (!absl::IsUnavailable(s.status())) return s.status();
      impl_->Failed(member);
      last = s.status();
      continue;
    }
    return std::unique_ptr<WatchStream>(
        new HttpWatchStream(std::move(*s), impl_->opts.max_watch_event_bytes));
  }
  return last;
}

absl::Status StreamGet(const std::string& base_url, const std::string& target,
                       const std::function<bool(std::string_view)>& write,
                       const HttpClientOptions& opts, absl::Duration check_every) {
  HttpClientOptions o = opts;
  o.user_agent = "batchd-log-proxy";
  auto impl = HttpClient::Impl::New(base_url, o);  // Public for this use.
  if (!impl.ok()) return impl.status();
  HttpOutgoing req = MakeRequest(o, "GET", target);
  req.keep_alive = false;
  // An agent sends a follow's header with its first line: the header, as
  // the body, is waited for without a deadline (keepalive notices a dead
  // agent) while the caller's client is there.
  auto s = OpenStream(*(*impl)->transport, (*impl)->current.load() % (*impl)->size(), req,
                      check_every, [&] { return write(std::string_view()); });
  if (absl::IsCancelled(s.status())) return absl::OkStatus();
  if (!s.ok()) return s.status();
  // The log body (a follow) may last: no deadline, keepalive instead.
  absl::Status st = (*s)->Read(write, absl::InfiniteDuration(), check_every);
  if (absl::IsCancelled(st)) return absl::OkStatus();
  return st;
}

namespace {

std::string ReadWholeFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

namespace {
absl::StatusOr<KubeconfigServer> KubeconfigFromYaml(const YAML::Node& root,
                                                    const std::string& path,
                                                    const std::string& base_dir,
                                                    HttpClientOptions base);
}  // namespace

absl::StatusOr<KubeconfigServer> LoadKubeconfig(const std::string& path, HttpClientOptions base) {
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("kubeconfig ", path, ": ", e.what()));
  }
  return KubeconfigFromYaml(root, path, std::filesystem::path(path).parent_path().string(),
                            std::move(base));
}

absl::StatusOr<KubeconfigServer> ParseKubeconfig(const std::string& text,
                                                 const std::string& source,
                                                 const std::string& dir, HttpClientOptions base) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("kubeconfig ", source, ": ", e.what()));
  }
  if (!root.IsMap()) {
    return absl::InvalidArgumentError(absl::StrCat("kubeconfig ", source, ": not a mapping"));
  }
  return KubeconfigFromYaml(root, source, dir, std::move(base));
}

namespace {

absl::StatusOr<KubeconfigServer> KubeconfigFromYaml(const YAML::Node& root,
                                                    const std::string& path,
                                                    const std::string& base_dir,
                                                    HttpClientOptions base) {
  auto find = [&](const char* list, const std::string& name) -> YAML::Node {
    if (!root[list] || !root[list].IsSequence()) return YAML::Node();
    for (const auto& item : root[list]) {
      if (item["name"] && item["name"].as<std::string>("") == name) return item;
    }
    return YAML::Node();
  };
  try {
    std::string ctx_name = root["current-context"] ? root["current-context"].as<std::string>("") : "";
    YAML::Node ctx = find("contexts", ctx_name);
    if (!ctx && root["contexts"] && root["contexts"].IsSequence() && root["contexts"].size() > 0) {
      ctx = root["contexts"][0];
    }
    if (!ctx || !ctx["context"]) {
      return absl::InvalidArgumentError("kubeconfig " + path + ": no current context");
    }
    const std::string cluster_name = ctx["context"]["cluster"].as<std::string>("");
    const std::string user_name = ctx["context"]["user"].as<std::string>("");
    YAML::Node cluster = find("clusters", cluster_name);
    if (!cluster || !cluster["cluster"] || !cluster["cluster"]["server"]) {
      return absl::InvalidArgumentError("kubeconfig " + path + ": no server for cluster " +
                                        cluster_name);
    }
    const std::filesystem::path dir(base_dir);
    auto file = [&](const YAML::Node& n) {
      std::filesystem::path f(n.as<std::string>(""));
      return (f.is_relative() ? dir / f : f).string();
    };
    auto data = [&](const YAML::Node& n) -> absl::StatusOr<std::string> {
      std::string out;
      if (!absl::Base64Unescape(n.as<std::string>(""), &out)) {
        return absl::InvalidArgumentError("kubeconfig " + path + ": bad base64 data");
      }
      return out;
    };
    KubeconfigServer k;
    k.options = std::move(base);
    const YAML::Node c = cluster["cluster"];
    k.server = c["server"].as<std::string>();
    if (c["certificate-authority-data"]) {
      auto d = data(c["certificate-authority-data"]);
      if (!d.ok()) return d.status();
      k.options.ca_data = *d;
    } else if (c["certificate-authority"]) {
      k.options.ca_file = file(c["certificate-authority"]);
    }
    YAML::Node user = find("users", user_name);
    if (user && user["user"]) {
      const YAML::Node u = user["user"];
      if (u["client-certificate-data"]) {
        auto d = data(u["client-certificate-data"]);
        if (!d.ok()) return d.status();
        k.options.client_cert_data = *d;
      } else if (u["client-certificate"]) {
        k.options.client_cert_file = file(u["client-certificate"]);
      }
      if (u["client-key-data"]) {
        auto d = data(u["client-key-data"]);
        if (!d.ok()) return d.status();
        k.options.client_key_data = *d;
      } else if (u["client-key"]) {
        k.options.client_key_file = file(u["client-key"]);
      }
      if (u["token"]) {
        k.options.bearer_token = u["token"].as<std::string>("");
      } else if (u["tokenFile"]) {
        std::string t = ReadWholeFile(file(u["tokenFile"]));
        while (!t.empty() && (t.back() == '\n' || t.back() == '\r')) t.pop_back();
        k.options.bearer_token = t;
      }
    }
    return k;
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("kubeconfig ", path, ": ", e.what()));
  }
}

}  // namespace

}  // namespace batchd::client
