// Selector matching over cached objects for the registry: parses the
// labelSelector / fieldSelector query parameters once per request and tests
// CachedObjects against them (labels and fields were extracted at cache time).
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "api/kind.h"
#include "registry/watch_cache.h"

namespace batchd::registry::internal {

class ObjectFilter {
 public:
  static absl::StatusOr<ObjectFilter> Parse(const api::KindDef& k, const std::string& labels,
                                            const std::string& fields);
  bool Matches(const CachedObject& o) const;
  bool Everything() const { return everything_; }

 private:
  struct Impl;
  std::shared_ptr<const Impl> impl_;
  bool everything_ = true;
};

}  // namespace batchd::registry::internal
