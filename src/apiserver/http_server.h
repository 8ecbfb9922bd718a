// HttpServer: HTTP/1.1 (and HTTPS) over Boost.Beast/Asio, bounded.
//
// Connections are served asynchronously by a few I/O threads: an idle or
// slow client costs a socket and a few KiB, never a thread. A complete
// request is handed to a bounded worker pool that runs the (blocking)
// handler; its writes go back through the connection's strand. The bounds:
//  - connections: at most `max_connections` open; more are accepted and
//    closed at once (logged);
//  - timeouts: the request header (and TLS handshake) must arrive within
//    `header_timeout` of the connection or of the request's first byte; the
//    body within `read_timeout`; a kept-alive connection waits
//    `idle_timeout` for its next request; each write within `write_timeout`;
//  - in flight (kube-apiserver's --max-requests-inflight and
//    --max-mutating-requests-inflight): read-only and mutating requests have
//    separate budgets; long-running requests (watches, pods/log, exec...)
//    are counted apart under their own cap. A request over its budget gets
//    `429 TooManyRequests` with `Retry-After: 1`, handled on the I/O thread;
//  - per-request timeout: non-long-running requests get a 504 Timeout Status
//    after `request_timeout` (or the request's `timeout=` parameter, capped
//    by it); the handler's later writes are dropped;
//  - worker threads: at most the sum of the three in-flight caps; a failure
//    to start one answers 429 and is logged, as is a failing accept
//    (EMFILE...), after which accepting resumes.
// Request bodies over `max_body_bytes` get 413, headers over
// `max_header_bytes` 431, malformed requests 400 and a closed connection.
//
// Thread-safety: `Start`/`Stop` from one thread; the handler is called
// concurrently from worker threads and must be thread-safe.
//
// Shutdown (`Stop`), bounded as kube-apiserver's: it stops accepting and
// closes idle connections; long-running requests (watches, log follows) end
// at once (their writer's ClientGone() turns true and their writes fail;
// after `long_running_grace` their connections are cut); the other in-flight
// requests get `shutdown_grace` to finish, then their connections are cut.
// Handlers get `cut_grace` to return once cut; one still running then (blocked
// outside the connection) is logged by method and path and left behind with
// the server's state (never freed), and Stop returns. Otherwise Stop joins
// every thread before returning.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "apiserver/http.h"

namespace batchd::apiserver {

// Serving certificate and key (PEM files) and, optionally, the CA bundle
// that client certificates are verified against. The server requests, but
// does not require, a client certificate; one that verifies is exposed as
// HttpRequest::peer_cert.
struct TlsServerFiles {
  std::string cert_file;
  std::string key_file;
  std::string client_ca_file;  // Empty: client certificates are not requested.
};

struct HttpServerOptions {
  std::string address = "127.0.0.1";
  int port = 8080;  // 0: pick a free port.
  size_t max_body_bytes = 3 * 1024 * 1024;
  size_t max_header_bytes = 64 * 1024;
  // Serve HTTPS with these files; plain HTTP when unset.
  std::optional<TlsServerFiles> tls;

  int max_connections = 10000;
  // In-flight budgets; <= 0 disables a limit (as kube-apiserver's 0).
  int max_requests_inflight = 400;
  int max_mutating_requests_inflight = 200;
  int max_long_running_requests = 1000;

  absl::Duration header_timeout = absl::Seconds(32);  // kube-apiserver's ReadHeaderTimeout
  absl::Duration read_timeout = absl::Seconds(60);
  absl::Duration idle_timeout = absl::Seconds(90);    // kube-apiserver's IdleTimeout
  absl::Duration write_timeout = absl::Seconds(60);
  absl::Duration request_timeout = absl::Seconds(60);  // kube-apiserver's --request-timeout
  // How long Stop waits for in-flight requests before cutting their
  // connections.
  absl::Duration shutdown_grace = absl::Seconds(30);
  // How long long-running requests get to end their streams once Stop has
  // told them to (a watch checks at least every second) before their
  // connections are cut.
  absl::Duration long_running_grace = absl::Seconds(2);
  // How long Stop waits for handlers to return once their connections are
  // cut before it leaves them behind (see Shutdown above).
  absl::Duration cut_grace = absl::Seconds(5);
  int io_threads = 2;
  // Worker threads idle this long exit (the pool shrinks back).
  absl::Duration worker_idle_exit = absl::Seconds(60);
  // Tests: returning false makes starting a worker thread fail, as
  // std::thread does when the system is out of threads.
  std::function<bool()> can_start_thread;
};

using HttpHandler = std::function<void(const HttpRequest&, ResponseWriter&)>;

// Current figures, for /metrics and tests.
struct HttpServerStats {
  int connections = 0;
  int inflight_readonly = 0;
  int inflight_mutating = 0;
  int inflight_long_running = 0;
  int worker_threads = 0;
  int64_t rejected_readonly = 0;   // 429s
  int64_t rejected_mutating = 0;
  int64_t rejected_long_running = 0;
  int64_t connections_refused = 0;  // Over max_connections.
  int64_t accept_errors = 0;
  int64_t thread_start_failures = 0;
  int64_t timeouts = 0;             // 504s
  int abandoned = 0;                // Handlers Stop left running (see Shutdown).
};

class HttpServer {
 public:
  HttpServer(HttpServerOptions opts, HttpHandler handler);
  ~HttpServer();
  // Binds and starts accepting; returns the bound port.
  absl::StatusOr<int> Start();
  void Stop();

  HttpServerStats Stats() const;
  // Prometheus text for the figures above (kube-apiserver's names where
  // one exists: apiserver_current_inflight_requests{request_kind}, ...).
  void AppendPrometheus(std::string* out) const;

  struct Impl;  // Public only for the connection code in http_server.cc.

 private:
  std::shared_ptr<Impl> impl_;
};

// Which budget a request counts against (kube-apiserver's classification:
// watches and the attach/exec/log/portforward/proxy subresources are
// long-running; GET/HEAD/OPTIONS are read-only; health checks are exempt).
enum class RequestKind { kExempt, kReadOnly, kMutating, kLongRunning };
RequestKind ClassifyRequest(const HttpRequest& req);

// Parses one request from raw bytes as a connection does (fuzzing, tests).
// `error_code` is what the server answers a malformed request with (400,
// 413, 431) or 0; `complete` is false when the bytes end mid-request (the
// server would wait for more, up to its timeouts).
struct RawRequest {
  int error_code = 0;
  bool complete = false;
  HttpRequest request;
};
RawRequest ParseRawRequest(std::string_view wire, size_t max_header_bytes,
                           size_t max_body_bytes);

// Parses the `timeout` query parameter (a Go duration: "30s", "1m30s",
// "500ms"); nullopt when malformed.
std::optional<absl::Duration> ParseGoDuration(std::string_view s);

}  // namespace batchd::apiserver
