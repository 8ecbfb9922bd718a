// The agent's log port as kubelet's authenticated port 10250: a request must
// carry a client certificate that verified against the agent's client CA
// (the HTTPS server checks the chain and the clientAuth usage; here we only
// see the result), else 401 "Unauthorized"; its user (CN) and groups (O) are
// then authorized as kubelet's webhook mode does, with a SubjectAccessReview
// to the API server for verb <method> on resource "nodes", name <node>,
// subresource "log" (/logs/), "stats" (/stats/), "metrics" (/metrics/) or
// "proxy" (everything else, /containerLogs/ included): 403 "Forbidden
// (user=U, verb=V, resource=nodes, subresource=S)" when refused. Decisions
// are cached as kubelet caches them (allowed 5 min, denied 30 s), at most
// kMaxCachedDecisions entries. Thread-safe.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "apiserver/http.h"
#include "client/client.h"
#include "common/clock.h"

namespace batchd::agent {

struct KubeletUser {
  std::string name;
  std::vector<std::string> groups;
};

// The authorization attributes kubelet derives from a request.
struct KubeletAttributes {
  std::string verb;         // get, create, update, patch, delete
  std::string subresource;  // log, stats, metrics, proxy
};
KubeletAttributes KubeletRequestAttributes(const apiserver::HttpRequest& req);

// Whether `user` may `verb` nodes/`subresource` (of this agent's node).
using KubeletReviewer = std::function<absl::StatusOr<bool>(
    const KubeletUser& user, const std::string& verb, const std::string& subresource)>;

// A reviewer that asks the API server through `client` (POST
// authorization.k8s.io/v1 subjectaccessreviews; the node's ClusterRole
// system:node may create them).
KubeletReviewer SubjectAccessReviewer(client::Client& client, std::string node_name);

inline constexpr size_t kMaxCachedDecisions = 1024;

class KubeletAuth {
 public:
  KubeletAuth(KubeletReviewer review, Clock& clock);
  // True when the request may be served; otherwise its refusal was sent.
  bool Admit(const apiserver::HttpRequest& req, apiserver::ResponseWriter& w);
  size_t cached() const;

 private:
  struct Entry {
    bool allowed = false;
    absl::Time expires;
  };
  KubeletReviewer review_;
  Clock& clock_;
  mutable absl::Mutex mu_;
  std::map<std::string, Entry> cache_ ABSL_GUARDED_BY(mu_);
};

}  // namespace batchd::agent
