#include "controllers/queueing/internal/convert.h"

#include <algorithm>
#include <utility>

#include "api/core/v1/taint.h"
#include "api/json_access.h"
#include "api/kueue/workload_slices.h"
#include "api/labels/selector.h"
#include "api/meta/object_meta.h"
#include "api/resource/amount.h"

namespace batchd::controllers::queueing::internal {
namespace {

namespace q = batchd::queueing;
namespace kueue = api::kueue;

std::vector<q::ResourceGroup> ToResourceGroups(const kueue::ResourceGroupsView& view) {
  std::vector<q::ResourceGroup> out;
  out.reserve(view.groups.size());
  for (const kueue::ResourceGroupView& rg : view.groups) {
    q::ResourceGroup g;
    g.covered_resources.assign(rg.covered_resources.begin(), rg.covered_resources.end());
    for (const kueue::FlavorQuotasView& f : rg.flavors) {
      q::FlavorQuotas fq;
      fq.flavor = std::string(f.name);
      for (const kueue::ResourceQuotaView& r : f.resources) {
        q::ResourceQuota quota;
        quota.nominal = r.nominal_quota.milli();
        if (r.borrowing_limit) quota.borrowing_limit = r.borrowing_limit->milli();
        if (r.lending_limit) quota.lending_limit = r.lending_limit->milli();
        fq.resources[std::string(r.name)] = quota;
      }
      g.flavors.push_back(std::move(fq));
    }
    out.push_back(std::move(g));
  }
  return out;
}

q::PreemptionPolicy ToPreemptionPolicy(kueue::PreemptionPolicy p) {
  switch (p) {
    case kueue::PreemptionPolicy::kLowerPriority: return q::PreemptionPolicy::kLowerPriority;
    case kueue::PreemptionPolicy::kLowerOrNewerEqualPriority:
      return q::PreemptionPolicy::kLowerOrNewerEqualPriority;
    case kueue::PreemptionPolicy::kAny: return q::PreemptionPolicy::kAny;
    case kueue::PreemptionPolicy::kNever: break;
  }
  return q::PreemptionPolicy::kNever;
}

api::labels::Operator ToOperator(kueue::NodeSelectorOperator op) {
  using Op = api::labels::Operator;
  switch (op) {
    case kueue::NodeSelectorOperator::kIn: return Op::kIn;
    case kueue::NodeSelectorOperator::kNotIn: return Op::kNotIn;
    case kueue::NodeSelectorOperator::kDoesNotExist: return Op::kDoesNotExist;
    case kueue::NodeSelectorOperator::kGt: return Op::kGreaterThan;
    case kueue::NodeSelectorOperator::kLt: return Op::kLessThan;
    case kueue::NodeSelectorOperator::kExists:
    case kueue::NodeSelectorOperator::kUnknown: break;  // Validation refuses unknown ones.
  }
  return Op::kExists;
}

using Requests = std::map<std::string, q::Amount>;

void AddInto(Requests& sum, const std::vector<kueue::ResourceAmount>& add) {
  for (const kueue::ResourceAmount& r : add) {
    q::Amount& v = sum[std::string(r.name)];
    v = (api::Amount::FromMilli(v) + r.amount).milli();
  }
}

void AddInto(Requests& sum, const Requests& add) {
  for (const auto& [k, v] : add) {
    sum[k] = (api::Amount::FromMilli(sum[k]) + api::Amount::FromMilli(v)).milli();
  }
}

void MaxInto(Requests& m, const Requests& other) {
  for (const auto& [k, v] : other) m[k] = std::max(m[k], v);
}

// A container's requests, with limits standing in for missing requests.
Requests ContainerRequests(const kueue::ContainerResourcesView& c) {
  Requests out;
  for (const kueue::ResourceAmount& r : c.limits) out[std::string(r.name)] = r.amount.milli();
  for (const kueue::ResourceAmount& r : c.requests) out[std::string(r.name)] = r.amount.milli();
  return out;
}

std::vector<q::NodeSelectorTerm> RequiredAffinity(const kueue::PodSetTemplateView& t) {
  std::vector<q::NodeSelectorTerm> out;
  out.reserve(t.required_node_affinity.size());
  for (const auto& term : t.required_node_affinity) {
    q::NodeSelectorTerm requirements;
    for (const kueue::NodeSelectorRequirementView& e : term) {
      api::labels::Requirement r;
      r.key = std::string(e.key);
      r.op = ToOperator(e.op);
      r.values.assign(e.values.begin(), e.values.end());
      std::sort(r.values.begin(), r.values.end());
      requirements.push_back(std::move(r));
    }
    out.push_back(std::move(requirements));
  }
  return out;
}

std::map<std::string, std::string> StringMapOf(const Json* m) {
  return m == nullptr ? std::map<std::string, std::string>() : api::StringMap(*m);
}

}  // namespace

q::StopPolicy ToStopPolicy(kueue::StopPolicy p) {
  switch (p) {
    case kueue::StopPolicy::kHold: return q::StopPolicy::kHold;
    case kueue::StopPolicy::kHoldAndDrain: return q::StopPolicy::kHoldAndDrain;
    case kueue::StopPolicy::kNone: break;
  }
  return q::StopPolicy::kNone;
}

q::ResourceFlavor ToResourceFlavor(const kueue::ResourceFlavorView& rf) {
  q::ResourceFlavor out;
  out.name = std::string(rf.meta.name);
  out.node_labels = StringMapOf(rf.node_labels);
  if (rf.node_taints != nullptr) out.node_taints = api::core_v1::ParseTaintList(*rf.node_taints);
  if (rf.tolerations != nullptr) {
    out.tolerations = api::core_v1::ParseTolerationList(*rf.tolerations);
  }
  out.topology_name = std::string(rf.topology_name);
  return out;
}

q::Topology ToTopology(const kueue::TopologyView& t) {
  q::Topology out;
  out.name = std::string(t.meta.name);
  for (std::string_view level : t.levels) out.levels.emplace_back(level);
  return out;
}

std::optional<q::TopologyRequest> ToTopologyRequest(
    const std::optional<kueue::PodSetTopologyRequestView>& r) {
  if (!r) return std::nullopt;
  q::TopologyRequest out;
  if (!r->required.empty()) {
    out.mode = q::TopologyMode::kRequired;
    out.level = std::string(r->required);
  } else if (!r->preferred.empty()) {
    out.mode = q::TopologyMode::kPreferred;
    out.level = std::string(r->preferred);
  } else if (!r->unconstrained && r->slice_required_topology.empty() &&
             r->slice_constraints.empty()) {
    return std::nullopt;  // e.g. only podIndexLabel: no placement asked for
  }
  if (!r->slice_required_topology.empty()) {
    out.slices.push_back({std::string(r->slice_required_topology), r->slice_size.value_or(1)});
  }
  for (const auto& [level, size] : r->slice_constraints) {
    out.slices.push_back({std::string(level), size});
  }
  out.group = std::string(r->pod_set_group_name);
  return out;
}

q::ClusterQueue ToClusterQueue(const kueue::ClusterQueueView& cq,
                               const kueue::ResourceGroupsView& groups) {
  q::ClusterQueue out;
  out.name = std::string(cq.meta.name);
  out.cohort = std::string(cq.cohort_name);
  out.resource_groups = ToResourceGroups(groups);
  out.strategy = cq.queueing_strategy == kueue::QueueingStrategy::kStrictFIFO
                     ? q::QueueingStrategy::kStrictFIFO
                     : q::QueueingStrategy::kBestEffortFIFO;
  if (cq.namespace_selector == nullptr) {
    out.namespace_selector = std::nullopt;
  } else {
    auto sel = api::labels::LabelSelector::FromJson(*cq.namespace_selector);
    out.namespace_selector = sel.ok() ? *sel : api::labels::LabelSelector::Nothing();
  }
  out.fungibility.when_can_borrow_try_next =
      cq.when_can_borrow == kueue::FungibilityPolicy::kTryNextFlavor;
  out.fungibility.when_can_preempt_try_next =
      cq.when_can_preempt == kueue::FungibilityPolicy::kTryNextFlavor;
  out.fungibility.preemption_over_borrowing =
      cq.fungibility_preference == kueue::FungibilityPreference::kPreemptionOverBorrowing;
  out.preemption.within_cluster_queue = ToPreemptionPolicy(cq.within_cluster_queue);
  out.preemption.reclaim_within_cohort = ToPreemptionPolicy(cq.reclaim_within_cohort);
  out.preemption.borrow_within_cohort = ToPreemptionPolicy(cq.borrow_within_cohort);
  out.preemption.max_priority_threshold = cq.borrow_max_priority_threshold;
  out.stop_policy = ToStopPolicy(cq.stop_policy);
  out.fair_weight = cq.fair_sharing_weight;
  return out;
}

q::Cohort ToCohort(const kueue::CohortView& cohort, const kueue::ResourceGroupsView& groups) {
  q::Cohort out;
  out.name = std::string(cohort.meta.name);
  out.parent = std::string(cohort.parent_name);
  out.resource_groups = ToResourceGroups(groups);
  out.fair_weight = cohort.fair_sharing_weight;
  return out;
}

q::LocalQueue ToLocalQueue(const kueue::LocalQueueView& lq) {
  q::LocalQueue out;
  out.namespace_ = std::string(lq.meta.namespace_);
  out.name = std::string(lq.meta.name);
  out.cluster_queue = std::string(lq.cluster_queue);
  out.stop_policy = ToStopPolicy(lq.stop_policy);
  return out;
}

std::map<std::string, q::Amount> PodRequests(const kueue::PodSetTemplateView& pod_template) {
  Requests containers, sidecars, init_max;
  for (const kueue::ContainerResourcesView& c : pod_template.containers) {
    AddInto(containers, ContainerRequests(c));
  }
  for (const kueue::ContainerResourcesView& c : pod_template.init_containers) {
    Requests req = ContainerRequests(c);
    if (c.restart_always) {
      AddInto(sidecars, req);
      MaxInto(init_max, sidecars);
    } else {
      Requests with_sidecars = sidecars;
      AddInto(with_sidecars, req);
      MaxInto(init_max, with_sidecars);
    }
  }
  AddInto(containers, sidecars);
  MaxInto(containers, init_max);
  AddInto(containers, pod_template.overhead);
  for (auto it = containers.begin(); it != containers.end();) {
    it = it->second == 0 ? containers.erase(it) : std::next(it);
  }
  return containers;
}

q::Workload ToWorkload(const kueue::WorkloadView& wl, const kueue::WorkloadPodSetsView& pod_sets,
                       const WorkloadContext& ctx) {
  q::Workload out;
  out.key = WorkloadKey(wl.meta);
  out.uid = std::string(wl.meta.uid);
  out.namespace_ = std::string(wl.meta.namespace_);
  out.local_queue = std::string(wl.queue_name);
  out.cluster_queue = ctx.cluster_queue;
  if (wl.priority) out.priority = *wl.priority;
  out.creation = wl.meta.CreationTime().value_or(absl::UnixEpoch());
  out.queue_order_time = out.creation;
  const std::optional<kueue::ConditionView> evicted = wl.Condition("Evicted");
  // An admitted workload already being evicted (an eviction in flight across
  // a restart) is the first preemption candidate, as in Kueue.
  out.evicted = evicted && evicted->is_true();
  if (ctx.order_by_eviction_time && out.evicted && evicted->reason == "PodsReadyTimeout") {
    out.queue_order_time = evicted->last_transition_time.value_or(out.creation);
  }
  out.pod_sets.reserve(pod_sets.pod_sets.size());
  for (const kueue::PodSetView& ps : pod_sets.pod_sets) {
    q::PodSet p;
    p.name = std::string(ps.name);
    p.count = ps.count;
    p.min_count = ps.min_count;
    const kueue::PodSetTemplateView tmpl = ps.pod_template != nullptr
                                               ? kueue::PodSetTemplateView::Parse(*ps.pod_template)
                                               : kueue::PodSetTemplateView();
    p.requests = PodRequests(tmpl);
    if (ctx.cq_covers_pods) p.requests[kPodsResource] = 1000;  // One pod, in milli-units.
    p.node_selector = StringMapOf(tmpl.node_selector);
    p.required_affinity = RequiredAffinity(tmpl);
    if (tmpl.tolerations != nullptr) {
      p.tolerations = api::core_v1::ParseTolerationList(*tmpl.tolerations);
    }
    p.topology = ToTopologyRequest(ps.topology_request);
    out.pod_sets.push_back(std::move(p));
  }
  out.active = wl.active;
  out.requeue_at = wl.requeue_at;
  out.namespace_labels = ctx.namespace_labels;
  if (auto r = wl.meta.Annotation(kueue::kWorkloadSliceReplacementFor); r && !r->empty()) {
    out.replaces = std::string(*r);
  }
  return out;
}

std::optional<q::Admission> ToAdmission(const kueue::WorkloadView& wl,
                                        const kueue::WorkloadPodSetsView& pod_sets) {
  if (!wl.has_admission) return std::nullopt;
  q::Admission out;
  out.cluster_queue = std::string(wl.admission_cluster_queue);
  out.pod_sets.reserve(pod_sets.assignments.size());
  for (const kueue::PodSetAssignmentView& a : pod_sets.assignments) {
    q::PodSetAssignment p;
    p.name = std::string(a.name);
    for (const auto& [resource, flavor] : a.resource_flavors) {
      p.flavors.emplace(std::string(resource), std::string(flavor));
    }
    if (a.resource_usage != nullptr) {
      for (const kueue::ResourceAmount& r : kueue::ParseResourceList(*a.resource_usage)) {
        p.resource_usage.emplace(std::string(r.name), r.amount.milli());
      }
    }
    p.count = a.count.value_or(0);
    if (a.topology_assignment != nullptr) {
      if (auto ta = kueue::DecodeTopologyAssignment(*a.topology_assignment)) {
        q::TopologyAssignment t;
        t.levels = std::move(ta->levels);
        for (kueue::TopologyDomainValue& d : ta->domains) {
          t.domains.push_back({std::move(d.values), d.count});
        }
        p.topology = std::move(t);
      }
    }
    out.pod_sets.push_back(std::move(p));
  }
  return out;
}

kueue::AdmissionStatus ToAdmissionStatus(const q::Admission& a) {
  kueue::AdmissionStatus out;
  out.cluster_queue = a.cluster_queue;
  out.pod_set_assignments.reserve(a.pod_sets.size());
  for (const q::PodSetAssignment& ps : a.pod_sets) {
    kueue::PodSetAssignmentStatus s;
    s.name = ps.name;
    s.flavors.assign(ps.flavors.begin(), ps.flavors.end());
    s.resource_usage.reserve(ps.resource_usage.size());
    for (const auto& [resource, milli] : ps.resource_usage) {
      s.resource_usage.push_back({resource, api::Amount::FromMilli(milli)});
    }
    s.count = ps.count;
    if (ps.topology) {
      kueue::TopologyAssignmentValue t;
      t.levels = ps.topology->levels;
      for (const q::TopologyDomainCount& d : ps.topology->domains) {
        t.domains.push_back({d.values, d.count});
      }
      s.topology = std::move(t);
    }
    out.pod_set_assignments.push_back(std::move(s));
  }
  return out;
}

std::string WorkloadKey(const Json& obj) {
  return api::meta::GetNamespace(obj) + "/" + api::meta::GetName(obj);
}

std::string WorkloadKey(const api::meta::ObjectMetaView& meta) {
  std::string key(meta.namespace_);
  key += '/';
  key += meta.name;
  return key;
}

}  // namespace batchd::controllers::queueing::internal
