#include "controllers/cronjob/cronjob_controller.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "api/batch/v1/batch_v1.h"
#include "api/batch/v1/cron_schedule.h"
#include "api/batch/v1/cronjob_view.h"
#include "api/batch/v1/cronjob_writers.h"
#include "api/batch/v1/job_view.h"
#include "api/meta/object_meta.h"
#include "api/meta/object_writers.h"
#include "common/status_macros.h"
#include "common/string_view.h"
#include "controllers/cronjob/internal/schedule.h"
#include "registry/errors.h"

namespace batchd::controllers {

using reconcile::Controller;
using reconcile::ControllerContext;
using reconcile::Reconciler;
using reconcile::Result;

namespace {

using api::Json;
using api::batch_v1::AddCronJobActive;
using api::batch_v1::ConcurrencyPolicy;
using api::batch_v1::CronJobActiveRef;
using api::batch_v1::CronJobSpecView;
using api::batch_v1::CronJobStatusView;
using api::batch_v1::JobStatusView;
using api::batch_v1::RemoveCronJobActive;
using api::batch_v1::SetCronJobLastScheduleTime;
using api::batch_v1::SetCronJobLastSuccessfulTime;
using client::ObjectRef;
namespace meta = api::meta;
namespace sched_internal = cronjob::internal;

std::string Reason(const absl::Status& s) { return registry::GetPayload(s).reason; }

std::string FinishedConditionType(const Json& job) {
  return api::batch_v1::JobConditionTrue(job, "Failed") ? "Failed" : "Complete";
}

// Go's RFC1123Z in UTC, as Kubernetes prints missed schedule times.
std::string Rfc1123Z(absl::Time t) {
  return absl::FormatTime("%a, %d %b %Y %H:%M:%S +0000", t, absl::UTCTimeZone());
}

class CronJobReconciler : public Reconciler {
 public:
  explicit CronJobReconciler(ControllerContext& ctx)
      : ctx_(ctx),
        cronjob_kind_(ctx.client.Kind("batch", "v1", "cronjobs")),
        job_kind_(ctx.client.Kind("batch", "v1", "jobs")),
        cronjobs_(ctx.informers.For(cronjob_kind_)),
        jobs_(ctx.informers.For(job_kind_)) {}

  absl::StatusOr<Result> Reconcile(const std::string& key) override;

  client::Informer& cronjobs() { return cronjobs_; }
  client::Informer& jobs() { return jobs_; }

 private:
  // One reconcile's working state: the CronJob copy whose status is edited.
  struct Sync {
    ObjectRef cached;      // The informer's CronJob: `spec` points into it.
    CronJobSpecView spec;  // Parsed once per sync; the spec is never edited.
    Json cj;               // Working copy; its status is edited.
    std::vector<ObjectRef> jobs;  // Jobs controlled by the CronJob.
    bool status_changed = false;

    // The working copy's status as it is now (parse again after an edit).
    CronJobStatusView Status() const { return CronJobStatusView::Parse(cj); }
  };

  absl::Status ReconcileChildren(Sync& s);
  absl::StatusOr<std::optional<absl::Duration>> SyncSchedule(Sync& s, absl::Time now);
  // Steps 4-7 for a due `scheduled` time; returns false when it must not run.
  absl::StatusOr<bool> MayStart(Sync& s, absl::Time scheduled, absl::Time now);
  absl::Status CreateJob(Sync& s, absl::Time scheduled, absl::TimeZone tz);
  bool DeleteJob(Sync& s, const Json& job);
  void CleanupFinishedJobs(Sync& s);
  void RemoveOldest(Sync& s, std::vector<ObjectRef> finished, std::optional<int64_t> limit);
  void Event(const Sync& s, const char* type, const std::string& reason, const std::string& msg) {
    ctx_.events.Event(s.cj, type, reason, msg);
  }

  ControllerContext& ctx_;
  const api::KindDef& cronjob_kind_;
  const api::KindDef& job_kind_;
  client::Informer& cronjobs_;
  client::Informer& jobs_;
};

absl::StatusOr<Result> CronJobReconciler::Reconcile(const std::string& key) {
  size_t slash = key.find('/');
  if (slash == std::string::npos) return Result::Done();
  std::string ns = key.substr(0, slash), name = key.substr(slash + 1);
  ObjectRef cached = cronjobs_.Get(ns, name);
  if (!cached) return Result::Done();
  Sync s{cached, CronJobSpecView::Parse(*cached), *cached, {}, false};
  meta::SetTypeMeta(s.cj, "batch/v1", "CronJob");
  std::string uid = meta::GetUid(s.cj);
  for (const auto& j : jobs_.List(ns)) {
    if (meta::IsControlledBy(*j, uid)) s.jobs.push_back(j);
  }
  absl::Status st = ReconcileChildren(s);
  std::optional<absl::Duration> requeue;
  if (st.ok()) {
    auto r = SyncSchedule(s, ctx_.clock.Now());
    if (r.ok()) {
      requeue = *r;
    } else {
      st = r.status();
    }
  }
  if (st.ok()) CleanupFinishedJobs(s);
  if (s.status_changed) {
    auto updated = ctx_.client.UpdateStatus(cronjob_kind_, s.cj);
    if (!updated.ok() && st.ok()) st = updated.status();
  }
  if (!st.ok()) return st;
  return requeue ? Result::After(*requeue) : Result::Done();
}

// Step 1: finished Jobs leave status.active (and move lastSuccessfulTime);
// active references to Jobs that are gone are dropped.
absl::Status CronJobReconciler::ReconcileChildren(Sync& s) {
  std::vector<std::string> uids;
  for (const auto& jp : s.jobs) {
    const Json& j = *jp;
    std::string juid = meta::GetUid(j);
    uids.push_back(juid);
    bool active = s.Status().HasActiveUid(juid);
    bool finished = api::batch_v1::IsJobFinished(j);
    if (!active && !finished) {
      // The cached CronJob may predate the status update that recorded it.
      auto live = ctx_.client.Get(cronjob_kind_, meta::GetNamespace(s.cj), meta::GetName(s.cj));
      if (live.ok() && CronJobStatusView::Parse(*live).HasActiveUid(juid)) continue;
      Event(s, "Warning", "UnexpectedJob",
            absl::StrCat("Saw a job that the controller did not create or forgot: ",
                         meta::GetName(j)));
    } else if (active && finished) {
      RemoveCronJobActive(s.cj, juid);
      s.status_changed = true;
      Event(s, "Normal", "SawCompletedJob",
            absl::StrCat("Saw completed job: ", meta::GetName(j),
                         ", condition: ", FinishedConditionType(j)));
    }
    if (finished && api::batch_v1::JobConditionTrue(j, "Complete")) {
      auto done = JobStatusView::Parse(j).CompletionTime();
      auto last = s.Status().last_successful_time;
      if (done && (!last || *done > *last)) {
        SetCronJobLastSuccessfulTime(s.cj, *done);
        s.status_changed = true;
      }
    }
  }
  // Copied: RemoveCronJobActive edits the list the view would point into.
  std::vector<std::pair<std::string, std::string>> active;  // (name, uid)
  for (const CronJobActiveRef& ref : s.Status().active) active.emplace_back(ref.name, ref.uid);
  for (const auto& [ref_name, ruid] : active) {
    if (std::find(uids.begin(), uids.end(), ruid) != uids.end()) continue;
    // Not in the cache: ask the server before declaring it missing.
    auto live = ctx_.client.Get(job_kind_, meta::GetNamespace(s.cj), ref_name);
    if (live.ok() && meta::GetUid(*live) == ruid) continue;
    if (!live.ok() && Reason(live.status()) != "NotFound") return live.status();
    Event(s, "Normal", "MissingJob", absl::StrCat("Active job went missing: ", ref_name));
    RemoveCronJobActive(s.cj, ruid);
    s.status_changed = true;
  }
  return absl::OkStatus();
}

// Steps 2-8: decides whether a Job is due now and creates it; returns the
// delay until the next schedule time (nullopt: no requeue).
absl::StatusOr<std::optional<absl::Duration>> CronJobReconciler::SyncSchedule(Sync& s,
                                                                              absl::Time now) {
  if (meta::IsBeingDeleted(s.cj)) return std::optional<absl::Duration>();
  const CronJobSpecView& spec = s.spec;
  absl::TimeZone tz = absl::UTCTimeZone();
  if (spec.time_zone) {
    const std::string zone(*spec.time_zone);
    if (!absl::LoadTimeZone(zone, &tz)) {
      Event(s, "Warning", "UnknownTimeZone", absl::StrCat("invalid timeZone: \"", zone, "\""));
      return std::optional<absl::Duration>();
    }
  }
  if (spec.suspend) return std::optional<absl::Duration>();
  const std::string schedule(spec.schedule);
  auto sched = api::batch_v1::CronSchedule::Parse(schedule);
  if (!sched.ok()) {
    Event(s, "Warning", "UnparseableSchedule",
          absl::StrCat("unparseable schedule: \"", schedule, "\" : ", sched.status().message()));
    return std::optional<absl::Duration>();
  }
  auto inputs = [&s, &spec] {
    return sched_internal::ScheduleInputs{
        meta::GetCreationTimestamp(s.cj).value_or(absl::UnixEpoch()),
        s.Status().last_schedule_time, spec.starting_deadline_seconds};
  };
  auto mr = sched_internal::MostRecentScheduleTime(inputs(), now, *sched, tz, true);
  if (!mr.ok()) {
    Event(s, "Warning", "InvalidSchedule",
          absl::StrCat("invalid schedule: ", schedule, " : ", mr.status().message()));
    return std::optional<absl::Duration>();
  }
  if (mr->time && mr->missed > sched_internal::kTooManyMissed) {
    Event(s, "Warning", "TooManyMissedTimes",
          "too many missed start times. Set or decrease .spec.startingDeadlineSeconds or check "
          "clock skew");
  }
  if (mr->time) {
    BATCHD_ASSIGN_OR_RETURN(bool start, MayStart(s, *mr->time, now));
    if (start) BATCHD_RETURN_IF_ERROR(CreateJob(s, *mr->time, tz));
  }
  return sched_internal::NextScheduleDelay(inputs(), now, *sched, tz);
}

absl::StatusOr<bool> CronJobReconciler::MayStart(Sync& s, absl::Time scheduled, absl::Time now) {
  const std::optional<int64_t>& deadline = s.spec.starting_deadline_seconds;
  if (deadline && scheduled + absl::Seconds(*deadline) < now) {
    Event(s, "Warning", "MissSchedule",
          absl::StrCat("Missed scheduled time to start a job: ", Rfc1123Z(scheduled)));
    return false;
  }
  const CronJobStatusView status = s.Status();
  const auto& last = status.last_schedule_time;
  if (status.HasActiveName(sched_internal::JobName(meta::GetName(s.cj), scheduled)) ||
      (last && *last == scheduled)) {
    return false;
  }
  const ConcurrencyPolicy policy = s.spec.concurrency_policy;
  // As Kubernetes: every entry of status.active counts, object or not.
  if (policy == ConcurrencyPolicy::kForbid && status.active_entries > 0) {
    Event(s, "Normal", "JobAlreadyActive",
          "Not starting job because prior execution is running and concurrency policy is Forbid");
    return false;
  }
  if (policy == ConcurrencyPolicy::kReplace) {
    // Copied: DeleteJob and RemoveCronJobActive edit the list the view points into.
    std::vector<std::pair<std::string, std::string>> active;  // (name, uid)
    for (const CronJobActiveRef& ref : status.active) active.emplace_back(ref.name, ref.uid);
    for (const auto& [ref_name, ref_uid] : active) {
      auto job = ctx_.client.Get(job_kind_, meta::GetNamespace(s.cj), ref_name);
      if (!job.ok() && Reason(job.status()) == "NotFound") {
        s.status_changed |= RemoveCronJobActive(s.cj, ref_uid);
        continue;
      }
      if (!job.ok()) {
        Event(s, "Warning", "FailedGet", absl::StrCat("Get job: ", job.status().message()));
        return job.status();
      }
      if (!DeleteJob(s, *job)) {
        return absl::UnavailableError(absl::StrCat("could not replace job ", meta::GetName(*job)));
      }
    }
  }
  return true;
}

absl::Status CronJobReconciler::CreateJob(Sync& s, absl::Time scheduled, absl::TimeZone tz) {
  std::string ns = meta::GetNamespace(s.cj);
  Json job = api::batch_v1::NewJobFromTemplate(
      s.spec.job_template, sched_internal::JobName(meta::GetName(s.cj), scheduled), ns);
  meta::SetAnnotation(job, api::batch_v1::kCronJobScheduledTimestampAnnotation,
                      sched_internal::FormatScheduledTimestamp(scheduled, tz));
  meta::SetOwnerReference(job, meta::NewControllerRef(s.cj));
  auto created = ctx_.client.Create(job_kind_, ns, job);
  bool existed = false;
  if (!created.ok() && Reason(created.status()) == "AlreadyExists") {
    created = ctx_.client.Get(job_kind_, ns, meta::GetName(job));
    if (!created.ok()) return created.status();
    // Somebody else's Job, or one already tracked: nothing to record.
    if (!meta::IsControlledBy(*created, meta::GetUid(s.cj))) return absl::OkStatus();
    if (s.Status().HasActiveUid(meta::GetUid(*created))) return absl::OkStatus();
    existed = true;
  } else if (!created.ok()) {
    Event(s, "Warning", "FailedCreate",
          absl::StrCat("Error creating job: ", created.status().message()));
    return created.status();
  }
  if (!existed) {
    Event(s, "Normal", "SuccessfulCreate", absl::StrCat("Created job ", meta::GetName(*created)));
  }
  AddCronJobActive(s.cj, *created);
  SetCronJobLastScheduleTime(s.cj, scheduled);
  s.status_changed = true;
  return absl::OkStatus();
}

bool CronJobReconciler::DeleteJob(Sync& s, const Json& job) {
  client::DeleteOptions opts;
  opts.propagation_policy = "Background";
  opts.precondition_uid = meta::GetUid(job);
  absl::Status st =
      ctx_.client.Delete(job_kind_, meta::GetNamespace(job), meta::GetName(job), opts);
  if (!st.ok() && Reason(st) != "NotFound") {
    Event(s, "Warning", "FailedDelete", absl::StrCat("Deleted job: ", st.message()));
    return false;
  }
  s.status_changed |= RemoveCronJobActive(s.cj, meta::GetUid(job));
  Event(s, "Normal", "SuccessfulDelete", absl::StrCat("Deleted job ", meta::GetName(job)));
  return true;
}

// Step 9: deletes the oldest finished Jobs beyond the history limits.
void CronJobReconciler::CleanupFinishedJobs(Sync& s) {
  if (meta::IsBeingDeleted(s.cj)) return;
  std::vector<ObjectRef> succeeded, failed;
  for (const auto& j : s.jobs) {
    if (meta::IsBeingDeleted(*j)) continue;
    if (api::batch_v1::JobConditionTrue(*j, "Complete")) succeeded.push_back(j);
    if (api::batch_v1::JobConditionTrue(*j, "Failed")) failed.push_back(j);
  }
  RemoveOldest(s, std::move(succeeded), s.spec.successful_jobs_history_limit);
  RemoveOldest(s, std::move(failed), s.spec.failed_jobs_history_limit);
}

void CronJobReconciler::RemoveOldest(Sync& s, std::vector<ObjectRef> finished,
                                     std::optional<int64_t> limit) {
  if (!limit || static_cast<int64_t>(finished.size()) <= *limit) return;
  // Oldest start first; Jobs that never started count as newest.
  std::sort(finished.begin(), finished.end(), [](const ObjectRef& a, const ObjectRef& b) {
    auto ta = JobStatusView::Parse(*a).StartTime();
    auto tb = JobStatusView::Parse(*b).StartTime();
    if (ta.has_value() != tb.has_value()) return ta.has_value();
    if (ta && *ta != *tb) return *ta < *tb;
    return meta::GetName(*a) < meta::GetName(*b);
  });
  int64_t excess = static_cast<int64_t>(finished.size()) - std::max<int64_t>(*limit, 0);
  for (int64_t i = 0; i < excess; ++i) DeleteJob(s, *finished[i]);
}

// The CronJob that controls `job`, as an "ns/name" key ("" when none).
std::string OwningCronJobKey(const Json& job) {
  return meta::ControllerKey(job, "batch/v1", "CronJob");
}

}  // namespace

void AddCronJobController(ControllerContext& ctx) {
  // The reconciler is shared by the handlers the informers keep, so it lives
  // as long as the manager's informers (which outlive its controllers).
  auto rec = std::make_shared<CronJobReconciler>(ctx);
  Controller& c =
      ctx.manager.AddController(std::make_unique<Controller>("cronjob", *rec, ctx.clock));
  Controller* cp = &c;
  rec->cronjobs().AddHandlers(client::EventHandlers{
      [rec, cp](const ObjectRef& o) { cp->Enqueue(*o); },
      [rec, cp](const ObjectRef&, const ObjectRef& o) { cp->Enqueue(*o); }, nullptr});
  auto enqueue_owner = [cp](const ObjectRef& j) {
    std::string key = OwningCronJobKey(*j);
    if (!key.empty()) cp->queue().Add(key);
  };
  rec->jobs().AddHandlers(
      client::EventHandlers{enqueue_owner,
                            [enqueue_owner](const ObjectRef& old_job, const ObjectRef& job) {
                              if (OwningCronJobKey(*old_job) != OwningCronJobKey(*job))
                                enqueue_owner(old_job);
                              enqueue_owner(job);
                            },
                            enqueue_owner});
}

}  // namespace batchd::controllers
