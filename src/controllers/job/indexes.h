// Completion-index helpers for Indexed Jobs: the ordered interval set behind
// `status.completedIndexes` / `status.failedIndexes` and successPolicy's
// `succeededIndexes` ("1,3-5,7": increasing, runs of 3+ written `a-b`), and
// reading a pod's completion index and per-index failure-count annotations
// from its metadata view.
//
// Thread-safety: value types and pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "api/meta/object_view.h"

namespace batchd::controllers::job {

// A set of non-negative ints kept as sorted, disjoint, non-adjacent
// closed intervals.
class OrderedIntervals {
 public:
  OrderedIntervals() = default;

  // Parses "0,2-4"; entries that are malformed or >= `completions` are
  // dropped (an interval crossing the bound is clipped), as Kubernetes does
  // when completions shrink.
  static OrderedIntervals Parse(std::string_view s, int completions);

  // Adds `indexes` (any order, duplicates allowed).
  OrderedIntervals With(const std::vector<int>& indexes) const;
  bool Has(int ix) const;
  int Total() const;
  bool empty() const { return iv_.empty(); }
  // The interval string; runs of two are written "a,b", three or more "a-b".
  std::string String() const;
  // How many members of `other` are also members of this set.
  int CountOverlap(const OrderedIntervals& other) const;
  const std::vector<std::pair<int, int>>& intervals() const { return iv_; }

 private:
  std::vector<std::pair<int, int>> iv_;
};

inline constexpr int kUnknownIndex = -1;

// The pod's completion index (annotation, falling back to the label), or
// kUnknownIndex when absent or malformed.
int CompletionIndex(const api::meta::ObjectMetaView& pod);
// `batch.kubernetes.io/job-index-failure-count` (0 when absent or bad).
int IndexFailureCount(const api::meta::ObjectMetaView& pod);
// `batch.kubernetes.io/job-index-ignored-failure-count` (0 when absent).
int IndexIgnoredFailureCount(const api::meta::ObjectMetaView& pod);

}  // namespace batchd::controllers::job
