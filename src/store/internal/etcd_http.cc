#include "store/internal/etcd_http.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <chrono>
#include <utility>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace batchd::store::internal {

namespace beast = boost::beast;
namespace http = beast::http;
namespace asio = boost::asio;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using SteadyClock = std::chrono::steady_clock;

namespace {

SteadyClock::duration Chrono(absl::Duration d) { return absl::ToChronoNanoseconds(d); }

struct Endpoint {
  std::string host, port;
  bool https = false;
  std::string Name() const { return absl::StrCat(https ? "https://" : "http://", host, ":", port); }
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
    return absl::InvalidArgumentError("etcd server must be http[s]://HOST:PORT, got " + s);
  }
  e.host = s.substr(0, colon);
  e.port = s.substr(colon + 1);
  if (e.host.size() > 2 && e.host.front() == '[' && e.host.back() == ']') {
    e.host = e.host.substr(1, e.host.size() - 2);
  }
  return e;
}

// One connection with its own io_context; operations run asynchronously on
// the calling thread until done, a deadline, or a stop request.
struct Conn {
  asio::io_context ioc{1};
  std::unique_ptr<beast::tcp_stream> tcp;
  std::unique_ptr<beast::ssl_stream<beast::tcp_stream>> tls;
  beast::flat_buffer buf;
  SteadyClock::time_point idle_since;

  beast::tcp_stream& Lowest() { return tls ? beast::get_lowest_layer(*tls) : *tcp; }

  template <class Op>
  beast::error_code Run(SteadyClock::time_point deadline, Op op,
                        const std::atomic<bool>* stop = nullptr) {
    beast::error_code result = asio::error::would_block;
    if (deadline == SteadyClock::time_point::max()) {
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
    if (stop == nullptr) {
      ioc.run();
    } else {
      while (!ioc.stopped()) {
        ioc.run_for(std::chrono::milliseconds(100));
        if (stop->load() && result == asio::error::would_block) {
          beast::error_code ignored;
          Lowest().socket().cancel(ignored);
          Lowest().socket().close(ignored);
        }
      }
    }
    return result;
  }
};

void SetKeepAlive(int fd) {
  int on = 1, idle = 10, intvl = 5, cnt = 3;
  ::setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof(on));
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof(intvl));
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt));
  unsigned int user_timeout = 25000;
  ::setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &user_timeout, sizeof(user_timeout));
}

absl::StatusOr<std::unique_ptr<Conn>> Connect(const Endpoint& ep, const EtcdHttpOptions& o,
                                              ssl::context* tls) {
  auto c = std::make_unique<Conn>();
  c->tcp = std::make_unique<beast::tcp_stream>(c->ioc);
  const SteadyClock::time_point deadline = SteadyClock::now() + Chrono(o.connect_timeout);
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
    return absl::UnavailableError(absl::StrCat("etcd ", ep.Name(), ": resolve timed out"));
  }
  if (ec) return absl::UnavailableError(absl::StrCat("etcd ", ep.Name(), ": ", ec.message()));
  ec = c->Run(deadline, [&](auto& s, auto done) {
    beast::get_lowest_layer(s).async_connect(results, std::move(done));
  });
  if (ec) return absl::UnavailableError(absl::StrCat("etcd ", ep.Name(), ": ", ec.message()));
  beast::error_code ignored;
  c->tcp->socket().set_option(tcp::no_delay(true), ignored);
  SetKeepAlive(c->tcp->socket().native_handle());
  if (!ep.https) return c;
  c->tls = std::make_unique<beast::ssl_stream<beast::tcp_stream>>(std::move(*c->tcp), *tls);
  c->tcp.reset();
  beast::error_code aec;
  asio::ip::make_address(ep.host, aec);
  if (aec && !SSL_set_tlsext_host_name(c->tls->native_handle(), ep.host.c_str())) {
    return absl::UnavailableError("etcd TLS: cannot set the server name " + ep.host);
  }
  c->tls->set_verify_callback(ssl::host_name_verification(ep.host));
  ec = c->Run(deadline, [](auto& s, auto done) {
    if constexpr (!std::is_same_v<std::decay_t<decltype(s)>, beast::tcp_stream>) {
      s.async_handshake(ssl::stream_base::client, std::move(done));
    }
  });
  if (ec) {
    return absl::UnavailableError(
        absl::StrCat("etcd ", ep.Name(), ": TLS handshake: ", ec.message()));
  }
  return c;
}

absl::StatusOr<std::unique_ptr<ssl::context>> MakeTlsContext(const EtcdHttpOptions& o) {
  auto ctx = std::make_unique<ssl::context>(ssl::context::tls_client);
  beast::error_code ec;
  ctx->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                       ssl::context::no_sslv3 | ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1,
                   ec);
  ctx->set_verify_mode(ssl::verify_peer);
  if (!o.ca_file.empty()) {
    ctx->load_verify_file(o.ca_file, ec);
    if (ec) return absl::InvalidArgumentError("--etcd-cafile " + o.ca_file + ": " + ec.message());
  } else {
    ctx->set_default_verify_paths(ec);
  }
  if (!o.cert_file.empty()) {
    ctx->use_certificate_chain_file(o.cert_file, ec);
    if (ec) return absl::InvalidArgumentError("--etcd-certfile " + o.cert_file + ": " + ec.message());
  }
  if (!o.key_file.empty()) {
    ctx->use_private_key_file(o.key_file, ssl::context::pem, ec);
    if (ec) return absl::InvalidArgumentError("--etcd-keyfile " + o.key_file + ": " + ec.message());
  }
  return ctx;
}

void FillRequest(http::request<http::string_body>& req, const Endpoint& ep,
                 const std::string& body) {
  req.set(http::field::host, ep.host + ":" + ep.port);
  req.set(http::field::user_agent, "batchd-etcd");
  req.set(http::field::content_type, "application/json");
  // Refuse (rather than hang on) a member that has no leader.
  req.set("Grpc-Metadata-Hasleader", "true");
  req.body() = body;
  req.prepare_payload();
}

}  // namespace

struct EtcdHttp::Impl {
  EtcdHttpOptions opts;
  std::vector<Endpoint> eps;
  std::unique_ptr<ssl::context> tls;
  std::atomic<size_t> current{0};      // the member requests go to first
  std::atomic<size_t> next_stream{0};  // the member the next stream tries first
  absl::Mutex mu;
  std::vector<std::vector<std::unique_ptr<Conn>>> idle ABSL_GUARDED_BY(mu);

  std::unique_ptr<Conn> TakeIdle(size_t member) {
    absl::MutexLock lock(&mu);
    auto& pool = idle[member];
    const SteadyClock::time_point now = SteadyClock::now();
    while (!pool.empty()) {
      auto c = std::move(pool.back());
      pool.pop_back();
      if (now - c->idle_since < std::chrono::seconds(30)) return c;
    }
    return nullptr;
  }
  void Release(size_t member, std::unique_ptr<Conn> c) {
    c->idle_since = SteadyClock::now();
    absl::MutexLock lock(&mu);
    if (static_cast<int>(idle[member].size()) < opts.max_idle_per_member) {
      idle[member].push_back(std::move(c));
    }
  }
  void DropIdle(size_t member) {
    std::vector<std::unique_ptr<Conn>> dropped;
    absl::MutexLock lock(&mu);
    dropped.swap(idle[member]);
  }

  // One attempt on one member. `sent` tells whether the request may have
  // reached it (then it must not be repeated elsewhere).
  absl::StatusOr<EtcdHttpResponse> PostTo(size_t member, const std::string& path,
                                          const std::string& body, bool* sent) {
    const Endpoint& ep = eps[member];
    http::request<http::string_body> req{http::verb::post, path, 11};
    FillRequest(req, ep, body);
    const SteadyClock::time_point deadline = SteadyClock::now() + Chrono(opts.request_timeout);
    for (int attempt = 0; attempt < 2; ++attempt) {
      std::unique_ptr<Conn> c = attempt == 0 ? TakeIdle(member) : nullptr;
      const bool reused = c != nullptr;
      if (!c) {
        auto fresh = Connect(ep, opts, tls.get());
        if (!fresh.ok()) return fresh.status();
        c = std::move(*fresh);
      }
      beast::error_code ec =
          c->Run(deadline, [&](auto& s, auto done) { http::async_write(s, req, std::move(done)); });
      if (ec) {
        if (reused && ec != beast::error::timeout) continue;  // closed while idle
        *sent = true;
        return absl::UnavailableError(absl::StrCat("etcd ", ep.Name(), ": write: ", ec.message()));
      }
      http::response_parser<http::string_body> p;
      p.header_limit(1 << 20);
      p.body_limit(opts.max_response_bytes);
      ec = c->Run(deadline,
                  [&](auto& s, auto done) { http::async_read(s, c->buf, p, std::move(done)); });
      if (ec) {
        const bool closed = ec == http::error::end_of_stream || ec == asio::error::eof ||
                            ec == asio::error::connection_reset;
        if (reused && closed && !p.got_some()) continue;
        *sent = true;
        if (ec == beast::error::timeout) {
          return absl::DeadlineExceededError(absl::StrCat(
              "etcd ", ep.Name(), path, ": no answer within ",
              absl::FormatDuration(opts.request_timeout)));
        }
        if (ec == http::error::body_limit) {
          return absl::ResourceExhaustedError(absl::StrCat(
              "etcd ", ep.Name(), path, ": answer larger than ", opts.max_response_bytes));
        }
        return absl::UnavailableError(absl::StrCat("etcd ", ep.Name(), ": read: ", ec.message()));
      }
      auto res = p.release();
      EtcdHttpResponse out{static_cast<int>(res.result_int()), std::move(res.body())};
      if (res.keep_alive()) Release(member, std::move(c));
      return out;
    }
    *sent = true;
    return absl::UnavailableError(absl::StrCat("etcd ", ep.Name(), ": connection closed"));
  }
};

namespace {

class HttpStream : public EtcdHttpStream {
 public:
  HttpStream(std::unique_ptr<Conn> c, std::string name)
      : c_(std::move(c)), name_(std::move(name)) {}

  absl::Status Start(http::request<http::string_body>& req, absl::Duration timeout) {
    const SteadyClock::time_point deadline = SteadyClock::now() + Chrono(timeout);
    beast::error_code ec = c_->Run(
        deadline, [&](auto& s, auto done) { http::async_write(s, req, std::move(done)); }, &stop_);
    if (ec) return absl::UnavailableError(absl::StrCat("etcd ", name_, ": write: ", ec.message()));
    parser_.body_limit(boost::none);
    ec = c_->Run(
        deadline,
        [&](auto& s, auto done) { http::async_read_header(s, c_->buf, parser_, std::move(done)); },
        &stop_);
    if (ec) return absl::UnavailableError(absl::StrCat("etcd ", name_, ": read: ", ec.message()));
    const int code = parser_.get().result_int();
    if (code < 200 || code >= 300) {
      return absl::UnavailableError(absl::StrCat("etcd ", name_, ": watch answered HTTP ", code));
    }
    return absl::OkStatus();
  }

  absl::Status Run(const std::function<bool(const std::string&)>& on_line) override {
    char tmp[64 * 1024];
    std::string line;
    while (!parser_.is_done()) {
      if (stop_.load()) return absl::OkStatus();
      parser_.get().body().data = tmp;
      parser_.get().body().size = sizeof(tmp);
      beast::error_code ec = c_->Run(
          SteadyClock::time_point::max(),
          [&](auto& s, auto done) { http::async_read_some(s, c_->buf, parser_, std::move(done)); },
          &stop_);
      if (ec == http::error::need_buffer) ec = {};
      const size_t n = sizeof(tmp) - parser_.get().body().size;
      for (size_t i = 0; i < n; ++i) {
        if (tmp[i] != '\n') {
          line.push_back(tmp[i]);
          continue;
        }
        if (!line.empty() && !on_line(line)) return absl::OkStatus();
        line.clear();
      }
      if (stop_.load()) return absl::OkStatus();
      if (ec) return absl::UnavailableError(absl::StrCat("etcd ", name_, ": watch: ", ec.message()));
    }
    if (!line.empty()) on_line(line);
    return absl::UnavailableError(absl::StrCat("etcd ", name_, ": watch stream ended"));
  }

  void Stop() override { stop_.store(true); }

 private:
  std::unique_ptr<Conn> c_;
  std::string name_;
  std::atomic<bool> stop_{false};
  http::response_parser<http::buffer_body> parser_;
};

}  // namespace

EtcdHttp::EtcdHttp(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
EtcdHttp::~EtcdHttp() = default;

absl::StatusOr<std::unique_ptr<EtcdHttp>> EtcdHttp::Create(EtcdHttpOptions opts) {
  auto impl = std::make_unique<Impl>();
  if (opts.servers.empty()) return absl::InvalidArgumentError("no etcd server given");
  bool https = false;
  for (const std::string& s : opts.servers) {
    auto ep = ParseServer(s);
    if (!ep.ok()) return ep.status();
    https = https || ep->https;
    impl->eps.push_back(*ep);
  }
  if (https) {
    auto ctx = MakeTlsContext(opts);
    if (!ctx.ok()) return ctx.status();
    impl->tls = std::move(*ctx);
  }
  {
    absl::MutexLock lock(&impl->mu);
    impl->idle.resize(impl->eps.size());
  }
  impl->opts = std::move(opts);
  return std::unique_ptr<EtcdHttp>(new EtcdHttp(std::move(impl)));
}

absl::StatusOr<EtcdHttpResponse> EtcdHttp::Post(const std::string& path, const std::string& body) {
  const size_t n = impl_->eps.size();
  const size_t first = impl_->current.load();
  absl::Status last = absl::UnavailableError("no etcd member answered");
  for (size_t i = 0; i < n; ++i) {
    const size_t member = (first + i) % n;
    bool sent = false;
    absl::StatusOr<EtcdHttpResponse> r = impl_->PostTo(member, path, body, &sent);
    // A member without a leader answers 503 through the gateway: try another.
    if (r.ok() && r->code == 503 && i + 1 < n && absl::StrContains(r->body, "leader")) {
      last = absl::UnavailableError("etcd member has no leader");
      impl_->current.store((member + 1) % n);
      continue;
    }
    if (r.ok() || sent) {
      if (!r.ok()) {
        impl_->DropIdle(member);
        impl_->current.store((member + 1) % n);
      }
      return r;
    }
    last = r.status();
    impl_->DropIdle(member);
    impl_->current.store((member + 1) % n);
  }
  return last;
}

absl::StatusOr<std::unique_ptr<EtcdHttpStream>> EtcdHttp::OpenStream(const std::string& path,
                                                                       const std::string& body) {
  const size_t n = impl_->eps.size();
  const size_t first = impl_->next_stream.fetch_add(1) % n;
  absl::Status last = absl::UnavailableError("no etcd member answered");
  for (size_t i = 0; i < n; ++i) {
    const size_t member = (first + i) % n;
    const Endpoint& ep = impl_->eps[member];
    auto c = Connect(ep, impl_->opts, impl_->tls.get());
    if (!c.ok()) {
      last = c.status();
      continue;
    }
    http::request<http::string_body> req{http::verb::post, path, 11};
    FillRequest(req, ep, body);
    auto s = std::make_unique<HttpStream>(std::move(*c), ep.Name());
    absl::Status st = s->Start(req, impl_->opts.request_timeout);
    if (!st.ok()) {
      last = st;
      continue;
    }
    impl_->next_stream.store(member);
    return s;
  }
  return last;
}

}  // namespace batchd::store::internal
