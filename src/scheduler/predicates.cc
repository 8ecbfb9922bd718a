#include "scheduler/predicates.h"

#include <algorithm>

#include "absl/strings/numbers.h"
#include "api/json_access.h"
#include "api/resource/quantity.h"

namespace batchd::scheduler {

using api::Amount;
using api::Json;

namespace {

std::vector<NodeAffinity::Requirement> ParseRequirements(const Json& arr) {
  std::vector<NodeAffinity::Requirement> out;
  if (!arr.is_array()) return out;
  for (const Json& r : arr) {
    NodeAffinity::Requirement req{
        api::CopyStringMember(r, "key"), api::CopyStringMember(r, "operator"), {}};
    for (const Json& v : api::Member(r, "values")) {
      if (v.is_string()) req.values.push_back(v.get<std::string>());
    }
    out.push_back(std::move(req));
  }
  return out;
}

bool Contains(const std::vector<std::string>& values, const std::string& v) {
  return std::find(values.begin(), values.end(), v) != values.end();
}

// One node-selector requirement against a key/value lookup.
bool RequirementMatches(const NodeAffinity::Requirement& r,
                        const std::map<std::string, std::string>& labels) {
  auto it = labels.find(r.key);
  bool has = it != labels.end();
  if (r.op == "In") return has && Contains(r.values, it->second);
  if (r.op == "NotIn") return !has || !Contains(r.values, it->second);
  if (r.op == "Exists") return has;
  if (r.op == "DoesNotExist") return !has;
  if (r.op == "Gt" || r.op == "Lt") {
    int64_t label = 0;
    int64_t bound = 0;
    if (!has || r.values.size() != 1 || !absl::SimpleAtoi(it->second, &label) ||
        !absl::SimpleAtoi(r.values[0], &bound)) {
      return false;
    }
    return r.op == "Gt" ? label > bound : label < bound;
  }
  return false;
}

bool TermMatches(const NodeAffinity::Term& term, const std::string& node_name,
                 const std::map<std::string, std::string>& labels) {
  if (term.expressions.empty() && term.fields.empty()) return false;
  for (const auto& r : term.expressions) {
    if (!RequirementMatches(r, labels)) return false;
  }
  if (!term.fields.empty()) {
    std::map<std::string, std::string> fields = {{"metadata.name", node_name}};
    for (const auto& r : term.fields) {
      if (r.key != "metadata.name" || !RequirementMatches(r, fields)) return false;
    }
  }
  return true;
}

void AddTo(ResourceList& into, const ResourceList& add) {
  for (const auto& [name, amount] : add) into[name] += amount;
}

void MaxInto(ResourceList& into, const ResourceList& other) {
  for (const auto& [name, amount] : other) {
    Amount& cur = into[name];
    cur = std::max(cur, amount);
  }
}

ResourceList ContainerRequests(const Json& container) {
  return ParseResourceList(api::Member(api::Member(container, "resources"), "requests"));
}

}  // namespace

NodeAffinity NodeAffinity::FromPodSpec(const Json& pod_spec) {
  NodeAffinity a;
  const Json& sel = api::Member(pod_spec, "nodeSelector");
  if (sel.is_object()) {
    for (auto it = sel.begin(); it != sel.end(); ++it) {
      if (it->is_string()) a.node_selector_[it.key()] = it->get<std::string>();
    }
  }
  const Json& required = api::Member(api::Member(api::Member(pod_spec, "affinity"), "nodeAffinity"),
                               "requiredDuringSchedulingIgnoredDuringExecution");
  if (required.is_object()) {
    a.has_terms_ = true;
    for (const Json& t : api::Member(required, "nodeSelectorTerms")) {
      a.terms_.push_back(Term{ParseRequirements(api::Member(t, "matchExpressions")),
                              ParseRequirements(api::Member(t, "matchFields"))});
    }
  }
  return a;
}

bool NodeAffinity::Matches(const std::string& node_name,
                           const std::map<std::string, std::string>& node_labels) const {
  for (const auto& [k, v] : node_selector_) {
    auto it = node_labels.find(k);
    if (it == node_labels.end() || it->second != v) return false;
  }
  if (!has_terms_) return true;
  for (const Term& t : terms_) {
    if (TermMatches(t, node_name, node_labels)) return true;
  }
  return false;
}

ResourceList ParseResourceList(const Json& obj) {
  ResourceList out;
  if (!obj.is_object()) return out;
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    auto q = api::Quantity::FromJson(*it);
    if (!q.ok()) continue;
    Amount a = Amount::FromQuantity(*q);
    if (!a.IsZero()) out[it.key()] = a;
  }
  return out;
}

ResourceList PodRequests(const Json& pod_spec) {
  ResourceList reqs;
  for (const Json& c : api::Member(pod_spec, "containers")) AddTo(reqs, ContainerRequests(c));
  ResourceList sidecars;  // Restartable init containers started so far.
  ResourceList init_max;
  for (const Json& c : api::Member(pod_spec, "initContainers")) {
    ResourceList r = ContainerRequests(c);
    if (api::CopyStringMember(c, "restartPolicy") == "Always") {
      AddTo(reqs, r);
      AddTo(sidecars, r);
      MaxInto(init_max, sidecars);
    } else {
      AddTo(r, sidecars);
      MaxInto(init_max, r);
    }
  }
  MaxInto(reqs, init_max);
  AddTo(reqs, ParseResourceList(api::Member(pod_spec, "overhead")));
  for (auto it = reqs.begin(); it != reqs.end();) {
    it = it->second.IsZero() ? reqs.erase(it) : std::next(it);
  }
  return reqs;
}

}  // namespace batchd::scheduler
