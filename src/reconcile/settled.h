// Which objects the in-process informers keep compact (serialized, decoded
// again when read: client::Informer::SetCompactWhen). Settled objects are
// finished and rarely read again, yet a long run keeps thousands of them:
//   - Pods in phase Succeeded or Failed, with no finalizer left and not being
//     deleted (the Job controller has counted them);
//   - Jobs with a Complete or Failed condition, no finalizer, not being deleted;
//   - Kueue Workloads with a Finished condition, not being deleted.
// Only memory and CPU depend on it: readers see the same objects either way.
//
// Of those kinds an informer keeps at most the objects of its kKeepDecoded
// most recent changes (and Gets of idle ones) decoded besides
// (client::Informer::SetKeepDecoded): the objects being worked on. The rest,
// waiting (a Job suspended in a queue, its pending Workload) or settled, cost
// their bytes, which the watch cache holds anyway.
#pragma once

#include <cstddef>
#include <functional>

#include "api/kind.h"

namespace batchd::reconcile {

inline constexpr size_t kKeepDecoded = 1024;

// The predicate for kind `k`, or an empty function (nothing kept compact).
std::function<bool(const api::Json&)> SettledWhen(const api::KindDef& k);

}  // namespace batchd::reconcile
