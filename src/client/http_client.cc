#include "client/http_client.h"

#include <sys/socket.h>

#include <atomic>
#include <deque>
#include <map>
#include <thread>
#include <vector>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "registry/errors.h"

namespace batchd::client {

namespace beast = boost::beast;
namespace http = beast::http;
namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using api::Json;

namespace {

struct Conn {
  explicit Conn(asio::io_context& ioc) : sock(ioc) {}
  tcp::socket sock;
  beast::flat_buffer buf;
};

struct Endpoint {
  std::string host;
  std::string port;
};

absl::StatusOr<Endpoint> ParseServer(std::string s) {
  if (absl::StartsWith(s, "http://")) s = s.substr(7);
  if (absl::StartsWith(s, "https://")) {
    return absl::InvalidArgumentError("https servers are not supported yet: " + s);
  }
  while (!s.empty() && s.back() == '/') s.pop_back();
  size_t colon = s.rfind(':');
  if (s.empty() || colon == std::string::npos || colon + 1 == s.size()) {
    return absl::InvalidArgumentError("server must be http://HOST:PORT, got " + s);
  }
  Endpoint e{s.substr(0, colon), s.substr(colon + 1)};
  if (e.host.size() > 2 && e.host.front() == '[' && e.host.back() == ']') {
    e.host = e.host.substr(1, e.host.size() - 2);
  }
  return e;
}

absl::StatusOr<std::unique_ptr<Conn>> Connect(asio::io_context& ioc, const Endpoint& ep) {
  auto c = std::make_unique<Conn>(ioc);
  beast::error_code ec;
  tcp::resolver resolver(ioc);
  auto results = resolver.resolve(ep.host, ep.port, ec);
  if (ec) return absl::UnavailableError(absl::StrCat("resolve ", ep.host, ": ", ec.message()));
  asio::connect(c->sock, results, ec);
  if (ec) {
    return absl::UnavailableError(
        absl::StrCat("connect ", ep.host, ":", ep.port, ": ", ec.message()));
  }
  c->sock.set_option(tcp::no_delay(true), ec);
  return c;
}

// Reads the body of the response whose header `p` has parsed, handing each
// piece to `fn` (false stops). Returns a transport error or OK.
absl::Status ReadBody(Conn& c, http::response_parser<http::buffer_body>& p,
                      const std::function<bool(std::string_view)>& fn) {
  char tmp[64 * 1024];
  while (!p.is_done()) {
    p.get().body().data = tmp;
    p.get().body().size = sizeof(tmp);
    beast::error_code ec;
    http::read_some(c.sock, c.buf, p, ec);
    if (ec == http::error::need_buffer) ec = {};
    size_t n = sizeof(tmp) - p.get().body().size;
    if (n > 0 && !fn(std::string_view(tmp, n))) return absl::CancelledError("stopped");
    if (ec) return absl::UnavailableError("read: " + ec.message());
  }
  return absl::OkStatus();
}

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

void Fill(http::request<http::string_body>& req, const Endpoint& ep, const std::string& ua) {
  req.set(http::field::host, ep.host + ":" + ep.port);
  req.set(http::field::user_agent, ua);
  req.set(http::field::accept, "application/json");
  req.keep_alive(true);
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
  HttpWatchStream(std::unique_ptr<Conn> conn,
                  std::unique_ptr<http::response_parser<http::buffer_body>> parser)
      : conn_(std::move(conn)), parser_(std::move(parser)) {
    reader_ = std::thread([this] { Read(); });
  }
  ~HttpWatchStream() override {
    stop_ = true;
    ::shutdown(conn_->sock.native_handle(), SHUT_RDWR);
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
    (void)ReadBody(*conn_, *parser_, [&](std::string_view data) {
      pending.append(data);
      size_t start = 0;
      for (size_t nl; (nl = pending.find('\n', start)) != std::string::npos; start = nl + 1) {
        Deliver(std::string_view(pending).substr(start, nl - start));
      }
      pending.erase(0, start);
      return !stop_.load();
    });
    if (!pending.empty()) Deliver(pending);
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

  std::unique_ptr<Conn> conn_;
  std::unique_ptr<http::response_parser<http::buffer_body>> parser_;
  std::atomic<bool> stop_{false};
  mutable absl::Mutex mu_;
  absl::CondVar cv_;
  std::deque<WatchEvent> queue_ ABSL_GUARDED_BY(mu_);
  bool ended_ ABSL_GUARDED_BY(mu_) = false;
  std::thread reader_;
};

// Sends `req` and parses the header; on non-2xx reads the body and returns
// the decoded error.
absl::StatusOr<std::unique_ptr<http::response_parser<http::buffer_body>>> OpenStream(
    Conn& c, http::request<http::string_body>& req) {
  beast::error_code ec;
  http::write(c.sock, req, ec);
  if (ec) return absl::UnavailableError("write: " + ec.message());
  auto p = std::make_unique<http::response_parser<http::buffer_body>>();
  p->body_limit(boost::none);
  http::read_header(c.sock, c.buf, *p, ec);
  if (ec) return absl::UnavailableError("read: " + ec.message());
  int code = p->get().result_int();
  if (code >= 200 && code < 300) return p;
  std::string body;
  (void)ReadBody(c, *p, [&](std::string_view d) {
    body.append(d);
    return body.size() < (1 << 20);
  });
  return StatusFromResponse(code, body);
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
  Endpoint ep;
  HttpClientOptions opts;
  asio::io_context ioc;
  absl::Mutex mu;
  std::vector<std::unique_ptr<Conn>> idle ABSL_GUARDED_BY(mu);

  std::unique_ptr<Conn> TakeIdle() {
    absl::MutexLock lock(&mu);
    if (idle.empty()) return nullptr;
    auto c = std::move(idle.back());
    idle.pop_back();
    return c;
  }
  void Release(std::unique_ptr<Conn> c) {
    absl::MutexLock lock(&mu);
    if (static_cast<int>(idle.size()) < opts.max_idle_connections) idle.push_back(std::move(c));
  }
};

HttpClient::HttpClient(std::shared_ptr<const api::Scheme> scheme, std::unique_ptr<Impl> impl)
    : scheme_(std::move(scheme)), impl_(std::move(impl)) {}

HttpClient::~HttpClient() = default;

absl::StatusOr<std::unique_ptr<HttpClient>> HttpClient::Create(
    const std::string& server, std::shared_ptr<const api::Scheme> scheme, HttpClientOptions opts) {
  auto ep = ParseServer(server);
  if (!ep.ok()) return ep.status();
  auto impl = std::make_unique<Impl>();
  impl->ep = *ep;
  impl->opts = std::move(opts);
  return std::unique_ptr<HttpClient>(new HttpClient(std::move(scheme), std::move(impl)));
}

absl::StatusOr<HttpClient::Response> HttpClient::Do(const std::string& method,
                                                    const std::string& target,
                                                    const std::string& body,
                                                    const std::string& content_type) {
  http::request<http::string_body> req{http::string_to_verb(method), target, 11};
  Fill(req, impl_->ep, impl_->opts.user_agent);
  if (!impl_->opts.bearer_token.empty()) {
    req.set(http::field::authorization, "Bearer " + impl_->opts.bearer_token);
  }
  if (!body.empty()) {
    req.set(http::field::content_type, content_type);
    req.body() = body;
  }
  req.prepare_payload();
  for (int attempt = 0; attempt < 2; ++attempt) {
    std::unique_ptr<Conn> c = attempt == 0 ? impl_->TakeIdle() : nullptr;
    bool reused = c != nullptr;
    if (!c) {
      auto fresh = Connect(impl_->ioc, impl_->ep);
      if (!fresh.ok()) return fresh.status();
      c = std::move(*fresh);
    }
    beast::error_code ec;
    http::write(c->sock, req, ec);
    if (ec) {
      if (reused) continue;  // The server closed an idle connection.
      return absl::UnavailableError("write: " + ec.message());
    }
    http::response_parser<http::string_body> p;
    p.body_limit(boost::none);
    http::read(c->sock, c->buf, p, ec);
    if (ec) {
      bool closed = ec == http::error::end_of_stream || ec == asio::error::eof ||
                    ec == asio::error::connection_reset;
      if (reused && closed && !p.got_some()) continue;
      return absl::UnavailableError("read: " + ec.message());
    }
    auto res = p.release();
    Response out{static_cast<int>(res.result_int()), std::string(res[http::field::content_type]),
                 std::move(res.body())};
    if (res.keep_alive()) impl_->Release(std::move(c));
    return out;
  }
  return absl::UnavailableError("connection closed by the server");
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
  auto c = Connect(impl_->ioc, impl_->ep);
  if (!c.ok()) return c.status();
  http::request<http::string_body> req{http::verb::get, target, 11};
  Fill(req, impl_->ep, impl_->opts.user_agent);
  if (!impl_->opts.bearer_token.empty()) {
    req.set(http::field::authorization, "Bearer " + impl_->opts.bearer_token);
  }
  req.prepare_payload();
  auto p = OpenStream(**c, req);
  if (!p.ok()) return p.status();
  return std::unique_ptr<WatchStream>(new HttpWatchStream(std::move(*c), std::move(*p)));
}

absl::Status StreamGet(const std::string& base_url, const std::string& target,
                       const std::function<bool(std::string_view)>& write) {
  auto ep = ParseServer(base_url);
  if (!ep.ok()) return ep.status();
  asio::io_context ioc;
  auto c = Connect(ioc, *ep);
  if (!c.ok()) return c.status();
  http::request<http::string_body> req{http::verb::get, target, 11};
  Fill(req, *ep, "batchd-log-proxy");
  req.keep_alive(false);
  req.prepare_payload();
  auto p = OpenStream(**c, req);
  if (!p.ok()) return p.status();
  absl::Status st = ReadBody(**c, **p, write);
  if (absl::IsCancelled(st)) return absl::OkStatus();
  return st;
}

}  // namespace batchd::client
