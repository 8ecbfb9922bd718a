// The queue manager's Workload status writes of one cycle, in one store
// batch (issue #14: "admission decisions written in batches"). The cycle's
// admissions (status.admission + QuotaReserved/Admitted), preemptions and
// other evictions (Evicted/Preempted) and pending messages
// (QuotaReserved=False) go out as one Client::UpdateStatusMany: in process,
// one store UpdateMany, which SqliteStore commits as one transaction.
//
// Each write is a status patch computed on the Workload's latest version
// (no resourceVersion precondition), so a write by the Job integration in
// between (labels, annotations, other status fields) never conflicts; the
// registry runs the edit again on the newer version. What the decision
// rested on is checked on that version instead: the same uid, the same spec
// (generation), not finished, active, not admitted already.
//
// Each entry succeeds or fails on its own:
//   - written: the admission's bookkeeping, metrics and Events follow;
//   - refused (the Workload changed, went, or was admitted meanwhile): the
//     core's assumption is undone from the object, the others stand;
//   - failed without an answer (the store unavailable, a timeout, a lost
//     acknowledgement; also a whole transaction that failed): the write may
//     or may not have landed. The core keeps the quota held, nothing else is
//     admitted in its place, and the write is repeated until it answers: a
//     repeat that finds the admission already there (the first write landed)
//     is a no-op and counts as written. Quota is therefore never counted
//     twice and never handed out twice; a restart meanwhile rebuilds from
//     what the store holds (an acknowledged admission is there).
#include <algorithm>
#include <functional>
#include <iterator>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "api/kueue/queue_views.h"
#include "api/kueue/queue_writers.h"
#include "api/meta/conditions.h"
#include "api/meta/object_meta.h"
#include "common/logging.h"
#include "common/string_view.h"
#include "controllers/admissioncheck/admission_checks.h"
#include "controllers/queueing/internal/queue_manager_impl.h"

namespace batchd::controllers::queueing {
namespace {

namespace q = batchd::queueing;
using api::kueue::ConditionView;
using api::kueue::StatusUpdate;
using api::kueue::WorkloadView;
using api::meta::kConditionFalse;
using api::meta::kConditionTrue;
using client::ObjectRef;

// An edit's answer when the latest version needs no write (the note or the
// eviction is already there, or no longer applies): not an error.
absl::Status NothingToWrite() { return absl::CancelledError("nothing to write"); }
bool IsNothingToWrite(const absl::Status& s) { return s.code() == absl::StatusCode::kCancelled; }

// A failure after which the write may have landed: the store did not answer
// (unavailable, timeout, a lost acknowledgement). Refusals (NotFound,
// Conflict after the registry's retries, Invalid, the edit's own
// FailedPrecondition) wrote nothing.
bool OutcomeUnknown(const absl::Status& s) {
  switch (s.code()) {
    case absl::StatusCode::kUnavailable:
    case absl::StatusCode::kDeadlineExceeded:
    case absl::StatusCode::kInternal:
    case absl::StatusCode::kUnknown:
    case absl::StatusCode::kDataLoss:
      return true;
    default:
      return false;
  }
}

std::string UidOf(const Json& obj) { return api::meta::GetUid(obj); }

// The admission edit: QuotaReserved (and Admitted without AdmissionChecks)
// on the latest version, if the decision still holds for it.
struct AdmissionEdit {
  std::string cq, uid;
  int64_t generation = 0;
  Json admission;
  std::vector<std::string> checks;
  absl::Time now;

  absl::Status operator()(Json& obj) const {
    std::optional<StatusUpdate> update;
    {
      const WorkloadView view = WorkloadView::Parse(obj);  // Views into obj: done before obj changes.
      if (view.meta.uid != uid) {
        return absl::FailedPreconditionError("the Workload was replaced since the decision");
      }
      if (generation > 0 && view.meta.generation != generation) {
        return absl::FailedPreconditionError("the Workload's spec changed since the decision");
      }
      if (view.IsConditionTrue("Finished") || !view.active) {
        return absl::FailedPreconditionError("the Workload finished or was deactivated");
      }
      if (view.has_admission) {
        // Our own admission, from a write whose answer was lost: written.
        if (view.admission_cluster_queue == cq && view.IsConditionTrue("QuotaReserved")) {
          return absl::OkStatus();
        }
        return absl::FailedPreconditionError("the Workload holds another admission");
      }
      update.emplace(obj);
      update->status()["admission"] = admission;
      api::kueue::SetCondition(*update,
                               {"QuotaReserved", kConditionTrue, "QuotaReserved",
                                absl::StrCat("Quota reserved in ClusterQueue ", cq)},
                               now);
      // Kueue: a fresh reservation turns earlier Evicted/Preempted conditions False.
      for (const char* type : {"Evicted", "Preempted"}) {
        if (std::optional<ConditionView> c = view.Condition(type); c && c->is_true()) {
          std::string msg = absl::StrCat("Previously: ", Sv(c->message));
          api::kueue::SetCondition(*update, {type, kConditionFalse, "QuotaReserved", msg}, now);
        }
      }
    }
    // Two-phase admission: with AdmissionChecks for these flavors, Admitted
    // waits for all of them to be Ready (controllers/admissioncheck).
    admissioncheck::ResetForReservation(update->status(), checks, now);
    if (checks.empty()) {
      api::kueue::SetCondition(
          *update, {"Admitted", kConditionTrue, "Admitted", "The workload is admitted"}, now);
    }
    api::kueue::ClearRequeueAt(*update);
    api::kueue::SetUnhealthyNodes(*update, {});
    Json status = std::move(update->status());
    update.reset();
    obj["status"] = std::move(status);
    return absl::OkStatus();
  }
};

}  // namespace

bool QueueManagerImpl::OweAdmission(const q::Decision& d, absl::Time now) {
  ObjectRef obj = Current(d.key);
  if (!obj) return false;
  const WorkloadView view = WorkloadView::Parse(*obj);
  if (view.has_admission) return false;
  OwedAdmission a;
  a.decision = d;
  a.uid = std::string(view.meta.uid);
  a.generation = view.meta.generation;
  a.decided = now;
  const std::string& cq = d.admission.cluster_queue;
  {
    static const Json kEmpty = Json::object();
    StatusUpdate scratch(kEmpty);
    api::kueue::SetAdmission(scratch, internal::ToAdmissionStatus(d.admission));
    a.admission = std::move(scratch.status()["admission"]);
  }
  ObjectRef cq_obj = cqs_.Get("", cq);
  if (cq_obj) a.checks = admissioncheck::ChecksFor(*cq_obj, admissioncheck::AssignedFlavors(a.admission));
  a.queued = view.meta.CreationTime().value_or(now);
  if (std::optional<ConditionView> requeued = view.Condition("Requeued");
      requeued && requeued->is_true()) {
    a.queued = requeued->last_transition_time.value_or(a.queued);
  }
  // A workload slice: its replaced slice is out of the core from now on;
  // its Finished write waits for this admission to land (TakeOwedWrites).
  if (!d.replaced.empty()) NoteReplacedSlice(d.replaced, d.key);
  pending_.erase(d.key);  // The admission's write supersedes any pending note.
  admissions_[d.key] = std::move(a);
  return true;
}

void QueueManagerImpl::UndoAdmission(const q::Decision& d, absl::Time now) {
  admissions_.erase(d.key);
  // Re-sync from the object (still pending): the core releases the quota.
  synced_sig_.erase(d.key);
  SyncWorkload(d.key, now);
  if (!d.replaced.empty()) {  // The replaced slice holds its quota again.
    ForgetReplacedSlice(d.replaced);
    synced_sig_.erase(d.replaced);
    SyncWorkload(d.replaced, now);
  }
}

void QueueManagerImpl::FinishAdmission(const std::string& key, const OwedAdmission& a,
                                       const Json& obj) {
  const std::string& cq = a.decision.admission.cluster_queue;
  written_[key] = obj;
  pending_.erase(key);
  inadmissible_.erase(key);
  requeue_at_.erase(key);
  SetWorkloadCq(key, cq);
  Touch(key);
  synced_sig_.erase(key);  // The next sync records it as admitted.
  metrics_.QuotaReserved(cq, a.decided - a.queued);
  // Counted once: a landed write that was in doubt may have been synced
  // as admitted (and counted there, CountCheckGatedAdmission) already.
  if (a.checks.empty() && admitted_counted_.insert(key).second) {
    metrics_.Admitted(cq, a.decided - a.queued);
  }
  // One Event object per workload and reason, counting repeats (Kueue's
  // scheduler emits these per decision; the API server would aggregate them).
  ctx_.events.AggregatedEvent(obj, "Normal", "QuotaReserved",
                              absl::StrCat("Quota reserved in ClusterQueue ", cq,
                                           ", wait time since queued was ",
                                           absl::ToInt64Seconds(a.decided - a.queued), "s"));
  if (a.checks.empty()) {
    ctx_.events.AggregatedEvent(
        obj, "Normal", "Admitted",
        absl::StrCat("Admitted by ClusterQueue ", cq, ", wait time since reservation was 0s"));
  }
}

bool QueueManagerImpl::FlushWrites(absl::Time now) {
  enum class What { kAdmission, kEviction, kPending, kOwed };
  struct Sent {
    What what;
    std::string key;
    size_t owed = 0;  // kOwed: its index in `owed`
  };
  std::vector<client::Client::StatusEdit> edits;
  std::vector<Sent> sent;
  auto add = [&](What what, const std::string& key, std::function<absl::Status(Json&)> edit) {
    const size_t slash = key.find('/');
    edits.push_back({key.substr(0, slash), key.substr(slash + 1), std::move(edit)});
    sent.push_back({what, key});
  };
  for (const auto& [key, a] : admissions_) {
    add(What::kAdmission, key,
        AdmissionEdit{a.decision.admission.cluster_queue, a.uid, a.generation, a.admission,
                      a.checks, now});
  }
  for (auto it = evictions_.begin(); it != evictions_.end();) {
    const std::string& key = it->first;
    const Eviction& ev = it->second;
    ObjectRef obj = Current(key);
    bool owed = false;
    if (obj) {
      const WorkloadView view = WorkloadView::Parse(*obj);
      owed = !view.IsConditionTrue("Finished") && !view.IsConditionTrue("Evicted") &&
             (!ev.require_admission || view.has_admission);
    }
    if (!owed) {  // Nothing (more) to write.
      it = evictions_.erase(it);
      continue;
    }
    add(What::kEviction, key, [ev, uid = UidOf(*obj), now](Json& o) -> absl::Status {
      std::optional<StatusUpdate> update;
      {
        const WorkloadView view = WorkloadView::Parse(o);
        if (view.meta.uid != uid || view.IsConditionTrue("Finished") ||
            view.IsConditionTrue("Evicted") || (ev.require_admission && !view.has_admission)) {
          return NothingToWrite();
        }
        update.emplace(o);
      }
      api::kueue::SetCondition(*update, {"Evicted", kConditionTrue, ev.reason, ev.message}, now);
      if (!ev.preempted_reason.empty()) {
        api::kueue::SetCondition(
            *update, {"Preempted", kConditionTrue, ev.preempted_reason, ev.message}, now);
      }
      if (!ev.unhealthy_nodes.empty()) api::kueue::SetUnhealthyNodes(*update, ev.unhealthy_nodes);
      if (ev.reason.rfind("Deactivated", 0) == 0) {
        api::kueue::RemoveCondition(*update, "DeactivationTarget");
        api::kueue::ClearRequeueState(*update);
      }
      Json status = std::move(update->status());
      update.reset();
      o["status"] = std::move(status);
      return absl::OkStatus();
    });
    ++it;
  }
  for (auto it = pending_.begin(); it != pending_.end();) {
    const std::string& key = it->first;
    ObjectRef obj = admissions_.contains(key) ? nullptr : Current(key);
    bool owed = false;
    if (obj) {
      const WorkloadView view = WorkloadView::Parse(*obj);
      if (!view.has_admission && !view.IsConditionTrue("Finished") && view.active) {
        // Copies the status only; nothing is sent when the condition is already there.
        StatusUpdate probe(*obj);
        owed = api::kueue::SetCondition(
            probe, {"QuotaReserved", kConditionFalse, it->second.reason, it->second.message}, now);
      }
    }
    if (!owed) {
      it = pending_.erase(it);
      continue;
    }
    add(What::kPending, key,
        [note = it->second, uid = UidOf(*obj), now](Json& o) -> absl::Status {
          std::optional<StatusUpdate> update;
          {
            const WorkloadView view = WorkloadView::Parse(o);
            if (view.meta.uid != uid || view.has_admission ||
                view.IsConditionTrue("Finished") || !view.active) {
              return NothingToWrite();
            }
            update.emplace(o);
          }
          if (!api::kueue::SetCondition(
                  *update, {"QuotaReserved", kConditionFalse, note.reason, note.message}, now)) {
            return NothingToWrite();
          }
          Json status = std::move(update->status());
          update.reset();
          o["status"] = std::move(status);
          return absl::OkStatus();
        });
    ++it;
  }
  // PodsReady timeouts and replaced slices' Finished (owed_writes.cc).
  std::set<std::string> sent_slices;
  std::vector<OwedWrite> owed = TakeOwedWrites(now, /*timeouts=*/true, &sent_slices);
  for (size_t i = 0; i < owed.size(); ++i) {
    add(What::kOwed, owed[i].key, std::move(owed[i].edit));
    sent.back().owed = i;
  }
  bool ok = true;
  for (size_t start = 0; start < edits.size(); start += kMaxStatusBatch) {
    const size_t end = std::min(edits.size(), start + kMaxStatusBatch);
    std::vector<client::Client::StatusEdit> batch(std::make_move_iterator(edits.begin() + start),
                                                  std::make_move_iterator(edits.begin() + end));
    std::vector<absl::StatusOr<Json>> results =
        ctx_.client.UpdateStatusMany(wl_kind_, std::move(batch));
    ++status_batches_;
    for (size_t i = start; i < end; ++i) {
      const Sent& s = sent[i];
      absl::StatusOr<Json> r = i - start < results.size()
                                   ? std::move(results[i - start])
                                   : absl::StatusOr<Json>(absl::InternalError("no result"));
      switch (s.what) {
        case What::kAdmission: {
          auto it = admissions_.find(s.key);
          if (it == admissions_.end()) break;
          if (r.ok()) {
            FinishAdmission(s.key, it->second, *r);
            admissions_.erase(it);
          } else if (OutcomeUnknown(r.status())) {
            BATCHD_LOG_WARN("queue manager: admission of {} in doubt, retrying: {}", s.key,
                            r.status().ToString());
            it->second.in_doubt = true;
            ok = false;
          } else {
            BATCHD_LOG_DEBUG("queue manager: admission of {} refused: {}", s.key,
                             r.status().ToString());
            q::Decision d = std::move(it->second.decision);
            UndoAdmission(d, now);
          }
          break;
        }
        case What::kEviction: {
          auto it = evictions_.find(s.key);
          if (it == evictions_.end()) break;
          if (r.ok()) {
            const Eviction& ev = it->second;
            auto cq = wl_cq_.find(s.key);
            if (WorkloadView::Parse(*r).has_admission) {
              metrics_.Evicted(cq == wl_cq_.end() ? "" : cq->second, ev.reason);
            }
            if (!ev.preempted_reason.empty()) metrics_.Preempted(ev.preemptor_cq, ev.preempted_reason);
            ctx_.events.Event(*r, "Normal", ev.preempted_reason.empty() ? "Evicted" : "Preempted",
                              ev.message);
            written_[s.key] = *std::move(r);
            evictions_.erase(it);
          } else if (IsNothingToWrite(r.status()) || r.status().code() == absl::StatusCode::kNotFound) {
            evictions_.erase(it);
          } else {
            BATCHD_LOG_DEBUG("queue manager: eviction of {}: {}", s.key, r.status().ToString());
            ok = false;
          }
          break;
        }
        case What::kPending: {
          if (r.ok()) {
            written_[s.key] = *std::move(r);
            pending_.erase(s.key);
          } else if (IsNothingToWrite(r.status()) || r.status().code() == absl::StatusCode::kNotFound) {
            pending_.erase(s.key);
          } else {
            BATCHD_LOG_DEBUG("queue manager: pending status of {}: {}", s.key,
                             r.status().ToString());
            ok = false;
          }
          break;
        }
        case What::kOwed:
          ok = OwedWriteDone(owed[s.owed], r) && ok;
          break;
      }
    }
  }
  // Notes and evictions an undone admission's re-sync just owed go with the
  // next pass (soon: this one reports something left).
  if (!evictions_.empty() || !pending_.empty()) ok = false;
  // A replaced slice finishes once its replacement's admission landed: those
  // whose replacement landed in this batch, together in one more.
  ok = SendOwedWrites(TakeOwedWrites(now, /*timeouts=*/false, &sent_slices)) && ok;
  return ok;
}

}  // namespace batchd::controllers::queueing
