// HttpTransport: blocking HTTP/1.1 client connections (Boost.Beast, kept out
// of this header) to one or more servers, with a pool of keep-alive
// connections: the layer batchd's API client (client/http_client.h) and its
// etcd client (store/internal/etcd_http.h) share. Each caller decides which
// server a request goes to and whether to repeat it elsewhere; this layer
// connects (TCP keepalive, TLS with the server's name verified), frames one
// request and its response, reuses idle connections, and runs every step
// under a deadline on the calling thread, so a dead or silent peer ends in a
// timeout rather than a hung thread.
//
// Thread-safety: HttpTransport's methods may be called concurrently (each
// request uses a connection of its own). An HttpBodyStream is read by one
// thread at a time; its Stop may be called from any thread.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace batchd {

struct HttpEndpoint {
  std::string host;  // Without brackets for IPv6.
  std::string port;
  bool https = false;
  std::string Url() const;  // "http[s]://host:port"
};

// "http://HOST:PORT" or "https://HOST:PORT" (no scheme: http; trailing
// slashes ignored; "[v6]:PORT"). InvalidArgument otherwise, the message
// beginning with `what` ("server", "etcd server").
absl::StatusOr<HttpEndpoint> ParseHttpEndpoint(std::string s, std::string_view what);

struct HttpTransportOptions {
  absl::Duration connect_timeout = absl::Seconds(10);  // resolve, connect, TLS handshake
  // A request's whole response must arrive within this (a stream: its header).
  absl::Duration request_timeout = absl::Seconds(90);
  // A pooled connection idle longer than this is closed rather than reused.
  absl::Duration idle_timeout = absl::Seconds(60);
  // Idle keep-alive connections kept, all servers together.
  int max_idle = 8;
  // TCP keepalive on every connection: probes after keepalive_idle of
  // silence, every keepalive_interval, giving up after keepalive_count
  // (unacknowledged writes give up after the same time).
  absl::Duration keepalive_idle = absl::Seconds(30);
  absl::Duration keepalive_interval = absl::Seconds(10);
  int keepalive_count = 3;
  // The largest response body RoundTrip accepts.
  size_t max_response_bytes = size_t{512} << 20;

  // TLS (https servers): the server is verified against the CA (file or PEM
  // data; the system's CAs when neither is set) and its name; an optional
  // client certificate and key (files or PEM data).
  std::string ca_file, ca_data;
  std::string cert_file, cert_data;
  std::string key_file, key_data;
  // How errors name those inputs (e.g. "--etcd-cafile").
  std::string ca_name = "certificate authority";
  std::string cert_name = "client certificate";
  std::string key_name = "client key";
};

struct HttpOutgoing {
  std::string method = "GET";
  std::string target;  // "/path?query"
  // Besides Host, which the transport sets.
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;  // Sent with Content-Length when not empty (or not a GET).
  bool keep_alive = true;
};

struct HttpIncoming {
  int code = 0;
  std::string content_type;
  std::string body;
};

// The body of a response whose header has arrived (HttpTransport::OpenStream).
class HttpBodyStream {
 public:
  struct Impl;
  explicit HttpBodyStream(std::unique_ptr<Impl> impl);
  ~HttpBodyStream();

  int code() const;
  // Reads the body, handing each piece to `fn` in order, until it ends (OK),
  // `fn` returns false or Stop is called (Cancelled), the connection fails
  // (Unavailable) or `timeout` passes (DeadlineExceeded; infinite: no limit,
  // TCP keepalive notices a dead peer instead). While the body is silent,
  // `fn` is also called with an empty piece every `check_every` (infinite:
  // never), so a reader can stop when whoever it reads for has left.
  absl::Status Read(const std::function<bool(std::string_view)>& fn,
                    absl::Duration timeout = absl::InfiniteDuration(),
                    absl::Duration check_every = absl::InfiniteDuration());
  // Makes a Read in progress (or the next one) return Cancelled soon, by
  // shutting the connection down. Thread-safe.
  void Stop();

 private:
  std::unique_ptr<Impl> impl_;
};

class HttpTransport {
 public:
  static absl::StatusOr<std::unique_ptr<HttpTransport>> Create(std::vector<HttpEndpoint> servers,
                                                               HttpTransportOptions opts);
  ~HttpTransport();

  size_t size() const;
  const HttpEndpoint& endpoint(size_t server) const;
  const HttpTransportOptions& options() const;

  // One request and its whole response, with server number `server`, on an
  // idle pooled connection or a new one (a pooled one the server had closed
  // is replaced once, before anything was sent). `*sent` tells whether the
  // request may have reached the server (then a write must not be repeated
  // elsewhere). Errors: Unavailable (cannot connect, connection lost),
  // DeadlineExceeded (no whole response within request_timeout),
  // ResourceExhausted (body over max_response_bytes).
  absl::StatusOr<HttpIncoming> RoundTrip(size_t server, const HttpOutgoing& req, bool* sent);

  // Sends `req` on a new connection and reads the response's header (within
  // request_timeout); the body is then read from the stream.
  absl::StatusOr<std::unique_ptr<HttpBodyStream>> OpenStream(size_t server,
                                                             const HttpOutgoing& req);
  // The same for a stream whose header may come late (a log follow: an agent
  // answers with its first line): the header is waited for without a
  // deadline (TCP keepalive notices a dead peer) while `wanted`, asked every
  // `check_every`, answers true; once false, Cancelled.
  absl::StatusOr<std::unique_ptr<HttpBodyStream>> OpenStream(size_t server,
                                                             const HttpOutgoing& req,
                                                             absl::Duration check_every,
                                                             const std::function<bool()>& wanted);

  // Closes the idle connections to `server` (e.g. after it failed).
  void DropIdle(size_t server);

  struct Impl;

 private:
  explicit HttpTransport(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace batchd
