// Freeing JSON trees. nlohmann's basic_json destroys a container without
// recursion: it moves every descendant through a heap-allocated stack of
// values, so each node is moved twice and destructed three times. Trees that
// batchd shares (the watch cache's and informers' decodings, ObjectRef) are
// shallow and freed by the thousand; they are freed here depth first
// instead, each node once, recursing at most kReleaseDepth levels (anything
// deeper is left to nlohmann's way).
#pragma once

#include <memory>

#include "api/json_type.h"

namespace batchd::api {

inline constexpr int kReleaseDepth = 64;

// Frees the members or elements of `v` depth first; `v` is left an empty
// object or array (a scalar is left as it is).
void ReleaseTree(Json& v) noexcept;

// `v` as a shared, immutable value (one allocation, as make_shared) whose
// tree is freed with ReleaseTree when the last reference goes.
std::shared_ptr<const Json> ShareJson(Json v);

}  // namespace batchd::api
