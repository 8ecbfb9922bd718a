#include "agent/kubelet_auth.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/json_access.h"
#include "common/logging.h"

namespace batchd::agent {

namespace {

constexpr absl::Duration kAllowedTtl = absl::Minutes(5);  // kubelet's authorization cache
constexpr absl::Duration kDeniedTtl = absl::Seconds(30);

void SendText(apiserver::ResponseWriter& w, int code, const std::string& text) {
  w.Send(code, {{"Content-Type", "text/plain; charset=utf-8"}}, text + "\n");
}

}  // namespace

KubeletAttributes KubeletRequestAttributes(const apiserver::HttpRequest& req) {
  KubeletAttributes a;
  const std::string& m = req.method;
  if (m == "POST") {
    a.verb = "create";
  } else if (m == "GET" || m == "HEAD") {
    a.verb = "get";
  } else if (m == "PUT") {
    a.verb = "update";
  } else if (m == "PATCH") {
    a.verb = "patch";
  } else if (m == "DELETE") {
    a.verb = "delete";
  } else {
    a.verb = absl::AsciiStrToLower(m);
  }
  const std::string& p = req.path;
  auto under = [&](const char* prefix) {
    return p == prefix || absl::StartsWith(p, absl::StrCat(prefix, "/"));
  };
  if (under("/stats")) {
    a.subresource = "stats";
  } else if (under("/metrics")) {
    a.subresource = "metrics";
  } else if (under("/logs")) {
    a.subresource = "log";
  } else {
    a.subresource = "proxy";
  }
  return a;
}

KubeletReviewer SubjectAccessReviewer(client::Client& client, std::string node_name) {
  return [&client, node = std::move(node_name)](const KubeletUser& u, const std::string& verb,
                                                 const std::string& sub) -> absl::StatusOr<bool> {
    api::Json sar = {
        {"apiVersion", "authorization.k8s.io/v1"},
        {"kind", "SubjectAccessReview"},
        {"metadata", api::Json::object()},
        {"spec",
         {{"user", u.name},
          {"groups", u.groups},
          {"resourceAttributes",
           {{"verb", verb}, {"resource", "nodes"}, {"subresource", sub}, {"name", node}}}}}};
    auto r = client.Create(client.Kind("authorization.k8s.io", "v1", "subjectaccessreviews"), "",
                           sar);
    if (!r.ok()) return r.status();
    const api::Json* allowed = api::FindMember(api::MemberObject(*r, "status"), "allowed");
    return allowed != nullptr && allowed->is_boolean() && allowed->get<bool>();
  };
}

KubeletAuth::KubeletAuth(KubeletReviewer review, Clock& clock)
    : review_(std::move(review)), clock_(clock) {}

size_t KubeletAuth::cached() const {
  absl::MutexLock l(&mu_);
  return cache_.size();
}

bool KubeletAuth::Admit(const apiserver::HttpRequest& req, apiserver::ResponseWriter& w) {
  if (!req.peer_cert || req.peer_cert->common_name.empty()) {
    SendText(w, 401, "Unauthorized");
    return false;
  }
  KubeletUser u{req.peer_cert->common_name, req.peer_cert->organizations};
  u.groups.push_back("system:authenticated");
  const KubeletAttributes a = KubeletRequestAttributes(req);
  const std::string key =
      absl::StrCat(u.name, "\n", absl::StrJoin(u.groups, ","), "\n", a.verb, "\n", a.subresource);
  const std::string what = absl::StrCat("(user=", u.name, ", verb=", a.verb,
                                        ", resource=nodes, subresource=", a.subresource, ")");
  const absl::Time now = clock_.Now();
  std::optional<bool> decision;
  {
    absl::MutexLock l(&mu_);
    auto it = cache_.find(key);
    if (it != cache_.end() && it->second.expires > now) decision = it->second.allowed;
  }
  if (!decision) {
    absl::StatusOr<bool> allowed = review_(u, a.verb, a.subresource);
    if (!allowed.ok()) {
      BATCHD_LOG_WARN("log port: authorizing {} failed: {}", what, allowed.status().ToString());
      SendText(w, 500, absl::StrCat("Authorization error ", what));
      return false;
    }
    decision = *allowed;
    absl::MutexLock l(&mu_);
    if (cache_.size() >= kMaxCachedDecisions) {
      for (auto it = cache_.begin(); it != cache_.end();) {
        it = it->second.expires <= now ? cache_.erase(it) : std::next(it);
      }
      if (cache_.size() >= kMaxCachedDecisions) cache_.clear();
    }
    cache_[key] = Entry{*allowed, now + (*allowed ? kAllowedTtl : kDeniedTtl)};
  }
  if (!*decision) {
    SendText(w, 403, absl::StrCat("Forbidden ", what));
    return false;
  }
  return true;
}

}  // namespace batchd::agent
