// Node metrics for /metrics under kube-state-metrics' names, so the usual
// "node NotReady" alerts and dashboards work unchanged:
//   kube_node_status_condition{node,condition,status="true|false|unknown"}  1 or 0
//   kube_node_spec_unschedulable{node}                                     1 or 0
//   kube_node_status_allocatable{node,resource,unit}                       number
// Read from the server's Node informer at scrape time (nothing is kept).
#pragma once

#include <string>
#include <vector>

#include "api/json_access.h"

namespace batchd::cmd {

// Appends the three families (HELP/TYPE lines always, one sample set per
// node, nodes sorted by name) for `nodes` to `out`.
void AppendNodeMetrics(const std::vector<const api::Json*>& nodes, std::string* out);

}  // namespace batchd::cmd
