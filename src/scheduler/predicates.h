// Pod-vs-node predicates shared by the scheduler and the node lifecycle
// controller, with kube-scheduler's semantics: node selectors and required
// node affinity, and the effective resource request of a pod (max(sum of app
// containers + sidecars, max init container) + overhead), computed exactly
// with `api::Amount` (milli-units). Taint/toleration matching lives in the
// API layer (api/core/v1/taint.h); its names are re-exported here.
//
// Thread-safety: value types and pure functions; safe to use concurrently on
// distinct or const data. Parsers are lenient: malformed entries are skipped
// (the registry has already validated the objects).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "api/core/v1/taint.h"
#include "api/field_error.h"
#include "api/resource/amount.h"

namespace batchd::scheduler {

// Taints, tolerations and their matching are the API layer's
// (api/core/v1/taint.h), shared with the node lifecycle controller and the
// admission core.
using api::core_v1::FindToleration;
using api::core_v1::ParseTaints;
using api::core_v1::ParseTolerations;
using api::core_v1::Taint;
using api::core_v1::TaintEffect;
using api::core_v1::Toleration;
using api::core_v1::TolerationOperator;
using api::core_v1::ToleratesTaint;

// Required node placement of a pod: `spec.nodeSelector` AND (any of) the
// required node-affinity `nodeSelectorTerms`.
class NodeAffinity {
 public:
  struct Requirement {
    std::string key;
    std::string op;  // In, NotIn, Exists, DoesNotExist, Gt, Lt.
    std::vector<std::string> values;
  };
  struct Term {
    std::vector<Requirement> expressions;
    std::vector<Requirement> fields;  // Only `metadata.name` is meaningful.
  };

  static NodeAffinity FromPodSpec(const api::Json& pod_spec);
  // True when the pod has no placement constraint at all.
  bool Empty() const { return node_selector_.empty() && !has_terms_; }
  bool Matches(const std::string& node_name,
               const std::map<std::string, std::string>& node_labels) const;

 private:
  std::map<std::string, std::string> node_selector_;
  bool has_terms_ = false;  // `nodeSelectorTerms` present (even empty: matches nothing).
  std::vector<Term> terms_;
};

// Resource name -> amount (milli-units). Zero entries are omitted.
using ResourceList = std::map<std::string, api::Amount>;

// Parses a `{name: quantity}` object; unparsable quantities are skipped.
ResourceList ParseResourceList(const api::Json& obj);
// Kubernetes' effective pod request for scheduling (see header comment).
ResourceList PodRequests(const api::Json& pod_spec);

}  // namespace batchd::scheduler
