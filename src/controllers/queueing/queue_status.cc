// ClusterQueue / LocalQueue / Cohort status and the per-ClusterQueue metric
// gauges, recomputed after every cycle and written only when they changed
// (at most one write per queue per cycle).
#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/json_access.h"
#include "api/kueue/queue_views.h"
#include "api/meta/conditions.h"
#include "api/meta/object_meta.h"
#include "common/logging.h"
#include "common/string_view.h"
#include "controllers/queueing/internal/queue_manager_impl.h"

namespace batchd::controllers::queueing {
namespace {

namespace q = batchd::queueing;
using api::Json;
using client::ObjectRef;

const q::FlavorResourceUsage* FindUsage(const std::vector<q::FlavorResourceUsage>& usage,
                                        const std::string& flavor, const std::string& resource) {
  for (const auto& u : usage) {
    if (u.flavor == flavor && u.resource == resource) return &u;
  }
  return nullptr;
}

// [{name: flavor, resources: [{name, total[, borrowed]}]}] in spec order.
Json FlavorUsage(const Json& cq, const std::vector<q::FlavorResourceUsage>& usage,
                 bool with_borrowed) {
  Json out = Json::array();
  for (const auto& group : api::kueue::ClusterQueueView::Parse(cq).resource_groups) {
    for (std::string_view flavor_name : group.flavors) {
      const std::string flavor(flavor_name);
      Json resources = Json::array();
      for (std::string_view covered : group.covered_resources) {
        const std::string r(covered);
        const q::FlavorResourceUsage* u = FindUsage(usage, flavor, r);
        Json e = {{"name", r}, {"total", internal::QuantityJson(r, u ? u->total : 0)}};
        if (with_borrowed) e["borrowed"] = internal::QuantityJson(r, u ? u->borrowed : 0);
        resources.push_back(std::move(e));
      }
      out.push_back({{"name", flavor}, {"resources", resources}});
    }
  }
  return out;
}

bool UpdateIfChanged(client::Client& client, const api::KindDef& kind, const Json& current,
                     Json desired) {
  if (api::Member(desired, "status") == api::Member(current, "status")) return true;
  desired["apiVersion"] = kind.ApiVersion();
  desired["kind"] = kind.kind;
  auto r = client.UpdateStatus(kind, std::move(desired));
  if (!r.ok()) {
    BATCHD_LOG_DEBUG("queue manager: {} status write: {}", kind.kind, r.status().ToString());
  }
  return r.ok();
}

// The queue's `Active` condition (metav1 shape: the transition time moves
// only with the status).
void SetActiveCondition(Json& queue, bool active, std::string reason, std::string message,
                        absl::Time now) {
  api::meta::SetCondition(
      queue, api::meta::ConditionShape::kMeta,
      {"Active", active ? api::meta::kConditionTrue : api::meta::kConditionFalse, std::move(reason),
       std::move(message)},
      now);
}

}  // namespace

bool QueueManagerImpl::ClusterQueueActive(const Json& cq, std::string* reason,
                                          std::string* message) const {
  std::vector<std::string> reasons, messages;
  if (internal::ParseStopPolicy(api::MemberObject(cq, "spec")) != q::StopPolicy::kNone) {
    reasons.push_back("Stopped");
    messages.push_back("is stopped");
  }
  std::vector<std::string> missing;
  for (const std::string& f : internal::FlavorNames(cq)) {
    if (!flavors_.Get("", f)) missing.push_back(f);
  }
  if (!missing.empty()) {
    reasons.push_back("FlavorNotFound");
    messages.push_back(
        absl::StrCat("references missing ResourceFlavor(s): [", absl::StrJoin(missing, " "), "]"));
  }
  if (api::meta::IsBeingDeleted(cq)) {
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

void QueueManagerImpl::WriteClusterQueueStatus(
    const Json& cq, absl::Time now, std::map<std::string, internal::ClusterQueueGauges>* gauges) {
  std::string name = api::meta::GetName(cq);
  q::ClusterQueueStatus st = core_.ClusterQueueStatusOf(name);
  std::string reason, message;
  bool active = ClusterQueueActive(cq, &reason, &message);
  // Workloads the core does not hold (waiting on a missing queue) still count as pending.
  const PendingCounts& counts = counts_[name];
  int64_t extra_pending = counts.outside_core;
  Json desired = cq;
  Json& status = desired["status"];
  if (!status.is_object()) status = Json::object();
  Json usage = FlavorUsage(cq, st.usage, true);
  status["flavorsReservation"] = usage;
  status["flavorsUsage"] = usage;
  status["pendingWorkloads"] = st.pending + extra_pending;
  status["reservingWorkloads"] = st.admitted;
  status["admittedWorkloads"] = st.admitted;
  if (cfg_.fair_sharing.enable) status["fairSharing"] = {{"weightedShare", st.weighted_share}};
  SetActiveCondition(desired, active, reason, message, now);
  UpdateIfChanged(ctx_.client, cq_kind_, cq, std::move(desired));

  internal::ClusterQueueGauges g;
  g.status = api::meta::IsBeingDeleted(cq) ? "terminating" : (active ? "active" : "pending");
  int64_t inadmissible = counts.inadmissible;
  g.pending_inadmissible = std::min<int64_t>(inadmissible, st.pending + extra_pending);
  g.pending_active = st.pending + extra_pending - g.pending_inadmissible;
  g.reserving = st.admitted;
  g.admitted = st.admitted;
  g.weighted_share = static_cast<double>(st.weighted_share);
  q::ClusterQueue spec = internal::ToClusterQueue(cq);
  for (const auto& group : spec.resource_groups) {
    for (const auto& f : group.flavors) {
      for (const auto& [res, quota] : f.resources) {
        const q::FlavorResourceUsage* u = FindUsage(st.usage, f.flavor, res);
        const double scale = 1000.0;  // milli-units -> units (cores, bytes)
        internal::ResourceGauge rg;
        rg.cohort = spec.cohort;
        rg.flavor = f.flavor;
        rg.resource = res;
        rg.usage = rg.reservation = (u ? u->total : 0) / scale;
        rg.nominal = quota.nominal / scale;
        if (quota.borrowing_limit) rg.borrowing_limit = *quota.borrowing_limit / scale;
        if (quota.lending_limit) rg.lending_limit = *quota.lending_limit / scale;
        g.resources.push_back(std::move(rg));
      }
    }
  }
  (*gauges)[name] = std::move(g);
}

void QueueManagerImpl::WriteLocalQueueStatus(const Json& lq, absl::Time now) {
  std::string ns = api::meta::GetNamespace(lq), name = api::meta::GetName(lq);
  const api::kueue::LocalQueueView view = api::kueue::LocalQueueView::Parse(lq);
  ObjectRef cq = cqs_.Get("", std::string(view.cluster_queue));
  q::LocalQueueStatus st = core_.LocalQueueStatusOf(ns, name);
  bool stopped = internal::ParseStopPolicy(*view.spec) != q::StopPolicy::kNone;
  int64_t extra_pending = counts_[ns + "/" + name].outside_core;
  Json desired = lq;
  Json& status = desired["status"];
  if (!status.is_object()) status = Json::object();
  status["pendingWorkloads"] = st.pending + extra_pending;
  status["reservingWorkloads"] = st.admitted;
  status["admittedWorkloads"] = st.admitted;
  Json usage = cq ? FlavorUsage(*cq, st.usage, false) : Json::array();
  status["flavorsReservation"] = usage;
  status["flavorsUsage"] = usage;
  std::string reason = "Ready", message = "Can submit new workloads to localQueue";
  bool active = true;
  std::string unused;
  if (stopped) {
    active = false, reason = "Stopped", message = "LocalQueue is stopped";
  } else if (!cq) {
    active = false, reason = "ClusterQueueDoesNotExist";
    message = "Can't submit new workloads to clusterQueue";
  } else if (!ClusterQueueActive(*cq, &unused, &unused)) {
    active = false, reason = "ClusterQueueIsInactive";
    message = "Can't submit new workloads to clusterQueue";
  }
  SetActiveCondition(desired, active, reason, message, now);
  UpdateIfChanged(ctx_.client, lq_kind_, lq, std::move(desired));
}

void QueueManagerImpl::WriteCohortStatus(const Json& cohort) {
  if (!cfg_.fair_sharing.enable) return;
  q::CohortStatus st = core_.CohortStatusOf(api::meta::GetName(cohort));
  Json desired = cohort;
  if (!desired["status"].is_object()) desired["status"] = Json::object();
  desired["status"]["fairSharing"] = {{"weightedShare", st.weighted_share}};
  UpdateIfChanged(ctx_.client, cohort_kind_, cohort, std::move(desired));
}

void QueueManagerImpl::WriteQueueStatuses(absl::Time now) {
  // One pass over the pending workloads the manager tracks itself.
  counts_.clear();
  for (const std::string& key : inadmissible_) {
    bool outside = !core_.IsPending(key);
    auto it = wl_cq_.find(key);
    if (it != wl_cq_.end()) {
      ++counts_[it->second].inadmissible;
      if (outside) ++counts_[it->second].outside_core;
    }
    if (!outside) continue;
    ObjectRef wl = Current(key);
    if (!wl) continue;
    const api::kueue::WorkloadView view = api::kueue::WorkloadView::Parse(*wl);
    ++counts_[absl::StrCat(Sv(view.meta.namespace_), "/", Sv(view.queue_name))].outside_core;
  }
  std::map<std::string, internal::ClusterQueueGauges> gauges;
  for (const ObjectRef& cq : cqs_.List()) WriteClusterQueueStatus(*cq, now, &gauges);
  for (const ObjectRef& lq : lqs_.List()) WriteLocalQueueStatus(*lq, now);
  for (const ObjectRef& c : cohorts_.List()) WriteCohortStatus(*c);
  metrics_.SetClusterQueueGauges(std::move(gauges));
}

}  // namespace batchd::controllers::queueing
