#include "client/http_client.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <deque>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>
#include <vector>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
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
#include "registry/errors.h"

namespace batchd::client {

namespace beast = boost::beast;
namespace http = beast::http;
namespace asio = boost::asio;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using api::Json;

namespace {

using Clock = std::chrono::steady_clock;

Clock::duration Chrono(absl::Duration d) { return absl::ToChronoNanoseconds(d); }

// One connection with its own io_context: every operation runs
// asynchronously under a deadline on the calling thread (Run), so a dead or
// silent server ends in a timeout instead of a hung thread.
struct Conn {
  Conn() = default;
  asio::io_context ioc{1};
  std::unique_ptr<beast::tcp_stream> tcp;
  std::unique_ptr<beast::ssl_stream<beast::tcp_stream>> tls;
  beast::flat_buffer buf;
  Clock::time_point idle_since;

  beast::tcp_stream& Lowest() { return tls ? beast::get_lowest_layer(*tls) : *tcp; }

  // Starts `op(stream, handler)` and runs it to completion or `deadline`
  // (time_point::max(): none).
  template <class Op>
  beast::error_code Run(Clock::time_point deadline, Op op) {
    beast::error_code result = asio::error::would_block;
    if (deadline == Clock::time_point::max()) {
      Lowest().expires_never();
    } else {
      Lowest().expires_at(deadline);
    }
    auto done = [&result](beast::error_code ec, auto&&...) { result = ec; };
    if (tls) {
      op(*tls, done);
    } else {
      op(*tcp, done);
    }
    ioc.restart();
    ioc.run();
    return result;
  }
};

struct Endpoint {
  std::string host;
  std::string port;
  bool https = false;
};

absl::StatusOr<Endpoint> ParseServer(std::string s) {
  Endpoint e;
  if (absl::StartsWith(s, "http://")) {
    s = s.substr(7);
  } else if (absl::StartsWith(s, "https://")) {
    s = s.substr(8);
    e.https = true;
  }
  while (!s.empty() && s.back() == '/') s.pop_back();
  size_t colon = s.rfind(':');
  if (s.empty() || colon == std::string::npos || colon + 1 == s.size() ||
      s.find('/') != std::string::npos) {
    return absl::InvalidArgumentError("server must be http[s]://HOST:PORT, got " + s);
  }
  e.host = s.substr(0, colon);
  e.port = s.substr(colon + 1);
  if (e.host.size() > 2 && e.host.front() == '[' && e.host.back() == ']') {
    e.host = e.host.substr(1, e.host.size() - 2);
  }
  return e;
}

void SetKeepAlive(int fd, const HttpClientOptions& o) {
  int on = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof(on));
  int idle = std::max<int>(1, static_cast<int>(absl::ToInt64Seconds(o.keepalive_idle)));
  int intvl = std::max<int>(1, static_cast<int>(absl::ToInt64Seconds(o.keepalive_interval)));
  int cnt = std::max(1, o.keepalive_count);
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof(intvl));
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt));
  // Unacknowledged writes give up after the same time.
  unsigned int user_timeout = static_cast<unsigned int>((idle + intvl * cnt) * 1000);
  ::setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &user_timeout, sizeof(user_timeout));
}

absl::StatusOr<std::unique_ptr<Conn>> Connect(const Endpoint& ep, const HttpClientOptions& o,
                                              ssl::context* tls) {
  auto c = std::make_unique<Conn>();
  c->tcp = std::make_unique<beast::tcp_stream>(c->ioc);
  const Clock::time_point deadline = Clock::now() + Chrono(o.connect_timeout);
  tcp::resolver resolver(c->ioc);
  beast::error_code ec = asio::error::would_block;
  tcp::resolver::results_type results;
  resolver.async_resolve(ep.host, ep.port,
                         [&](beast::error_code e, tcp::resolver::results_type r) {
                           ec = e;
                           results = std::move(r);
                         });
  c->ioc.run_until(deadline);
  if (ec == asio::error::would_block) {
    resolver.cancel();
    c->ioc.restart();
    c->ioc.run();
    return absl::UnavailableError(absl::StrCat("resolve ", ep.host, ": timed out"));
  }
  if (ec) return absl::UnavailableError(absl::StrCat("resolve ", ep.host, ": ", ec.message()));
  ec = c->Run(deadline, [&](auto& s, auto done) {
    beast::get_lowest_layer(s).async_connect(results, std::move(done));
  });
  if (ec) {
    return absl::UnavailableError(
        absl::StrCat("connect ", ep.host, ":", ep.port, ": ", ec.message()));
  }
  beast::error_code ignored;
  c->tcp->socket().set_option(tcp::no_delay(true), ignored);
  SetKeepAlive(c->tcp->socket().native_handle(), o);
  if (!ep.https) return c;
  c->tls = std::make_unique<beast::ssl_stream<beast::tcp_stream>>(std::move(*c->tcp), *tls);
  c->tcp.reset();
  beast::error_code aec;
  asio::ip::make_address(ep.host, aec);
  if (aec && !SSL_set_tlsext_host_name(c->tls->native_handle(), ep.host.c_str())) {
    return absl::UnavailableError("TLS: cannot set the server name " + ep.host);
  }
  c->tls->set_verify_callback(ssl::host_name_verification(ep.host));
  ec = c->Run(deadline, [](auto& s, auto done) {
    if constexpr (!std::is_same_v<std::decay_t<decltype(s)>, beast::tcp_stream>) {
      s.async_handshake(ssl::stream_base::client, std::move(done));
    }
  });
  if (ec) {
    return absl::UnavailableError(
        absl::StrCat("TLS handshake with ", ep.host, ":", ep.port, ": ", ec.message()));
  }
  return c;
}

// Overload so Conn::Run can call the same lambda on either stream type.
template <class Stream, class Parser, class Done>
void AsyncReadSome(Stream& s, beast::flat_buffer& b, Parser& p, Done done) {
  http::async_read_some(s, b, p, std::move(done));
}

// Reads the body of the response whose header `p` has parsed, handing each
// piece to `fn` (false stops). Returns a transport error or OK.
absl::Status ReadBody(Conn& c, http::response_parser<http::buffer_body>& p,
                      Clock::time_point deadline,
                      const std::function<bool(std::string_view)>& fn) {
  char tmp[64 * 1024];
  while (!p.is_done()) {
    p.get().body().data = tmp;
    p.get().body().size = sizeof(tmp);
    beast::error_code ec = c.Run(deadline, [&](auto& s, auto done) {
      AsyncReadSome(s, c.buf, p, std::move(done));
    });
    if (ec == http::error::need_buffer) ec = {};
    size_t n = sizeof(tmp) - p.get().body().size;
    if (n > 0 && !fn(std::string_view(tmp, n))) return absl::CancelledError("stopped");
    if (ec == beast::error::timeout) return absl::DeadlineExceededError("read: timed out");
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

void Fill(http::request<http::string_body>& req, const Endpoint& ep,
          const HttpClientOptions& o) {
  req.set(http::field::host, ep.host + ":" + ep.port);
  req.set(http::field::user_agent, o.user_agent);
  req.set(http::field::accept, "application/json");
  if (!o.bearer_token.empty()) req.set(http::field::authorization, "Bearer " + o.bearer_token);
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
                  std::unique_ptr<http::response_parser<http::buffer_body>> parser,
                  size_t max_event_bytes)
      : conn_(std::move(conn)), parser_(std::move(parser)), max_event_bytes_(max_event_bytes) {
    reader_ = std::thread([this] { Read(); });
  }
  ~HttpWatchStream() override {
    stop_ = true;
    ::shutdown(conn_->Lowest().socket().native_handle(), SHUT_RDWR);
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
    (void)ReadBody(*conn_, *parser_, Clock::time_point::max(), [&](std::string_view data) {
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

  std::unique_ptr<Conn> conn_;
  std::unique_ptr<http::response_parser<http::buffer_body>> parser_;
  const size_t max_event_bytes_;
  std::atomic<bool> stop_{false};
  mutable absl::Mutex mu_;
  absl::CondVar cv_;
  std::deque<WatchEvent> queue_ ABSL_GUARDED_BY(mu_);
  bool ended_ ABSL_GUARDED_BY(mu_) = false;
  std::thread reader_;
};

// Sends `req` and parses the header before `deadline`; on non-2xx reads the
// body and returns the decoded error.
absl::StatusOr<std::unique_ptr<http::response_parser<http::buffer_body>>> OpenStream(
    Conn& c, http::request<http::string_body>& req, Clock::time_point deadline) {
  beast::error_code ec =
      c.Run(deadline, [&](auto& s, auto done) { http::async_write(s, req, std::move(done)); });
  if (ec) return absl::UnavailableError("write: " + ec.message());
  auto p = std::make_unique<http::response_parser<http::buffer_body>>();
  p->body_limit(boost::none);
  ec = c.Run(deadline, [&](auto& s, auto done) {
    http::async_read_header(s, c.buf, *p, std::move(done));
  });
  if (ec == beast::error::timeout) return absl::DeadlineExceededError("read: timed out");
  if (ec) return absl::UnavailableError("read: " + ec.message());
  int code = p->get().result_int();
  if (code >= 200 && code < 300) return p;
  std::string body;
  (void)ReadBody(c, *p, deadline, [&](std::string_view d) {
    body.append(d);
    return body.size() < (1 << 20);
  });
  return StatusFromResponse(code, body);
}

absl::StatusOr<std::unique_ptr<ssl::context>> MakeTlsContext(const HttpClientOptions& o) {
  auto ctx = std::make_unique<ssl::context>(ssl::context::tls_client);
  beast::error_code ec;
  ctx->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                       ssl::context::no_sslv3 | ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1,
                   ec);
  ctx->set_verify_mode(ssl::verify_peer);
  if (!o.ca_data.empty()) {
    ctx->add_certificate_authority(asio::buffer(o.ca_data), ec);
    if (ec) return absl::InvalidArgumentError("certificate-authority-data: " + ec.message());
  } else if (!o.ca_file.empty()) {
    ctx->load_verify_file(o.ca_file, ec);
    if (ec) return absl::InvalidArgumentError("certificate authority " + o.ca_file + ": " + ec.message());
  } else {
    ctx->set_default_verify_paths(ec);
  }
  if (!o.client_cert_data.empty()) {
    ctx->use_certificate_chain(asio::buffer(o.client_cert_data), ec);
  } else if (!o.client_cert_file.empty()) {
    ctx->use_certificate_chain_file(o.client_cert_file, ec);
  }
  if (ec) return absl::InvalidArgumentError("client certificate: " + ec.message());
  if (!o.client_key_data.empty()) {
    ctx->use_private_key(asio::buffer(o.client_key_data), ssl::context::pem, ec);
  } else if (!o.client_key_file.empty()) {
    ctx->use_private_key_file(o.client_key_file, ssl::context::pem, ec);
  }
  if (ec) return absl::InvalidArgumentError("client key: " + ec.message());
  return ctx;
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
  // The servers ("URL,URL,..."): requests go to `eps[current]` and move on
  // to the next server when one cannot be reached.
  std::vector<Endpoint> eps;
  std::atomic<size_t> current{0};
  HttpClientOptions opts;
  std::unique_ptr<ssl::context> tls;
  absl::Mutex mu;
  std::vector<std::pair<size_t, std::unique_ptr<Conn>>> idle ABSL_GUARDED_BY(mu);

  static absl::StatusOr<std::unique_ptr<Impl>> New(const std::string& server,
                                                   HttpClientOptions opts) {
    auto impl = std::make_unique<Impl>();
    bool https = false;
    for (absl::string_view one : absl::StrSplit(server, ',', absl::SkipWhitespace())) {
      auto ep = ParseServer(std::string(absl::StripAsciiWhitespace(one)));
      if (!ep.ok()) return ep.status();
      https = https || ep->https;
      impl->eps.push_back(*ep);
    }
    if (impl->eps.empty()) return absl::InvalidArgumentError("no server given");
    impl->opts = std::move(opts);
    if (https) {
      auto ctx = MakeTlsContext(impl->opts);
      if (!ctx.ok()) return ctx.status();
      impl->tls = std::move(*ctx);
    }
    return impl;
  }

  const Endpoint& ep() const { return eps[current.load() % eps.size()]; }
  absl::StatusOr<std::unique_ptr<Conn>> NewConn(size_t member) {
    return Connect(eps[member], opts, tls.get());
  }
  absl::StatusOr<std::unique_ptr<Conn>> NewConn() { return NewConn(current.load() % eps.size()); }
  // Moves on from `member` (unreachable) to the next server.
  void Failed(size_t member) {
    size_t expected = member;
    current.compare_exchange_strong(expected, (member + 1) % eps.size());
  }

  // A pooled connection to `member` idle for less than idle_timeout, or null.
  std::unique_ptr<Conn> TakeIdle(size_t member) {
    absl::MutexLock lock(&mu);
    const Clock::time_point now = Clock::now();
    for (size_t i = idle.size(); i-- > 0;) {
      if (idle[i].first != member) continue;
      auto c = std::move(idle[i].second);
      idle.erase(idle.begin() + static_cast<std::ptrdiff_t>(i));
      if (now - c->idle_since < Chrono(opts.idle_timeout)) return c;
    }
    return nullptr;
  }
  void Release(size_t member, std::unique_ptr<Conn> c) {
    c->idle_since = Clock::now();
    absl::MutexLock lock(&mu);
    if (static_cast<int>(idle.size()) < opts.max_idle_connections) {
      idle.emplace_back(member, std::move(c));
    }
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
  const size_t n = impl_->eps.size();
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
  http::request<http::string_body> req{http::string_to_verb(method), target, 11};
  Fill(req, impl_->eps[member], impl_->opts);
  if (!body.empty()) {
    req.set(http::field::content_type, content_type);
    req.body() = body;
  }
  req.prepare_payload();
  const Clock::time_point deadline = Clock::now() + Chrono(impl_->opts.request_timeout);
  for (int attempt = 0; attempt < 2; ++attempt) {
    std::unique_ptr<Conn> c = attempt == 0 ? impl_->TakeIdle(member) : nullptr;
    bool reused = c != nullptr;
    if (!c) {
      auto fresh = impl_->NewConn(member);
      if (!fresh.ok()) return fresh.status();
      c = std::move(*fresh);
    }
    beast::error_code ec =
        c->Run(deadline, [&](auto& s, auto done) { http::async_write(s, req, std::move(done)); });
    if (ec) {
      if (reused && ec != beast::error::timeout) continue;  // The server closed an idle connection.
      *sent = true;
      return absl::UnavailableError("write: " + ec.message());
    }
    http::response_parser<http::string_body> p;
    p.header_limit(1 << 20);
    p.body_limit(impl_->opts.max_response_bytes);
    ec = c->Run(deadline, [&](auto& s, auto done) {
      http::async_read(s, c->buf, p, std::move(done));
    });
    if (ec) {
      bool closed = ec == http::error::end_of_stream || ec == asio::error::eof ||
                    ec == asio::error::connection_reset || ec == ssl::error::stream_truncated;
      if (reused && closed && !p.got_some()) continue;
      *sent = true;
      if (ec == beast::error::timeout) {
        return absl::DeadlineExceededError(absl::StrCat(method, " ", target, ": no response within ",
                                                        absl::FormatDuration(impl_->opts.request_timeout)));
      }
      if (ec == http::error::body_limit) {
        return absl::ResourceExhaustedError(absl::StrCat(
            method, " ", target, ": the response is larger than ", impl_->opts.max_response_bytes,
            " bytes"));
      }
      return absl::UnavailableError("read: " + ec.message());
    }
    auto res = p.release();
    Response out{static_cast<int>(res.result_int()), std::string(res[http::field::content_type]),
                 std::move(res.body())};
    if (res.keep_alive()) impl_->Release(member, std::move(c));
    return out;
  }
  *sent = true;
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
  // The first server that answers (see Do); the caller resumes a watch
  // that ended from its last resourceVersion, on whichever server is up.
  const size_t n = impl_->eps.size();
  const size_t first = impl_->current.load() % n;
  absl::Status last;
  for (size_t k = 0; k < n; ++k) {
    const size_t member = (first + k) % n;
    auto c = impl_->NewConn(member);
    if (!c.ok()) {
      impl_->Failed(member);
      last = c.status();
      continue;
    }
    http::request<http::string_body> req{http::verb::get, target, 11};
    Fill(req, impl_->eps[member], impl_->opts);
    req.prepare_payload();
    auto p = OpenStream(**c, req, Clock::now() + Chrono(impl_->opts.request_timeout));
    if (!p.ok()) {
      if (!absl::IsUnavailable(p.status())) return p.status();
      impl_->Failed(member);
      last = p.status();
      continue;
    }
    return std::unique_ptr<WatchStream>(
        new HttpWatchStream(std::move(*c), std::move(*p), impl_->opts.max_watch_event_bytes));
  }
  return last;
}

absl::Status StreamGet(const std::string& base_url, const std::string& target,
                       const std::function<bool(std::string_view)>& write,
                       const HttpClientOptions& opts) {
  HttpClientOptions o = opts;
  o.user_agent = "batchd-log-proxy";
  auto impl = HttpClient::Impl::New(base_url, o);  // Public for this use.
  if (!impl.ok()) return impl.status();
  auto c = (*impl)->NewConn();
  if (!c.ok()) return c.status();
  http::request<http::string_body> req{http::verb::get, target, 11};
  Fill(req, (*impl)->ep(), o);
  req.keep_alive(false);
  req.prepare_payload();
  auto p = OpenStream(**c, req, Clock::now() + Chrono(o.request_timeout));
  if (!p.ok()) return p.status();
  // The log body (a follow) may last: no deadline, keepalive instead.
  absl::Status st = ReadBody(**c, **p, Clock::time_point::max(), write);
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
