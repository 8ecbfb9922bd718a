// Which objects the in-process informers keep compact (serialized, decoded
// again when read: client::Informer::SetCompactWhen). Settled objects are
// finished and rarely read again, yet a long run keeps thousands of them:
//   - Pods in phase Succeeded or Failed, with no finalizer left and not being
//     deleted (the Job controller has counted them);
//   - Jobs with a Complete or Failed condition, no finalizer, not being deleted;
//   - Kueue Workloads with a Finished condition, not being deleted.
// Only memory and CPU depend on it: readers see the same objects either way.
#pragma once

#include <functional>

#include "api/kind.h"

namespace batchd::reconcile {

// The predicate for kind `k`, or an empty function (nothing kept compact).
std::function<bool(const api::Json&)> SettledWhen(const api::KindDef& k);

}  // namespace batchd::reconcile
