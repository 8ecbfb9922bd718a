// Internal to registry: the watch adapter behind serving a resource in a
// non-storage version.
#pragma once

#include <functional>
#include <memory>

#include "registry/registry.h"

namespace batchd::registry::internal {

// A watcher whose event objects are `convert(object)` of `inner`'s.
std::unique_ptr<Watcher> NewConvertingWatcher(std::unique_ptr<Watcher> inner,
                                              std::function<ObjectPtr(ObjectPtr)> convert);

}  // namespace batchd::registry::internal
