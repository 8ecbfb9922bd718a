// Where and how the API server reaches a remote agent's log port: from the
// Node's auth::kKubeletEndpointAnnotation only (never status.addresses,
// which other writers may set), over HTTPS verifying the agent's serving
// certificate, with the server's kubelet client certificate. Pure; thread-safe.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "agent/agent.h"
#include "client/http_client.h"

namespace batchd::agent::internal {

struct KubeletTarget {
  std::string base_url;  // https://address:port
  client::HttpClientOptions options;
};

// BadRequest naming the node when it has no (valid) endpoint annotation or
// the server has no kubelet client certificate.
absl::StatusOr<KubeletTarget> KubeletTargetFor(const api::Json& node,
                                               const KubeletClientOptions& kubelet);

}  // namespace batchd::agent::internal
