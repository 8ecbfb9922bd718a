#include "api/discovery/v1/endpoint_slice_view.h"

#include "api/json_access.h"

namespace batchd::api::discovery_v1 {
namespace {

std::optional<bool> OptionalBool(const Json& obj, std::string_view key) {
  const Json* v = FindMember(obj, key);
  if (v == nullptr || !v->is_boolean()) return std::nullopt;
  return v->get<bool>();
}

}  // namespace

EndpointSliceView EndpointSliceView::Parse(const Json& slice) {
  EndpointSliceView v;
  v.meta = meta::ObjectMetaView::Parse(slice);
  v.service_name = v.meta.Label(kServiceNameLabel).value_or("");
  v.managed_by = v.meta.Label(kManagedByLabel).value_or("");
  v.address_type = StringMember(slice, "addressType");
  for (const Json& ep : MemberArray(slice, "endpoints")) {
    EndpointView e;
    for (const Json& a : MemberArray(ep, "addresses")) e.addresses.push_back(AsString(a));
    e.hostname = StringMember(ep, "hostname");
    e.node_name = StringMember(ep, "nodeName");
    const Json& c = MemberObject(ep, "conditions");
    e.ready = OptionalBool(c, "ready");
    e.serving = OptionalBool(c, "serving");
    e.terminating = OptionalBool(c, "terminating");
    const Json& ref = MemberObject(ep, "targetRef");
    e.target_kind = StringMember(ref, "kind");
    e.target_namespace = StringMember(ref, "namespace");
    e.target_name = StringMember(ref, "name");
    e.target_uid = StringMember(ref, "uid");
    v.endpoints.push_back(e);
  }
  for (const Json& p : MemberArray(slice, "ports")) {
    EndpointPortView port;
    port.name = StringMember(p, "name");
    if (const Json* n = FindMember(p, "port"); n != nullptr && n->is_number_integer()) {
      port.port = n->get<int32_t>();
    }
    port.protocol = StringMember(p, "protocol");
    port.app_protocol = StringMember(p, "appProtocol");
    v.ports.push_back(port);
  }
  return v;
}

Json BuildEndpointSlice(const std::string& ns, const std::string& name, const OwnerValue& owner,
                        const std::vector<EndpointValue>& endpoints,
                        const std::vector<EndpointPortValue>& ports) {
  Json eps = Json::array();
  for (const EndpointValue& e : endpoints) {
    Json ep = {{"addresses", Json::array({e.address})},
               {"conditions",
                {{"ready", e.ready}, {"serving", e.serving}, {"terminating", e.terminating}}},
               {"targetRef",
                {{"kind", "Pod"},
                 {"namespace", e.pod_namespace},
                 {"name", e.pod_name},
                 {"uid", e.pod_uid}}}};
    if (!e.hostname.empty()) ep["hostname"] = e.hostname;
    if (!e.node_name.empty()) ep["nodeName"] = e.node_name;
    eps.push_back(std::move(ep));
  }
  Json ps = Json::array();
  for (const EndpointPortValue& p : ports) {
    Json port = {{"name", p.name}, {"protocol", p.protocol}};
    if (p.port) port["port"] = *p.port;
    if (!p.app_protocol.empty()) port["appProtocol"] = p.app_protocol;
    ps.push_back(std::move(port));
  }
  return Json{{"apiVersion", "discovery.k8s.io/v1"},
              {"kind", "EndpointSlice"},
              {"metadata",
               {{"name", name},
                {"namespace", ns},
                {"labels", {{kServiceNameLabel, owner.name}, {kManagedByLabel, kManagedByController}}},
                {"ownerReferences",
                 Json::array({{{"apiVersion", "v1"},
                               {"kind", "Service"},
                               {"name", owner.name},
                               {"uid", owner.uid},
                               {"controller", true},
                               {"blockOwnerDeletion", true}}})}}},
              {"addressType", "IPv4"},
              {"endpoints", std::move(eps)},
              {"ports", std::move(ps)}};
}

std::vector<EndpointValue> EndpointValues(const EndpointSliceView& slice) {
  std::vector<EndpointValue> out;
  for (const EndpointView& e : slice.endpoints) {
    EndpointValue v;
    if (!e.addresses.empty()) v.address = std::string(e.addresses[0]);
    v.hostname = std::string(e.hostname);
    v.node_name = std::string(e.node_name);
    v.ready = e.ready.value_or(false);
    v.serving = e.serving.value_or(false);
    v.terminating = e.terminating.value_or(false);
    v.pod_namespace = std::string(e.target_namespace);
    v.pod_name = std::string(e.target_name);
    v.pod_uid = std::string(e.target_uid);
    out.push_back(std::move(v));
  }
  return out;
}

std::vector<EndpointPortValue> EndpointPortValues(const EndpointSliceView& slice) {
  std::vector<EndpointPortValue> out;
  for (const EndpointPortView& p : slice.ports) {
    out.push_back({std::string(p.name), p.port, std::string(p.protocol),
                   std::string(p.app_protocol)});
  }
  return out;
}

}  // namespace batchd::api::discovery_v1
