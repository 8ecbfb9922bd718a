// Topology side of the queue manager: keeps the admission core's view of
// Topologies and of the nodes topology-aware flavors place pods on.
//
// A node's free capacity for TAS is its allocatable minus the requests of
// the bound, non-terminal pods that TAS does not place (pods without the
// kueue.x-k8s.io/tas label: DaemonSet-like pods, pods of non-TAS
// workloads); TAS pods are counted through their Workloads' topology
// assignments instead. The per-pod contributions are kept so that one pod
// event costs one node update, not a scan of the node's pods.
//
// Nothing of this runs until some ResourceFlavor names a topology: the pod
// and node handlers then start marking work, and the first sync counts
// every pod and node once.
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

#include "api/core/v1/node_view.h"
#include "api/core/v1/pod_view.h"
#include "api/kueue/topology_assignment.h"
#include "api/meta/object_meta.h"
#include "common/logging.h"
#include "controllers/queueing/internal/queue_manager_impl.h"

namespace batchd::controllers::queueing {
namespace {

namespace q = batchd::queueing;
using client::ObjectRef;

// True when the node's TAS pods are fine: Ready (a node that is not is a
// failure; its pods are repaired). Unschedulable nodes stay, but get no new pods.
bool Eligible(const api::core_v1::NodeView& v) { return v.ReadyStatus() == "True"; }

}  // namespace

bool QueueManagerImpl::PodCountsForTopology(const Json& pod, std::string* node,
                                            std::map<std::string, q::Amount>* requests) {
  const api::core_v1::PodView v = api::core_v1::PodView::Parse(pod);
  if (v.node_name.empty() || v.terminal()) return false;
  if (auto tas = api::meta::GetLabel(pod, api::kueue::kTasLabel); tas && *tas == "true") {
    return false;
  }
  *node = std::string(v.node_name);
  *requests = internal::PodRequests(api::kueue::PodSetTemplateView::Parse(pod));
  (*requests)[internal::kPodsResource] = 1000;  // one pod slot
  return true;
}

bool QueueManagerImpl::TopologyRelevantPodChange(const Json& a, const Json& b) {
  const api::core_v1::PodView x = api::core_v1::PodView::Parse(a);
  const api::core_v1::PodView y = api::core_v1::PodView::Parse(b);
  return x.node_name != y.node_name || x.terminal() != y.terminal() ||
         api::meta::GetLabel(a, api::kueue::kTasLabel) !=
             api::meta::GetLabel(b, api::kueue::kTasLabel);
}

bool QueueManagerImpl::TopologyRelevantNodeChange(const Json& a, const Json& b) {
  const api::core_v1::NodeView x = api::core_v1::NodeView::Parse(a);
  const api::core_v1::NodeView y = api::core_v1::NodeView::Parse(b);
  if (Eligible(x) != Eligible(y) || x.unschedulable != y.unschedulable || x.taints != y.taints) {
    return true;
  }
  if (api::meta::Labels(a) != api::meta::Labels(b)) return true;
  const Json* xa = x.allocatable != nullptr ? x.allocatable : x.capacity;
  const Json* ya = y.allocatable != nullptr ? y.allocatable : y.capacity;
  if ((xa == nullptr) != (ya == nullptr)) return true;
  return xa != nullptr && *xa != *ya;
}

bool QueueManagerImpl::SyncTopology(const Dirty& d) {
  for (const std::string& name : d.topologies) {
    ObjectRef t = topologies_.Get("", name);
    if (t) {
      core_.UpsertTopology(internal::ToTopology(api::kueue::TopologyView::Parse(*t)));
    } else {
      core_.DeleteTopology(name);
    }
  }
  if (!d.flavors.empty()) {
    bool any = false;
    for (const ObjectRef& rf : flavors_.List()) {
      any = any || !api::kueue::ResourceFlavorView::Parse(*rf).topology_name.empty();
    }
    if (any != tas_enabled_) {
      tas_enabled_ = any;
      tas_watch_.store(any);
      pod_usage_.clear();
      node_usage_.clear();
      for (const std::string& name : tas_nodes_) core_.DeleteTopologyNode(name);
      tas_nodes_.clear();
      if (any) {
        // Count everything once; from now on the handlers mark changes.
        std::set<std::string> pods, nodes;
        for (const ObjectRef& p : pods_.List()) pods.insert(client::Informer::KeyOf(*p));
        for (const ObjectRef& n : nodes_.List()) nodes.insert(api::meta::GetName(*n));
        SyncTopologyPods(pods);
        SyncTopologyNodes(nodes);
        return true;
      }
    }
  }
  if (!tas_enabled_) return false;
  std::set<std::string> nodes = d.nodes;
  SyncTopologyPods(d.pods, &nodes);
  SyncTopologyNodes(nodes);
  return !d.nodes.empty();
}

void QueueManagerImpl::RepairTopology(absl::Time now) {
  (void)now;
  repair_retry_ = false;
  for (const q::TopologyRepair& r : core_.RepairTopology()) {
    const std::string nodes = absl::StrJoin(r.unhealthy_nodes, ", ");
    if (!r.replacement) {
      Eviction ev{"NodeFailures",
                  absl::StrCat("Workload was evicted as there was no replacement for a failed "
                               "node: ", nodes),
                  "", true};
      ev.unhealthy_nodes = r.unhealthy_nodes;
      evictions_[r.key] = std::move(ev);
      continue;
    }
    ObjectRef obj = Current(r.key);
    if (!obj) continue;
    api::kueue::StatusUpdate update(*obj);
    api::kueue::SetAdmission(update, internal::ToAdmissionStatus(*r.replacement));
    api::kueue::SetUnhealthyNodes(update, {});
    if (!WriteWorkloadStatus(r.key, std::move(update))) {
      synced_sig_.erase(r.key);  // the core takes the stored admission back
      repair_retry_ = true;
      continue;
    }
    ctx_.events.Event(*obj, "Normal", "NodeFailureReplaced",
                      absl::StrCat("Pods on failed node(s) ", nodes,
                                   " were given nodes in the same topology domain"));
  }
}

void QueueManagerImpl::SyncTopologyPods(const std::set<std::string>& keys,
                                        std::set<std::string>* touched) {
  for (const std::string& key : keys) {
    size_t slash = key.find('/');
    ObjectRef pod = pods_.Get(key.substr(0, slash), key.substr(slash + 1));
    PodUsage now;
    bool counts = pod && PodCountsForTopology(*pod, &now.node, &now.requests);
    auto it = pod_usage_.find(key);
    if (it != pod_usage_.end()) {
      if (counts && it->second.node == now.node && it->second.requests == now.requests) continue;
      std::map<std::string, q::Amount>& sum = node_usage_[it->second.node];
      for (const auto& [r, v] : it->second.requests) sum[r] -= v;
      if (touched != nullptr) touched->insert(it->second.node);
      pod_usage_.erase(it);
    }
    if (!counts) continue;
    std::map<std::string, q::Amount>& sum = node_usage_[now.node];
    for (const auto& [r, v] : now.requests) sum[r] += v;
    if (touched != nullptr) touched->insert(now.node);
    pod_usage_.emplace(key, std::move(now));
  }
}

void QueueManagerImpl::SyncTopologyNodes(const std::set<std::string>& names) {
  for (const std::string& name : names) {
    ObjectRef node = nodes_.Get("", name);
    const api::core_v1::NodeView v =
        node ? api::core_v1::NodeView::Parse(*node) : api::core_v1::NodeView();
    if (!node || !Eligible(v)) {
      if (tas_nodes_.erase(name) > 0) core_.DeleteTopologyNode(name);
      continue;
    }
    q::TopologyNode n;
    n.name = name;
    n.labels = api::meta::Labels(*node);
    n.taints = v.taints;
    n.schedulable = !v.unschedulable;
    for (const api::core_v1::ResourceAmountView& r : v.Allocatable()) {
      n.free[std::string(r.name)] = r.amount.milli();
    }
    if (auto used = node_usage_.find(name); used != node_usage_.end()) {
      for (const auto& [r, amount] : used->second) {
        q::Amount& free = n.free[r];
        free = free > amount ? free - amount : 0;
      }
    }
    tas_nodes_.insert(name);
    core_.UpsertTopologyNode(std::move(n));
  }
}

}  // namespace batchd::controllers::queueing
