// Server-side printing: builds meta.k8s.io/v1 Table objects for
// `kubectl get` from a kind's columns and row function.
#pragma once

#include <string>
#include <vector>

#include "absl/time/time.h"
#include "api/kind.h"

namespace batchd::apiserver::internal {

enum class IncludeObject { kNone, kMetadata, kObject };

struct TableOptions {
  IncludeObject include = IncludeObject::kMetadata;
  bool column_definitions = true;
};

api::Json BuildTable(const api::KindDef& k, const std::vector<api::Json>& objects,
                     absl::Time now, const TableOptions& opts);

}  // namespace batchd::apiserver::internal
