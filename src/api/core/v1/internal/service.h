// Internal to api/core/v1: the Service kind's pieces (defaults, validation,
// table), split out so they can be unit-tested. Stateless and thread-safe.
//
// batchd serves only what it honours of a Service: headless Services
// (`clusterIP: None`) of type ClusterIP with a selector, whose EndpointSlices
// the endpointslice controller keeps and whose pods' names the node agents
// resolve. There are no virtual IPs, node ports, load balancers or external
// names; those are refused with Forbidden and the field path.
#pragma once

#include <vector>

#include "absl/time/time.h"
#include "api/field_error.h"
#include "api/kind.h"

namespace batchd::api::core_v1::internal {

// SetDefaults_Service plus the registry's create-time defaults for a headless
// service: type ClusterIP, sessionAffinity None, ports[].protocol TCP,
// ports[].targetPort = port, clusterIPs = [clusterIP], internalTrafficPolicy
// Cluster, ipFamilyPolicy SingleStack and ipFamilies [IPv4] when headless.
void SetDefaultsService(Json& svc);
ErrorList ValidateService(const Json& svc);
ErrorList ValidateServiceUpdate(const Json& svc, const Json& old);
std::vector<TableColumn> ServiceColumns();
// Cells after the name: Type, Cluster-IP, External-IP, Port(s), Age, Selector.
std::vector<Json> ServiceRowCells(const Json& svc, absl::Time now);
KindDef ServiceKind();

// IANA_SVC_NAME checks shared with container ports (a port name or a named
// targetPort): at most 15 characters of [a-z0-9-], a letter, no "--".
std::vector<std::string> IsValidPortName(const std::string& name);

}  // namespace batchd::api::core_v1::internal
