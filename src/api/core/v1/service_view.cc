#include "api/core/v1/service_view.h"

#include "api/json_access.h"

namespace batchd::api::core_v1 {

ServiceView ServiceView::Parse(const Json& svc) {
  ServiceView v;
  v.meta = meta::ObjectMetaView::Parse(svc);
  const Json& spec = MemberObject(svc, "spec");
  v.type = StringMember(spec, "type");
  v.cluster_ip = StringMember(spec, "clusterIP");
  v.publish_not_ready_addresses = BoolMember(spec, "publishNotReadyAddresses");
  v.selector = StringMap(MemberObject(spec, "selector"));
  for (const Json& p : MemberArray(spec, "ports")) {
    ServicePortView port;
    port.name = StringMember(p, "name");
    port.port = static_cast<int32_t>(IntMember(p, "port"));
    port.protocol = StringMember(p, "protocol", "TCP");
    const Json& target = Member(p, "targetPort");
    if (target.is_number_integer()) {
      port.target_port_number = target.get<int32_t>();
    } else if (target.is_string() && !target.get_ref<const std::string&>().empty()) {
      port.target_port_name = target.get_ref<const std::string&>();
    } else {
      port.target_port_number = port.port;
    }
    port.app_protocol = StringMember(p, "appProtocol");
    v.ports.push_back(port);
  }
  return v;
}

bool ServiceView::Selects(const Json* labels) const {
  if (selector.empty()) return false;
  if (labels == nullptr || !labels->is_object()) return false;
  for (const auto& [k, want] : selector) {
    const Json* have = FindMember(*labels, k);
    if (have == nullptr || !have->is_string() || have->get_ref<const std::string&>() != want) {
      return false;
    }
  }
  return true;
}

std::string ServiceView::SelectorString() const {
  std::string out;
  for (const auto& [k, v] : selector) {
    if (!out.empty()) out += ",";
    out += k + "=" + v;
  }
  return out;
}

}  // namespace batchd::api::core_v1
