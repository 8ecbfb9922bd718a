// Internal to the endpointslice controller: the slices a Service should have,
// computed from the Service and its pods (pure functions, unit-tested
// without a server). Thread-compatible.
#pragma once

#include <string>
#include <vector>

#include "api/core/v1/pod_view.h"
#include "api/core/v1/service_view.h"
#include "api/discovery/v1/endpoint_slice_view.h"

namespace batchd::controllers::endpointslice::internal {

struct DesiredSlice {
  std::string name;
  std::vector<api::discovery_v1::EndpointPortValue> ports;
  std::vector<api::discovery_v1::EndpointValue> endpoints;
};

// Whether `pod` is listed at all (Kubernetes' ShouldPodBeInEndpoints with
// terminating pods included): it has an IP and is not Succeeded/Failed.
bool ShouldListPod(const api::core_v1::PodView& pod);
// The endpoint of `pod` for `svc`.
api::discovery_v1::EndpointValue EndpointFor(const api::core_v1::ServiceView& svc,
                                             const api::core_v1::PodView& pod);
// The service's ports with targetPort resolved against `pod`'s containers.
std::vector<api::discovery_v1::EndpointPortValue> PortsFor(const api::core_v1::ServiceView& svc,
                                                          const api::core_v1::PodView& pod);
// The slices `svc` should have given the pods its selector matches (in any
// order; those not to be listed are skipped): endpoints sorted by pod name,
// grouped by their resolved ports, `max_per_slice` per slice, named
// `<service>-<n>`; one empty slice when no pod is listed.
std::vector<DesiredSlice> DesiredSlices(const api::core_v1::ServiceView& svc,
                                        const std::vector<api::core_v1::PodView>& pods,
                                        size_t max_per_slice);

}  // namespace batchd::controllers::endpointslice::internal
