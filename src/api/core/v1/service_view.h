// ServiceView: the typed view of a core/v1 Service that the endpointslice
// controller reads (see api/meta/object_view.h for what a view is and its
// lifetime rule: it points into the JSON it was parsed from).
//
// Thread-safety: immutable after Parse.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/field_error.h"
#include "api/meta/object_view.h"

namespace batchd::api::core_v1 {

struct ServicePortView {
  std::string_view name;
  int32_t port = 0;
  std::string_view protocol;  // "TCP" when unset (the API defaults it).
  // targetPort: a number, or the name of a container port.
  std::optional<int32_t> target_port_number;
  std::string_view target_port_name;
  std::string_view app_protocol;
};

struct ServiceView {
  meta::ObjectMetaView meta;
  std::string_view type;
  std::string_view cluster_ip;
  bool publish_not_ready_addresses = false;
  std::map<std::string, std::string> selector;  // Empty: no selector.
  std::vector<ServicePortView> ports;

  // REQUIRES: `svc` outlives the view.
  static ServiceView Parse(const Json& svc);

  bool headless() const { return cluster_ip == "None"; }
  // Whether `labels` (a pod's metadata.labels object, or null) has every
  // selector entry. False for a service without a selector (it selects none).
  bool Selects(const Json* labels) const;
  // "k=v,k2=v2" (sorted), a label-selector string for listers.
  std::string SelectorString() const;
};

}  // namespace batchd::api::core_v1
