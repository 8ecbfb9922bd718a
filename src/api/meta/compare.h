// Comparing an object's metadata across two of its versions.
//
// Thread-safety: free functions over JSON the caller owns or holds shared and
// immutable.
#pragma once

#include "api/field_error.h"

namespace batchd::api::meta {

// Two `metadata` objects equal but for resourceVersion (either may lack it):
// what a write that changed nothing else in metadata (a status write) leaves.
// Non-objects compare with ==.
bool MetadataEqualButResourceVersion(const Json& a, const Json& b);

}  // namespace batchd::api::meta
