// The topology ungater (Kueue's TopologyUngater): the pods of a pod set that
// topology-aware admission placed wait behind the scheduling gate
// `kueue.x-k8s.io/topology` until their Workload's
// `status.admission.podSetAssignments[].topologyAssignment` exists; then
// each gets its domain — the gate removed and `spec.nodeSelector` set to the
// domain's label values at every level — so the pod scheduler binds it
// exactly where admission counted it.
//
// Pods find their Workload by the `kueue.x-k8s.io/workload` annotation and
// their pod set by the `kueue.x-k8s.io/podset` label (both added to the pod
// template when the job starts). Domains are filled in assignment order
// with the gated pods in rank order (the pod set's index label, e.g. a Job's
// completion index; with `subGroupIndexLabel` / `subGroupCount`, the
// replicated job's index times its pods plus that; then name), after
// counting the pods already placed on
// each domain, so a replacement pod goes where its predecessor's slot freed.
//
// Ownership: registers handlers and the controller "topology-ungater" with
// the context's manager; its state lives as long as the manager's informers.
#pragma once

#include "reconcile/context.h"

namespace batchd::controllers::topology {

void AddTopologyUngater(reconcile::ControllerContext& ctx);

}  // namespace batchd::controllers::topology
