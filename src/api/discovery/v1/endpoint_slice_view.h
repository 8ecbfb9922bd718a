// EndpointSliceView: the typed view of a discovery.k8s.io/v1 EndpointSlice
// that the endpointslice controller and the node agents read, and the
// writer that builds one (see api/meta/object_view.h for what a view is and
// its lifetime rule: it points into the JSON it was parsed from).
//
// Thread-safety: views are immutable after Parse; the writer is a pure
// function.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/field_error.h"
#include "api/meta/object_view.h"

namespace batchd::api::discovery_v1 {

inline constexpr char kGroup[] = "discovery.k8s.io";
// Labels every managed slice carries (as in Kubernetes).
inline constexpr char kServiceNameLabel[] = "kubernetes.io/service-name";
inline constexpr char kManagedByLabel[] = "endpointslice.kubernetes.io/managed-by";
inline constexpr char kManagedByController[] = "endpointslice-controller.k8s.io";
// Kubernetes' validation limits (the controller fills slices up to kMaxEndpoints).
inline constexpr size_t kMaxEndpoints = 1000;
inline constexpr size_t kMaxAddresses = 100;
inline constexpr size_t kMaxPorts = 20000;

struct EndpointView {
  std::vector<std::string_view> addresses;
  std::string_view hostname;
  std::string_view node_name;
  // conditions; nullopt when unset (Kubernetes reads an unset `ready` as
  // ready).
  std::optional<bool> ready, serving, terminating;
  std::string_view target_kind, target_namespace, target_name, target_uid;

  // Whether name resolution should hand out this endpoint (ready or unset).
  bool ResolvesAsReady() const { return ready.value_or(true); }
};

struct EndpointPortView {
  std::string_view name;
  std::optional<int32_t> port;
  std::string_view protocol;
  std::string_view app_protocol;
};

struct EndpointSliceView {
  meta::ObjectMetaView meta;
  std::string_view service_name;  // The kubernetes.io/service-name label.
  std::string_view managed_by;    // The endpointslice.kubernetes.io/managed-by label.
  std::string_view address_type;
  std::vector<EndpointView> endpoints;
  std::vector<EndpointPortView> ports;

  // REQUIRES: `slice` outlives the view.
  static EndpointSliceView Parse(const Json& slice);
};

// --- Writer ------------------------------------------------------------------

// What the endpointslice controller writes for one endpoint / port.
struct EndpointValue {
  std::string address;
  std::string hostname;  // "" = unset.
  std::string node_name;
  bool ready = false, serving = false, terminating = false;
  std::string pod_namespace, pod_name, pod_uid;  // targetRef (kind Pod).
  bool operator==(const EndpointValue&) const = default;
};
struct EndpointPortValue {
  std::string name;
  std::optional<int32_t> port;  // nullopt: a named targetPort no pod defines.
  std::string protocol = "TCP";
  std::string app_protocol;
  bool operator==(const EndpointPortValue&) const = default;
};
struct OwnerValue {
  std::string name, uid;  // The Service.
};

// A complete IPv4 EndpointSlice `name` in `ns` for Service `owner` (labels
// kubernetes.io/service-name and endpointslice.kubernetes.io/managed-by, a
// controller owner reference to the Service).
Json BuildEndpointSlice(const std::string& ns, const std::string& name, const OwnerValue& owner,
                        const std::vector<EndpointValue>& endpoints,
                        const std::vector<EndpointPortValue>& ports);
// The endpoints / ports of `slice` as the writer's values (to compare with a
// desired state).
std::vector<EndpointValue> EndpointValues(const EndpointSliceView& slice);
std::vector<EndpointPortValue> EndpointPortValues(const EndpointSliceView& slice);

}  // namespace batchd::api::discovery_v1
