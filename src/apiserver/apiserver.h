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

namespace batchd::auth {
class Authenticator;
class Authorizer;
class AuditLog;
class ServiceAccountTokens;
struct Attributes;
struct UserInfo;
}  // namespace batchd::auth

namespace batchd::apiserver {

class ResourceMetricsSource;  // resource_metrics.h

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
  // Writes the log through `write` (false: the client is gone; stop). An
  // empty write sends nothing: a follow that has nothing to send asks that
  // way whether the client is still there. Returns
  // an error (NotFound, BadRequest...) only before anything was written.
  virtual absl::Status StreamLog(const api::Json& pod, const Options& opts,
                                 const std::function<bool(std::string_view)>& write) = 0;
};

// A request of Kueue's visibility API (visibility.kueue.x-k8s.io):
// GET .../clusterqueues/NAME/pendingworkloads (ns empty) or
// .../namespaces/NS/localqueues/NAME/pendingworkloads.
struct PendingWorkloadsRequest {
  std::string api_version;  // "visibility.kueue.x-k8s.io/v1beta2" or ".../v1beta1"
  std::string ns, name;
  int64_t offset = 0;
  int64_t limit = 1000;  // Kueue's default
};

struct ApiServerOptions {
  // Serves pods/log when set.
  PodLogSource* logs = nullptr;
  // Serves metrics.k8s.io/v1beta1 (kubectl top) when set (resource_metrics.h).
  ResourceMetricsSource* resource_metrics = nullptr;
  // Longest watch when the client gives no timeoutSeconds.
  absl::Duration max_watch = absl::Minutes(30);
  absl::Duration bookmark_interval = absl::Minutes(1);
  // Extra Prometheus text appended to /metrics (store metrics and the like).
  std::function<void(std::string*)> extra_metrics;
  // /readyz checks besides `ping`, as kube-apiserver's ("etcd",
  // "informer-sync"): each a name and OK or why not. Ready when all pass.
  std::function<std::vector<std::pair<std::string, absl::Status>>()> ready_checks;
  // Security (auth/). Without an authenticator every request acts as the
  // local admin (unit tests, fuzzing); `batchd server` always sets one.
  // A refused credential is 401, a denied request 403 with Kubernetes'
  // message; both are counted in apiserver_request_total{code}.
  const auth::Authenticator* authenticator = nullptr;
  // Null: everything is allowed (and the review APIs answer "allowed").
  auth::Authorizer* authorizer = nullptr;
  // Null: no audit log.
  auth::AuditLog* audit = nullptr;
  // Serves Kueue's visibility API (and lists it in discovery) when set: the
  // PendingWorkloadsSummary, or NotFound (a missing queue) / another error.
  std::function<absl::StatusOr<api::Json>(const PendingWorkloadsRequest&)> pending_workloads;
  // Serves serviceaccounts/NAME/token when set.
  const auth::ServiceAccountTokens* service_account_tokens = nullptr;
  // Public static content (the dashboard's files, ui/ui.h), tried before
  // authentication: true when it answered the request. It must hold no
  // cluster data; what the page shows comes through the API with the
  // user's own credentials.
  std::function<bool(const HttpRequest&, ResponseWriter&)> static_content;
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
  struct Scope;  // Who asks for what (identity and authorization attributes).
  void Serve(const HttpRequest& req, ResponseWriter& w, Scope& scope, std::string* verb,
             std::string* resource);
  // Authentication, attributes and authorization; false when the request was refused (sent).
  // `r`: the resource the path names, null for a non-resource request.
  // `preset`: attributes of a resource request outside the Scheme (the
  // visibility API), used as they are.
  bool Admit(const HttpRequest& req, const Route* r, ResponseWriter& w, Scope& scope,
             const auth::Attributes* preset = nullptr);
  // Kueue's visibility API; false when `req` is not a pendingworkloads request.
  bool ServeVisibility(const HttpRequest& req, ResponseWriter& w, Scope& scope,
                       std::string* verb, std::string* resource);
  void Audit(const HttpRequest& req, const Scope& scope, int code, absl::Time start);
  // The review kinds (authorization.k8s.io, authentication.k8s.io) and TokenRequest.
  void ServeReview(const HttpRequest& req, const Route& r, ResponseWriter& w);
  void ServeTokenRequest(const HttpRequest& req, const Route& r, ResponseWriter& w);
  // Refuses an RBAC write granting what its author does not hold.
  absl::Status CheckEscalation(const Route& r, const api::Json& obj);
  bool NeedsEscalationCheck(const Route& r) const;
  // A Node's auth::kKubeletEndpointAnnotation is kept as stored unless the
  // writer is that node (system:node:<name> in system:nodes); a node's write
  // of its own Node gets NodeRestriction's label and taint rules
  // (auth/node_restriction.h) as `opts.validate`.
  void KeepNodeEndpoint(const Route& r, const std::string& node_name,
                        registry::WriteOptions& opts) const;
  // NodeRestriction: a node (system:node:<name> in system:nodes) writes only
  // its own Node and Lease and the pods bound to it.
  absl::Status AdmitNode(const HttpRequest& req, const Route& r, const Scope& scope);
  static bool ServesReview(const api::KindDef& k, const std::string& subresource);
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
  // metrics.k8s.io/v1beta1 NodeMetrics and PodMetrics (resource_metrics.cc).
  bool IsResourceMetricsPath(const std::string& path) const;
  void ServeResourceMetrics(const HttpRequest& req, ResponseWriter& w, Scope& scope,
                            std::string* resource);
  void ServeReadyz(const HttpRequest& req, ResponseWriter& w);
  void ServeOpenApiV2(const HttpRequest& req, ResponseWriter& w);

  registry::Registry& registry_;
  Clock& clock_;
  ApiServerOptions opts_;
  RequestMetrics metrics_;
  struct Discovery;
  std::unique_ptr<Discovery> discovery_;
};

}  // namespace batchd::apiserver
