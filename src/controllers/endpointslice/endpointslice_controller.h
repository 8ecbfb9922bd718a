// The endpointslice controller (Kubernetes' EndpointSlice controller, for
// the Services batchd serves: headless, with a selector). For each such
// Service it keeps the EndpointSlices listing the pods its selector matches
// in its namespace:
//
//   - an endpoint per pod that has an IP and is not terminal: address =
//     status.podIP (pods share their node's network, so this is the node's
//     address), hostname = spec.hostname when spec.subdomain names the
//     Service, nodeName, targetRef, and conditions ready (Ready and not
//     terminating, or always with publishNotReadyAddresses), serving
//     (Ready), terminating (being deleted);
//   - ports = the Service's ports with targetPort resolved against the
//     pod's container ports (a named port no container defines is left
//     out for that pod); pods resolving to different ports go to different
//     slices, as upstream;
//   - at most 1000 endpoints per slice (`kMaxEndpoints`), more slices
//     beyond; one empty slice when nothing matches.
//
// Slices are named `<service>-<n>` (deterministic, so a crash between a
// create and its informer event can never make a duplicate: the second
// create is AlreadyExists), labelled `kubernetes.io/service-name` and
// `endpointslice.kubernetes.io/managed-by: endpointslice-controller.k8s.io`,
// and owned by the Service (the garbage collector deletes them with it).
// Writes happen only when a slice's content differs.
//
// Ownership: registers handlers and the controller "endpointslice" with the
// context's manager. Its index of Service selectors (by namespace) is
// bounded by the Services.
#pragma once

#include "reconcile/context.h"

namespace batchd::controllers::endpointslice {

void AddEndpointSliceController(reconcile::ControllerContext& ctx);

}  // namespace batchd::controllers::endpointslice
