#include "controllers/endpointslice/internal/desired.h"

#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"
#include "api/json_access.h"
#include "common/string_view.h"

namespace batchd::controllers::endpointslice::internal {

using api::Json;
using api::core_v1::PodView;
using api::core_v1::ServiceView;
using api::discovery_v1::EndpointPortValue;
using api::discovery_v1::EndpointValue;

namespace {

// The number of the container port named `name` with `protocol`, if any
// container (init containers too, as Kubernetes' FindPort) declares one.
std::optional<int32_t> FindNamedPort(const PodView& pod, std::string_view name,
                                     std::string_view protocol) {
  for (const api::Json* list : {pod.containers, pod.init_containers}) {
    if (list == nullptr || !list->is_array()) continue;
    for (const Json& c : *list) {
      for (const Json& p : api::MemberArray(c, "ports")) {
        if (api::StringMember(p, "name") == name &&
            api::StringMember(p, "protocol", "TCP") == protocol) {
          return static_cast<int32_t>(api::IntMember(p, "containerPort"));
        }
      }
    }
  }
  return std::nullopt;
}

}  // namespace

bool ShouldListPod(const PodView& pod) { return !pod.terminal() && !pod.pod_ip.empty(); }

EndpointValue EndpointFor(const ServiceView& svc, const PodView& pod) {
  EndpointValue e;
  e.address = std::string(pod.pod_ip);
  if (!pod.hostname.empty() && pod.subdomain == svc.meta.name &&
      pod.meta.namespace_ == svc.meta.namespace_) {
    e.hostname = std::string(pod.hostname);
  }
  e.node_name = std::string(pod.node_name);
  const bool pod_ready = pod.ConditionStatus("Ready") == "True";
  e.terminating = pod.meta.being_deleted();
  e.serving = pod_ready;
  e.ready = svc.publish_not_ready_addresses || (pod_ready && !e.terminating);
  e.pod_namespace = std::string(pod.meta.namespace_);
  e.pod_name = std::string(pod.meta.name);
  e.pod_uid = std::string(pod.meta.uid);
  return e;
}

std::vector<EndpointPortValue> PortsFor(const ServiceView& svc, const PodView& pod) {
  std::vector<EndpointPortValue> out;
  for (const api::core_v1::ServicePortView& p : svc.ports) {
    std::optional<int32_t> number = p.target_port_number;
    if (!number) number = FindNamedPort(pod, p.target_port_name, p.protocol);
    if (!number) continue;  // Upstream leaves the port out for this pod.
    out.push_back({std::string(p.name), number, std::string(p.protocol),
                   std::string(p.app_protocol)});
  }
  return out;
}

std::vector<DesiredSlice> DesiredSlices(const ServiceView& svc, const std::vector<PodView>& pods,
                                        size_t max_per_slice) {
  std::vector<const PodView*> listed;
  for (const PodView& p : pods) {
    if (ShouldListPod(p)) listed.push_back(&p);
  }
  std::sort(listed.begin(), listed.end(),
            [](const PodView* a, const PodView* b) { return a->meta.name < b->meta.name; });
  // Group by resolved ports; groups in order of their first pod.
  std::vector<std::pair<std::vector<EndpointPortValue>, std::vector<EndpointValue>>> groups;
  for (const PodView* p : listed) {
    std::vector<EndpointPortValue> ports = PortsFor(svc, *p);
    auto it = std::find_if(groups.begin(), groups.end(),
                           [&](const auto& g) { return g.first == ports; });
    if (it == groups.end()) {
      groups.emplace_back(std::move(ports), std::vector<EndpointValue>{});
      it = groups.end() - 1;
    }
    it->second.push_back(EndpointFor(svc, *p));
  }
  std::vector<DesiredSlice> out;
  auto next_name = [&] { return absl::StrCat(Sv(svc.meta.name), "-", out.size()); };
  for (auto& [ports, endpoints] : groups) {
    for (size_t i = 0; i < endpoints.size(); i += max_per_slice) {
      DesiredSlice s;
      s.name = next_name();
      s.ports = ports;
      const size_t end = std::min(endpoints.size(), i + max_per_slice);
      s.endpoints.assign(endpoints.begin() + i, endpoints.begin() + end);
      out.push_back(std::move(s));
    }
  }
  if (out.empty()) out.push_back({next_name(), {}, {}});
  return out;
}

}  // namespace batchd::controllers::endpointslice::internal
