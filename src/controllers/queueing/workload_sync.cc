// Workload side of the queue manager: keeps the admission core in sync with
// Workload objects, applies the core's decisions, and owes Workloads the
// status writes that follow (pending messages, evictions), retrying them
// until they land. Never writes a status that would not change.
#include <algorithm>
#include <cstdlib>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/json_access.h"
#include "api/kueue/queue_views.h"
#include "api/meta/conditions.h"
#include "api/meta/object_meta.h"
#include "api/meta/time_util.h"
#include "common/logging.h"
#include "controllers/queueing/internal/queue_manager_impl.h"

namespace batchd::controllers::queueing {
namespace {

namespace q = batchd::queueing;
using api::Json;
using api::meta::ConditionTransitionTime;
using api::meta::GetCondition;
using api::meta::IsConditionTrue;
using api::meta::kConditionFalse;
using api::meta::kConditionTrue;
using api::meta::RemoveCondition;
using api::meta::SetCondition;
using client::ObjectRef;
constexpr api::meta::ConditionShape kMeta = api::meta::ConditionShape::kMeta;

std::pair<std::string, std::string> SplitKey(const std::string& key) {
  size_t slash = key.find('/');
  return {key.substr(0, slash), key.substr(slash + 1)};
}

// resourceVersion as a number (the store's revision); 0 when not numeric.
uint64_t Rv(const Json& obj) {
  std::string rv = api::meta::GetResourceVersion(obj);
  char* end = nullptr;
  uint64_t v = std::strtoull(rv.c_str(), &end, 10);
  return end != nullptr && *end == '\0' ? v : 0;
}

using api::kueue::LocalQueueView;
using api::kueue::WorkloadView;

std::string QueueName(const Json& wl) { return std::string(WorkloadView::Parse(wl).queue_name); }
bool IsActive(const Json& wl) { return WorkloadView::Parse(wl).active; }
bool HasAdmission(const Json& wl) { return WorkloadView::Parse(wl).has_admission; }
int32_t RequeueCount(const Json& wl) { return WorkloadView::Parse(wl).requeue_count; }

}  // namespace

ObjectRef QueueManagerImpl::Current(const std::string& key) const {
  auto [ns, name] = SplitKey(key);
  ObjectRef cached = workloads_.Get(ns, name);
  auto it = written_.find(key);
  if (it == written_.end()) return cached;
  if (cached && Rv(*cached) >= Rv(it->second)) return cached;
  if (!cached) return nullptr;  // Deleted since our write.
  return std::make_shared<const Json>(it->second);
}

void QueueManagerImpl::Forget(const std::string& key) {
  core_.Remove(key);
  synced_sig_.erase(key);
  written_.erase(key);
  ready_deadlines_.erase(key);
  not_ready_.erase(key);
  requeue_at_.erase(key);
  pending_.erase(key);
  wl_cq_.erase(key);
  inadmissible_.erase(key);
}

std::vector<std::string> QueueManagerImpl::SyncOrder(const std::set<std::string>& keys) const {
  std::vector<std::pair<absl::Time, std::string>> order;
  order.reserve(keys.size());
  for (const std::string& key : keys) {
    ObjectRef obj = Current(key);
    absl::Time t = absl::InfiniteFuture();
    if (obj && HasAdmission(*obj)) {
      t = ConditionTransitionTime(*obj, "QuotaReserved").value_or(absl::InfinitePast());
    }
    order.emplace_back(t, key);
  }
  std::sort(order.begin(), order.end());
  std::vector<std::string> out;
  out.reserve(order.size());
  for (auto& [t, key] : order) out.push_back(std::move(key));
  return out;
}

void QueueManagerImpl::SyncWorkload(const std::string& key, absl::Time now) {
  ObjectRef obj = Current(key);
  if (!obj || IsConditionTrue(*obj, "Finished")) {
    evictions_.erase(key);
    Forget(key);
    return;
  }
  auto wit = written_.find(key);
  if (wit != written_.end() && Rv(*obj) > Rv(wit->second)) written_.erase(wit);
  const Json& wl = *obj;
  const WorkloadView view = WorkloadView::Parse(wl);  // Once for this sync.
  if (view.active && IsConditionTrue(wl, "DeactivationTarget")) {
    // Kueue's workload controller: the deactivation target turns into spec.active=false.
    auto [ns, name] = SplitKey(key);
    auto r = ctx_.client.MergePatch(wl_kind_, ns, name, {{"spec", {{"active", false}}}});
    if (!r.ok()) {
      BATCHD_LOG_WARN("queue manager: deactivating {}: {}", key, r.status().ToString());
    }
  }
  if (!view.active && !IsConditionTrue(wl, "Evicted")) {
    // Kueue's reasons: "Deactivated" when a user set spec.active=false,
    // "DeactivatedDueTo<Cause>" when Kueue did (e.g. RequeuingLimitExceeded).
    std::string reason = "Deactivated";
    std::string message = "The workload is deactivated";
    if (auto dt = GetCondition(wl, "DeactivationTarget")) {
      reason = absl::StrCat(reason, "DueTo", dt->reason);
      message = absl::StrCat(message, " due to ", dt->message);
    }
    evictions_[key] = {reason, message, "", /*require_admission=*/false};
  }
  if (view.has_admission) {
    SyncAdmitted(key, wl, now);
    return;
  }
  ready_deadlines_.erase(key);
  not_ready_.erase(key);
  if (!view.active) {
    core_.Remove(key);
    synced_sig_.erase(key);
    requeue_at_.erase(key);
    pending_.erase(key);
    return;
  }
  SyncPending(key, wl);
}

void QueueManagerImpl::SyncAdmitted(const std::string& key, const Json& wl, absl::Time now) {
  auto admission = internal::AdmissionFromJson(wl);
  std::string cq = admission->cluster_queue;
  pending_.erase(key);
  requeue_at_.erase(key);
  inadmissible_.erase(key);
  wl_cq_[key] = cq;
  std::string sig = absl::StrCat("admitted|", api::meta::GetResourceVersion(wl));
  if (synced_sig_[key] != sig) {
    internal::WorkloadContext wctx;
    wctx.cluster_queue = cq;
    core_.SetAdmitted(internal::ToWorkload(wl, wctx), *admission);
    synced_sig_[key] = sig;
  }
  bool evicted = IsConditionTrue(wl, "Evicted");
  auto [ns, name] = SplitKey(key);
  if (!evicted) {
    ObjectRef cq_obj = cqs_.Get("", cq);
    ObjectRef lq_obj = lqs_.Get(ns, QueueName(wl));
    if (cq_obj && internal::ParseStopPolicy(api::MemberObject(*cq_obj, "spec")) ==
                      q::StopPolicy::kHoldAndDrain) {
      evictions_[key] = {"ClusterQueueStopped", "The ClusterQueue is stopped", "", true};
    } else if (lq_obj && internal::ParseStopPolicy(*LocalQueueView::Parse(*lq_obj).spec) ==
                             q::StopPolicy::kHoldAndDrain) {
      evictions_[key] = {"LocalQueueStopped", "The LocalQueue is stopped", "", true};
    }
  }
  bool ready = IsConditionTrue(wl, "PodsReady");
  if (ready || evicted) {
    not_ready_.erase(key);
  } else {
    not_ready_.insert(key);
  }
  const auto& w = cfg_.wait_for_pods_ready;
  std::optional<absl::Time> admitted_at = ConditionTransitionTime(wl, "Admitted");
  if (!w.enable || ready || evicted || !IsConditionTrue(wl, "Admitted") || !admitted_at ||
      !IsActive(wl)) {
    ready_deadlines_.erase(key);
    return;
  }
  absl::Time deadline = *admitted_at + w.timeout;
  std::optional<api::meta::Condition> pr = GetCondition(wl, "PodsReady");
  std::optional<absl::Time> pr_time = ConditionTransitionTime(wl, "PodsReady");
  if (pr && pr_time && *pr_time > *admitted_at && w.recovery_timeout &&
      *w.recovery_timeout > absl::ZeroDuration() && pr->reason != "WaitForStart") {
    deadline = *pr_time + *w.recovery_timeout;  // Was running, lost readiness.
  }
  ready_deadlines_[key] = deadline;
  (void)now;
}

void QueueManagerImpl::SyncPending(const std::string& key, const Json& wl) {
  auto [ns, name] = SplitKey(key);
  std::string lq_name = QueueName(wl);
  ObjectRef lq = lqs_.Get(ns, lq_name);
  const std::string cq_name = lq ? std::string(LocalQueueView::Parse(*lq).cluster_queue) : "";
  ObjectRef cq = cq_name.empty() ? nullptr : cqs_.Get("", cq_name);
  std::string problem;
  if (!lq) {
    problem = absl::StrCat("LocalQueue ", lq_name, " doesn't exist");
  } else if (!cq || api::meta::IsBeingDeleted(*cq)) {
    problem = absl::StrCat("ClusterQueue ", cq_name, " doesn't exist");
  }
  if (!problem.empty()) {
    core_.Remove(key);
    synced_sig_.erase(key);
    wl_cq_.erase(key);
    inadmissible_.insert(key);
    pending_[key] = {"Inadmissible", problem};
    return;
  }
  wl_cq_[key] = cq_name;
  if (const std::optional<absl::Time> at = WorkloadView::Parse(wl).requeue_at) {
    requeue_at_[key] = *at;
  } else {
    requeue_at_.erase(key);
  }
  ObjectRef nso = namespaces_.Get("", ns);
  std::string sig = absl::StrCat("pending|", api::meta::GetResourceVersion(wl), "|", cq_name, "|",
                                 nso ? api::meta::GetResourceVersion(*nso) : "");
  if (synced_sig_[key] == sig) return;
  internal::WorkloadContext wctx;
  wctx.cluster_queue = cq_name;
  wctx.cq_covers_pods = internal::CoveredResources(*cq).count("pods") > 0;
  wctx.order_by_eviction_time =
      cfg_.wait_for_pods_ready.requeuing.timestamp == RequeuingTimestamp::kEviction;
  if (nso) wctx.namespace_labels = api::meta::Labels(*nso);
  core_.UpsertPending(internal::ToWorkload(wl, wctx));
  synced_sig_[key] = sig;
}

bool QueueManagerImpl::WriteWorkloadStatus(const std::string& key, Json obj) {
  obj["apiVersion"] = wl_kind_.ApiVersion();
  obj["kind"] = wl_kind_.kind;
  auto r = ctx_.client.UpdateStatus(wl_kind_, std::move(obj));
  if (!r.ok()) {
    BATCHD_LOG_DEBUG("queue manager: status write for workload {}: {}", key,
                     r.status().ToString());
    return false;
  }
  written_[key] = std::move(*r);
  return true;
}

std::string QueueManagerImpl::PendingMessage(const q::Decision& d, std::string* reason) const {
  *reason = "Pending";
  auto it = wl_cq_.find(d.key);
  std::string cq = it == wl_cq_.end() ? "" : it->second;
  if (d.pending_reason == q::PendingReason::kMisconfigured && !cq.empty()) {
    *reason = "Inadmissible";
    ObjectRef cq_obj = cqs_.Get("", cq);
    return absl::StrCat("ClusterQueue ", cq, cq_obj ? " is inactive" : " doesn't exist");
  }
  if (d.pending_reason == q::PendingReason::kLocalQueueStopped) {
    *reason = "Inadmissible";
    auto [ns, name] = SplitKey(d.key);
    ObjectRef wl = Current(d.key);
    return absl::StrCat("LocalQueue ", wl ? QueueName(*wl) : "", " is inactive");
  }
  return d.message;
}

bool QueueManagerImpl::Admit(const q::Decision& d, absl::Time now) {
  ObjectRef obj = Current(d.key);
  if (!obj || HasAdmission(*obj)) return false;
  Json wl = *obj;
  const std::string& cq = d.admission.cluster_queue;
  wl["status"]["admission"] = internal::AdmissionToJson(d.admission);
  SetCondition(wl, kMeta,
               {"QuotaReserved", kConditionTrue, "QuotaReserved",
                absl::StrCat("Quota reserved in ClusterQueue ", cq)},
               now);
  // Kueue: a fresh reservation turns earlier Evicted/Preempted conditions False.
  for (const char* type : {"Evicted", "Preempted"}) {
    if (auto c = GetCondition(wl, type); c && c->status == kConditionTrue) {
      std::string msg = absl::StrCat("Previously: ", c->message);
      SetCondition(wl, kMeta, {type, kConditionFalse, "QuotaReserved", msg}, now);
    }
  }
  SetCondition(wl, kMeta, {"Admitted", kConditionTrue, "Admitted", "The workload is admitted"},
               now);
  if (wl["status"].contains("requeueState") && wl["status"]["requeueState"].is_object()) {
    wl["status"]["requeueState"].erase("requeueAt");
  }
  absl::Time queued = api::meta::GetCreationTimestamp(wl).value_or(now);
  if (IsConditionTrue(wl, "Requeued")) {
    queued = ConditionTransitionTime(wl, "Requeued").value_or(queued);
  }
  if (!WriteWorkloadStatus(d.key, std::move(wl))) return false;
  pending_.erase(d.key);
  inadmissible_.erase(d.key);
  requeue_at_.erase(d.key);
  wl_cq_[d.key] = cq;
  synced_sig_.erase(d.key);  // The next sync records it as admitted.
  metrics_.QuotaReserved(cq, now - queued);
  metrics_.Admitted(cq, now - queued);
  ctx_.events.Event(*obj, "Normal", "QuotaReserved",
                    absl::StrCat("Quota reserved in ClusterQueue ", cq,
                                 ", wait time since queued was ",
                                 absl::ToInt64Seconds(now - queued), "s"));
  return true;
}

void QueueManagerImpl::ApplyDecisions(const std::vector<q::Decision>& ds, absl::Time now) {
  for (const q::Decision& d : ds) {
    switch (d.kind) {
      case q::Decision::Kind::kAdmit:
        if (!Admit(d, now)) {
          // Undo the core's assumption: re-sync from the object (still pending).
          synced_sig_.erase(d.key);
          SyncWorkload(d.key, now);
        }
        break;
      case q::Decision::Kind::kPreempt: {
        std::string reason = q::PreemptionReasonName(d.preemption_reason);
        auto it = wl_cq_.find(d.preemptor);
        evictions_[d.key] = {"Preempted", d.message, reason, true,
                             it == wl_cq_.end() ? "" : it->second};
        break;
      }
      case q::Decision::Kind::kPending: {
        if (d.pending_reason == q::PendingReason::kInactive) break;
        std::string reason;
        std::string message = PendingMessage(d, &reason);
        pending_[d.key] = {reason, message};
        inadmissible_.insert(d.key);
        break;
      }
    }
  }
}

void QueueManagerImpl::ProcessDeadlines(absl::Time now) {
  std::vector<std::string> due;
  for (const auto& [key, t] : ready_deadlines_) {
    if (t <= now) due.push_back(key);
  }
  for (const std::string& key : due) {
    ready_deadlines_.erase(key);
    ObjectRef obj = Current(key);
    if (obj && HasAdmission(*obj) && !IsConditionTrue(*obj, "PodsReady") &&
        !IsConditionTrue(*obj, "Evicted")) {
      EvictForPodsReadyTimeout(key, *obj, now);
    }
  }
}

// Kueue's workload controller: count the requeue and back off
// (base * 2^(n-1), capped), or mark the workload for deactivation once the
// backoff limit is exceeded. No jitter: decisions stay deterministic.
void QueueManagerImpl::EvictForPodsReadyTimeout(const std::string& key, const Json& wl,
                                               absl::Time now) {
  const RequeuingStrategy& rs = cfg_.wait_for_pods_ready.requeuing;
  int32_t count = RequeueCount(wl);
  Json w = wl;
  if (rs.backoff_limit_count && count + 1 > *rs.backoff_limit_count) {
    SetCondition(w, kMeta,
                 {"DeactivationTarget", kConditionTrue, "RequeuingLimitExceeded",
                  "exceeding the maximum number of re-queuing retries"},
                 now);
    WriteWorkloadStatus(key, std::move(w));
    return;
  }
  int32_t n = count + 1;
  double backoff = rs.backoff_base_seconds * std::ldexp(1.0, std::min(n - 1, 40));
  backoff = std::min(backoff, static_cast<double>(rs.backoff_max_seconds));
  absl::Time requeue_at = now + absl::Seconds(static_cast<int64_t>(backoff));
  w["status"]["requeueState"] = {{"count", n},
                                 {"requeueAt", api::meta::FormatRfc3339(requeue_at)}};
  std::string message = absl::StrCat("Exceeded the PodsReady timeout ", key);
  SetCondition(w, kMeta, {"Evicted", kConditionTrue, "PodsReadyTimeout", message}, now);
  if (WriteWorkloadStatus(key, std::move(w))) {
    auto it = wl_cq_.find(key);
    metrics_.Evicted(it == wl_cq_.end() ? "" : it->second, "PodsReadyTimeout");
    ctx_.events.Event(wl, "Normal", "EvictedDueToPodsReadyTimeout", message);
  } else {
    ready_deadlines_[key] = now;  // Retry at the next reconcile.
  }
}

bool QueueManagerImpl::FlushEviction(const std::string& key, const Eviction& ev,
                                     absl::Time now) {
  ObjectRef obj = Current(key);
  if (!obj || IsConditionTrue(*obj, "Finished") || IsConditionTrue(*obj, "Evicted") ||
      (ev.require_admission && !HasAdmission(*obj))) {
    return true;  // Nothing (more) to write.
  }
  Json w = *obj;
  SetCondition(w, kMeta, {"Evicted", kConditionTrue, ev.reason, ev.message}, now);
  if (!ev.preempted_reason.empty()) {
    SetCondition(w, kMeta, {"Preempted", kConditionTrue, ev.preempted_reason, ev.message}, now);
  }
  if (absl::StartsWith(ev.reason, "Deactivated")) {
    RemoveCondition(w, "DeactivationTarget");
    if (w["status"].is_object()) w["status"].erase("requeueState");
  }
  if (!WriteWorkloadStatus(key, std::move(w))) return false;
  auto it = wl_cq_.find(key);
  if (HasAdmission(*obj)) {
    metrics_.Evicted(it == wl_cq_.end() ? "" : it->second, ev.reason);
  }
  if (!ev.preempted_reason.empty()) metrics_.Preempted(ev.preemptor_cq, ev.preempted_reason);
  ctx_.events.Event(*obj, "Normal", ev.preempted_reason.empty() ? "Evicted" : "Preempted",
                    ev.message);
  return true;
}

bool QueueManagerImpl::FlushPending(const std::string& key, const PendingNote& note,
                                    absl::Time now) {
  ObjectRef obj = Current(key);
  if (!obj || HasAdmission(*obj) || IsConditionTrue(*obj, "Finished") || !IsActive(*obj)) {
    return true;
  }
  Json w = *obj;
  if (!SetCondition(w, kMeta, {"QuotaReserved", kConditionFalse, note.reason, note.message},
                    now)) {
    return true;
  }
  return WriteWorkloadStatus(key, std::move(w));
}

bool QueueManagerImpl::FlushWrites(absl::Time now) {
  bool ok = true;
  for (auto it = evictions_.begin(); it != evictions_.end();) {
    if (FlushEviction(it->first, it->second, now)) {
      it = evictions_.erase(it);
    } else {
      ok = false;
      ++it;
    }
  }
  for (auto it = pending_.begin(); it != pending_.end();) {
    if (FlushPending(it->first, it->second, now)) {
      it = pending_.erase(it);
    } else {
      ok = false;
      ++it;
    }
  }
  return ok;
}

bool QueueManagerImpl::AdmissionBlocked() const {
  const auto& w = cfg_.wait_for_pods_ready;
  return w.enable && w.block_admission && !not_ready_.empty();
}

std::optional<absl::Time> QueueManagerImpl::NextWake(absl::Time now) const {
  std::optional<absl::Time> wake;
  auto consider = [&](absl::Time t) {
    if (!wake || t < *wake) wake = t;
  };
  for (const auto& [key, t] : ready_deadlines_) consider(t);
  for (const auto& [key, t] : requeue_at_) {
    if (t > now) consider(t);
  }
  return wake;
}

}  // namespace batchd::controllers::queueing
