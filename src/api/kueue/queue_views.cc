#include "api/kueue/queue_views.h"

#include <algorithm>

#include "api/json_access.h"
#include "api/meta/conditions.h"
#include "api/meta/time_util.h"
#include "api/resource/quantity.h"

namespace batchd::api::kueue {

namespace {

constexpr std::string_view kDefaultPodSetName = "main";

std::string_view NameOr(const Json& obj) {
  const Json* n = FindMember(obj, "name");
  return n != nullptr && n->is_string() ? AsString(*n) : kDefaultPodSetName;
}

const Json* ObjectOrNull(const Json& v) { return v.is_object() ? &v : nullptr; }
const Json* ArrayOrNull(const Json& v) { return v.is_array() ? &v : nullptr; }

// A quantity as an amount; nullopt when unset (null) or unparsable.
std::optional<Amount> AmountOf(const Json& v) {
  if (v.is_null()) return std::nullopt;
  absl::StatusOr<Quantity> q = Quantity::FromJson(v);
  if (!q.ok()) return std::nullopt;
  return Amount::FromQuantity(*q);
}

// spec.fairSharing.weight (a quantity) as a double; 1 when unset or unparsable.
double FairSharingWeight(const Json& spec) {
  const Json& w = MemberAt(spec, {"fairSharing", "weight"});
  if (w.is_null()) return 1;
  absl::StatusOr<Quantity> q = Quantity::FromJson(w);
  return q.ok() ? q->AsApproximateDouble() : 1;
}

StopPolicy ParseStopPolicy(const Json& spec) {
  const std::string_view s = StringMember(spec, "stopPolicy");
  if (s == "Hold") return StopPolicy::kHold;
  if (s == "HoldAndDrain") return StopPolicy::kHoldAndDrain;
  return StopPolicy::kNone;
}

PreemptionPolicy ParsePreemptionPolicy(std::string_view s) {
  if (s == "LowerPriority") return PreemptionPolicy::kLowerPriority;
  if (s == "LowerOrNewerEqualPriority") return PreemptionPolicy::kLowerOrNewerEqualPriority;
  if (s == "Any") return PreemptionPolicy::kAny;
  return PreemptionPolicy::kNever;
}

FungibilityPolicy ParseFungibilityPolicy(const Json& fungibility, std::string_view key,
                                         std::string_view def) {
  return StringMember(fungibility, key, def) == "TryNextFlavor" ? FungibilityPolicy::kTryNextFlavor
                                                                : FungibilityPolicy::kMayStopSearch;
}

NodeSelectorOperator ParseNodeSelectorOperator(std::string_view op) {
  if (op == "In") return NodeSelectorOperator::kIn;
  if (op == "NotIn") return NodeSelectorOperator::kNotIn;
  if (op == "Exists") return NodeSelectorOperator::kExists;
  if (op == "DoesNotExist") return NodeSelectorOperator::kDoesNotExist;
  if (op == "Gt") return NodeSelectorOperator::kGt;
  if (op == "Lt") return NodeSelectorOperator::kLt;
  return NodeSelectorOperator::kUnknown;
}

ContainerResourcesView ParseContainer(const Json& c) {
  ContainerResourcesView out;
  const Json& resources = Member(c, "resources");
  out.requests = ParseResourceList(Member(resources, "requests"));
  out.limits = ParseResourceList(Member(resources, "limits"));
  out.restart_always = StringMember(c, "restartPolicy") == "Always";
  return out;
}

}  // namespace

std::vector<ResourceAmount> ParseResourceList(const Json& list) {
  std::vector<ResourceAmount> out;
  if (!list.is_object()) return out;
  out.reserve(list.size());
  for (auto it = list.begin(); it != list.end(); ++it) {  // Objects iterate in key order.
    if (std::optional<Amount> a = AmountOf(*it)) out.push_back({it.key(), *a});
  }
  return out;
}

std::optional<ConditionView> ConditionView::Find(const Json* conditions, std::string_view type) {
  if (conditions == nullptr) return std::nullopt;
  const Json* c = meta::FindConditionIn(*conditions, type);
  if (c == nullptr) return std::nullopt;
  ConditionView v;
  v.type = StringMember(*c, "type");
  v.status = StringMember(*c, "status");
  v.reason = StringMember(*c, "reason");
  v.message = StringMember(*c, "message");
  v.last_transition_time = meta::ParseOptionalRfc3339(StringMember(*c, "lastTransitionTime"));
  return v;
}

const Json& SpecOf(const Json& obj) { return Member(obj, "spec"); }

StopPolicy StopPolicyOf(const Json& queue) { return ParseStopPolicy(MemberObject(queue, "spec")); }

WorkloadView WorkloadView::Parse(const Json& workload) {
  WorkloadView v;
  v.meta = meta::ObjectMetaView::Parse(workload);
  const Json& spec = MemberObject(workload, "spec");
  v.queue_name = StringMember(spec, "queueName");
  v.active = BoolMember(spec, "active", true);
  if (auto p = AsOptionalInt(Member(spec, "priority"))) v.priority = static_cast<int32_t>(*p);
  const Json& status = MemberObject(workload, "status");
  const Json& admission = Member(status, "admission");
  v.has_admission = admission.is_object();
  v.admission_cluster_queue = StringMember(admission, "clusterQueue");
  const Json& requeue = MemberObject(status, "requeueState");
  v.requeue_count = static_cast<int32_t>(IntMember(requeue, "count"));
  v.requeue_at = meta::ParseOptionalRfc3339(StringMember(requeue, "requeueAt"));
  v.conditions = ArrayOrNull(Member(status, "conditions"));
  return v;
}

PodSetView PodSetView::Parse(const Json& pod_set) {
  PodSetView p;
  p.name = NameOr(pod_set);
  p.count = static_cast<int32_t>(IntMember(pod_set, "count", 1));
  if (auto m = AsOptionalInt(Member(pod_set, "minCount"))) p.min_count = static_cast<int32_t>(*m);
  p.pod_template = ObjectOrNull(Member(pod_set, "template"));
  if (const Json* tr = FindMember(pod_set, "topologyRequest"); tr != nullptr && tr->is_object()) {
    PodSetTopologyRequestView r;
    r.required = StringMember(*tr, "required");
    r.preferred = StringMember(*tr, "preferred");
    const Json& u = Member(*tr, "unconstrained");
    r.unconstrained = u.is_boolean() && u.get<bool>();
    r.slice_required_topology = StringMember(*tr, "podSetSliceRequiredTopology");
    if (auto n = AsOptionalInt(Member(*tr, "podSetSliceSize"))) {
      r.slice_size = static_cast<int32_t>(*n);
    }
    r.pod_set_group_name = StringMember(*tr, "podSetGroupName");
    r.pod_index_label = StringMember(*tr, "podIndexLabel");
    r.sub_group_index_label = StringMember(*tr, "subGroupIndexLabel");
    if (auto n = AsOptionalInt(Member(*tr, "subGroupCount"))) {
      r.sub_group_count = static_cast<int32_t>(*n);
    }
    for (const Json& layer : MemberArray(*tr, "podsetSliceRequiredTopologyConstraints")) {
      r.slice_constraints.emplace_back(StringMember(layer, "topology"),
                                       static_cast<int32_t>(IntMember(layer, "size", 0)));
    }
    p.topology_request = r;
  }
  return p;
}

WorkloadPodSetsView WorkloadPodSetsView::Parse(const Json& workload) {
  WorkloadPodSetsView v;
  const Json& pod_sets = MemberArray(MemberObject(workload, "spec"), "podSets");
  v.pod_sets.reserve(pod_sets.size());
  for (const Json& ps : pod_sets) {
    v.pod_sets.push_back(PodSetView::Parse(ps));
  }
  const Json& admission = MemberObject(MemberObject(workload, "status"), "admission");
  for (const Json& a : MemberArray(admission, "podSetAssignments")) {
    PodSetAssignmentView pa;
    pa.name = NameOr(a);
    if (auto c = AsOptionalInt(Member(a, "count"))) pa.count = static_cast<int32_t>(*c);
    const Json& flavors = MemberObject(a, "flavors");  // resource -> flavor, in resource order.
    for (auto it = flavors.begin(); it != flavors.end(); ++it) {
      if (!it->is_string()) continue;
      pa.resource_flavors.emplace_back(it.key(), AsString(*it));
      pa.flavors.push_back(AsString(*it));
    }
    std::sort(pa.flavors.begin(), pa.flavors.end());
    pa.flavors.erase(std::unique(pa.flavors.begin(), pa.flavors.end()), pa.flavors.end());
    pa.resource_usage = ObjectOrNull(Member(a, "resourceUsage"));
    pa.topology_assignment = ObjectOrNull(Member(a, "topologyAssignment"));
    v.assignments.push_back(std::move(pa));
  }
  return v;
}

PodSetTemplateView PodSetTemplateView::Parse(const Json& pod_template) {
  PodSetTemplateView v;
  const Json& spec = Member(pod_template, "spec");
  for (const Json& c : MemberArray(spec, "containers")) v.containers.push_back(ParseContainer(c));
  for (const Json& c : MemberArray(spec, "initContainers")) {
    v.init_containers.push_back(ParseContainer(c));
  }
  v.overhead = ParseResourceList(Member(spec, "overhead"));
  v.node_selector = ObjectOrNull(Member(spec, "nodeSelector"));
  const Json& terms = MemberAt(spec, {"affinity", "nodeAffinity",
                                      "requiredDuringSchedulingIgnoredDuringExecution",
                                      "nodeSelectorTerms"});
  if (terms.is_array()) {
    for (const Json& term : terms) {
      std::vector<NodeSelectorRequirementView> requirements;
      for (const Json& e : MemberArray(term, "matchExpressions")) {
        NodeSelectorRequirementView r;
        r.key = StringMember(e, "key");
        r.op = ParseNodeSelectorOperator(StringMember(e, "operator"));
        for (const Json& value : MemberArray(e, "values")) {
          if (value.is_string()) r.values.push_back(AsString(value));
        }
        requirements.push_back(std::move(r));
      }
      v.required_node_affinity.push_back(std::move(requirements));
    }
  }
  v.tolerations = ArrayOrNull(Member(spec, "tolerations"));
  return v;
}

LocalQueueView LocalQueueView::Parse(const Json& local_queue) {
  LocalQueueView v;
  v.meta = meta::ObjectMetaView::Parse(local_queue);
  const Json& spec = MemberObject(local_queue, "spec");
  v.cluster_queue = StringMember(spec, "clusterQueue");
  v.stop_policy = ParseStopPolicy(spec);
  return v;
}

ResourceGroupsView ResourceGroupsView::Parse(const Json& queue) {
  ResourceGroupsView v;
  const Json& groups = MemberArray(MemberObject(queue, "spec"), "resourceGroups");
  v.groups.reserve(groups.size());
  for (const Json& g : groups) {
    ResourceGroupView group;
    for (const Json& r : MemberArray(g, "coveredResources")) {
      if (r.is_string()) group.covered_resources.push_back(AsString(r));
    }
    for (const Json& f : MemberArray(g, "flavors")) {
      FlavorQuotasView flavor;
      flavor.name = StringMember(f, "name");
      for (const Json& r : MemberArray(f, "resources")) {
        ResourceQuotaView quota;
        quota.name = StringMember(r, "name");
        quota.nominal_quota = AmountOf(Member(r, "nominalQuota")).value_or(Amount());
        quota.borrowing_limit = AmountOf(Member(r, "borrowingLimit"));
        quota.lending_limit = AmountOf(Member(r, "lendingLimit"));
        flavor.resources.push_back(quota);
      }
      group.flavors.push_back(std::move(flavor));
    }
    v.groups.push_back(std::move(group));
  }
  return v;
}

bool ResourceGroupsView::Covers(std::string_view resource) const {
  for (const ResourceGroupView& g : groups) {
    if (std::find(g.covered_resources.begin(), g.covered_resources.end(), resource) !=
        g.covered_resources.end()) {
      return true;
    }
  }
  return false;
}

ClusterQueueView ClusterQueueView::Parse(const Json& cluster_queue) {
  ClusterQueueView v;
  v.meta = meta::ObjectMetaView::Parse(cluster_queue);
  const Json& spec = MemberObject(cluster_queue, "spec");
  v.cohort_name = StringMember(spec, "cohortName", StringMember(spec, "cohort"));
  v.queueing_strategy = StringMember(spec, "queueingStrategy") == "StrictFIFO"
                            ? QueueingStrategy::kStrictFIFO
                            : QueueingStrategy::kBestEffortFIFO;
  v.namespace_selector = FindMember(spec, "namespaceSelector");
  const Json& fungibility = Member(spec, "flavorFungibility");
  v.when_can_borrow = ParseFungibilityPolicy(fungibility, "whenCanBorrow", "MayStopSearch");
  v.when_can_preempt = ParseFungibilityPolicy(fungibility, "whenCanPreempt", "TryNextFlavor");
  v.fungibility_preference = StringMember(fungibility, "preference") == "PreemptionOverBorrowing"
                                 ? FungibilityPreference::kPreemptionOverBorrowing
                                 : FungibilityPreference::kBorrowingOverPreemption;
  const Json& preemption = Member(spec, "preemption");
  v.within_cluster_queue = ParsePreemptionPolicy(StringMember(preemption, "withinClusterQueue"));
  v.reclaim_within_cohort = ParsePreemptionPolicy(StringMember(preemption, "reclaimWithinCohort"));
  const Json& borrow = Member(preemption, "borrowWithinCohort");
  v.borrow_within_cohort = ParsePreemptionPolicy(StringMember(borrow, "policy"));
  if (auto t = AsOptionalInt(Member(borrow, "maxPriorityThreshold"))) {
    v.borrow_max_priority_threshold = static_cast<int32_t>(*t);
  }
  v.stop_policy = ParseStopPolicy(spec);
  v.fair_sharing_weight = FairSharingWeight(spec);
  return v;
}

CohortView CohortView::Parse(const Json& cohort) {
  CohortView v;
  v.meta = meta::ObjectMetaView::Parse(cohort);
  const Json& spec = MemberObject(cohort, "spec");
  v.parent_name = StringMember(spec, "parentName", StringMember(spec, "parent"));
  v.fair_sharing_weight = FairSharingWeight(spec);
  return v;
}

ResourceFlavorView ResourceFlavorView::Parse(const Json& resource_flavor) {
  ResourceFlavorView v;
  v.meta = meta::ObjectMetaView::Parse(resource_flavor);
  const Json& spec = Member(resource_flavor, "spec");
  v.node_labels = ObjectOrNull(Member(spec, "nodeLabels"));
  v.node_taints = ArrayOrNull(Member(spec, "nodeTaints"));
  v.tolerations = ArrayOrNull(Member(spec, "tolerations"));
  v.topology_name = StringMember(spec, "topologyName");
  return v;
}

TopologyView TopologyView::Parse(const Json& topology) {
  TopologyView v;
  v.meta = meta::ObjectMetaView::Parse(topology);
  for (const Json& level : MemberArray(MemberObject(topology, "spec"), "levels")) {
    v.levels.push_back(StringMember(level, "nodeLabel"));
  }
  return v;
}

}  // namespace batchd::api::kueue
