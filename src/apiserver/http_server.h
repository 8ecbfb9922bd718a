// HttpServer: HTTP/1.1 over Boost.Beast with keep-alive and chunked
// streaming. One thread per connection with blocking I/O: simple, and fast
// for the tens of clients and hundreds of watches batchd serves; request
// bodies over `max_body_bytes` get 413.
//
// Thread-safety: `Start`/`Stop` from one thread; the handler is called
// concurrently from connection threads and must be thread-safe.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "apiserver/http.h"

namespace batchd::apiserver {

struct HttpServerOptions {
  std::string address = "127.0.0.1";
  int port = 8080;  // 0: pick a free port.
  size_t max_body_bytes = 3 * 1024 * 1024;
};

using HttpHandler = std::function<void(const HttpRequest&, ResponseWriter&)>;

class HttpServer {
 public:
  HttpServer(HttpServerOptions opts, HttpHandler handler);
  ~HttpServer();
  // Binds and starts accepting; returns the bound port.
  absl::StatusOr<int> Start();
  void Stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace batchd::apiserver
