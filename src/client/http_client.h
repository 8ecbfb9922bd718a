// HttpClient: a client::Client over batchd's (Kubernetes') REST API, for
// `batchd agent` on another machine and for tests. Blocking I/O over a pool
// of keep-alive connections (common/http_transport.h); JSON bodies; error responses
// (`Status` objects) are decoded back into registry::ApiError statuses with
// the same reason, so `registry::GetPayload(st).reason` works as in-process.
// Transport failures are `Unavailable`. Watch opens its own connection and
// reads the chunked stream on a background thread.
//
// Thread-safety: all methods may be called concurrently; each request uses
// its own pooled connection. A WatchStream is used by one thread at a time.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "absl/time/time.h"
#include "client/client.h"

namespace batchd::client {

struct HttpClientOptions {
  std::string user_agent = "batchd-agent";
  // Idle keep-alive connections kept for reuse.
  int max_idle_connections = 8;

  // Bounds. A request's whole response must arrive within request_timeout
  // (watches: no limit; TCP keepalive notices a dead peer instead);
  // a pooled connection idle longer than idle_timeout is closed rather than
  // reused (the server closes its end after 90 s).
  absl::Duration connect_timeout = absl::Seconds(10);
  absl::Duration request_timeout = absl::Seconds(90);
  absl::Duration idle_timeout = absl::Seconds(60);
  // TCP keepalive on every connection: probes after keepalive_idle of
  // silence, every keepalive_interval, giving up after keepalive_count.
  absl::Duration keepalive_idle = absl::Seconds(30);
  absl::Duration keepalive_interval = absl::Seconds(10);
  int keepalive_count = 3;
  // Largest response body (LIST of many objects) and largest watch event.
  size_t max_response_bytes = 512u << 20;
  size_t max_watch_event_bytes = 16u << 20;

  // HTTPS ("https://" servers). The server is verified against the CA
  // (file or PEM data; the system's CAs when neither is set) and its name.
  std::string ca_file;
  std::string ca_data;
  // Optional client certificate and key (files or PEM data).
  std::string client_cert_file;
  std::string client_key_file;
  std::string client_cert_data;
  std::string client_key_data;
  // Optional bearer token, sent as "Authorization: Bearer ...".
  std::string bearer_token;
};

// A server and the options to reach it, from a kubeconfig file (its current
// context): server, certificate-authority[-data], client-certificate[-data],
// client-key[-data] and token. Relative file names are taken from the
// kubeconfig's directory.
struct KubeconfigServer {
  std::string server;
  HttpClientOptions options;
};
absl::StatusOr<KubeconfigServer> LoadKubeconfig(const std::string& path,
                                                HttpClientOptions base = {});
// The same from a kubeconfig's text (e.g. a Secret's `kubeconfig` key);
// `source` names it in errors, relative file names are taken from `dir`.
absl::StatusOr<KubeconfigServer> ParseKubeconfig(const std::string& text,
                                                 const std::string& source,
                                                 const std::string& dir,
                                                 HttpClientOptions base = {});

class HttpClient : public Client {
 public:
  // `server` is "http://host:port" or "https://host:port" (the scheme may
  // be omitted: http), or several of them comma-separated (replicas of one
  // cluster, docs/ha.md): requests go to one and move on to the next when it
  // cannot be reached (reads also when the answer was lost; a write that
  // was sent is never repeated). Watches open on the first server that
  // answers; callers resume them from their last resourceVersion.
  static absl::StatusOr<std::unique_ptr<HttpClient>> Create(
      const std::string& server, std::shared_ptr<const api::Scheme> scheme,
      HttpClientOptions opts = {});
  ~HttpClient() override;

  const api::Scheme& scheme() const override { return *scheme_; }
  absl::StatusOr<api::Json> Get(const api::KindDef& k, const std::string& ns,
                                const std::string& name) override;
  absl::StatusOr<ListResult> List(const api::KindDef& k, const std::string& ns,
                                  const Selector& sel = {}) override;
  absl::StatusOr<api::Json> Create(const api::KindDef& k, const std::string& ns,
                                   api::Json obj) override;
  absl::StatusOr<api::Json> Update(const api::KindDef& k, api::Json obj) override;
  absl::StatusOr<api::Json> UpdateStatus(const api::KindDef& k, api::Json obj) override;
  absl::StatusOr<api::Json> MergePatch(const api::KindDef& k, const std::string& ns,
                                       const std::string& name, const api::Json& patch,
                                       bool status = false) override;
  absl::Status Delete(const api::KindDef& k, const std::string& ns, const std::string& name,
                      const DeleteOptions& opts = {}) override;
  absl::StatusOr<std::unique_ptr<WatchStream>> Watch(const api::KindDef& k, const std::string& ns,
                                                     const Selector& sel,
                                                     const std::string& resource_version) override;

  // The raw response of one request (for tests and other callers).
  struct Response {
    int code = 0;
    std::string content_type;
    std::string body;
  };
  absl::StatusOr<Response> Do(const std::string& method, const std::string& target,
                              const std::string& body = "",
                              const std::string& content_type = "application/json");

  struct Impl;  // Public only for StreamGet in http_client.cc.

 private:
  HttpClient(std::shared_ptr<const api::Scheme> scheme, std::unique_ptr<Impl> impl);
  absl::StatusOr<Response> DoOn(size_t member, const std::string& method,
                                const std::string& target, const std::string& body,
                                const std::string& content_type, bool* sent);
  absl::StatusOr<api::Json> DoJson(const std::string& method, const std::string& target,
                                   const api::Json* body,
                                   const std::string& content_type = "application/json");

  std::shared_ptr<const api::Scheme> scheme_;
  std::unique_ptr<Impl> impl_;
};

// The REST path of a collection or object: "/api/v1/namespaces/ns/pods[/name]".
std::string ResourcePath(const api::KindDef& k, const std::string& ns,
                         const std::string& name = "");
// Percent-encodes a query parameter value.
std::string UrlEncode(std::string_view s);
// Decodes an error response (a `Status` body, or anything else) into an
// absl::Status carrying the Kubernetes reason (registry::ApiError).
absl::Status StatusFromResponse(int http_code, const std::string& body);

// Streams the body of `GET base_url + target` through `write` (false stops
// early). A non-2xx answer becomes an error via StatusFromResponse before
// anything is written. While the body is silent, `write` gets an empty
// piece every `check_every` and false stops it too: the log proxy asks its
// own client that way, so a follow of a silent container ends (and frees its
// thread and its connection to the agent) soon after its client left. Used
// by the log proxy to reach a node's agent.
absl::Status StreamGet(const std::string& base_url, const std::string& target,
                       const std::function<bool(std::string_view)>& write,
                       const HttpClientOptions& opts = {},
                       absl::Duration check_every = absl::Seconds(1));

}  // namespace batchd::client
