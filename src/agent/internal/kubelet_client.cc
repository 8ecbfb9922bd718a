#include "agent/internal/kubelet_client.h"

#include "absl/strings/str_cat.h"
#include "api/json_access.h"
#include "auth/user.h"
#include "common/pki.h"
#include "registry/errors.h"

namespace batchd::agent::internal {

absl::StatusOr<KubeletTarget> KubeletTargetFor(const api::Json& node,
                                               const KubeletClientOptions& kubelet) {
  const api::Json& meta = api::MemberObject(node, "metadata");
  const std::string name = api::CopyStringMember(meta, "name");
  const std::string value = api::CopyStringMember(api::MemberObject(meta, "annotations"),
                                                  auth::kKubeletEndpointAnnotation);
  if (value.empty()) {
    return registry::BadRequest(absl::StrCat(
        "node \"", name, "\" has no authenticated log endpoint (its agent registers one when it "
        "authenticates as system:node:", name, ")"));
  }
  api::Json ep = api::Json::parse(value, nullptr, false);
  const std::string address = ep.is_object() ? api::CopyStringMember(ep, "address") : "";
  const std::string ca = ep.is_object() ? api::CopyStringMember(ep, "ca") : "";
  const api::Json* port = ep.is_object() ? api::FindMember(ep, "port") : nullptr;
  if (address.empty() || !pki::IsIpAddress(address) || ca.empty() || port == nullptr ||
      !port->is_number_integer() || port->get<int64_t>() <= 0 || port->get<int64_t>() > 65535) {
    return registry::BadRequest(
        absl::StrCat("node \"", name, "\" has a malformed ", auth::kKubeletEndpointAnnotation,
                     " annotation"));
  }
  if (kubelet.cert_file.empty() || kubelet.key_file.empty()) {
    return registry::BadRequest(absl::StrCat(
        "the API server has no kubelet client certificate to reach node \"", name,
        "\" (--kubelet-client-certificate/--kubelet-client-key)"));
  }
  KubeletTarget t;
  const std::string host = address.find(':') != std::string::npos ? "[" + address + "]" : address;
  t.base_url = absl::StrCat("https://", host, ":", port->get<int64_t>());
  t.options.ca_data = ca;
  t.options.client_cert_file = kubelet.cert_file;
  t.options.client_key_file = kubelet.key_file;
  return t;
}

}  // namespace batchd::agent::internal
