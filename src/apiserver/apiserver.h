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
#include <optional>
#include <string>

#include "apiserver/http.h"
#include "apiserver/metrics.h"
#include "common/clock.h"
#include "registry/registry.h"

namespace batchd::apiserver {

// Where pod logs come from: the local node agent's files, or a proxy to a
// remote agent. Implemented by the agent; the API server only streams.
class PodLogSource {
 public:
  struct Options {
    std::string container;
    bool follow = false;
    bool previous = false;
    bool timestamps = false;
    std::optional<int64_t> tail_lines;
    std::optional<int64_t> since_seconds;
    std::optional<int64_t> limit_bytes;
  };
  virtual ~PodLogSource() = default;
  // Writes the log through `write` (false: the client is gone; stop). Returns
  // an error (NotFound, BadRequest...) only before anything was written.
  virtual absl::Status StreamLog(const api::Json& pod, const Options& opts,
                                 const std::function<bool(std::string_view)>& write) = 0;
};

struct ApiServerOptions {
  // Serves pods/log when set.
  PodLogSource* logs = nullptr;
  // Longest watch when the client gives no timeoutSeconds.
  absl::Duration max_watch = absl::Minutes(30);
  absl::Duration bookmark_interval = absl::Minutes(1);
  // Extra Prometheus text appended to /metrics (store metrics and the like).
  std::function<void(std::string*)> extra_metrics;
  // /readyz checks besides `ping`, as kube-apiserver's ("etcd",
  // "informer-sync"): each a name and OK or why not. Ready when all pass.
  std::function<std::vector<std::pair<std::string, absl::Status>>()> ready_checks;
};

class ApiServer {
 public:
  ApiServer(registry::Registry& registry, Clock& clock, ApiServerOptions opts = {});
  ~ApiServer();

  void Handle(const HttpRequest& req, ResponseWriter& w);

  const RequestMetrics& metrics() const { return metrics_; }

 private:
  struct Route;
  // What a request on a resource asks for; one handler each.
  enum class Verb {
    kGet, kList, kWatch, kCreate, kUpdate, kPatch, kDelete, kDeleteCollection, kBind, kLog
  };
  void Serve(const HttpRequest& req, ResponseWriter& w, std::string* verb, std::string* resource);
  // Resolves the verb (`verb` gets its metrics label) and calls its handler.
  void ServeResource(const HttpRequest& req, const Route& r, ResponseWriter& w,
                     std::string* verb);
  absl::StatusOr<Verb> ResolveVerb(const HttpRequest& req, const Route& r, std::string* label);
  void ServeGet(const HttpRequest& req, const Route& r, ResponseWriter& w);
  void ServeList(const HttpRequest& req, const Route& r, ResponseWriter& w);
  void ServeWatch(const HttpRequest& req, const Route& r, ResponseWriter& w);
  void ServeCreate(const HttpRequest& req, const Route& r, ResponseWriter& w);
  void ServeUpdate(const HttpRequest& req, const Route& r, ResponseWriter& w);
  void ServePatch(const HttpRequest& req, const Route& r, ResponseWriter& w);
  void ServeDelete(const HttpRequest& req, const Route& r, ResponseWriter& w);
  void ServeDeleteCollection(const HttpRequest& req, const Route& r, ResponseWriter& w);
  void ServeBind(const HttpRequest& req, const Route& r, ResponseWriter& w);
  void ServePodLog(const HttpRequest& req, const Route& r, ResponseWriter& w);
  void SendObject(const HttpRequest& req, ResponseWriter& w, int code, const Route& r,
                  const api::Json& obj, const std::vector<std::string>& warnings);
  void SendError(const HttpRequest& req, ResponseWriter& w, const absl::Status& s);
  bool ServeNonResource(const HttpRequest& req, ResponseWriter& w);
  void ServeReadyz(const HttpRequest& req, ResponseWriter& w);

  registry::Registry& registry_;
  Clock& clock_;
  ApiServerOptions opts_;
  RequestMetrics metrics_;
  struct Discovery;
  std::unique_ptr<Discovery> discovery_;
};

}  // namespace batchd::apiserver
