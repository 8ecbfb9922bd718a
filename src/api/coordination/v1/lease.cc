// coordination.k8s.io/v1 Lease.
#include "api/core/v1/core_v1.h"

namespace batchd::api::coordination_v1 {

void RegisterKinds(Scheme& scheme) {}

}  // namespace batchd::api::coordination_v1
