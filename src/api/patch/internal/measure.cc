#include "api/patch/internal/measure.h"

#include <algorithm>

namespace batchd::api::internal {
namespace {

void Walk(const Json& v, int level, size_t node_cap, int depth_cap, Measure* m) {
  ++m->nodes;
  m->depth = std::max(m->depth, level);
  if (m->nodes > node_cap || level > depth_cap) return;
  if (!v.is_structured()) return;
  if (v.empty()) return;
  for (const Json& child : v) {
    Walk(child, level + 1, node_cap, depth_cap, m);
    if (m->nodes > node_cap || m->depth > depth_cap) return;
  }
}

}  // namespace

Measure MeasureJson(const Json& v, size_t node_cap, int depth_cap) {
  Measure m;
  Walk(v, 0, node_cap, depth_cap, &m);
  return m;
}

}  // namespace batchd::api::internal
