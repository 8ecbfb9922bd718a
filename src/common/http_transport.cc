#include "common/http_transport.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <type_traits>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include "absl/base/thread_annotations.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"

namespace batchd {

namespace beast = boost::beast;
namespace http = beast::http;
namespace asio = boost::asio;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using SteadyClock = std::chrono::steady_clock;

namespace {

SteadyClock::duration Chrono(absl::Duration d) { return absl::ToChronoNanoseconds(d); }

SteadyClock::time_point DeadlineAfter(absl::Duration d) {
  if (d == absl::InfiniteDuration()) return SteadyClock::time_point::max();
  return SteadyClock::now() + Chrono(d);
}

// One connection with its own io_context: every operation runs
// asynchronously under a deadline on the calling thread (Run).
struct Conn {
  asio::io_context ioc{1};
  std::unique_ptr<beast::tcp_stream> tcp;
  std::unique_ptr<beast::ssl_stream<beast::tcp_stream>> tls;
  beast::flat_buffer buf;
  SteadyClock::time_point idle_since;
  int fd = -1;

  beast::tcp_stream& Lowest() { return tls ? beast::get_lowest_layer(*tls) : *tcp; }

  // Starts `op(stream, handler)` on the TLS or plain stream and runs it to
  // completion or `deadline` (time_point::max(): none).
  template <class Op>
  beast::error_code Run(SteadyClock::time_point deadline, Op op) {
    return RunChecking(deadline, absl::InfiniteDuration(), nullptr, std::move(op));
  }

  // As Run, and while the operation is pending, asks `wanted` every
  // `check_every` (InfiniteDuration: never): once it answers false the
  // operation is cancelled and operation_aborted returned (a proxy whose own
  // client left).
  template <class Op>
  beast::error_code RunChecking(SteadyClock::time_point deadline, absl::Duration check_every,
                                const std::function<bool()>& wanted, Op op) {
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
    if (check_every == absl::InfiniteDuration()) {
      ioc.run();
      return result;
    }
    const auto every = Chrono(std::max(check_every, absl::Milliseconds(1)));
    // run_for returns early once the operation (and its timer) completed:
    // the context then ran out of work and is stopped.
    while (ioc.run_for(every), !ioc.stopped()) {
      if (wanted()) continue;
      Lowest().cancel();
      ioc.run();  // The handler runs (aborted) before `result` goes away.
      return asio::error::operation_aborted;
    }
    return result;
  }
};

void SetKeepAlive(int fd, const HttpTransportOptions& o) {
  int on = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof(on));
  int idle = std::max<int>(1, static_cast<int>(absl::ToInt64Seconds(o.keepalive_idle)));
  int intvl = std::max<int>(1, static_cast<int>(absl::ToInt64Seconds(o.keepalive_interval)));
  int cnt = std::max(1, o.keepalive_count);
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof(intvl));
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt));
  unsigned int user_timeout = static_cast<unsigned int>((idle + intvl * cnt) * 1000);
  ::setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &user_timeout, sizeof(user_timeout));
}

absl::StatusOr<std::unique_ptr<Conn>> Connect(const HttpEndpoint& ep,
                                              const HttpTransportOptions& o, ssl::context* tls) {
  auto c = std::make_unique<Conn>();
  c->tcp = std::make_unique<beast::tcp_stream>(c->ioc);
  const SteadyClock::time_point deadline = DeadlineAfter(o.connect_timeout);
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
  c->fd = c->tcp->socket().native_handle();
  SetKeepAlive(c->fd, o);
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

absl::StatusOr<std::unique_ptr<ssl::context>> MakeTlsContext(const HttpTransportOptions& o) {
  auto ctx = std::make_unique<ssl::context>(ssl::context::tls_client);
  beast::error_code ec;
  ctx->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                       ssl::context::no_sslv3 | ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1,
                   ec);
  ctx->set_verify_mode(ssl::verify_peer);
  auto fail = [&](const std::string& name, const std::string& file) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, file.empty() ? "" : " ", file, ": ", ec.message()));
  };
  if (!o.ca_data.empty()) {
    ctx->add_certificate_authority(asio::buffer(o.ca_data), ec);
    if (ec) return fail(o.ca_name, "");
  } else if (!o.ca_file.empty()) {
    ctx->load_verify_file(o.ca_file, ec);
    if (ec) return fail(o.ca_name, o.ca_file);
  } else {
    ctx->set_default_verify_paths(ec);
  }
  if (!o.cert_data.empty()) {
    ctx->use_certificate_chain(asio::buffer(o.cert_data), ec);
    if (ec) return fail(o.cert_name, "");
  } else if (!o.cert_file.empty()) {
    ctx->use_certificate_chain_file(o.cert_file, ec);
    if (ec) return fail(o.cert_name, o.cert_file);
  }
  if (!o.key_data.empty()) {
    ctx->use_private_key(asio::buffer(o.key_data), ssl::context::pem, ec);
    if (ec) return fail(o.key_name, "");
  } else if (!o.key_file.empty()) {
    ctx->use_private_key_file(o.key_file, ssl::context::pem, ec);
    if (ec) return fail(o.key_name, o.key_file);
  }
  return ctx;
}

http::request<http::string_body> ToBeast(const HttpEndpoint& ep, const HttpOutgoing& o) {
  http::request<http::string_body> req{http::string_to_verb(o.method), o.target, 11};
  req.set(http::field::host, ep.host + ":" + ep.port);
  for (const auto& [name, value] : o.headers) req.set(name, value);
  req.keep_alive(o.keep_alive);
  req.body() = o.body;
  req.prepare_payload();
  return req;
}

bool ClosedBeforeAnswer(const beast::error_code& ec) {
  return ec == http::error::end_of_stream || ec == asio::error::eof ||
         ec == asio::error::connection_reset || ec == ssl::error::stream_truncated;
}

}  // namespace

std::string HttpEndpoint::Url() const {
  const bool v6 = host.find(':') != std::string::npos;
  return absl::StrCat(https ? "https://" : "http://", v6 ? "[" : "", host, v6 ? "]" : "", ":",
                      port);
}

absl::StatusOr<HttpEndpoint> ParseHttpEndpoint(std::string s, std::string_view what) {
  HttpEndpoint e;
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
    return absl::InvalidArgumentError(
        absl::StrCat(std::string(what), " must be http[s]://HOST:PORT, got ", s));
  }
  e.host = s.substr(0, colon);
  e.port = s.substr(colon + 1);
  if (e.host.size() > 2 && e.host.front() == '[' && e.host.back() == ']') {
    e.host = e.host.substr(1, e.host.size() - 2);
  }
  return e;
}

// --- HttpBodyStream -----------------------------------------------------------

struct HttpBodyStream::Impl {
  std::unique_ptr<Conn> conn;
  http::response_parser<http::buffer_body> parser;
  std::atomic<bool> stop{false};
  int fd = -1;  // read by Stop on any thread, so not from the socket object
};

HttpBodyStream::HttpBodyStream(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
HttpBodyStream::~HttpBodyStream() = default;

int HttpBodyStream::code() const { return impl_->parser.get().result_int(); }

absl::Status HttpBodyStream::Read(const std::function<bool(std::string_view)>& fn,
                                  absl::Duration timeout, absl::Duration check_every) {
  Impl& s = *impl_;
  const SteadyClock::time_point deadline = DeadlineAfter(timeout);
  char tmp[64 * 1024];
  bool unwanted = false;
  const std::function<bool()> wanted = [&] {
    if (s.stop.load()) return false;
    unwanted = !fn(std::string_view());
    return !unwanted;
  };
  while (!s.parser.is_done()) {
    if (s.stop.load()) return absl::CancelledError("stopped");
    s.parser.get().body().data = tmp;
    s.parser.get().body().size = sizeof(tmp);
    beast::error_code ec = s.conn->RunChecking(deadline, check_every, wanted, [&](auto& st,
                                                                                  auto done) {
      http::async_read_some(st, s.conn->buf, s.parser, std::move(done));
    });
    if (unwanted) return absl::CancelledError("stopped");
    if (ec == http::error::need_buffer) ec = {};
    const size_t n = sizeof(tmp) - s.parser.get().body().size;
    if (n > 0 && !fn(std::string_view(tmp, n))) return absl::CancelledError("stopped");
    if (s.stop.load()) return absl::CancelledError("stopped");
    if (ec == beast::error::timeout) return absl::DeadlineExceededError("read: timed out");
    if (ec) return absl::UnavailableError("read: " + ec.message());
  }
  return absl::OkStatus();
}

void HttpBodyStream::Stop() {
  impl_->stop.store(true);
  if (impl_->fd >= 0) ::shutdown(impl_->fd, SHUT_RDWR);
}

// --- HttpTransport ------------------------------------------------------------

struct HttpTransport::Impl {
  std::vector<HttpEndpoint> eps;
  HttpTransportOptions opts;
  std::unique_ptr<ssl::context> tls;
  absl::Mutex mu;
  std::vector<std::pair<size_t, std::unique_ptr<Conn>>> idle ABSL_GUARDED_BY(mu);

  // A pooled connection to `server` idle for less than idle_timeout, or null.
  std::unique_ptr<Conn> TakeIdle(size_t server) {
    std::vector<std::unique_ptr<Conn>> stale;  // closed outside the lock
    absl::MutexLock lock(&mu);
    const SteadyClock::time_point now = SteadyClock::now();
    for (size_t i = idle.size(); i-- > 0;) {
      if (idle[i].first != server) continue;
      auto c = std::move(idle[i].second);
      idle.erase(idle.begin() + static_cast<std::ptrdiff_t>(i));
      if (now - c->idle_since < Chrono(opts.idle_timeout)) return c;
      stale.push_back(std::move(c));
    }
    return nullptr;
  }
  void Release(size_t server, std::unique_ptr<Conn> c) {
    c->idle_since = SteadyClock::now();
    absl::MutexLock lock(&mu);
    if (static_cast<int>(idle.size()) < opts.max_idle) idle.emplace_back(server, std::move(c));
  }
};

HttpTransport::HttpTransport(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
HttpTransport::~HttpTransport() = default;

absl::StatusOr<std::unique_ptr<HttpTransport>> HttpTransport::Create(
    std::vector<HttpEndpoint> servers, HttpTransportOptions opts) {
  if (servers.empty()) return absl::InvalidArgumentError("no server given");
  auto impl = std::make_unique<Impl>();
  const bool https =
      std::any_of(servers.begin(), servers.end(), [](const HttpEndpoint& e) { return e.https; });
  impl->eps = std::move(servers);
  impl->opts = std::move(opts);
  if (https) {
    auto ctx = MakeTlsContext(impl->opts);
    if (!ctx.ok()) return ctx.status();
    impl->tls = std::move(*ctx);
  }
  return std::unique_ptr<HttpTransport>(new HttpTransport(std::move(impl)));
}

size_t HttpTransport::size() const { return impl_->eps.size(); }
const HttpEndpoint& HttpTransport::endpoint(size_t server) const { return impl_->eps[server]; }
const HttpTransportOptions& HttpTransport::options() const { return impl_->opts; }

void HttpTransport::DropIdle(size_t server) {
  std::vector<std::unique_ptr<Conn>> dropped;  // closed outside the lock
  absl::MutexLock lock(&impl_->mu);
  auto& idle = impl_->idle;
  for (size_t i = idle.size(); i-- > 0;) {
    if (idle[i].first != server) continue;
    dropped.push_back(std::move(idle[i].second));
    idle.erase(idle.begin() + static_cast<std::ptrdiff_t>(i));
  }
}

absl::StatusOr<HttpIncoming> HttpTransport::RoundTrip(size_t server, const HttpOutgoing& out,
                                                      bool* sent) {
  const HttpEndpoint& ep = impl_->eps[server];
  const HttpTransportOptions& o = impl_->opts;
  http::request<http::string_body> req = ToBeast(ep, out);
  const SteadyClock::time_point deadline = DeadlineAfter(o.request_timeout);
  for (int attempt = 0; attempt < 2; ++attempt) {
    std::unique_ptr<Conn> c = attempt == 0 ? impl_->TakeIdle(server) : nullptr;
    const bool reused = c != nullptr;
    if (!c) {
      auto fresh = Connect(ep, o, impl_->tls.get());
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
    p.body_limit(o.max_response_bytes);
    ec = c->Run(deadline,
                [&](auto& s, auto done) { http::async_read(s, c->buf, p, std::move(done)); });
    if (ec) {
      if (reused && ClosedBeforeAnswer(ec) && !p.got_some()) continue;
      *sent = true;
      if (ec == beast::error::timeout) {
        return absl::DeadlineExceededError(absl::StrCat(out.method, " ", out.target,
                                                        ": no response within ",
                                                        absl::FormatDuration(o.request_timeout)));
      }
      if (ec == http::error::body_limit) {
        return absl::ResourceExhaustedError(absl::StrCat(out.method, " ", out.target,
                                                         ": the response is larger than ",
                                                         o.max_response_bytes, " bytes"));
      }
      return absl::UnavailableError("read: " + ec.message());
    }
    auto res = p.release();
    HttpIncoming in{static_cast<int>(res.result_int()), std::string(res[http::field::content_type]),
                    std::move(res.body())};
    if (res.keep_alive() && out.keep_alive) impl_->Release(server, std::move(c));
    return in;
  }
  *sent = true;
  return absl::UnavailableError("connection closed by the server");
}

absl::StatusOr<std::unique_ptr<HttpBodyStream>> HttpTransport::OpenStream(
    size_t server, const HttpOutgoing& out) {
  return OpenStream(server, out, absl::InfiniteDuration(), nullptr);
}

absl::StatusOr<std::unique_ptr<HttpBodyStream>> HttpTransport::OpenStream(
    size_t server, const HttpOutgoing& out, absl::Duration check_every,
    const std::function<bool()>& wanted) {
  const bool checked = wanted && check_every != absl::InfiniteDuration();
  const HttpEndpoint& ep = impl_->eps[server];
  auto c = Connect(ep, impl_->opts, impl_->tls.get());
  if (!c.ok()) return c.status();
  http::request<http::string_body> req = ToBeast(ep, out);
  const SteadyClock::time_point deadline = DeadlineAfter(impl_->opts.request_timeout);
  auto s = std::make_unique<HttpBodyStream::Impl>();
  s->conn = std::move(*c);
  s->fd = s->conn->fd;
  beast::error_code ec = s->conn->Run(
      deadline, [&](auto& st, auto done) { http::async_write(st, req, std::move(done)); });
  if (ec) return absl::UnavailableError("write: " + ec.message());
  s->parser.body_limit(boost::none);
  s->parser.header_limit(1 << 20);
  bool unwanted = false;
  const std::function<bool()> still_wanted = [&] { return !(unwanted = !wanted()); };
  ec = s->conn->RunChecking(
      checked ? SteadyClock::time_point::max() : deadline,
      checked ? check_every : absl::InfiniteDuration(), still_wanted, [&](auto& st, auto done) {
        http::async_read_header(st, s->conn->buf, s->parser, std::move(done));
      });
  if (unwanted) return absl::CancelledError("stopped");
  if (ec == beast::error::timeout) return absl::DeadlineExceededError("read: timed out");
  if (ec) return absl::UnavailableError("read: " + ec.message());
  return std::make_unique<HttpBodyStream>(std::move(s));
}

}  // namespace batchd
