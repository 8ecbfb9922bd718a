// batchd's provisioner for `check-capacity.autoscaling.x-k8s.io`: capacity
// exists when every pod of the request fits, first-fit in node-name order,
// on Ready, schedulable nodes whose labels match the pod set's node selector
// and the `batchd.io/node-selector` parameter and whose NoSchedule /
// NoExecute taints the pod set tolerates, counting what bound, unfinished
// pods already request. Cost: O(nodes + pods) per request.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "api/core/v1/node_view.h"
#include "api/core/v1/pod_view.h"
#include "api/json_access.h"
#include "api/labels/selector.h"
#include "api/meta/object_meta.h"
#include "api/resource/quantity.h"
#include "controllers/admissioncheck/provisioner.h"

namespace batchd::controllers::admissioncheck {
namespace {

using api::Amount;
using api::Json;
using client::ObjectRef;
using Resources = std::map<std::string, Amount>;

void AddList(const Json& list, Resources& out) {
  for (auto it = list.begin(); it != list.end(); ++it) {
    if (!it->is_string()) continue;
    auto q = api::Quantity::Parse(it->get<std::string>());
    if (q.ok()) out[it.key()] += Amount::FromQuantity(*q);
  }
}

// A container's requests (limits stand in for missing requests).
Resources ContainerRequests(const Json& c) {
  const Json& res = api::MemberObject(c, "resources");
  Resources out;
  AddList(api::MemberObject(res, "limits"), out);
  Resources req;
  AddList(api::MemberObject(res, "requests"), req);
  for (auto& [k, v] : req) out[k] = v;
  return out;
}

// max(sum of containers, each init container), as the scheduler counts.
Resources PodRequests(const Json& pod) {
  const Json& spec = api::MemberObject(pod, "spec");
  Resources sum;
  for (const Json& c : api::MemberArray(spec, "containers")) {
    for (auto& [k, v] : ContainerRequests(c)) sum[k] += v;
  }
  for (const Json& c : api::MemberArray(spec, "initContainers")) {
    for (auto& [k, v] : ContainerRequests(c)) sum[k] = std::max(sum[k], v);
  }
  return sum;
}

bool Tolerates(const std::vector<api::core_v1::Toleration>& tolerations,
               const std::vector<api::core_v1::Taint>& taints) {
  for (const api::core_v1::Taint& t : taints) {
    if (t.effect == api::core_v1::TaintEffect::kPreferNoSchedule) continue;
    if (!api::core_v1::Tolerated(tolerations, t)) return false;
  }
  return true;
}

class NodeCapacityProvisioner : public Provisioner {
 public:
  explicit NodeCapacityProvisioner(reconcile::ControllerContext& ctx)
      : nodes_(ctx.informers.For("", "v1", "nodes")), pods_(ctx.informers.For("", "v1", "pods")) {}

  std::string Unsupported(const std::string& cls,
                          const std::map<std::string, std::string>& params) const override {
    if (cls != kCheckCapacityClass) {
      return absl::StrCat("provisioningClassName \"", cls, "\" is not supported; batchd serves \"",
                          kCheckCapacityClass, "\"");
    }
    for (const auto& [k, v] : params) {
      if (k == kNodeSelectorParameter) {
        if (auto s = api::labels::LabelSelector::Parse(v); !s.ok()) {
          return absl::StrCat("parameters[", k, "]: ", s.status().message());
        }
      } else if (k == kTimeoutParameter) {
        std::string err;
        ProvisioningTimeout(params, &err);
        if (!err.empty()) return err;
      } else {
        return absl::StrCat("parameters[", k, "] is not supported; batchd knows ",
                            kNodeSelectorParameter, " and ", kTimeoutParameter);
      }
    }
    return "";
  }

  ProvisionOutcome Provision(const CapacityRequest& r) const override {
    ProvisionOutcome out;
    api::labels::LabelSelector pool;
    if (auto it = r.parameters.find(kNodeSelectorParameter); it != r.parameters.end()) {
      auto s = api::labels::LabelSelector::Parse(it->second);
      if (!s.ok()) {
        out.state = ProvisionOutcome::State::kFailed;
        out.message = std::string(s.status().message());
        return out;
      }
      pool = *s;
      for (const auto& req : pool.requirements()) {
        if (auto v = pool.RequiresExactMatch(req.key)) out.node_selector[req.key] = *v;
      }
    }
    // Free capacity per matching-candidate node, in name order.
    std::map<std::string, Resources> used;
    for (const ObjectRef& p : pods_.List()) {
      const api::core_v1::PodView v = api::core_v1::PodView::Parse(*p);
      if (v.node_name.empty() || api::core_v1::IsTerminal(v.phase)) continue;
      for (auto& [k, a] : PodRequests(*p)) used[std::string(v.node_name)][k] += a;
    }
    struct Node {
      std::map<std::string, std::string> labels;
      std::vector<api::core_v1::Taint> taints;
      Resources free;
    };
    std::map<std::string, Node> nodes;
    for (const ObjectRef& n : nodes_.List()) {
      const api::core_v1::NodeView v = api::core_v1::NodeView::Parse(*n);
      if (v.unschedulable || v.ReadyStatus() != "True") continue;
      Node node;
      node.labels = api::meta::Labels(*n);
      if (!pool.Matches(node.labels)) continue;
      node.taints = v.taints;
      for (const auto& a : v.Allocatable()) node.free[std::string(a.name)] = a.amount;
      const std::string name = api::meta::GetName(*n);
      for (auto& [k, a] : used[name]) node.free[k] -= a;
      nodes.emplace(name, std::move(node));
    }
    int64_t placed = 0, wanted = 0;
    for (const PodSetDemand& ps : r.pod_sets) {
      wanted += ps.count;
      for (int32_t i = 0; i < ps.count; ++i) {
        bool fit = false;
        for (auto& [name, node] : nodes) {
          bool ok = Tolerates(ps.tolerations, node.taints);
          for (const auto& [k, v] : ps.node_selector) {
            auto it = node.labels.find(k);
            if (it == node.labels.end() || it->second != v) ok = false;
          }
          for (const auto& [k, a] : ps.per_pod) {
            if (!ok) break;
            if (a.IsZero()) continue;
            auto it = node.free.find(k);
            if (it == node.free.end() || it->second < a) ok = false;
          }
          if (!ok) continue;
          for (const auto& [k, a] : ps.per_pod) node.free[k] -= a;
          fit = true;
          break;
        }
        if (!fit) break;
        ++placed;
      }
    }
    if (placed == wanted) {
      out.state = ProvisionOutcome::State::kProvisioned;
      out.message = absl::StrCat("Capacity for ", wanted, " pod(s) is available");
    } else {
      out.state = ProvisionOutcome::State::kWaiting;
      out.message = absl::StrCat("Waiting for capacity: ", placed, " of ", wanted,
                                 " pod(s) fit on ", nodes.size(), " matching node(s)");
    }
    return out;
  }

 private:
  client::Informer& nodes_;
  client::Informer& pods_;
};

}  // namespace

absl::Duration ProvisioningTimeout(const std::map<std::string, std::string>& parameters,
                                   std::string* error) {
  auto it = parameters.find(kTimeoutParameter);
  if (it == parameters.end()) return kDefaultProvisioningTimeout;
  absl::Duration d;
  if (!absl::ParseDuration(it->second, &d) || d <= absl::ZeroDuration() ||
      d > kMaxProvisioningTimeout) {
    if (error != nullptr) {
      *error = absl::StrCat("parameters[", kTimeoutParameter, "]: \"", it->second,
                            "\" must be a duration in (0, 24h], e.g. 90s or 15m");
    }
    return kDefaultProvisioningTimeout;
  }
  return d;
}

std::shared_ptr<Provisioner> MakeNodeCapacityProvisioner(reconcile::ControllerContext& ctx) {
  return std::make_shared<NodeCapacityProvisioner>(ctx);
}

}  // namespace batchd::controllers::admissioncheck
