// discovery.k8s.io/v1 EndpointSlice: schema, validation with Kubernetes'
// field paths and limits (1000 endpoints, 100 addresses per endpoint, 20000
// ports), immutable addressType, and the `kubectl get endpointslices` table
// (NAME ADDRESSTYPE PORTS ENDPOINTS AGE). batchd's endpointslice controller
// keeps the slices of headless Services; node agents read them to resolve
// pod names. Stateless and thread-safe.
#pragma once

#include <vector>

#include "absl/time/time.h"
#include "api/field_error.h"
#include "api/discovery/v1/endpoint_slice_view.h"
#include "api/kind.h"

namespace batchd::api::discovery_v1 {


ErrorList ValidateEndpointSlice(const Json& slice);
ErrorList ValidateEndpointSliceUpdate(const Json& slice, const Json& old);
std::vector<TableColumn> EndpointSliceColumns();
// Cells after the name: AddressType, Ports, Endpoints, Age.
std::vector<Json> EndpointSliceRowCells(const Json& slice, absl::Time now);
KindDef EndpointSliceKind();

// Adds EndpointSlice (discovery.k8s.io/v1).
void RegisterKinds(Scheme& scheme);

}  // namespace batchd::api::discovery_v1
