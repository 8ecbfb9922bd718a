// ClusterQueue / LocalQueue / Cohort status and the per-ClusterQueue metric
// gauges, recomputed after a cycle for the queues it touched (every queue
// after a configuration change, or with fair sharing after a usage change)
// and written only when they changed (at most one write per queue per cycle).
#include <algorithm>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/kueue/queue_views.h"
#include "api/kueue/queue_writers.h"
#include "api/meta/object_meta.h"
#include "common/logging.h"
#include "common/string_view.h"
#include "controllers/admissioncheck/admission_checks.h"
#include "controllers/queueing/internal/queue_manager_impl.h"

namespace batchd::controllers::queueing {
namespace {

namespace q = batchd::queueing;
namespace kueue = api::kueue;
using api::Json;
using client::ObjectRef;

const q::FlavorResourceUsage* FindUsage(const std::vector<q::FlavorResourceUsage>& usage,
                                        std::string_view flavor, std::string_view resource) {
  for (const auto& u : usage) {
    if (u.flavor == flavor && u.resource == resource) return &u;
  }
  return nullptr;
}

// flavorsReservation / flavorsUsage: every flavor's covered resources, in
// spec order, with the core's usage (and what is borrowed, for ClusterQueues).
std::vector<kueue::FlavorUsageStatus> FlavorUsage(const kueue::ResourceGroupsView& groups,
                                                  const std::vector<q::FlavorResourceUsage>& usage,
                                                  bool with_borrowed) {
  std::vector<kueue::FlavorUsageStatus> out;
  for (const kueue::ResourceGroupView& group : groups.groups) {
    for (const kueue::FlavorQuotasView& flavor : group.flavors) {
      kueue::FlavorUsageStatus f{flavor.name, {}};
      f.resources.reserve(group.covered_resources.size());
      for (std::string_view r : group.covered_resources) {
        const q::FlavorResourceUsage* u = FindUsage(usage, flavor.name, r);
        kueue::ResourceUsageStatus e{r, api::Amount::FromMilli(u ? u->total : 0), std::nullopt};
        if (with_borrowed) e.borrowed = api::Amount::FromMilli(u ? u->borrowed : 0);
        f.resources.push_back(e);
      }
      out.push_back(std::move(f));
    }
  }
  return out;
}

// Sends the update when it changes the status (at most one write per queue per cycle).
bool WriteIfChanged(client::Client& client, const api::KindDef& kind, kueue::StatusUpdate update) {
  if (!update.changed()) return true;
  auto r = client.UpdateStatusForVersion(kind,
                                         std::move(update).Build(kind.ApiVersion(), kind.kind));
  if (!r.ok()) {
    BATCHD_LOG_DEBUG("queue manager: {} status write: {}", kind.kind, r.status().ToString());
  }
  return r.ok();
}

}  // namespace

bool QueueManagerImpl::ClusterQueueActive(const kueue::ClusterQueueView& cq,
                                          const kueue::ResourceGroupsView& groups,
                                          std::string* reason, std::string* message) const {
  std::vector<std::string> reasons, messages;
  if (cq.stop_policy != kueue::StopPolicy::kNone) {
    reasons.push_back("Stopped");
    messages.push_back("is stopped");
  }
  std::set<std::string> flavor_names;  // Sorted and distinct, as the message lists them.
  for (const kueue::ResourceGroupView& g : groups.groups) {
    for (const kueue::FlavorQuotasView& f : g.flavors) flavor_names.emplace(f.name);
  }
  std::vector<std::string> missing;
  for (const std::string& f : flavor_names) {
    if (!flavors_.Get("", f)) missing.push_back(f);
  }
  if (!missing.empty()) {
    reasons.push_back("FlavorNotFound");
    messages.push_back(
        absl::StrCat("references missing ResourceFlavor(s): [", absl::StrJoin(missing, " "), "]"));
  }
  if (ObjectRef obj = cqs_.Get("", std::string(cq.meta.name))) {
    admissioncheck::CheckReferencesUsable(
        *obj, [this](const std::string& n) { return checks_.Get("", n); }, &reasons, &messages);
  }
  if (cq.meta.being_deleted()) {
    *reason = "Terminating";
    *message = "Can't admit new workloads; clusterQueue is terminating";
    return false;
  }
  if (reasons.empty()) {
    *reason = "Ready";
    *message = "Can admit new workloads";
    return true;
  }
  *reason = reasons[0];
  *message = absl::StrCat("Can't admit new workloads: ", absl::StrJoin(messages, ", "), ".");
  return false;
}

bool QueueManagerImpl::WriteClusterQueueStatus(
    const ClusterQueueInCycle& cq, absl::Time now,
    std::map<std::string, internal::ClusterQueueGauges>* gauges) {
  const std::string name(cq.view.meta.name);
  ++queue_statuses_;
  q::ClusterQueueStatus st = core_.ClusterQueueStatusOf(name);
  // Workloads the core does not hold (waiting on a missing queue) still count as pending.
  const PendingCounts& counts = counts_[name];
  int64_t extra_pending = counts.outside_core;
  kueue::ClusterQueueStatusValues values;
  values.pending_workloads = st.pending + extra_pending;
  values.reserving_workloads = st.admitted;
  values.admitted_workloads = st.admitted;
  values.flavors_usage = FlavorUsage(cq.groups, st.usage, /*with_borrowed=*/true);
  if (cfg_.fair_sharing.enable) values.weighted_share = st.weighted_share;
  values.active = {cq.active, cq.reason, cq.message};
  kueue::StatusUpdate update(*cq.obj);
  kueue::SetClusterQueueStatus(update, values, now);
  const bool written = WriteIfChanged(ctx_.client, cq_kind_, std::move(update));

  internal::ClusterQueueGauges g;
  g.status = cq.view.meta.being_deleted() ? "terminating" : (cq.active ? "active" : "pending");
  int64_t inadmissible = counts.inadmissible;
  g.pending_inadmissible = std::min<int64_t>(inadmissible, st.pending + extra_pending);
  g.pending_active = st.pending + extra_pending - g.pending_inadmissible;
  g.reserving = st.admitted;
  g.admitted = st.admitted;
  g.weighted_share = static_cast<double>(st.weighted_share);
  for (const kueue::ResourceGroupView& group : cq.groups.groups) {
    for (const kueue::FlavorQuotasView& f : group.flavors) {
      // By resource name, as the gauges have always been listed.
      std::vector<const kueue::ResourceQuotaView*> quotas;
      quotas.reserve(f.resources.size());
      for (const kueue::ResourceQuotaView& r : f.resources) quotas.push_back(&r);
      std::stable_sort(quotas.begin(), quotas.end(),
                       [](const auto* a, const auto* b) { return a->name < b->name; });
      for (const kueue::ResourceQuotaView* quota : quotas) {
        const q::FlavorResourceUsage* u = FindUsage(st.usage, f.name, quota->name);
        const double scale = 1000.0;  // milli-units -> units (cores, bytes)
        internal::ResourceGauge rg;
        rg.cohort = std::string(cq.view.cohort_name);
        rg.flavor = std::string(f.name);
        rg.resource = std::string(quota->name);
        rg.usage = rg.reservation = (u ? u->total : 0) / scale;
        rg.nominal = quota->nominal_quota.milli() / scale;
        if (quota->borrowing_limit) rg.borrowing_limit = quota->borrowing_limit->milli() / scale;
        if (quota->lending_limit) rg.lending_limit = quota->lending_limit->milli() / scale;
        g.resources.push_back(std::move(rg));
      }
    }
  }
  (*gauges)[name] = std::move(g);
  return written;
}

bool QueueManagerImpl::WriteLocalQueueStatus(const Json& lq, const ClusterQueuesInCycle& cqs,
                                             absl::Time now) {
  const kueue::LocalQueueView view = kueue::LocalQueueView::Parse(lq);
  const std::string ns(view.meta.namespace_), name(view.meta.name);
  ++queue_statuses_;
  auto it = cqs.find(view.cluster_queue);
  const ClusterQueueInCycle* cq = it == cqs.end() ? nullptr : &it->second;
  q::LocalQueueStatus st = core_.LocalQueueStatusOf(ns, name);
  const bool stopped = view.stop_policy != kueue::StopPolicy::kNone;
  int64_t extra_pending = counts_[ns + "/" + name].outside_core;
  kueue::LocalQueueStatusValues values;
  values.pending_workloads = st.pending + extra_pending;
  values.reserving_workloads = st.admitted;
  values.admitted_workloads = st.admitted;
  if (cq != nullptr) {
    values.flavors_usage = FlavorUsage(cq->groups, st.usage, /*with_borrowed=*/false);
  }
  constexpr std::string_view kNoSubmit = "Can't submit new workloads to clusterQueue";
  values.active = {true, "Ready", "Can submit new workloads to localQueue"};
  if (stopped) {
    values.active = {false, "Stopped", "LocalQueue is stopped"};
  } else if (cq == nullptr) {
    values.active = {false, "ClusterQueueDoesNotExist", kNoSubmit};
  } else if (!cq->active) {
    values.active = {false, "ClusterQueueIsInactive", kNoSubmit};
  }
  kueue::StatusUpdate update(lq);
  kueue::SetLocalQueueStatus(update, values, now);
  SetLocalQueueFairSharing(update, st);
  return WriteIfChanged(ctx_.client, lq_kind_, std::move(update));
}

bool QueueManagerImpl::WriteCohortStatus(const Json& cohort) {
  if (!cfg_.fair_sharing.enable) return true;
  q::CohortStatus st = core_.CohortStatusOf(api::meta::GetName(cohort));
  kueue::StatusUpdate update(cohort);
  kueue::SetFairSharingStatus(update, st.weighted_share);
  return WriteIfChanged(ctx_.client, cohort_kind_, std::move(update));
}

bool QueueManagerImpl::WriteQueueStatuses(absl::Time now, bool config_changed) {
  // Counts follow the workloads touched this cycle only.
  if (config_changed) {
    // A queue's (re)appearance moves workloads in or out of the core without
    // touching them: recount all (configuration changes are rare).
    touched_.clear();
    RecountAll();
  } else {
    for (const std::string& key : touched_) Recount(key);
    touched_.clear();
  }
  if (config_changed) status_all_ = true;
  // Fair sharing: a ClusterQueue's and a Cohort's weighted share move with
  // any usage in the cohort tree.
  if (cfg_.fair_sharing.enable && core_.UsageVersion() != status_core_version_) {
    status_all_ = true;
  }
  status_core_version_ = core_.UsageVersion();
  if (!status_all_ && status_cqs_.empty() && status_lqs_.empty()) return true;
  // Each ClusterQueue parsed once for this pass: its status, its gauges and
  // the statuses of the LocalQueues pointing at it.
  ClusterQueuesInCycle cqs;
  auto load_cq = [&](const ObjectRef& ref) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    ClusterQueueInCycle cq{ref, kueue::ClusterQueueView::Parse(*ref),
                           kueue::ResourceGroupsView::Parse(*ref)};
    cq.active = ClusterQueueActive(cq.view, cq.groups, &cq.reason, &cq.message);
    std::string name(cq.view.meta.name);
    cqs.emplace(std::move(name), std::move(cq));
  };
  std::map<std::string, internal::ClusterQueueGauges> gauges;
  // Queues whose write failed are marked again (retried after a second).
  std::set<std::string, std::less<>> failed_cqs, failed_lqs;
  bool failed_all = false;
  if (status_all_) {
    for (const ObjectRef& ref : cqs_.List()) load_cq(ref);
    for (const auto& [name, cq] : cqs) failed_all |= !WriteClusterQueueStatus(cq, now, &gauges);
    for (const ObjectRef& lq : lqs_.List()) failed_all |= !WriteLocalQueueStatus(*lq, cqs, now);
    for (const ObjectRef& c : cohorts_.List()) failed_all |= !WriteCohortStatus(*c);
    metrics_.SetClusterQueueGauges(std::move(gauges));
  } else {
    std::vector<std::string> removed;
    for (const std::string& name : status_cqs_) {
      if (ObjectRef ref = cqs_.Get("", name)) {
        load_cq(ref);
      } else {
        removed.push_back(name);
      }
    }
    for (const auto& [name, cq] : cqs) {
      if (!WriteClusterQueueStatus(cq, now, &gauges)) failed_cqs.insert(name);
    }
    for (const std::string& key : status_lqs_) {
      size_t slash = key.find('/');
      ObjectRef lq = lqs_.Get(key.substr(0, slash), key.substr(slash + 1));
      if (!lq) continue;
      const kueue::LocalQueueView view = kueue::LocalQueueView::Parse(*lq);
      if (!cqs.contains(view.cluster_queue)) {
        if (ObjectRef ref = cqs_.Get("", std::string(view.cluster_queue))) load_cq(ref);
      }
      if (!WriteLocalQueueStatus(*lq, cqs, now)) failed_lqs.insert(key);
    }
    metrics_.UpdateClusterQueueGauges(std::move(gauges), removed);
  }
  status_all_ = failed_all;
  status_cqs_ = std::move(failed_cqs);
  status_lqs_ = std::move(failed_lqs);
  return !failed_all && status_cqs_.empty() && status_lqs_.empty();
}

}  // namespace batchd::controllers::queueing
