#include "controllers/queueing/internal/convert.h"

#include <algorithm>
#include <utility>

#include "api/json_access.h"
#include "api/labels/selector.h"
#include "api/meta/conditions.h"
#include "api/meta/object_meta.h"
#include "api/meta/time_util.h"
#include "api/resource/amount.h"
#include "api/resource/quantity.h"

namespace batchd::controllers::queueing::internal {
namespace {

namespace q = batchd::queueing;

std::optional<q::Amount> AmountOf(const Json& v) {
  if (v.is_null()) return std::nullopt;
  auto quantity = api::Quantity::FromJson(v);
  if (!quantity.ok()) return std::nullopt;
  return api::Amount::FromQuantity(*quantity).milli();
}

std::vector<q::ResourceGroup> ResourceGroups(const Json& spec) {
  std::vector<q::ResourceGroup> out;
  for (const Json& rg : api::MemberArray(spec, "resourceGroups")) {
    q::ResourceGroup g;
    for (const Json& r : api::Member(rg, "coveredResources")) {
      if (r.is_string()) g.covered_resources.push_back(r.get<std::string>());
    }
    for (const Json& f : api::Member(rg, "flavors")) {
      q::FlavorQuotas fq;
      fq.flavor = api::CopyStringMember(f, "name");
      for (const Json& r : api::Member(f, "resources")) {
        q::ResourceQuota quota;
        quota.nominal = AmountOf(api::Member(r, "nominalQuota")).value_or(0);
        quota.borrowing_limit = AmountOf(api::Member(r, "borrowingLimit"));
        quota.lending_limit = AmountOf(api::Member(r, "lendingLimit"));
        fq.resources[api::CopyStringMember(r, "name")] = quota;
      }
      g.flavors.push_back(std::move(fq));
    }
    out.push_back(std::move(g));
  }
  return out;
}

double FairWeight(const Json& spec) {
  const Json& w = api::Member(api::Member(spec, "fairSharing"), "weight");
  if (w.is_null()) return 1;
  auto quantity = api::Quantity::FromJson(w);
  return quantity.ok() ? quantity->AsApproximateDouble() : 1;
}

q::TaintEffect Effect(const std::string& e) {
  if (e == "NoExecute") return q::TaintEffect::kNoExecute;
  if (e == "PreferNoSchedule") return q::TaintEffect::kPreferNoSchedule;
  return q::TaintEffect::kNoSchedule;
}

std::vector<q::Toleration> Tolerations(const Json& list) {
  std::vector<q::Toleration> out;
  if (!list.is_array()) return out;
  for (const Json& t : list) {
    q::Toleration tol;
    tol.key = api::CopyStringMember(t, "key");
    tol.op = api::CopyStringMember(t, "operator") == "Exists" ? q::TolerationOperator::kExists
                                            : q::TolerationOperator::kEqual;
    tol.value = api::CopyStringMember(t, "value");
    std::string effect = api::CopyStringMember(t, "effect");
    if (!effect.empty()) tol.effect = Effect(effect);
    out.push_back(std::move(tol));
  }
  return out;
}

q::PreemptionPolicy Policy(const std::string& s) {
  if (s == "LowerPriority") return q::PreemptionPolicy::kLowerPriority;
  if (s == "LowerOrNewerEqualPriority") return q::PreemptionPolicy::kLowerOrNewerEqualPriority;
  if (s == "Any") return q::PreemptionPolicy::kAny;
  return q::PreemptionPolicy::kNever;
}

std::map<std::string, std::string> StringMap(const Json& m) {
  std::map<std::string, std::string> out;
  if (!m.is_object()) return out;
  for (const auto& [k, v] : m.items()) {
    if (v.is_string()) out[k] = v.get<std::string>();
  }
  return out;
}

// A container's requests, with limits standing in for missing requests.
std::map<std::string, q::Amount> ContainerRequests(const Json& c) {
  std::map<std::string, q::Amount> out;
  const Json& res = api::Member(c, "resources");
  for (const char* section : {"limits", "requests"}) {  // requests override limits
    const Json& list = api::Member(res, section);
    if (!list.is_object()) continue;
    for (const auto& [name, v] : list.items()) {
      if (auto a = AmountOf(v)) out[name] = *a;
    }
  }
  return out;
}

void AddInto(std::map<std::string, q::Amount>& sum, const std::map<std::string, q::Amount>& add) {
  for (const auto& [k, v] : add) {
    sum[k] = (api::Amount::FromMilli(sum[k]) + api::Amount::FromMilli(v)).milli();
  }
}

void MaxInto(std::map<std::string, q::Amount>& m, const std::map<std::string, q::Amount>& other) {
  for (const auto& [k, v] : other) m[k] = std::max(m[k], v);
}

std::vector<q::NodeSelectorTerm> RequiredAffinity(const Json& pod_spec) {
  std::vector<q::NodeSelectorTerm> out;
  const Json& terms =
      api::Member(api::Member(api::Member(api::Member(pod_spec, "affinity"), "nodeAffinity"),
                              "requiredDuringSchedulingIgnoredDuringExecution"),
                  "nodeSelectorTerms");
  if (!terms.is_array()) return out;
  for (const Json& term : terms) {
    q::NodeSelectorTerm t;
    for (const Json& e : api::Member(term, "matchExpressions")) {
      api::labels::Requirement r;
      r.key = api::CopyStringMember(e, "key");
      std::string op = api::CopyStringMember(e, "operator");
      using Op = api::labels::Operator;
      r.op = op == "In"             ? Op::kIn
             : op == "NotIn"        ? Op::kNotIn
             : op == "DoesNotExist" ? Op::kDoesNotExist
             : op == "Gt"           ? Op::kGreaterThan
             : op == "Lt"           ? Op::kLessThan
                                    : Op::kExists;
      for (const Json& v : api::Member(e, "values")) {
        if (v.is_string()) r.values.push_back(v.get<std::string>());
      }
      std::sort(r.values.begin(), r.values.end());
      t.push_back(std::move(r));
    }
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace

q::StopPolicy ParseStopPolicy(const Json& spec) {
  std::string s = api::CopyStringMember(spec, "stopPolicy", "None");
  if (s == "Hold") return q::StopPolicy::kHold;
  if (s == "HoldAndDrain") return q::StopPolicy::kHoldAndDrain;
  return q::StopPolicy::kNone;
}

q::ResourceFlavor ToResourceFlavor(const Json& rf) {
  q::ResourceFlavor out;
  out.name = api::meta::GetName(rf);
  const Json& spec = api::Member(rf, "spec");
  out.node_labels = StringMap(api::Member(spec, "nodeLabels"));
  for (const Json& t : api::MemberArray(spec, "nodeTaints")) {
    out.node_taints.push_back({api::CopyStringMember(t, "key"), api::CopyStringMember(t, "value"),
                               Effect(api::CopyStringMember(t, "effect"))});
  }
  out.tolerations = Tolerations(api::Member(spec, "tolerations"));
  return out;
}

q::ClusterQueue ToClusterQueue(const Json& cq) {
  q::ClusterQueue out;
  out.name = api::meta::GetName(cq);
  const Json& spec = api::Member(cq, "spec");
  out.cohort = api::CopyStringMember(spec, "cohortName", api::CopyStringMember(spec, "cohort"));
  out.resource_groups = ResourceGroups(spec);
  out.strategy = api::CopyStringMember(spec, "queueingStrategy") == "StrictFIFO"
                     ? q::QueueingStrategy::kStrictFIFO
                     : q::QueueingStrategy::kBestEffortFIFO;
  const Json& ns = api::Member(spec, "namespaceSelector");
  if (ns.is_null()) {
    out.namespace_selector = std::nullopt;
  } else {
    auto sel = api::labels::LabelSelector::FromJson(ns);
    out.namespace_selector = sel.ok() ? *sel : api::labels::LabelSelector::Nothing();
  }
  const Json& fung = api::Member(spec, "flavorFungibility");
  std::string borrow = api::CopyStringMember(fung, "whenCanBorrow", "MayStopSearch");
  std::string preempt = api::CopyStringMember(fung, "whenCanPreempt", "TryNextFlavor");
  out.fungibility.when_can_borrow_try_next = borrow == "TryNextFlavor";
  out.fungibility.when_can_preempt_try_next = preempt == "TryNextFlavor";
  out.fungibility.preemption_over_borrowing =
      api::CopyStringMember(fung, "preference") == "PreemptionOverBorrowing";
  const Json& pre = api::Member(spec, "preemption");
  out.preemption.within_cluster_queue = Policy(api::CopyStringMember(pre, "withinClusterQueue"));
  out.preemption.reclaim_within_cohort = Policy(api::CopyStringMember(pre, "reclaimWithinCohort"));
  const Json& bwc = api::Member(pre, "borrowWithinCohort");
  out.preemption.borrow_within_cohort = Policy(api::CopyStringMember(bwc, "policy"));
  if (api::Member(bwc, "maxPriorityThreshold").is_number_integer()) {
    out.preemption.max_priority_threshold = api::Member(bwc, "maxPriorityThreshold").get<int32_t>();
  }
  out.stop_policy = ParseStopPolicy(spec);
  out.fair_weight = FairWeight(spec);
  return out;
}

q::Cohort ToCohort(const Json& cohort) {
  q::Cohort out;
  out.name = api::meta::GetName(cohort);
  const Json& spec = api::Member(cohort, "spec");
  out.parent = api::CopyStringMember(spec, "parentName", api::CopyStringMember(spec, "parent"));
  out.resource_groups = ResourceGroups(spec);
  out.fair_weight = FairWeight(spec);
  return out;
}

q::LocalQueue ToLocalQueue(const Json& lq) {
  q::LocalQueue out;
  out.namespace_ = api::meta::GetNamespace(lq);
  out.name = api::meta::GetName(lq);
  const Json& spec = api::Member(lq, "spec");
  out.cluster_queue = api::CopyStringMember(spec, "clusterQueue");
  out.stop_policy = ParseStopPolicy(spec);
  return out;
}

std::set<std::string> FlavorNames(const Json& cq) {
  std::set<std::string> out;
  for (const auto& g : ResourceGroups(api::Member(cq, "spec"))) {
    for (const auto& f : g.flavors) out.insert(f.flavor);
  }
  return out;
}

std::set<std::string> CoveredResources(const Json& cq) {
  std::set<std::string> out;
  for (const auto& g : ResourceGroups(api::Member(cq, "spec"))) {
    out.insert(g.covered_resources.begin(), g.covered_resources.end());
  }
  return out;
}

std::map<std::string, q::Amount> PodRequests(const Json& pod_template) {
  const Json& spec = api::Member(pod_template, "spec");
  std::map<std::string, q::Amount> containers, sidecars, init_max;
  for (const Json& c : api::MemberArray(spec, "containers")) {
    AddInto(containers, ContainerRequests(c));
  }
  for (const Json& c : api::MemberArray(spec, "initContainers")) {
    auto req = ContainerRequests(c);
    if (api::CopyStringMember(c, "restartPolicy") == "Always") {
      AddInto(sidecars, req);
      MaxInto(init_max, sidecars);
    } else {
      auto with_sidecars = sidecars;
      AddInto(with_sidecars, req);
      MaxInto(init_max, with_sidecars);
    }
  }
  AddInto(containers, sidecars);
  MaxInto(containers, init_max);
  const Json& overhead = api::Member(spec, "overhead");
  if (overhead.is_object()) {
    std::map<std::string, q::Amount> oh;
    for (const auto& [name, v] : overhead.items()) {
      if (auto a = AmountOf(v)) oh[name] = *a;
    }
    AddInto(containers, oh);
  }
  for (auto it = containers.begin(); it != containers.end();) {
    it = it->second == 0 ? containers.erase(it) : std::next(it);
  }
  return containers;
}

q::Workload ToWorkload(const Json& wl, const WorkloadContext& ctx) {
  q::Workload out;
  out.key = WorkloadKey(wl);
  out.uid = api::meta::GetUid(wl);
  out.namespace_ = api::meta::GetNamespace(wl);
  const Json& spec = api::Member(wl, "spec");
  out.local_queue = api::CopyStringMember(spec, "queueName");
  out.cluster_queue = ctx.cluster_queue;
  if (api::Member(spec, "priority").is_number_integer()) {
    out.priority = api::Member(spec, "priority").get<int32_t>();
  }
  out.creation = api::meta::GetCreationTimestamp(wl).value_or(absl::UnixEpoch());
  out.queue_order_time = out.creation;
  std::optional<api::meta::Condition> evicted = api::meta::GetCondition(wl, "Evicted");
  // An admitted workload already being evicted (an eviction in flight across
  // a restart) is the first preemption candidate, as in Kueue.
  out.evicted = evicted && evicted->status == api::meta::kConditionTrue;
  if (ctx.order_by_eviction_time && out.evicted && evicted->reason == "PodsReadyTimeout") {
    out.queue_order_time = api::meta::ConditionTransitionTime(wl, "Evicted").value_or(out.creation);
  }
  for (const Json& ps : api::MemberArray(spec, "podSets")) {
    q::PodSet p;
    p.name = api::CopyStringMember(ps, "name", "main");
    if (api::Member(ps, "count").is_number_integer())
      p.count = api::Member(ps, "count").get<int32_t>();
    if (api::Member(ps, "minCount").is_number_integer()) {
      p.min_count = api::Member(ps, "minCount").get<int32_t>();
    }
    const Json& tmpl = api::Member(ps, "template");
    p.requests = PodRequests(tmpl);
    if (ctx.cq_covers_pods) p.requests["pods"] = 1000;
    const Json& pod_spec = api::Member(tmpl, "spec");
    p.node_selector = StringMap(api::Member(pod_spec, "nodeSelector"));
    p.required_affinity = RequiredAffinity(pod_spec);
    p.tolerations = Tolerations(api::Member(pod_spec, "tolerations"));
    out.pod_sets.push_back(std::move(p));
  }
  out.active = !api::Member(spec, "active").is_boolean() || api::Member(spec, "active").get<bool>();
  const Json& rs = api::Member(api::Member(wl, "status"), "requeueState");
  if (api::Member(rs, "requeueAt").is_string()) {
    auto t = api::meta::ParseRfc3339(api::Member(rs, "requeueAt").get<std::string>());
    if (t.ok()) out.requeue_at = *t;
  }
  out.namespace_labels = ctx.namespace_labels;
  return out;
}

std::optional<q::Admission> AdmissionFromJson(const Json& wl) {
  const Json& a = api::Member(api::Member(wl, "status"), "admission");
  if (!a.is_object()) return std::nullopt;
  q::Admission out;
  out.cluster_queue = api::CopyStringMember(a, "clusterQueue");
  for (const Json& ps : api::MemberArray(a, "podSetAssignments")) {
    q::PodSetAssignment p;
    p.name = api::CopyStringMember(ps, "name", "main");
    p.flavors = StringMap(api::Member(ps, "flavors"));
    const Json& usage = api::Member(ps, "resourceUsage");
    if (usage.is_object()) {
      for (const auto& [name, v] : usage.items()) p.resource_usage[name] = AmountOf(v).value_or(0);
    }
    if (api::Member(ps, "count").is_number_integer())
      p.count = api::Member(ps, "count").get<int32_t>();
    out.pod_sets.push_back(std::move(p));
  }
  return out;
}

Json AdmissionToJson(const q::Admission& a) {
  Json sets = Json::array();
  for (const auto& ps : a.pod_sets) {
    Json usage = Json::object();
    for (const auto& [r, v] : ps.resource_usage) usage[r] = QuantityJson(r, v);
    Json flavors = Json::object();
    for (const auto& [r, f] : ps.flavors) flavors[r] = f;
    sets.push_back(
        {{"name", ps.name}, {"flavors", flavors}, {"resourceUsage", usage}, {"count", ps.count}});
  }
  return {{"clusterQueue", a.cluster_queue}, {"podSetAssignments", sets}};
}

Json QuantityJson(std::string_view resource, q::Amount milli) {
  api::Amount a = api::Amount::FromMilli(milli);
  if (resource == "cpu") return a.ToQuantity(api::QuantityFormat::kDecimalSI).String();
  bool binary = resource == "memory" || resource == "ephemeral-storage" ||
                resource.substr(0, 10) == "hugepages-";
  if (binary && milli % 1000 == 0) {
    return api::Quantity::FromInt(milli / 1000, api::QuantityFormat::kBinarySI).String();
  }
  return a.ToQuantity(api::QuantityFormat::kDecimalSI).String();
}

std::string WorkloadKey(const Json& obj) {
  return api::meta::GetNamespace(obj) + "/" + api::meta::GetName(obj);
}

}  // namespace batchd::controllers::queueing::internal
