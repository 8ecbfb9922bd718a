#include "scheduler/internal/pod_affinity.h"

#include <algorithm>

#include "api/json_access.h"

namespace batchd::scheduler::internal {

using api::Json;
using api::labels::LabelSelector;

namespace {

// The term's labelSelector with matchLabelKeys / mismatchLabelKeys merged
// in from the owner's labels (keys the owner lacks are skipped).
LabelSelector TermSelector(const Json& term, const Labels& owner_labels) {
  const Json* sel = api::FindMember(term, "labelSelector");
  if (sel == nullptr || sel->is_null()) return LabelSelector::Nothing();
  Json merged = *sel;
  auto merge = [&](const char* field, const char* op) {
    for (const Json& key : api::MemberArray(term, field)) {
      if (!key.is_string()) continue;
      auto it = owner_labels.find(key.get<std::string>());
      if (it == owner_labels.end()) continue;
      if (!merged.is_object()) merged = Json::object();
      merged["matchExpressions"].push_back(
          {{"key", it->first}, {"operator", op}, {"values", Json::array({it->second})}});
    }
  };
  merge("matchLabelKeys", "In");
  merge("mismatchLabelKeys", "NotIn");
  auto parsed = LabelSelector::FromJson(merged);
  return parsed.ok() ? *parsed : LabelSelector::Nothing();
}

std::optional<AffinityTerm> ParseTerm(const Json& term, std::string_view ns,
                                      const Labels& labels) {
  AffinityTerm t;
  t.topology_key = api::CopyStringMember(term, "topologyKey");
  if (t.topology_key.empty()) return std::nullopt;
  t.selector = TermSelector(term, labels);
  for (const Json& n : api::MemberArray(term, "namespaces")) {
    if (n.is_string()) t.namespaces.push_back(n.get<std::string>());
  }
  if (const Json* nsel = api::FindMember(term, "namespaceSelector");
      nsel != nullptr && !nsel->is_null()) {
    auto parsed = LabelSelector::FromJson(*nsel);
    t.namespace_selector = parsed.ok() ? *parsed : LabelSelector::Nothing();
  }
  if (t.namespaces.empty() && !t.namespace_selector) t.namespaces.emplace_back(ns);
  return t;
}

void ParseTerms(const Json& side, std::string_view ns, const Labels& labels,
                std::vector<AffinityTerm>& out) {
  for (const Json& term : api::MemberArray(side, "requiredDuringSchedulingIgnoredDuringExecution")) {
    if (auto t = ParseTerm(term, ns, labels)) out.push_back(std::move(*t));
  }
}

const std::string* LabelOf(const Labels* labels, const std::string& key) {
  if (labels == nullptr) return nullptr;
  auto it = labels->find(key);
  return it == labels->end() ? nullptr : &it->second;
}

}  // namespace

bool AffinityTerm::Matches(std::string_view ns, const Labels& labels,
                           const NamespaceLabels& ns_labels) const {
  if (!selector.Matches(labels)) return false;
  if (std::find(namespaces.begin(), namespaces.end(), ns) != namespaces.end()) return true;
  if (!namespace_selector) return false;
  if (namespace_selector->Empty()) return true;
  auto it = ns_labels.find(std::string(ns));
  return namespace_selector->Matches(it == ns_labels.end() ? Labels{} : it->second);
}

std::shared_ptr<const InterPodTerms> ParseInterPodTerms(const Json& pod, std::string_view ns,
                                                        const Labels& labels) {
  const Json& affinity = api::MemberAt(pod, {"spec", "affinity"});
  if (!affinity.is_object()) return nullptr;
  auto terms = std::make_shared<InterPodTerms>();
  ParseTerms(api::MemberObject(affinity, "podAffinity"), ns, labels, terms->affinity);
  ParseTerms(api::MemberObject(affinity, "podAntiAffinity"), ns, labels, terms->anti_affinity);
  if (terms->empty()) return nullptr;
  return terms;
}

void InterPodState::AddExisting(std::string_view ns, const Labels& labels,
                                const NamespaceLabels& ns_labels, const PlacedPodRef& p) {
  if (p.terms == nullptr || p.node_labels == nullptr) return;
  for (const AffinityTerm& t : p.terms->anti_affinity) {
    const std::string* value = LabelOf(p.node_labels, t.topology_key);
    if (value != nullptr && t.Matches(ns, labels, ns_labels)) {
      ++existing_anti_counts_[{t.topology_key, *value}];
    }
  }
}

void InterPodState::AddPlaced(const NamespaceLabels& ns_labels, const PlacedPodRef& p) {
  if (p.node_labels == nullptr || p.labels == nullptr) return;
  // As kube-scheduler: a placed pod counts for the affinity terms only when
  // it matches all of them (then in the domain of each term's key).
  bool matches_all = !terms_->affinity.empty();
  for (const AffinityTerm& t : terms_->affinity) {
    matches_all = matches_all && t.Matches(p.ns, *p.labels, ns_labels);
  }
  for (const AffinityTerm& t : terms_->affinity) {
    const std::string* value = matches_all ? LabelOf(p.node_labels, t.topology_key) : nullptr;
    if (value != nullptr) ++affinity_counts_[{t.topology_key, *value}];
  }
  for (const AffinityTerm& t : terms_->anti_affinity) {
    const std::string* value = LabelOf(p.node_labels, t.topology_key);
    if (value != nullptr && t.Matches(p.ns, *p.labels, ns_labels)) {
      ++anti_counts_[{t.topology_key, *value}];
    }
  }
}

bool InterPodState::Passes(const Labels& node_labels, std::vector<std::string>* reasons) const {
  if (empty_) return true;
  // In kube-scheduler's order: the pod's affinity, its anti-affinity, then
  // the placed pods' anti-affinity towards it.
  if (terms_ != nullptr) {
    // Every affinity term has a matching pod in this node's domain (the
    // node must have every topology key).
    bool all_found = true;
    for (const AffinityTerm& t : terms_->affinity) {
      const std::string* value = LabelOf(&node_labels, t.topology_key);
      if (value == nullptr) {
        reasons->push_back(kAffinityReason);
        return false;
      }
      auto it = affinity_counts_.find(Pair{t.topology_key, *value});
      if (it == affinity_counts_.end() || it->second <= 0) all_found = false;
    }
    if (!all_found && !(affinity_counts_.empty() && matches_own_affinity_)) {
      reasons->push_back(kAffinityReason);
      return false;
    }
    for (const AffinityTerm& t : terms_->anti_affinity) {
      const std::string* value = LabelOf(&node_labels, t.topology_key);
      if (value == nullptr) continue;
      auto it = anti_counts_.find(Pair{t.topology_key, *value});
      if (it != anti_counts_.end() && it->second > 0) {
        reasons->push_back(kAntiAffinityReason);
        return false;
      }
    }
  }
  for (const auto& [key, value] : node_labels) {
    if (existing_anti_counts_.empty()) break;
    auto it = existing_anti_counts_.find(Pair{key, value});
    if (it != existing_anti_counts_.end() && it->second > 0) {
      reasons->push_back(kExistingAntiAffinityReason);
      return false;
    }
  }
  return true;
}

}  // namespace batchd::scheduler::internal
