// Workload slices on the queue manager's side (Kueue's elastic Jobs,
// keps/77-dynamically-sized-jobs): when the core admits a slice it releases
// the slice it replaces at once (queueing/types.h, Decision::replaced); the
// manager then owes the replaced Workload Finished=True reason
// WorkloadSliceReplaced, written after the new slice's admission (so that
// the job always has an admitted Workload) and retried until it lands
// (owed_writes.cc: with the cycle's batch of status writes).
// After a restart between the two writes, syncing the new slice finds its
// predecessor still admitted and finishes it then.
#include <utility>

#include "absl/strings/str_cat.h"
#include "api/kueue/queue_views.h"
#include "api/kueue/queue_writers.h"
#include "api/kueue/workload_slices.h"
#include "api/meta/conditions.h"
#include "api/meta/object_meta.h"
#include "common/logging.h"
#include "common/string_view.h"
#include "controllers/queueing/internal/queue_manager_impl.h"

namespace batchd::controllers::queueing {

using api::kueue::WorkloadView;
using client::ObjectRef;

void QueueManagerImpl::NoteReplacedSlice(const std::string& old_key, const std::string& new_key) {
  replaced_slices_[old_key] = new_key;
  core_.Remove(old_key);  // Already released when the core admitted new_key.
  synced_sig_.erase(old_key);
  Touch(old_key);
}

bool QueueManagerImpl::SkipReplacedSlice(const std::string& key) {
  if (!replaced_slices_.contains(key)) return false;
  core_.Remove(key);  // Its quota belongs to its replacement now.
  synced_sig_.erase(key);
  return true;
}

void QueueManagerImpl::CheckSliceReplacement(const std::string& key, const WorkloadView& view) {
  std::optional<std::string_view> old = view.meta.Annotation(api::kueue::kWorkloadSliceReplacementFor);
  if (!old || old->empty() || replaced_slices_.contains(std::string(*old))) return;
  ObjectRef prev = Current(std::string(*old));
  if (!prev) return;
  const WorkloadView pv = WorkloadView::Parse(*prev);
  if (!pv.has_admission || pv.IsConditionTrue("Finished")) return;
  NoteReplacedSlice(std::string(*old), key);
}

void QueueManagerImpl::ForgetReplacedSlice(const std::string& key) {
  replaced_slices_.erase(key);
}

}  // namespace batchd::controllers::queueing
