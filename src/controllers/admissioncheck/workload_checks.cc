// "admission-checks": the Workload side of two-phase admission (see
// controllers.h). One reconcile per Workload key; reads the Workload and its
// ClusterQueue from the informers and writes at most one status update.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/json_access.h"
#include "api/kueue/kueue.h"
#include "api/kueue/queue_views.h"
#include "api/kueue/queue_writers.h"
#include "api/kueue/workload_writers.h"
#include "api/meta/conditions.h"
#include "api/meta/object_meta.h"
#include "api/meta/time_util.h"
#include "common/logging.h"
#include "controllers/admissioncheck/admission_checks.h"
#include "controllers/admissioncheck/internal/controllers_impl.h"

namespace batchd::controllers::admissioncheck::internal {

using api::MemberArray;
using api::MemberObject;
using api::StringMember;
using api::meta::kConditionFalse;
using api::meta::kConditionTrue;
using client::ObjectRef;
using reconcile::Result;

WorkloadChecks::WorkloadChecks(reconcile::ControllerContext& ctx)
    : ctx_(ctx),
      wl_kind_(ctx.client.Kind(api::kueue::kGroup, api::kueue::kStorageVersion,
                               api::kueue::kWorkloads)),
      workloads_(ctx.informers.For(wl_kind_)),
      cqs_(ctx.informers.For(api::kueue::kGroup, api::kueue::kStorageVersion,
                             api::kueue::kClusterQueues)) {}

void WorkloadChecks::Register() {
  controller_ = &ctx_.manager.AddController(
      std::make_unique<reconcile::Controller>("admission-checks", *this, ctx_.clock));
  reconcile::Controller* c = controller_;
  // Only workloads that carry check states, or hold quota but are not
  // admitted yet, need a look: Reconcile changes nothing else (a finished
  // one is skipped; without check states an admitted one has no list to
  // sync and nothing left to set). So the usual admission, with no checks,
  // wakes this controller for none of its Workload's later changes.
  auto on_wl = [c](const ObjectRef& o) {
    const Json& st = MemberObject(*o, "status");
    if (api::meta::IsConditionTrue(*o, api::kueue::kFinished)) return;
    if (api::HasMember(st, "admissionChecks") ||
        (api::HasMember(st, "admission") &&
         !api::meta::IsConditionTrue(*o, api::kueue::kAdmitted))) {
      c->Enqueue(*o);
    }
  };
  workloads_.AddHandlers(
      {on_wl, [on_wl](const ObjectRef&, const ObjectRef& n) { on_wl(n); }, {}});
  // A ClusterQueue's strategy change re-syncs the waiting workloads' lists.
  auto on_cq = [this, c](const ObjectRef& o) {
    const std::string name = api::meta::GetName(*o);
    for (const ObjectRef& w : workloads_.List()) {
      const Json& adm = MemberObject(MemberObject(*w, "status"), "admission");
      if (StringMember(adm, "clusterQueue") == name &&
          !api::meta::IsConditionTrue(*w, api::kueue::kAdmitted)) {
        c->Enqueue(*w);
      }
    }
  };
  // (Not on add: a new ClusterQueue's workloads come with their own events.)
  cqs_.AddHandlers({{},
                    [on_cq](const ObjectRef& a, const ObjectRef& b) {
                      if (ReferencedChecks(*a) != ReferencedChecks(*b) ||
                          MemberObject(MemberObject(*a, "spec"), "admissionChecksStrategy") !=
                              MemberObject(MemberObject(*b, "spec"), "admissionChecksStrategy")) {
                        on_cq(b);
                      }
                    },
                    {}});
}

absl::StatusOr<Result> WorkloadChecks::Reconcile(const std::string& key) {
  const size_t slash = key.find('/');
  if (slash == std::string::npos) return Result::Done();
  ObjectRef obj = workloads_.Get(key.substr(0, slash), key.substr(slash + 1));
  if (!obj || api::meta::IsConditionTrue(*obj, api::kueue::kFinished)) return Result::Done();
  const Json& wl = *obj;
  const absl::Time now = ctx_.clock.Now();
  const Json& status = MemberObject(wl, "status");
  const bool reserved =
      api::HasMember(status, "admission") && api::meta::IsConditionTrue(wl, "QuotaReserved");
  api::kueue::StatusUpdate update(wl);
  std::string event_reason, event_message;

  if (!reserved) {
    // Quota released (evicted, preempted, requeued): every check starts over.
    bool stale = false;
    std::vector<std::string> names;
    for (const Json& s : MemberArray(status, "admissionChecks")) {
      names.emplace_back(StringMember(s, "name"));
      if (StringMember(s, "state") != kPending || api::HasMember(s, "podSetUpdates")) stale = true;
    }
    if (!stale) return Result::Done();
    ResetForReservation(update.status(), names, now);
    return Write(key, std::move(update), wl, "", "");
  }

  const bool admitted = api::meta::IsConditionTrue(wl, api::kueue::kAdmitted);
  const bool evicted = api::meta::IsConditionTrue(wl, api::kueue::kEvicted);
  const std::string cq_name(StringMember(MemberObject(status, "admission"), "clusterQueue"));
  if (!admitted) {
    if (ObjectRef cq = cqs_.Get("", cq_name)) {
      SyncCheckList(update.status(), ChecksFor(*cq, AssignedFlavors(status["admission"])), now);
    }
  }
  std::vector<std::string> rejected;
  bool retry = false, all_ready = true;
  std::optional<absl::Time> requeue_at;
  for (const Json& s : MemberArray(update.status(), "admissionChecks")) {
    std::string_view state = StringMember(s, "state");
    if (state == kRejected) rejected.emplace_back(StringMember(s, "name"));
    if (state == kRetry) {
      retry = true;
      if (api::HasMember(s, "requeueAfterSeconds")) {
        absl::Time at = api::meta::ParseOptionalRfc3339(StringMember(s, "lastTransitionTime"))
                            .value_or(now) +
                        absl::Seconds(std::max<int64_t>(0, api::IntMember(s, "requeueAfterSeconds")));
        if (!requeue_at || at > *requeue_at) requeue_at = at;
      }
    }
    if (state != kReady) all_ready = false;
  }
  const api::kueue::WorkloadView view = api::kueue::WorkloadView::Parse(wl);
  if (!rejected.empty()) {
    const std::string msg =
        absl::StrCat("Admission check(s): [", absl::StrJoin(rejected, " "), "], were rejected");
    if (view.active && !api::meta::IsConditionTrue(wl, "DeactivationTarget")) {
      api::kueue::SetCondition(update, {"DeactivationTarget", kConditionTrue, "AdmissionCheck", msg},
                               now);
      event_reason = "AdmissionCheckRejected";
      event_message = msg;
    }
  } else if (retry) {
    if (!evicted) {
      api::kueue::SetCondition(update,
                               {api::kueue::kEvicted, kConditionTrue, "AdmissionCheck",
                                "At least one admission check is false"},
                               now);
      event_reason = "EvictedDueToAdmissionCheck";
      event_message = "At least one admission check is false";
    }
    if (requeue_at && (!view.requeue_at || *view.requeue_at < *requeue_at)) {
      api::kueue::SetRequeueState(update, view.requeue_count, *requeue_at);
    }
  } else if (all_ready) {
    if (!admitted && !evicted) {
      api::kueue::SetCondition(
          update, {api::kueue::kAdmitted, kConditionTrue, "Admitted", "The workload is admitted"},
          now);
      event_reason = "Admitted";
      event_message = absl::StrCat("Admitted by ClusterQueue ", cq_name);
    }
  } else if (admitted) {
    api::kueue::SetCondition(update,
                             {api::kueue::kAdmitted, kConditionFalse, "UnsatisfiedChecks",
                              "The workload has not all checks ready"},
                             now);
  }
  if (!update.changed()) return Result::Done();
  return Write(key, std::move(update), wl, event_reason, event_message);
}

absl::StatusOr<Result> WorkloadChecks::Write(const std::string& key,
                                             api::kueue::StatusUpdate update, const Json& wl,
                                             const std::string& event_reason,
                                             const std::string& event_message) {
  auto r = ctx_.client.UpdateStatus(
      wl_kind_, std::move(update).Build(wl_kind_.ApiVersion(), wl_kind_.kind));
  if (!r.ok()) {
    BATCHD_LOG_DEBUG("admission checks: status write for {}: {}", key, r.status().ToString());
    // Gone, or changed since read: the newer version's event enqueues it again.
    if (absl::IsNotFound(r.status()) || absl::IsAborted(r.status())) return Result::Done();
    return r.status();
  }
  if (!event_reason.empty()) {
    ctx_.events.AggregatedEvent(wl, "Normal", event_reason, event_message);
  }
  return Result::Done();
}

}  // namespace batchd::controllers::admissioncheck::internal
