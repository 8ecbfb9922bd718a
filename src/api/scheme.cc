// The kinds batchd serves, listed explicitly (STYLE.md practice 14).
#include "api/core/v1/core_v1.h"
#include "api/kind.h"
#include "api/kueue/kueue.h"
#include "api/scheduling/v1/scheduling_v1.h"

namespace batchd::api {

std::shared_ptr<const Scheme> BuiltinScheme() {
  static const std::shared_ptr<const Scheme> scheme = [] {
    auto s = std::make_shared<Scheme>();
    core_v1::RegisterKinds(*s);
    coordination_v1::RegisterKinds(*s);
    batch_v1::RegisterKinds(*s);
    scheduling_v1::RegisterKinds(*s);
    kueue::RegisterKinds(*s);
    return s;
  }();
  return scheme;
}

}  // namespace batchd::api
