// Internal to api/patch: size and depth of a JSON value, for the bounds in
// patch.h. Thread-safe, pure.
#pragma once

#include <cstddef>

#include "api/field_error.h"

namespace batchd::api::internal {

struct Measure {
  size_t nodes = 0;  // Values in the tree (saturates a little past `node_cap`).
  int depth = 0;     // Deepest level of any value below the root (0 for a scalar or {}).
};

// Stops counting once `node_cap` values or `depth_cap` levels are exceeded.
Measure MeasureJson(const Json& v, size_t node_cap, int depth_cap);

}  // namespace batchd::api::internal
