// Kueue's visibility API (visibility.kueue.x-k8s.io v1beta2 and v1beta1):
//   GET /apis/visibility.kueue.x-k8s.io/VERSION/clusterqueues/NAME/pendingworkloads
//   GET /apis/visibility.kueue.x-k8s.io/VERSION/namespaces/NS/localqueues/NAME/pendingworkloads
// with `limit` (default 1000) and `offset` (default 0). Authorized as the
// `get` of the pendingworkloads subresource of clusterqueues / localqueues
// in that group, as Kueue's RBAC grants it. The answer comes from the
// ApiServerOptions::pending_workloads hook (the queue manager).
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_split.h"
#include "apiserver/apiserver.h"
#include "apiserver/internal/route.h"
#include "registry/errors.h"

namespace batchd::apiserver {

bool ApiServer::ServeVisibility(const HttpRequest& req, ResponseWriter& w, Scope& scope,
                                std::string* verb, std::string* resource) {
  constexpr absl::string_view kPrefix = "/apis/visibility.kueue.x-k8s.io/";
  if (!absl::StartsWith(req.path, kPrefix)) return false;
  std::vector<std::string> parts =
      absl::StrSplit(absl::string_view(req.path).substr(kPrefix.size()), '/', absl::SkipEmpty());
  // VERSION clusterqueues NAME pendingworkloads | VERSION namespaces NS localqueues NAME pendingworkloads
  PendingWorkloadsRequest pr;
  std::string plural;
  if (parts.size() == 4 && parts[1] == "clusterqueues" && parts[3] == "pendingworkloads") {
    plural = parts[1];
    pr.name = parts[2];
  } else if (parts.size() == 6 && parts[1] == "namespaces" && parts[3] == "localqueues" &&
             parts[5] == "pendingworkloads") {
    plural = parts[3];
    pr.ns = parts[2];
    pr.name = parts[4];
  } else {
    return false;  // Discovery documents, or a 404 from the ordinary route.
  }
  if (parts[0] != "v1beta2" && parts[0] != "v1beta1") return false;
  pr.api_version = absl::StrCat("visibility.kueue.x-k8s.io/", parts[0]);
  *verb = "get";
  *resource = plural + "/pendingworkloads";
  auth::Attributes a;
  a.resource_request = true;
  a.api_group = "visibility.kueue.x-k8s.io";
  a.api_version = parts[0];
  a.resource = plural;
  a.subresource = "pendingworkloads";
  a.ns = pr.ns;
  a.name = pr.name;
  a.verb = req.method == "GET" || req.method == "HEAD" ? "get" : absl::AsciiStrToLower(req.method);
  if (!Admit(req, nullptr, w, scope, &a)) return true;
  if (req.method != "GET" && req.method != "HEAD") {
    SendError(req, w,
              registry::ApiError(absl::StatusCode::kUnimplemented, "MethodNotAllowed",
                                 absl::StrCat("the server does not allow this method on the "
                                              "requested resource")));
    return true;
  }
  for (auto [param, out] : {std::pair{"limit", &pr.limit}, std::pair{"offset", &pr.offset}}) {
    if (!req.HasParam(param)) continue;
    int64_t v = 0;
    if (!absl::SimpleAtoi(req.Param(param), &v) || v < 0) {
      SendError(req, w,
                registry::ApiError(absl::StatusCode::kInvalidArgument, "BadRequest",
                                   absl::StrCat("invalid ", param, " \"", req.Param(param),
                                                "\": must be a non-negative integer")));
      return true;
    }
    *out = v;
  }
  absl::StatusOr<api::Json> out = opts_.pending_workloads(pr);
  if (!out.ok()) {
    absl::Status s = out.status();
    if (s.code() == absl::StatusCode::kNotFound) {
      s = registry::ApiError(absl::StatusCode::kNotFound, "NotFound", std::string(s.message()),
                             {{"name", pr.name},
                              {"group", "visibility.kueue.x-k8s.io"},
                              {"kind", plural}});
    }
    SendError(req, w, s);
    return true;
  }
  w.Send(200, {{"Content-Type", "application/json"}}, out->dump());
  return true;
}

}  // namespace batchd::apiserver
