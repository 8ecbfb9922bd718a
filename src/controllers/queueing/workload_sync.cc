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
using api::Json;
using api::kueue::ConditionView;
using api::kueue::LocalQueueView;
using api::kueue::ResourceGroupsView;
using api::kueue::StatusUpdate;
using api::kueue::WorkloadPodSetsView;
using api::kueue::WorkloadView;
using api::meta::kConditionFalse;
using api::meta::kConditionTrue;
using client::ObjectRef;

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

std::optional<absl::Time> TransitionTime(const std::optional<ConditionView>& c) {
  return c ? c->last_transition_time : std::nullopt;
}

// What of a pending Workload the core's copy (internal::ToWorkload) reads,
// as a string: its identity and spec (uid, generation: the registry bumps it
// on every spec change), status.requeueState.requeueAt and the Evicted
// condition (queue order after a PodsReady timeout). A status field the
// conversion starts to read must be added here, or the core keeps a stale copy.
std::string PendingSignature(const WorkloadView& view) {
  std::string sig = absl::StrCat(Sv(view.meta.uid), "|");
  if (view.meta.generation > 0) {
    absl::StrAppend(&sig, "g", view.meta.generation);
  } else {
    absl::StrAppend(&sig, "rv", Sv(view.meta.resource_version));  // No generation: every write.
  }
  if (view.requeue_at) absl::StrAppend(&sig, "|r", absl::FormatTime(*view.requeue_at));
  if (std::optional<ConditionView> ev = view.Condition("Evicted")) {
    absl::StrAppend(&sig, "|e", Sv(ev->status), ",", Sv(ev->reason), ",",
                    ev->last_transition_time ? absl::FormatTime(*ev->last_transition_time) : "");
  }
  return sig;
}

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
  admitted_counted_.erase(key);
  synced_sig_.erase(key);
  written_.erase(key);
  ready_deadlines_.erase(key);
  ready_timeouts_.erase(key);
  execution_deadlines_.erase(key);
  not_ready_.erase(key);
  requeue_at_.erase(key);
  pending_.erase(key);
  admissions_.erase(key);
  inadmissible_.erase(key);
  Recount(key);  // Before the indexes go: marks its queues' statuses.
  ClearWorkloadCq(key);
  UnindexWorkload(key);
}

std::vector<QueueManagerImpl::WorkloadToSync> QueueManagerImpl::SyncOrder(
    const std::set<std::string>& keys) const {
  std::vector<WorkloadToSync> items;
  items.reserve(keys.size());
  std::vector<std::pair<absl::Time, size_t>> order;
  order.reserve(keys.size());
  for (const std::string& key : keys) {
    WorkloadToSync item{key, Current(key), {}};
    absl::Time t = absl::InfiniteFuture();
    if (item.obj) {
      item.view = WorkloadView::Parse(*item.obj);
      if (item.view.has_admission) {
        t = TransitionTime(item.view.Condition("QuotaReserved")).value_or(absl::InfinitePast());
      }
    }
    order.emplace_back(t, items.size());
    items.push_back(std::move(item));
  }
  // By time, then key (the items are in key order).
  std::sort(order.begin(), order.end());
  std::vector<WorkloadToSync> out;
  out.reserve(items.size());
  for (const auto& [t, i] : order) out.push_back(std::move(items[i]));
  return out;
}

void QueueManagerImpl::SyncWorkload(const std::string& key, absl::Time now) {
  WorkloadToSync wl{key, Current(key), {}};
  if (wl.obj) wl.view = WorkloadView::Parse(*wl.obj);
  SyncWorkload(wl, now);
}

void QueueManagerImpl::SyncWorkload(const WorkloadToSync& item, absl::Time now) {
  const std::string& key = item.key;
  const WorkloadView& view = item.view;  // Parsed once for this sync.
  if (!item.obj || view.IsConditionTrue("Finished")) {
    evictions_.erase(key);
    ForgetReplacedSlice(key);
    Forget(key);
    return;
  }
  IndexWorkload(key, view.queue_name);
  Touch(key);
  // An admission still owed (its write in doubt): the core holds its quota
  // until the write says what happened (status_writes.cc).
  if (!view.has_admission && admissions_.contains(key)) return;
  // Our last write is dropped once the informer has it (or newer): kept
  // longer, it would be a second decoded copy of a waiting workload.
  auto wit = written_.find(key);
  if (wit != written_.end()) {
    auto [wns, wname] = SplitKey(key);
    ObjectRef cached = workloads_.Get(wns, wname);
    if (cached && Rv(*cached) >= Rv(wit->second)) written_.erase(wit);
  }
  const Json& wl = *item.obj;
  TrackExecutionTime(key, wl, view);
  if (view.active && view.IsConditionTrue("DeactivationTarget")) {
    // Kueue's workload controller: the deactivation target turns into spec.active=false.
    auto [ns, name] = SplitKey(key);
    auto r = ctx_.client.MergePatch(wl_kind_, ns, name, api::kueue::ActivePatch(false));
    if (!r.ok()) {
      BATCHD_LOG_WARN("queue manager: deactivating {}: {}", key, r.status().ToString());
    }
  }
  if (!view.active && !view.IsConditionTrue("Evicted")) {
    // Kueue's reasons: "Deactivated" when a user set spec.active=false,
    // "DeactivatedDueTo<Cause>" when Kueue did (e.g. RequeuingLimitExceeded).
    std::string reason = "Deactivated";
    std::string message = "The workload is deactivated";
    if (std::optional<ConditionView> dt = view.Condition("DeactivationTarget")) {
      reason = absl::StrCat(reason, "DueTo", Sv(dt->reason));
      message = absl::StrCat(message, " due to ", Sv(dt->message));
    }
    evictions_[key] = {reason, message, "", /*require_admission=*/false};
  }
  if (SkipReplacedSlice(key)) return;
  if (view.has_admission) {
    CheckSliceReplacement(key, view);
    SyncAdmitted(key, wl, view, now);
    return;
  }
  ready_deadlines_.erase(key);
  not_ready_.erase(key);
  admitted_counted_.erase(key);
  if (!view.active) {
    core_.Remove(key);
    synced_sig_.erase(key);
    requeue_at_.erase(key);
    pending_.erase(key);
    return;
  }
  SyncPending(key, wl, view);
}

void QueueManagerImpl::SyncAdmitted(const std::string& key, const Json& wl,
                                    const WorkloadView& view, absl::Time now) {
  const std::string cq(view.admission_cluster_queue);
  pending_.erase(key);
  requeue_at_.erase(key);
  inadmissible_.erase(key);
  SetWorkloadCq(key, cq);
  std::string sig = absl::StrCat("admitted|", Sv(view.meta.resource_version));
  if (synced_sig_[key] != sig) {
    // The pod sets and the admission, parsed only when the core has not seen this version.
    const WorkloadPodSetsView pod_sets = WorkloadPodSetsView::Parse(wl);
    internal::WorkloadContext wctx;
    wctx.cluster_queue = cq;
    q::Admission admission = *internal::ToAdmission(view, pod_sets);
    ApplyReclaimablePods(wl, pod_sets, admission);
    core_.SetAdmitted(internal::ToWorkload(view, pod_sets, wctx), std::move(admission));
    synced_sig_[key] = sig;
    ++conversions_;
  }
  const bool evicted = view.IsConditionTrue("Evicted");
  if (!evicted) {
    auto [ns, name] = SplitKey(key);
    // The queues' stop policies alone (no view of the whole queue per workload).
    constexpr api::kueue::StopPolicy kDrain = api::kueue::StopPolicy::kHoldAndDrain;
    if (ObjectRef cq_obj = cqs_.Get("", cq);
        cq_obj && api::kueue::StopPolicyOf(*cq_obj) == kDrain) {
      evictions_[key] = {"ClusterQueueStopped", "The ClusterQueue is stopped", "", true};
    } else if (ObjectRef lq_obj = lqs_.Get(ns, std::string(view.queue_name));
               lq_obj && api::kueue::StopPolicyOf(*lq_obj) == kDrain) {
      evictions_[key] = {"LocalQueueStopped", "The LocalQueue is stopped", "", true};
    }
  }
  CountCheckGatedAdmission(key, cq, view, now);
  const std::optional<ConditionView> pods_ready = view.Condition("PodsReady");
  const bool ready = pods_ready && pods_ready->is_true();
  // Waiting for its admission checks (QuotaReserved, not Admitted) it has no
  // pods to wait for: blockAdmission counts admitted workloads only.
  if (ready || evicted || !view.IsConditionTrue("Admitted")) {
    not_ready_.erase(key);
  } else {
    not_ready_.insert(key);
  }
  const auto& w = cfg_.wait_for_pods_ready;
  const std::optional<ConditionView> admitted = view.Condition("Admitted");
  const std::optional<absl::Time> admitted_at = TransitionTime(admitted);
  if (!w.enable || ready || evicted || !admitted || !admitted->is_true() || !admitted_at ||
      !view.active) {
    ready_deadlines_.erase(key);
    return;
  }
  absl::Time deadline = *admitted_at + w.timeout;
  const std::optional<absl::Time> pr_time = TransitionTime(pods_ready);
  if (pods_ready && pr_time && *pr_time > *admitted_at && w.recovery_timeout &&
      *w.recovery_timeout > absl::ZeroDuration() && pods_ready->reason != "WaitForStart") {
    deadline = *pr_time + *w.recovery_timeout;  // Was running, lost readiness.
  }
  ready_deadlines_[key] = deadline;
  (void)now;
}

void QueueManagerImpl::SyncPending(const std::string& key, const Json& wl,
                                   const WorkloadView& view) {
  auto [ns, name] = SplitKey(key);
  const std::string lq_name(view.queue_name);
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
    ClearWorkloadCq(key);
    inadmissible_.insert(key);
    pending_[key] = {"Inadmissible", problem};
    return;
  }
  SetWorkloadCq(key, cq_name);
  if (view.requeue_at) {
    requeue_at_[key] = *view.requeue_at;
  } else {
    requeue_at_.erase(key);
  }
  ObjectRef nso = namespaces_.Get("", ns);
  const bool covers_pods = ResourceGroupsView::Parse(*cq).Covers(internal::kPodsResource);
  // Only what the core's copy depends on: the manager's own status writes
  // (QuotaReserved=False messages) leave it unchanged, so they neither
  // re-convert the workload nor push it back from inadmissible to the heap.
  std::string sig = absl::StrCat("pending|", PendingSignature(view), "|", cq_name, "|",
                                 covers_pods ? "pods" : "", "|",
                                 nso ? api::meta::GetResourceVersion(*nso) : "");
  if (synced_sig_[key] == sig) return;
  internal::WorkloadContext wctx;
  wctx.cluster_queue = cq_name;
  wctx.cq_covers_pods = covers_pods;
  wctx.order_by_eviction_time =
      cfg_.wait_for_pods_ready.requeuing.timestamp == RequeuingTimestamp::kEviction;
  if (nso) wctx.namespace_labels = api::meta::Labels(*nso);
  core_.UpsertPending(internal::ToWorkload(view, WorkloadPodSetsView::Parse(wl), wctx));
  synced_sig_[key] = sig;
  ++conversions_;
}

bool QueueManagerImpl::WriteWorkloadStatus(const std::string& key, StatusUpdate update) {
  auto r = ctx_.client.UpdateStatus(
      wl_kind_, std::move(update).Build(wl_kind_.ApiVersion(), wl_kind_.kind));
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
    ObjectRef wl = Current(d.key);
    return absl::StrCat("LocalQueue ", wl ? Sv(WorkloadView::Parse(*wl).queue_name) : "",
                        " is inactive");
  }
  return d.message;
}

void QueueManagerImpl::ApplyDecisions(const std::vector<q::Decision>& ds, absl::Time now) {
  for (const q::Decision& d : ds) {
    switch (d.kind) {
      case q::Decision::Kind::kAdmit:
        // Written with the cycle's other status writes (FlushWrites).
        if (!OweAdmission(d, now)) UndoAdmission(d, now);
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
        if (ObjectRef obj = Current(d.key)) {
          ctx_.events.AggregatedEvent(*obj, "Normal", "Pending", message);
        }
        pending_[d.key] = {reason, message};
        inadmissible_.insert(d.key);
        Touch(d.key);
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
    if (!obj) continue;
    const WorkloadView view = WorkloadView::Parse(*obj);
    if (view.has_admission && !view.IsConditionTrue("PodsReady") &&
        !view.IsConditionTrue("Evicted")) {
      ready_timeouts_[key] = std::string(view.meta.uid);  // Written with the cycle's batch.
    }
  }
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
  for (const auto& [key, t] : execution_deadlines_) consider(t);
  if (next_afs_sample_) consider(*next_afs_sample_);
  for (const auto& [key, t] : requeue_at_) {
    if (t > now) consider(t);
  }
  return wake;
}

// kueue_admitted_workloads_total and kueue_admission_wait_time_seconds
// count a workload when it is Admitted, as Kueue's workload controller does:
// at once for a ClusterQueue without AdmissionChecks (Admit), else when the
// checks controller sets Admitted=True (seen here). Admissions from before
// this process started are not counted (their counters went with it).
void QueueManagerImpl::CountCheckGatedAdmission(const std::string& key, const std::string& cq,
                                                const WorkloadView& view, absl::Time now) {
  if (!started_) started_ = absl::FromUnixSeconds(absl::ToUnixSeconds(now));  // RFC 3339 seconds
  const std::optional<ConditionView> admitted = view.Condition("Admitted");
  if (!admitted || !admitted->is_true()) {
    admitted_counted_.erase(key);
    return;
  }
  if (!admitted_counted_.insert(key).second) return;
  const std::optional<absl::Time> at = admitted->last_transition_time;
  if (!at || *at < *started_) return;
  absl::Time queued = view.meta.CreationTime().value_or(*at);
  if (std::optional<ConditionView> requeued = view.Condition("Requeued");
      requeued && requeued->is_true()) {
    queued = requeued->last_transition_time.value_or(queued);
  }
  metrics_.Admitted(cq, *at - queued);
}

}  // namespace batchd::controllers::queueing
