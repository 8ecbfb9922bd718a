// spec.maximumExecutionTimeSeconds (Kueue's workload controller,
// reconcileMaxExecutionTime): an admitted workload may run that long in
// total, counting status.accumulatedPastExecutionTimeSeconds of its earlier
// admissions. Once over, the manager sets DeactivationTarget
// (MaximumExecutionTimeExceeded, "exceeding the maximum execution time"),
// drops the accumulated time and emits a Warning event; the deactivation path
// in workload_sync.cc then sets spec.active=false and evicts the workload with
// reason DeactivatedDueToMaximumExecutionTimeExceeded. One deadline per
// admitted workload with a limit (bounded by the admitted workloads).
#include "absl/strings/str_cat.h"
#include "api/json_access.h"
#include "api/kueue/queue_views.h"
#include "api/kueue/queue_writers.h"
#include "api/meta/conditions.h"
#include "controllers/queueing/internal/queue_manager_impl.h"

namespace batchd::controllers::queueing {
namespace {

using api::kueue::ConditionView;
using api::kueue::WorkloadView;

constexpr char kReason[] = "MaximumExecutionTimeExceeded";

// When the workload's execution time runs out, or nullopt when it has no
// limit, is not admitted, is inactive or is already marked.
std::optional<absl::Time> ExecutionDeadline(const Json& wl, const WorkloadView& view) {
  const Json* limit = api::FindMemberAt(wl, {"spec", "maximumExecutionTimeSeconds"});
  if (limit == nullptr || !limit->is_number_integer() || !view.has_admission || !view.active ||
      view.IsConditionTrue("DeactivationTarget") || view.IsConditionTrue("Evicted")) {
    return std::nullopt;
  }
  const std::optional<ConditionView> admitted = view.Condition("Admitted");
  if (!admitted || !admitted->is_true() || !admitted->last_transition_time) return std::nullopt;
  const Json* past = api::FindMemberAt(wl, {"status", "accumulatedPastExecutionTimeSeconds"});
  const int64_t past_s = past != nullptr && past->is_number_integer() ? past->get<int64_t>() : 0;
  return *admitted->last_transition_time + absl::Seconds(limit->get<int64_t>() - past_s);
}

}  // namespace

void QueueManagerImpl::TrackExecutionTime(const std::string& key, const Json& wl,
                                          const WorkloadView& view) {
  if (std::optional<absl::Time> deadline = ExecutionDeadline(wl, view)) {
    execution_deadlines_[key] = *deadline;
  } else {
    execution_deadlines_.erase(key);
  }
}

void QueueManagerImpl::ProcessExecutionDeadlines(absl::Time now) {
  std::vector<std::string> due;
  for (const auto& [key, t] : execution_deadlines_) {
    if (t <= now) due.push_back(key);
  }
  for (const std::string& key : due) {
    execution_deadlines_.erase(key);
    client::ObjectRef obj = Current(key);
    if (!obj) continue;
    const WorkloadView view = WorkloadView::Parse(*obj);
    std::optional<absl::Time> deadline = ExecutionDeadline(*obj, view);
    if (!deadline) continue;
    if (*deadline > now) {
      execution_deadlines_[key] = *deadline;
      continue;
    }
    api::kueue::StatusUpdate update(*obj);
    api::kueue::SetCondition(update,
                             {"DeactivationTarget", api::meta::kConditionTrue, kReason,
                              "exceeding the maximum execution time"},
                             now);
    update.status().erase("accumulatedPastExecutionTimeSeconds");
    if (!WriteWorkloadStatus(key, std::move(update))) {
      execution_deadlines_[key] = now;  // Retry at the next reconcile.
      continue;
    }
    const int64_t limit = api::IntMember(api::Member(*obj, "spec"), "maximumExecutionTimeSeconds");
    ctx_.events.Event(*obj, "Warning", kReason,
                      absl::StrCat("The maximum execution time (", limit, "s) exceeded"));
    // The target turns into spec.active=false now; the eviction follows
    // when that change comes back.
    SyncWorkload(key, now);
  }
}

}  // namespace batchd::controllers::queueing
