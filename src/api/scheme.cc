// The kinds batchd serves, listed explicitly (STYLE.md practice 14).
#include "api/core/v1/core_v1.h"
#include "api/discovery/v1/discovery_v1.h"
#include "api/jobset/v1alpha2/jobset_v1alpha2.h"
#include "api/kind.h"
#include "api/kueue/kueue.h"
#include "api/rbac/v1/rbac_v1.h"
#include "api/scheduling/v1/scheduling_v1.h"
#include "api/scheduling/v1alpha2/scheduling_v1alpha2.h"

namespace batchd::api {

std::shared_ptr<const Scheme> BuiltinScheme() {
  static const std::shared_ptr<const Scheme> scheme = [] {
    auto s = std::make_shared<Scheme>();
    core_v1::RegisterKinds(*s);
    coordination_v1::RegisterKinds(*s);
    batch_v1::RegisterKinds(*s);
    // kueue.x-k8s.io goes before scheduling.k8s.io in discovery, so that
    // kubectl resolves a bare `workloads` to Kueue's Workload (as it did
    // before scheduling.k8s.io served one); the other is
    // `workloads.scheduling.k8s.io`.
    kueue::RegisterKinds(*s);
    scheduling_v1::RegisterKinds(*s);
    scheduling_v1alpha2::RegisterKinds(*s);
    discovery_v1::RegisterKinds(*s);
    jobset_v1alpha2::RegisterKinds(*s);
    rbac_v1::RegisterKinds(*s);
    rbac_v1::RegisterReviewKinds(*s);
    return s;
  }();
  return scheme;
}

}  // namespace batchd::api
