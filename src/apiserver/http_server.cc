// HttpServer (http_server.h): accepting connections, TLS set-up, Start and
// the bounded Stop, the figures for /metrics, and ParseRawRequest. The
// connections themselves are internal/http_session.h, the shared state
// internal/http_server_impl.h, the worker threads internal/http_worker_pool.h
// and the socket-free request helpers http_request.cc.
#include "apiserver/http_server.h"

#include <openssl/ssl.h>

#include <algorithm>
#include <climits>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "apiserver/internal/http_server_impl.h"
#include "apiserver/internal/http_session.h"
#include "apiserver/internal/http_worker_pool.h"
#include "common/logging.h"
#include "common/thread_name.h"

namespace batchd::apiserver {

namespace net = boost::asio;
namespace ssl = net::ssl;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;
using internal::CodeForReadError;
using internal::Session;
using internal::ToHttpRequest;
using internal::WorkerPool;

void HttpServer::Impl::Accept() {
  acceptor->async_accept(net::make_strand(*ioc),
                         [self = shared_from_this()](beast::error_code ec, tcp::socket sock) {
                           self->OnAccept(ec, std::move(sock));
                         });
}

void HttpServer::Impl::OnAccept(beast::error_code ec, tcp::socket sock) {
  if (stopping) return;
  if (ec) {
    accept_errors.fetch_add(1);
    if (ShouldLogAccept()) {
      BATCHD_LOG_ERROR("http: accept failed ({} connections open): {}", connections.load(),
                       ec.message());
    }
    // Out of descriptors or memory: back off a little, then accept again.
    accept_retry->expires_after(std::chrono::milliseconds(100));
    accept_retry->async_wait([self = shared_from_this()](beast::error_code e) {
      if (!e && !self->stopping) self->Accept();
    });
    return;
  }
  if (opts.max_connections > 0 && connections.load() >= opts.max_connections) {
    connections_refused.fetch_add(1);
    if (ShouldLogAccept()) {
      BATCHD_LOG_WARN("http: {} connections open (--max-connections); closing new ones",
                      connections.load());
    }
    beast::error_code e;
    sock.close(e);
    return Accept();
  }
  if (tls) {
    using S = beast::ssl_stream<beast::tcp_stream>;
    auto s = std::make_shared<Session<S>>(shared_from_this(), S(std::move(sock), *tls));
    Register(s);
    s->Start();
  } else {
    auto s = std::make_shared<Session<beast::tcp_stream>>(shared_from_this(),
                                                          beast::tcp_stream(std::move(sock)));
    Register(s);
    s->Start();
  }
  Accept();
}

HttpServer::HttpServer(HttpServerOptions opts, HttpHandler handler)
    : impl_(std::make_shared<Impl>()) {
  impl_->opts = std::move(opts);
  impl_->handler = std::move(handler);
}

HttpServer::~HttpServer() { Stop(); }

namespace {

absl::StatusOr<std::unique_ptr<ssl::context>> MakeTlsContext(const TlsServerFiles& f) {
  auto ctx = std::make_unique<ssl::context>(ssl::context::tls_server);
  beast::error_code ec;
  ctx->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                       ssl::context::no_sslv3 | ssl::context::no_tlsv1 |
                       ssl::context::no_tlsv1_1 | ssl::context::single_dh_use,
                   ec);
  ctx->use_certificate_chain_file(f.cert_file, ec);
  if (ec) {
    return absl::InvalidArgumentError(
        absl::StrCat("TLS certificate ", f.cert_file, ": ", ec.message()));
  }
  ctx->use_private_key_file(f.key_file, ssl::context::pem, ec);
  if (ec) {
    return absl::InvalidArgumentError(absl::StrCat("TLS key ", f.key_file, ": ", ec.message()));
  }
  if (!SSL_CTX_check_private_key(ctx->native_handle())) {
    return absl::InvalidArgumentError(absl::StrCat("TLS key ", f.key_file,
                                                   " does not match the certificate ",
                                                   f.cert_file));
  }
  static const unsigned char kSessionContext[] = "batchd";
  SSL_CTX_set_session_id_context(ctx->native_handle(), kSessionContext, sizeof(kSessionContext) - 1);
  if (!f.client_ca_file.empty()) {
    ctx->load_verify_file(f.client_ca_file, ec);
    if (ec) {
      return absl::InvalidArgumentError(
          absl::StrCat("client CA ", f.client_ca_file, ": ", ec.message()));
    }
    if (STACK_OF(X509_NAME)* names = SSL_load_client_CA_file(f.client_ca_file.c_str())) {
      SSL_CTX_set_client_CA_list(ctx->native_handle(), names);
    }
    // Request a certificate; accept the handshake whatever it is: the
    // verification result decides whether the request gets a peer_cert.
    ctx->set_verify_mode(ssl::verify_peer);
    ctx->set_verify_callback([](bool, ssl::verify_context&) { return true; });
  }
  return ctx;
}

}  // namespace

absl::StatusOr<int> HttpServer::Start() {
  Impl& i = *impl_;
  if (i.opts.tls) {
    auto ctx = MakeTlsContext(*i.opts.tls);
    if (!ctx.ok()) return ctx.status();
    i.tls = std::move(*ctx);
  }
  beast::error_code ec;
  auto addr = net::ip::make_address(i.opts.address, ec);
  if (ec) return absl::InvalidArgumentError("bad listen address: " + i.opts.address);
  i.ioc = std::make_unique<net::io_context>(std::max(1, i.opts.io_threads));
  tcp::endpoint ep{addr, static_cast<unsigned short>(i.opts.port)};
  i.acceptor = std::make_unique<tcp::acceptor>(net::make_strand(*i.ioc));
  i.accept_retry = std::make_unique<net::steady_timer>(i.acceptor->get_executor());
  i.acceptor->open(ep.protocol(), ec);
  if (!ec) i.acceptor->set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) i.acceptor->bind(ep, ec);
  if (!ec) i.acceptor->listen(4096, ec);
  if (ec) {
    return absl::UnavailableError(
        absl::StrCat("listen on ", i.opts.address, ":", i.opts.port, ": ", ec.message()));
  }
  int port = i.acceptor->local_endpoint().port();
  auto cap = [](int n) { return n > 0 ? n : 4096; };
  int max_workers = cap(i.opts.max_requests_inflight) + cap(i.opts.max_mutating_requests_inflight) +
                    cap(i.opts.max_long_running_requests) + 16;  // + exempt health checks
  i.pool = std::make_unique<WorkerPool>(max_workers, i.opts.worker_idle_exit,
                                        i.opts.can_start_thread);
  i.work.emplace(i.ioc->get_executor());
  i.Accept();
  for (int t = 0; t < std::max(1, i.opts.io_threads); ++t) {
    i.io_threads.emplace_back([ioc = i.ioc.get()] {
      SetThreadName("http-io");
      for (;;) {
        try {
          ioc->run();
          return;
        } catch (const std::exception& e) {
          BATCHD_LOG_ERROR("http: I/O thread: {}", e.what());
        }
      }
    });
  }
  return port;
}

namespace {

// The state of a server that left handlers running (Stop): they still use
// it, so it is never freed.
ABSL_CONST_INIT absl::Mutex g_kept_mu(absl::kConstInit);
std::vector<std::shared_ptr<HttpServer::Impl>>* g_kept ABSL_GUARDED_BY(g_kept_mu) = nullptr;

void KeepForever(std::shared_ptr<HttpServer::Impl> impl) {
  absl::MutexLock lock(&g_kept_mu);
  if (g_kept == nullptr) g_kept = new std::vector<std::shared_ptr<HttpServer::Impl>>();
  g_kept->push_back(std::move(impl));
}

}  // namespace

void HttpServer::Stop() {
  if (!impl_ || !impl_->ioc || impl_->stopping.exchange(true)) return;
  Impl& i = *impl_;
  using Handlers = Impl::Handlers;
  const absl::Time start = absl::Now();
  net::post(i.acceptor->get_executor(), [impl = impl_] {
    beast::error_code ec;
    impl->acceptor->close(ec);
    impl->accept_retry->cancel();
  });
  for (auto& s : i.LiveSessions()) s->CloseIfIdle();
  // Long-running requests end at once: ClientGone() is true and their
  // writes fail from now on. Those still running after a moment (blocked in
  // a write to a client that does not read) are cut off.
  if (!i.WaitHandlers(Handlers::kLongRunning, start + i.opts.long_running_grace)) {
    BATCHD_LOG_WARN("http: cutting long-running requests still running after {}: {}",
                    absl::FormatDuration(i.opts.long_running_grace),
                    i.DescribeHandlers(Handlers::kLongRunning));
    for (auto& s : i.LiveSessions()) s->Cut(/*long_running_only=*/true);
  }
  // The other in-flight requests get shutdown_grace to finish.
  if (!i.WaitHandlers(Handlers::kOthers, start + i.opts.shutdown_grace)) {
    BATCHD_LOG_WARN("http: cutting requests still running after {}: {}",
                    absl::FormatDuration(i.opts.shutdown_grace),
                    i.DescribeHandlers(Handlers::kOthers));
    for (auto& s : i.LiveSessions()) s->Cut(/*long_running_only=*/false);
  }
  // Cut off, a handler's writes fail; one that still does not return is
  // blocked elsewhere: leave it (and everything it may use) behind.
  const bool all_returned = i.WaitHandlers(Handlers::kAll, absl::Now() + i.opts.cut_grace);
  if (!all_returned) {
    std::string stuck = i.DescribeHandlers(Handlers::kAll);
    {
      absl::MutexLock lock(&i.active_mu);
      i.abandoned = static_cast<int>(i.running.size());
    }
    BATCHD_LOG_ERROR("http: stopping without requests that did not return {} after their "
                     "connections were cut: {}",
                     absl::FormatDuration(i.opts.cut_grace), stuck);
  }
  i.pool->Stop(/*detach=*/!all_returned);
  i.work.reset();
  i.ioc->stop();
  for (auto& t : i.io_threads) t.join();
  i.io_threads.clear();
  if (!all_returned) {
    KeepForever(impl_);
    return;
  }
  // Destroys the remaining sessions (and their sockets) while Impl lives.
  i.accept_retry.reset();
  i.acceptor.reset();
  i.ioc.reset();
}

HttpServerStats HttpServer::Stats() const {
  const Impl& i = *impl_;
  HttpServerStats s;
  s.connections = i.connections.load();
  s.inflight_readonly = i.inflight[static_cast<int>(RequestKind::kReadOnly)].load();
  s.inflight_mutating = i.inflight[static_cast<int>(RequestKind::kMutating)].load();
  s.inflight_long_running = i.inflight[static_cast<int>(RequestKind::kLongRunning)].load();
  s.worker_threads = i.pool ? i.pool->live() : 0;
  s.rejected_readonly = i.rejected[static_cast<int>(RequestKind::kReadOnly)].load();
  s.rejected_mutating = i.rejected[static_cast<int>(RequestKind::kMutating)].load();
  s.rejected_long_running = i.rejected[static_cast<int>(RequestKind::kLongRunning)].load();
  s.connections_refused = i.connections_refused.load();
  s.accept_errors = i.accept_errors.load();
  s.thread_start_failures = i.thread_start_failures.load();
  s.timeouts = i.timeouts.load();
  s.abandoned = i.abandoned.load();
  return s;
}

void HttpServer::AppendPrometheus(std::string* out) const {
  HttpServerStats s = Stats();
  absl::StrAppend(
      out,
      "# HELP apiserver_current_inflight_requests Maximal number of currently used inflight "
      "request limit of this apiserver per request kind in last second.\n"
      "# TYPE apiserver_current_inflight_requests gauge\n",
      "apiserver_current_inflight_requests{request_kind=\"readOnly\"} ", s.inflight_readonly,
      "\n", "apiserver_current_inflight_requests{request_kind=\"mutating\"} ",
      s.inflight_mutating, "\n",
      "# HELP apiserver_longrunning_requests Number of long-running requests in flight.\n"
      "# TYPE apiserver_longrunning_requests gauge\n",
      "apiserver_longrunning_requests ", s.inflight_long_running, "\n",
      "# HELP apiserver_dropped_requests_total Requests refused with 429 by the in-flight "
      "limits.\n"
      "# TYPE apiserver_dropped_requests_total counter\n",
      "apiserver_dropped_requests_total{request_kind=\"readOnly\"} ", s.rejected_readonly, "\n",
      "apiserver_dropped_requests_total{request_kind=\"mutating\"} ", s.rejected_mutating, "\n",
      "apiserver_dropped_requests_total{request_kind=\"longRunning\"} ", s.rejected_long_running,
      "\n",
      "# HELP batchd_http_connections Open HTTP connections.\n"
      "# TYPE batchd_http_connections gauge\n",
      "batchd_http_connections ", s.connections, "\n",
      "# HELP batchd_http_worker_threads Threads running request handlers.\n"
      "# TYPE batchd_http_worker_threads gauge\n",
      "batchd_http_worker_threads ", s.worker_threads, "\n",
      "# HELP batchd_http_connections_refused_total Connections closed at once (over "
      "--max-connections).\n"
      "# TYPE batchd_http_connections_refused_total counter\n",
      "batchd_http_connections_refused_total ", s.connections_refused, "\n",
      "# HELP batchd_http_accept_errors_total Failed accepts (EMFILE...).\n"
      "# TYPE batchd_http_accept_errors_total counter\n",
      "batchd_http_accept_errors_total ", s.accept_errors, "\n",
      "# HELP batchd_http_request_timeouts_total Requests answered 504 Timeout.\n"
      "# TYPE batchd_http_request_timeouts_total counter\n",
      "batchd_http_request_timeouts_total ", s.timeouts, "\n");
}

RawRequest ParseRawRequest(std::string_view wire, size_t max_header_bytes,
                           size_t max_body_bytes) {
  RawRequest out;
  http::request_parser<http::string_body> p;
  p.eager(true);
  p.header_limit(static_cast<uint32_t>(std::min<size_t>(max_header_bytes, UINT32_MAX)));
  p.body_limit(max_body_bytes);
  beast::error_code ec;
  while (!wire.empty() && !p.is_done()) {
    size_t n = p.put(net::buffer(wire.data(), wire.size()), ec);
    if (ec == http::error::need_more) {
      ec = {};
      if (n == 0) break;  // Needs bytes we do not have.
    }
    if (ec) {
      out.error_code = CodeForReadError(ec);
      if (out.error_code == 0) out.error_code = 400;
      return out;
    }
    wire.remove_prefix(n);
  }
  if (!p.is_done()) return out;  // Incomplete.
  out.complete = true;
  out.request = ToHttpRequest(p.get());
  return out;
}

}  // namespace batchd::apiserver
