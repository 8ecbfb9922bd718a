// The API server's security layer: authentication and authorization of each
// request (401/403 with Kubernetes' bodies), the audit event of each request,
// the review APIs (SelfSubjectAccessReview, SelfSubjectRulesReview,
// SubjectAccessReview, LocalSubjectAccessReview, SelfSubjectReview), the
// TokenRequest subresource, and the RBAC escalation check on role and
// binding writes.
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "api/json_access.h"
#include "api/meta/time_util.h"
#include "api/rbac/v1/rbac_v1.h"
#include "apiserver/apiserver.h"
#include "apiserver/internal/negotiate.h"
#include "apiserver/internal/route.h"
#include "auth/audit.h"
#include "auth/authenticator.h"
#include "auth/node_authorizer.h"
#include "auth/node_restriction.h"
#include "auth/rbac.h"
#include "auth/service_account_tokens.h"
#include "common/logging.h"
#include "registry/errors.h"

namespace batchd::apiserver {

using api::Json;
using internal::kJsonType;

namespace {

std::string Lower(std::string s) { return absl::AsciiStrToLower(s); }

// A UUID (version 4 layout) from the CSPRNG.
std::string NewUuid() {
  std::string h = auth::RandomHex(16);
  h[12] = '4';
  return absl::StrCat(h.substr(0, 8), "-", h.substr(8, 4), "-", h.substr(12, 4), "-",
                      h.substr(16, 4), "-", h.substr(20, 12));
}

// The name a list/watch names with `fieldSelector=metadata.name=X`.
std::string FieldSelectorName(const HttpRequest& req) {
  std::string fs = req.Param("fieldSelector");
  for (const char* prefix : {"metadata.name=", "metadata.name=="}) {
    if (absl::StartsWith(fs, prefix) && fs.find(',') == std::string::npos) {
      return fs.substr(std::string_view(prefix).size());
    }
  }
  return "";
}

Json UserInfoJson(const auth::UserInfo& u) {
  Json j = {{"username", u.name}, {"groups", u.groups}};
  if (!u.uid.empty()) j["uid"] = u.uid;
  if (!u.extra.empty()) j["extra"] = u.extra;
  return j;
}

absl::Status InvalidReview(const std::string& group, const std::string& kind,
                           const std::string& name, const api::ErrorList& errs) {
  api::KindDef k;
  k.group = group;
  k.kind = kind;
  return registry::Invalid(k, name, errs);
}

std::vector<std::string> StringList(const Json& obj, const char* field) {
  std::vector<std::string> out;
  const Json* v = api::FindMember(obj, field);
  if (!v || !v->is_array()) return out;
  for (const auto& s : *v) {
    if (s.is_string()) out.push_back(s.get<std::string>());
  }
  return out;
}

}  // namespace

bool ApiServer::ServesReview(const api::KindDef& k, const std::string& subresource) {
  if (api::rbac_v1::IsReviewKind(k)) return true;
  return k.group.empty() && k.plural == "serviceaccounts" && subresource == "token";
}

bool ApiServer::Admit(const HttpRequest& req, const Route* r, ResponseWriter& w, Scope& scope,
                      const auth::Attributes* preset) {
  // Who.
  if (!opts_.authenticator) {
    scope.user = auth::LocalAdminUser();
  } else {
    std::optional<auth::ClientCertificate> cert;
    if (req.peer_cert) cert = auth::ClientCertificate{req.peer_cert->common_name,
                                                      req.peer_cert->organizations};
    auto u = opts_.authenticator->Authenticate(req.Header("authorization"),
                                               cert ? &*cert : nullptr, req.loopback);
    if (!u.ok()) {
      BATCHD_LOG_DEBUG("unauthorized {} {} from {}: {}", req.method, req.path, req.remote,
                       std::string(u.status().message()));
      SendError(req, w, registry::ApiError(absl::StatusCode::kUnauthenticated, "Unauthorized",
                                           "Unauthorized"));
      return false;
    }
    scope.user = std::move(*u);
  }
  scope.authenticated = true;
  // What.
  auth::Attributes& a = scope.attrs;
  scope.has_attrs = true;
  const std::string& m = req.method;
  if (preset) {
    a = *preset;
  } else if (r) {
    a.resource_request = true;
    a.api_group = r->kind->group;
    a.api_version = r->kind->version;
    a.resource = r->kind->plural;
    a.subresource = r->subresource;
    a.ns = r->ns;
    a.name = r->name;
    if (m == "GET" || m == "HEAD") {
      if (r->name.empty()) {
        std::string watch = req.Param("watch");
        a.verb = watch == "true" || watch == "1" ? "watch" : "list";
        a.name = FieldSelectorName(req);
        a.field_selector = req.Param("fieldSelector");
      } else {
        a.verb = "get";
      }
    } else if (m == "POST") {
      a.verb = "create";
    } else if (m == "PUT") {
      a.verb = "update";
    } else if (m == "PATCH") {
      a.verb = "patch";
    } else if (m == "DELETE") {
      a.verb = r->name.empty() ? "deletecollection" : "delete";
    } else {
      a.verb = Lower(m);
    }
  } else {
    a.resource_request = false;
    a.path = req.path;
    a.verb = Lower(m);
  }
  if (!opts_.authorizer) return true;
  auth::Decision d = opts_.authorizer->Authorize(scope.user, a);
  scope.decision = d.allowed ? "allow" : "forbid";
  scope.reason = d.reason;
  if (!d.allowed) {
    SendError(req, w, auth::ForbiddenStatus(scope.user, a, d.reason));
    return false;
  }
  if (r) {
    if (absl::Status st = AdmitNode(req, *r, scope); !st.ok()) {
      scope.decision = "forbid";
      SendError(req, w, st);
      return false;
    }
  }
  return true;
}

absl::Status ApiServer::AdmitNode(const HttpRequest& req, const Route& r, const Scope& scope) {
  const auth::UserInfo& u = scope.user;
  const auth::Attributes& a = scope.attrs;
  if (!absl::StartsWith(u.name, auth::kNodeUserPrefix) || !u.InGroup(auth::kNodesGroup)) {
    return absl::OkStatus();
  }
  const std::string node = u.name.substr(std::string_view(auth::kNodeUserPrefix).size());
  std::string name = a.name;  // A create names its object in the body.
  auto forbid = [&](const std::string& why) {
    api::KindDef k;
    k.group = a.api_group;
    k.plural = a.resource;
    return registry::Forbidden(k, name, why);
  };
  const bool write = a.verb == "create" || a.verb == "update" || a.verb == "patch" ||
                     a.verb == "delete" || a.verb == "deletecollection";
  if (!write) return absl::OkStatus();
  if (a.verb == "create" && a.subresource.empty()) {
    auto b = internal::DecodeBody(req, nullptr);
    if (b.ok() && b->is_object()) name = api::CopyStringMember(api::MemberObject(*b, "metadata"), "name");
  }
  if (a.api_group.empty() && a.resource == "nodes") {
    const std::string& target = name;
    if (target != node) {
      return forbid(absl::StrCat("node \"", node, "\" is not allowed to modify node \"", target, "\""));
    }
    return absl::OkStatus();
  }
  if (a.api_group == "coordination.k8s.io" && a.resource == "leases") {
    if (a.ns != "kube-node-lease" || name != node) {
      return forbid("can only access node lease with the same name as the requesting node");
    }
    return absl::OkStatus();
  }
  if (a.api_group.empty() && a.resource == "pods") {
    if (a.verb == "create") {
      return forbid(absl::StrCat("pod does not have \"kubernetes.io/config.mirror\" annotation, node \"",
                                 node, "\" can only create mirror pods"));
    }
    if (a.name.empty()) return forbid(absl::StrCat("node \"", node, "\" can only modify pods one at a time"));
    auto pod = registry_.Get(*r.kind, a.ns, a.name);
    if (!pod.ok()) return absl::OkStatus();  // The handler answers NotFound.
    std::string bound = api::CopyStringMember(api::MemberObject((*pod)->Decode(), "spec"), "nodeName");
    if (bound != node) {
      if (a.subresource == "status") {
        return forbid(absl::StrCat("node \"", node,
                                   "\" can only update pod status for pods with spec.nodeName set to itself"));
      }
      return forbid(absl::StrCat("node \"", node, "\" can only ", a.verb,
                                 " pods with spec.nodeName set to itself"));
    }
    return absl::OkStatus();
  }
  if (a.api_group.empty() && a.resource == "serviceaccounts" && a.subresource == "token") {
    return forbid("node requested token not bound to a pod");
  }
  return absl::OkStatus();
}

void ApiServer::KeepNodeEndpoint(const Route& r, const std::string& node_name,
                                 registry::WriteOptions& opts) const {
  if (!r.kind->group.empty() || r.kind->plural != "nodes") return;
  const bool itself = r.user != nullptr && r.user->InGroup(auth::kNodesGroup) &&
                      !node_name.empty() && r.user->name == auth::kNodeUserPrefix + node_name;
  if (!itself) opts.kept_annotations.push_back(auth::kKubeletEndpointAnnotation);
  // NodeRestriction on what a node writes into its own Node (labels,
  // taints), judged on the object as it would be stored. (AdmitNode has
  // already refused a node's write of any other Node.)
  const std::string node = r.user != nullptr ? auth::NodeNameOf(*r.user) : "";
  if (node.empty()) return;
  opts.validate = [node](const Json& obj, const Json* old) -> absl::Status {
    std::string why = auth::NodeSelfWriteRefusal(node, obj, old);
    if (why.empty()) return absl::OkStatus();
    api::KindDef k;
    k.plural = "nodes";
    return registry::Forbidden(k, api::CopyStringMember(api::MemberObject(obj, "metadata"), "name"),
                               why);
  };
}

void ApiServer::Audit(const HttpRequest& req, const Scope& scope, int code, absl::Time start) {
  Json ev = {{"kind", "Event"},
             {"apiVersion", "audit.k8s.io/v1"},
             {"level", "Metadata"},
             {"auditID", NewUuid()},
             {"stage", "ResponseComplete"}};
  std::string uri = req.path;
  char sep = '?';
  for (const auto& [k, v] : req.query) {
    absl::StrAppend(&uri, std::string(1, sep), k, "=", v);
    sep = '&';
  }
  ev["requestURI"] = uri;
  ev["verb"] = scope.has_attrs ? scope.attrs.verb : Lower(req.method);
  ev["user"] = scope.authenticated ? UserInfoJson(scope.user) : Json::object();
  Json ips = Json::array();
  for (absl::string_view ip : absl::StrSplit(req.Header("x-forwarded-for"), ',', absl::SkipEmpty())) {
    ips.push_back(std::string(absl::StripAsciiWhitespace(ip)));
  }
  std::string peer = req.remote;
  if (auto colon = peer.rfind(':'); colon != std::string::npos) peer.resize(colon);
  if (!peer.empty()) ips.push_back(peer);
  ev["sourceIPs"] = ips;
  if (std::string ua = req.Header("user-agent"); !ua.empty()) ev["userAgent"] = ua;
  if (scope.has_attrs && scope.attrs.resource_request) {
    const auth::Attributes& a = scope.attrs;
    Json ref = {{"resource", a.resource}, {"apiVersion", a.api_version}};
    if (!a.ns.empty()) ref["namespace"] = a.ns;
    if (!a.name.empty()) ref["name"] = a.name;
    if (!a.api_group.empty()) ref["apiGroup"] = a.api_group;
    if (!a.subresource.empty()) ref["subresource"] = a.subresource;
    ev["objectRef"] = std::move(ref);
  }
  Json status = {{"metadata", Json::object()}, {"code", code}};
  if (code >= 400) status["status"] = "Failure";
  ev["responseStatus"] = std::move(status);
  ev["requestReceivedTimestamp"] = api::meta::FormatRfc3339Micro(start);
  ev["stageTimestamp"] = api::meta::FormatRfc3339Micro(clock_.Now());
  if (!scope.decision.empty()) {
    ev["annotations"] = {{"authorization.k8s.io/decision", scope.decision},
                         {"authorization.k8s.io/reason", scope.reason}};
  }
  opts_.audit->Write(ev);
}

bool ApiServer::NeedsEscalationCheck(const Route& r) const {
  return opts_.authorizer && r.user && r.kind->group == auth::kRbacGroup &&
         r.subresource.empty() && !r.user->InGroup(auth::kMastersGroup);
}

absl::Status ApiServer::CheckEscalation(const Route& r, const Json& obj) {
  if (!NeedsEscalationCheck(r)) return absl::OkStatus();
  return opts_.authorizer->CheckEscalation(*r.user, r.kind->kind, r.ns, obj);
}

void ApiServer::ServeReview(const HttpRequest& req, const Route& r, ResponseWriter& w) {
  const api::KindDef& k = *r.kind;
  auto decoded = internal::DecodeBody(req, nullptr);
  if (!decoded.ok()) return SendError(req, w, decoded.status());
  Json body = std::move(*decoded);
  if (!body.is_object()) body = Json::object();
  body["kind"] = k.kind;
  body["apiVersion"] = k.ApiVersion();
  if (!body.contains("metadata") || !body["metadata"].is_object()) body["metadata"] = Json::object();
  const auth::UserInfo& me = *r.user;
  std::string name = api::CopyStringMember(body["metadata"], "name");

  if (k.kind == "SelfSubjectReview") {
    body["status"] = {{"userInfo", UserInfoJson(me)}};
    return w.Send(201, {{"Content-Type", kJsonType}}, body.dump());
  }
  const Json& spec = api::MemberObject(body, "spec");
  if (k.kind == "SelfSubjectRulesReview") {
    std::string ns = api::CopyStringMember(spec, "namespace");
    if (ns.empty()) return SendError(req, w, registry::BadRequest("no namespace on request"));
    std::vector<auth::PolicyRule> rules =
        opts_.authorizer ? opts_.authorizer->RulesFor(me, ns)
                         : auth::AlwaysAllowAuthorizer().RulesFor(me, ns);
    if (opts_.authorizer && me.InGroup(auth::kMastersGroup)) {
      rules = auth::AlwaysAllowAuthorizer().RulesFor(me, ns);
    }
    Json res = Json::array(), nonres = Json::array();
    for (const auto& rule : rules) {
      if (!rule.non_resource_urls.empty()) {
        nonres.push_back({{"verbs", rule.verbs}, {"nonResourceURLs", rule.non_resource_urls}});
        continue;
      }
      Json j = {{"verbs", rule.verbs}, {"apiGroups", rule.api_groups},
                {"resources", rule.resources}};
      if (!rule.resource_names.empty()) j["resourceNames"] = rule.resource_names;
      res.push_back(std::move(j));
    }
    body["status"] = {{"resourceRules", res}, {"nonResourceRules", nonres}, {"incomplete", false}};
    return w.Send(201, {{"Content-Type", kJsonType}}, body.dump());
  }
  // The access reviews.
  auth::UserInfo subject = me;
  api::ErrorList errs;
  if (k.kind == "SubjectAccessReview" || k.kind == "LocalSubjectAccessReview") {
    subject = auth::UserInfo{api::CopyStringMember(spec, "user"), api::CopyStringMember(spec, "uid"),
                             StringList(spec, "groups"), {}};
    if (subject.name.empty() && subject.groups.empty()) {
      errs.push_back(api::Invalid(api::Path("spec").Child("user"), subject.name,
                                  "at least one of user or group must be specified"));
    }
  }
  const Json* ra = api::FindMember(spec, "resourceAttributes");
  const Json* nra = api::FindMember(spec, "nonResourceAttributes");
  const bool has_ra = ra && ra->is_object(), has_nra = nra && nra->is_object();
  if (has_ra == has_nra) {
    errs.push_back(api::Invalid(api::Path("spec").Child("resourceAttributes"),
                                has_ra ? *ra : Json(),
                                "exactly one of nonResourceAttributes or resourceAttributes must "
                                "be specified"));
  }
  auth::Attributes a;
  if (has_ra) {
    a.resource_request = true;
    a.ns = api::CopyStringMember(*ra, "namespace");
    a.verb = api::CopyStringMember(*ra, "verb");
    a.api_group = api::CopyStringMember(*ra, "group");
    a.api_version = api::CopyStringMember(*ra, "version");
    a.resource = api::CopyStringMember(*ra, "resource");
    a.subresource = api::CopyStringMember(*ra, "subresource");
    a.name = api::CopyStringMember(*ra, "name");
  } else if (has_nra) {
    a.resource_request = false;
    a.path = api::CopyStringMember(*nra, "path");
    a.verb = api::CopyStringMember(*nra, "verb");
  }
  if (k.kind == "LocalSubjectAccessReview") {
    std::string meta_ns = api::CopyStringMember(body["metadata"], "namespace");
    if (!meta_ns.empty() && meta_ns != r.ns) {
      errs.push_back(api::Invalid(api::Path("metadata").Child("namespace"), meta_ns,
                                  "must match the namespace of the request"));
    }
    if (has_ra && a.ns != r.ns) {
      errs.push_back(api::Invalid(api::Path("spec").Child("resourceAttributes").Child("namespace"),
                                  a.ns, "must match metadata.namespace"));
    }
    if (has_nra) {
      errs.push_back(api::Invalid(api::Path("spec").Child("nonResourceAttributes"), *nra,
                                  "disallowed on this kind of request"));
    }
    body["metadata"]["namespace"] = r.ns;
  }
  if (!errs.empty()) {
    return SendError(req, w, InvalidReview(k.group, k.kind, name, errs));
  }
  auth::Decision d{true, ""};
  if (opts_.authorizer) d = opts_.authorizer->Authorize(subject, a);
  Json status = {{"allowed", d.allowed}};
  if (!d.reason.empty()) status["reason"] = d.reason;
  body["status"] = std::move(status);
  w.Send(201, {{"Content-Type", kJsonType}}, body.dump());
}

void ApiServer::ServeTokenRequest(const HttpRequest& req, const Route& r, ResponseWriter& w) {
  if (!opts_.service_account_tokens) {
    return SendError(req, w, registry::MethodNotAllowed("this server issues no service account tokens"));
  }
  auto sa = registry_.Get(*r.kind, r.ns, r.name);
  if (!sa.ok()) return SendError(req, w, sa.status());
  Json body = Json::object();
  if (!req.body.empty()) {
    auto decoded = internal::DecodeBody(req, nullptr);
    if (!decoded.ok()) return SendError(req, w, decoded.status());
    if (decoded->is_object()) body = std::move(*decoded);
  }
  const Json& spec = api::MemberObject(body, "spec");
  int64_t exp = 3600;
  api::ErrorList errs;
  const api::Path sp("spec");
  if (const Json* e = api::FindMember(spec, "expirationSeconds"); e && !e->is_null()) {
    if (!e->is_number_integer()) {
      errs.push_back(api::Invalid(sp.Child("expirationSeconds"), *e, "must be an integer"));
    } else {
      exp = e->get<int64_t>();
      if (exp < 600) {
        errs.push_back(api::Invalid(sp.Child("expirationSeconds"), exp,
                                    "may not specify a duration less than 10 minutes"));
      } else if (exp > (int64_t{1} << 32)) {
        errs.push_back(api::Invalid(sp.Child("expirationSeconds"), exp,
                                    "may not specify a duration larger than 2^32 seconds"));
      }
    }
  }
  if (const Json* b = api::FindMember(spec, "boundObjectRef"); b && b->is_object() && !b->empty()) {
    errs.push_back(api::Forbidden(sp.Child("boundObjectRef"),
                                  "batchd does not bind tokens to objects; omit boundObjectRef"));
  }
  if (!errs.empty()) {
    return SendError(req, w, InvalidReview("authentication.k8s.io", "TokenRequest", r.name, errs));
  }
  std::vector<std::string> audiences = StringList(spec, "audiences");
  if (audiences.empty()) audiences = opts_.service_account_tokens->api_audiences();
  Json sa_obj = (*sa)->Decode();
  auth::ServiceAccountClaims c;
  c.ns = r.ns;
  c.name = r.name;
  c.uid = api::CopyStringMember(api::MemberObject(sa_obj, "metadata"), "uid");
  c.audiences = audiences;
  c.issued_at = clock_.Now();
  c.expires = c.issued_at + absl::Seconds(exp);
  c.jti = NewUuid();
  Json out = {{"kind", "TokenRequest"},
              {"apiVersion", "authentication.k8s.io/v1"},
              {"metadata", {{"name", r.name}, {"namespace", r.ns}, {"creationTimestamp", nullptr}}},
              {"spec", {{"audiences", audiences}, {"expirationSeconds", exp}, {"boundObjectRef", nullptr}}},
              {"status", {{"token", opts_.service_account_tokens->Issue(c)},
                          {"expirationTimestamp", api::meta::FormatRfc3339(c.expires)}}}};
  w.Send(201, {{"Content-Type", kJsonType}}, out.dump());
}

}  // namespace batchd::apiserver
