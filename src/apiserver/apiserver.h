// ApiServer: the Kubernetes-compatible HTTP API over the Registry — routing
// of /api and /apis paths to resources and subresources, discovery,
// /version, health endpoints, /metrics, OpenAPI v3, content negotiation
// (JSON, YAML, Table), watch streams and `Status` errors.
//
// `Handle` is transport-independent: HttpServer calls it per request, and
// tests and fuzz targets call it directly with a BufferWriter.
//
// Thread-safety: `Handle` may be called concurrently.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "apiserver/http.h"
#include "apiserver/metrics.h"
#include "common/clock.h"
#include "registry/registry.h"

namespace batchd::apiserver {

struct ApiServerOptions {
  // Longest watch when the client gives no timeoutSeconds.
  absl::Duration max_watch = absl::Minutes(30);
  absl::Duration bookmark_interval = absl::Minutes(1);
  // Extra Prometheus text appended to /metrics (store metrics and the like).
  std::function<void(std::string*)> extra_metrics;
};

class ApiServer {
 public:
  ApiServer(registry::Registry& registry, Clock& clock, ApiServerOptions opts = {});
  ~ApiServer();

  void Handle(const HttpRequest& req, ResponseWriter& w);

  const RequestMetrics& metrics() const { return metrics_; }

 private:
  struct Route;
  void Serve(const HttpRequest& req, ResponseWriter& w, std::string* verb, std::string* resource);
  void ServeResource(const HttpRequest& req, const Route& r, ResponseWriter& w,
                     std::string* verb);
  void ServeWatch(const HttpRequest& req, const Route& r, ResponseWriter& w);
  void ServeList(const HttpRequest& req, const Route& r, ResponseWriter& w);
  void SendObject(const HttpRequest& req, ResponseWriter& w, int code, const Route& r,
                  const api::Json& obj, const std::vector<std::string>& warnings);
  void SendError(const HttpRequest& req, ResponseWriter& w, const absl::Status& s);
  bool ServeNonResource(const HttpRequest& req, ResponseWriter& w);

  registry::Registry& registry_;
  Clock& clock_;
  ApiServerOptions opts_;
  RequestMetrics metrics_;
  struct Discovery;
  std::unique_ptr<Discovery> discovery_;
};

}  // namespace batchd::apiserver
