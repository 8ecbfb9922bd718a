// Internal to scheduler/: required inter-pod affinity and anti-affinity, as
// kube-scheduler's InterPodAffinity filter decides them. A pod's terms
// (`spec.affinity.podAffinity` / `podAntiAffinity`,
// `requiredDuringSchedulingIgnoredDuringExecution`) are parsed once into
// `InterPodTerms`; `InterPodState` is the pre-filter over the placed pods
// (counts per topology pair), computed once per scheduling attempt, and
// `InterPodState::Passes` checks one node in O(terms + node labels):
//  - affinity: for every term, some placed pod matching all the terms runs
//    on a node with the same value of the term's topologyKey as this node
//    (which must have the label) — unless no placed pod matches all the
//    terms anywhere and the pod matches all of its own terms (the first pod
//    of a group that attracts itself);
//  - anti-affinity: for no term does a matching placed pod run in this
//    node's domain of the term's topologyKey (a node without the label has
//    no domain: nothing conflicts there);
//  - symmetry: no placed pod's anti-affinity term matches this pod while the
//    placed pod runs in this node's domain of that term's topologyKey.
// A term matches a pod when its labelSelector does (a null selector matches
// nothing) and the pod's namespace is among the term's namespaces: the
// listed ones plus those its namespaceSelector selects (`{}`: all), or the
// namespace of the pod that owns the term when both are empty.
// matchLabelKeys / mismatchLabelKeys add `key in (v)` / `key notin (v)`
// with v the owning pod's label value (what kube-apiserver merges into the
// selector at pod creation since Kubernetes 1.31).
//
// Preferred terms are not scored (batchd's scheduler scores by free
// resources only, as it does for preferred node affinity).
//
// Thread-safety: value types and pure functions.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "api/field_error.h"
#include "api/labels/selector.h"

namespace batchd::scheduler::internal {

using Labels = std::map<std::string, std::string>;
// Namespace name -> its labels; a namespace missing here has none.
using NamespaceLabels = absl::flat_hash_map<std::string, Labels>;

struct AffinityTerm {
  api::labels::LabelSelector selector = api::labels::LabelSelector::Nothing();
  std::vector<std::string> namespaces;  // Resolved: the owner's own when nothing else is given.
  std::optional<api::labels::LabelSelector> namespace_selector;
  std::string topology_key;

  // The pod (`ns`, `labels`) matches the term.
  bool Matches(std::string_view ns, const Labels& labels, const NamespaceLabels& ns_labels) const;
};

struct InterPodTerms {
  std::vector<AffinityTerm> affinity;
  std::vector<AffinityTerm> anti_affinity;
  bool empty() const { return affinity.empty() && anti_affinity.empty(); }
};

// The required inter-pod terms of `pod`; null when it has none. Lenient:
// malformed terms (validation's business) are skipped, a term without a
// topologyKey too.
std::shared_ptr<const InterPodTerms> ParseInterPodTerms(const api::Json& pod, std::string_view ns,
                                                        const Labels& labels);

// A placed pod, as the pre-filter sees it.
struct PlacedPodRef {
  std::string_view ns;
  const Labels* labels = nullptr;
  const InterPodTerms* terms = nullptr;  // Null: none.
  const Labels* node_labels = nullptr;   // Null: its node is unknown.
};

// kube-scheduler's failure reasons.
inline constexpr char kAffinityReason[] = "node(s) didn't match pod affinity rules";
inline constexpr char kAntiAffinityReason[] = "node(s) didn't match pod anti-affinity rules";
inline constexpr char kExistingAntiAffinityReason[] =
    "node(s) didn't satisfy existing pods anti-affinity rules";

// The pre-filter state of one pod against the placed pods.
class InterPodState {
 public:
  // Nothing to check: the pod has no terms and no placed pod's
  // anti-affinity matches it.
  bool empty() const { return empty_; }
  // Whether a node with `node_labels` passes; appends the reason when not.
  bool Passes(const Labels& node_labels, std::vector<std::string>* reasons) const;

  // `pods` calls `fn(const PlacedPodRef&)` for every placed pod when the
  // pod has terms; `anti_pods` the same for the placed pods with
  // anti-affinity terms only (the symmetric check).
  template <typename ForEachPlaced, typename ForEachAnti>
  static InterPodState Compute(std::string_view ns, const Labels& labels,
                               const InterPodTerms* terms, const NamespaceLabels& ns_labels,
                               ForEachPlaced pods, ForEachAnti anti_pods);

 private:
  using Pair = std::pair<std::string, std::string>;  // (topology key, value)
  void AddExisting(std::string_view ns, const Labels& labels, const NamespaceLabels& ns_labels,
                   const PlacedPodRef& p);
  void AddPlaced(const NamespaceLabels& ns_labels, const PlacedPodRef& p);

  bool empty_ = true;
  const InterPodTerms* terms_ = nullptr;
  bool matches_own_affinity_ = false;
  absl::flat_hash_map<Pair, int> affinity_counts_, anti_counts_, existing_anti_counts_;
};

template <typename ForEachPlaced, typename ForEachAnti>
InterPodState InterPodState::Compute(std::string_view ns, const Labels& labels,
                                     const InterPodTerms* terms,
                                     const NamespaceLabels& ns_labels, ForEachPlaced pods,
                                     ForEachAnti anti_pods) {
  InterPodState s;
  s.terms_ = terms;
  anti_pods([&](const PlacedPodRef& p) { s.AddExisting(ns, labels, ns_labels, p); });
  if (terms != nullptr && !terms->empty()) {
    pods([&](const PlacedPodRef& p) { s.AddPlaced(ns_labels, p); });
    s.matches_own_affinity_ = true;
    for (const AffinityTerm& t : terms->affinity) {
      s.matches_own_affinity_ = s.matches_own_affinity_ && t.Matches(ns, labels, ns_labels);
    }
  }
  s.empty_ = (terms == nullptr || terms->empty()) && s.existing_anti_counts_.empty();
  return s;
}

}  // namespace batchd::scheduler::internal
