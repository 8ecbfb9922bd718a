// Workload status writes the queue manager owes outside the core's
// decisions, sent with the cycle's batch (status_writes.cc) instead of one
// write each:
//   - a PodsReady timeout (Kueue's workload controller, waitForPodsReady):
//     Evicted=True reason PodsReadyTimeout with the requeue backoff in
//     status.requeueState, or past backoffLimitCount DeactivationTarget=True
//     reason RequeuingLimitExceeded;
//   - a replaced workload slice (workload_slices.cc): Finished=True reason
//     WorkloadSliceReplaced, once its replacement's admission landed.
// As the batch's other entries, each is an edit made on the Workload's latest
// version (no resourceVersion precondition, so a write by the Job
// integration in between does not make it conflict) that first checks what
// it rests on there; it stays owed, and is sent again, until it lands or no
// longer applies.
#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "api/kueue/queue_views.h"
#include "api/kueue/queue_writers.h"
#include "api/kueue/workload_slices.h"
#include "api/meta/conditions.h"
#include "common/logging.h"
#include "controllers/queueing/internal/queue_manager_impl.h"

namespace batchd::controllers::queueing {
namespace {

using api::kueue::StatusUpdate;
using api::kueue::WorkloadView;
using api::meta::kConditionTrue;
using client::ObjectRef;

// The edit's answer when the latest version needs no write: not an error.
absl::Status NoLongerOwed() { return absl::CancelledError("nothing to write"); }

// Landed, or nothing (more) to write: no longer owed.
bool Settled(const absl::StatusOr<Json>& r) {
  return r.ok() || r.status().code() == absl::StatusCode::kCancelled ||
         r.status().code() == absl::StatusCode::kNotFound;
}

// Moves the update's status into `obj` (the update reads `obj` until then).
void Apply(std::optional<StatusUpdate>& update, Json& obj) {
  Json status = std::move(update->status());
  update.reset();
  obj["status"] = std::move(status);
}

// Kueue's workload controller on a PodsReady timeout: count the requeue and
// back off (base * 2^(n-1), capped), or mark the workload for deactivation
// once the backoff limit is exceeded. No jitter: decisions stay
// deterministic. The count is the latest version's.
struct ReadyTimeoutEdit {
  std::string key, uid;
  RequeuingStrategy rs;
  absl::Time now;

  absl::Status operator()(Json& obj) const {
    std::optional<StatusUpdate> update;
    int32_t count = 0;
    {
      const WorkloadView view = WorkloadView::Parse(obj);  // Views into obj.
      if (view.meta.uid != uid || !view.has_admission || view.IsConditionTrue("PodsReady") ||
          view.IsConditionTrue("Evicted") || view.IsConditionTrue("Finished")) {
        return NoLongerOwed();
      }
      count = view.requeue_count;
      update.emplace(obj);
    }
    if (rs.backoff_limit_count && count + 1 > *rs.backoff_limit_count) {
      if (!api::kueue::SetCondition(*update,
                                    {"DeactivationTarget", kConditionTrue,
                                     "RequeuingLimitExceeded",
                                     "exceeding the maximum number of re-queuing retries"},
                                    now)) {
        return NoLongerOwed();
      }
      Apply(update, obj);
      return absl::OkStatus();
    }
    const int32_t n = count + 1;
    double backoff = rs.backoff_base_seconds * std::ldexp(1.0, std::min(n - 1, 40));
    backoff = std::min(backoff, static_cast<double>(rs.backoff_max_seconds));
    api::kueue::SetRequeueState(*update, n, now + absl::Seconds(static_cast<int64_t>(backoff)));
    api::kueue::SetCondition(*update,
                             {"Evicted", kConditionTrue, "PodsReadyTimeout",
                              absl::StrCat("Exceeded the PodsReady timeout ", key)},
                             now);
    Apply(update, obj);
    return absl::OkStatus();
  }
};

struct SliceFinishEdit {
  std::string uid, message;
  absl::Time now;

  absl::Status operator()(Json& obj) const {
    std::optional<StatusUpdate> update;
    {
      const WorkloadView view = WorkloadView::Parse(obj);
      if (view.meta.uid != uid || view.IsConditionTrue("Finished")) return NoLongerOwed();
      update.emplace(obj);
    }
    api::kueue::SetCondition(
        *update, {"Finished", kConditionTrue, api::kueue::kWorkloadSliceReplaced, message}, now);
    Apply(update, obj);
    return absl::OkStatus();
  }
};

}  // namespace

std::vector<QueueManagerImpl::OwedWrite> QueueManagerImpl::TakeOwedWrites(
    absl::Time now, bool timeouts, std::set<std::string>* sent) {
  std::vector<OwedWrite> out;
  if (timeouts) {
    for (auto it = ready_timeouts_.begin(); it != ready_timeouts_.end();) {
      if (!Current(it->first)) {  // Gone.
        it = ready_timeouts_.erase(it);
        continue;
      }
      out.push_back({OwedWrite::Kind::kReadyTimeout, it->first, "",
                     ReadyTimeoutEdit{it->first, it->second, cfg_.wait_for_pods_ready.requeuing,
                                      now}});
      ++it;
    }
  }
  for (const auto& [old_key, new_key] : replaced_slices_) {
    // Not before the replacement's admission landed: the job keeps an
    // admitted Workload throughout (status_writes.cc).
    if (admissions_.contains(new_key) || sent->contains(old_key)) continue;
    ObjectRef obj = Current(old_key);
    if (!obj) continue;
    const WorkloadView view = WorkloadView::Parse(*obj);
    if (view.IsConditionTrue("Finished")) continue;
    ObjectRef repl = Current(new_key);
    std::string repl_uid = repl ? std::string(WorkloadView::Parse(*repl).meta.uid) : "";
    std::string message = absl::StrCat("Removed to accommodate a workload (UID: ", repl_uid,
                                       ", Key: ", new_key, ") due to workload slice aggregation");
    sent->insert(old_key);
    out.push_back({OwedWrite::Kind::kSliceFinish, old_key, message,
                   SliceFinishEdit{std::string(view.meta.uid), message, now}});
  }
  return out;
}

bool QueueManagerImpl::OwedWriteDone(const OwedWrite& w, absl::StatusOr<Json>& r) {
  const bool timeout = w.kind == OwedWrite::Kind::kReadyTimeout;
  if (!Settled(r)) {
    BATCHD_LOG_DEBUG("queue manager: {} of {}: {}",
                     timeout ? "PodsReady-timeout eviction" : "Finished of replaced slice", w.key,
                     r.status().ToString());
    return false;
  }
  if (timeout) ready_timeouts_.erase(w.key);
  if (!r.ok()) return true;  // Nothing (more) to write.
  if (!timeout) {
    ctx_.events.Event(*r, "Normal", api::kueue::kWorkloadSliceReplaced, w.message);
  } else if (WorkloadView::Parse(*r).IsConditionTrue("Evicted")) {  // Else DeactivationTarget.
    auto cq = wl_cq_.find(w.key);
    metrics_.Evicted(cq == wl_cq_.end() ? "" : cq->second, "PodsReadyTimeout");
    ctx_.events.Event(*r, "Normal", "EvictedDueToPodsReadyTimeout",
                      absl::StrCat("Exceeded the PodsReady timeout ", w.key));
  }
  written_[w.key] = *std::move(r);
  return true;
}

bool QueueManagerImpl::SendOwedWrites(std::vector<OwedWrite> writes) {
  bool ok = true;
  for (size_t start = 0; start < writes.size(); start += kMaxStatusBatch) {
    const size_t end = std::min(writes.size(), start + kMaxStatusBatch);
    std::vector<client::Client::StatusEdit> batch;
    batch.reserve(end - start);
    for (size_t i = start; i < end; ++i) {
      const std::string& key = writes[i].key;
      const size_t slash = key.find('/');
      batch.push_back({key.substr(0, slash), key.substr(slash + 1), std::move(writes[i].edit)});
    }
    std::vector<absl::StatusOr<Json>> results =
        ctx_.client.UpdateStatusMany(wl_kind_, std::move(batch));
    ++status_batches_;
    for (size_t i = start; i < end; ++i) {
      absl::StatusOr<Json> r = i - start < results.size()
                                   ? std::move(results[i - start])
                                   : absl::StatusOr<Json>(absl::InternalError("no result"));
      ok = OwedWriteDone(writes[i], r) && ok;
    }
  }
  return ok;
}

}  // namespace batchd::controllers::queueing
