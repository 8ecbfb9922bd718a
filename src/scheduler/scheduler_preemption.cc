// The Scheduler's preemption (scheduler_impl.h), as kube-scheduler's
// DefaultPreemption PostFilter: eligibility, the victim search over whole
// gangs (internal/preemption.h), the nomination (and the nominations it
// displaces or that no longer hold), and the eviction of the victims:
// DisruptionTarget condition, graceful delete, Preempted event.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "api/json_access.h"
#include "api/meta/conditions.h"
#include "api/meta/object_meta.h"
#include "api/scheduling/v1alpha2/scheduling_v1alpha2.h"
#include "scheduler/internal/preemption.h"
#include "scheduler/internal/scheduler_impl.h"

namespace batchd::scheduler::internal {

using api::Json;
namespace sched_api = api::scheduling_v1alpha2;

PreemptionNote Scheduler::PreemptLocked(const PodInfo& p, Decision* d) {
  switch (PreemptionEligibility(cache_, p)) {
    case Eligibility::kNever:
      return PreemptionNote::kNotEligibleNever;
    case Eligibility::kTerminatingOnNominated:
      return PreemptionNote::kNotEligibleTerminating;  // Its room is coming.
    case Eligibility::kNoLowerPriority:
    case Eligibility::kEligible:
      break;
  }
  std::optional<Preemption> pr;
  if (cache_.LowestPriority() < p.priority) pr = FindPreemption(cache_, p, GangsLocked());
  if (!pr.has_value()) {
    // A nomination that preemption no longer backs is cleared, as
    // kube-scheduler does when it finds no candidates.
    if (!cache_.NominatedNodeOf(p.key).empty() || !p.nominated_node.empty()) {
      cache_.ClearNomination(p.key);
      d->clear_nomination = true;
    }
    return PreemptionNote::kNoVictims;
  }
  // 1. The nomination; less important pods nominated there lose theirs.
  d->nominate = pr->node;
  d->unnominate = cache_.NominatedBelow(pr->node, p.priority);
  for (const std::string& key : d->unnominate) cache_.ClearNomination(key);
  cache_.Nominate(p, pr->node);
  // 2. The victims, with whole gangs recorded as disrupted (their own
  // DisruptionTarget must not start another group disruption).
  Eviction e;
  e.condition.type = "DisruptionTarget";
  e.condition.status = api::meta::kConditionTrue;
  e.condition.reason = sched_api::kReasonPreemptionByScheduler;
  e.condition.message =
      absl::StrCat(opts_.scheduler_name, ": preempting to accommodate a higher priority pod");
  e.event_reason = "Preempted";
  e.event_message = absl::StrCat("Preempted by pod ", p.uid, " on node ", pr->node);
  std::vector<std::string> gangs_hit;
  for (const Victim& v : pr->victims) {
    cache_.MarkDeleting(v.key);  // Not chosen again before its deletion is seen.
    e.victims.push_back(v.key);
    if (v.group_key.empty()) continue;
    if (auto g = groups_.find(v.group_key); g != groups_.end()) g->second.disrupted.insert(v.key);
    if (std::find(gangs_hit.begin(), gangs_hit.end(), v.group_key) == gangs_hit.end()) {
      gangs_hit.push_back(v.group_key);
    }
  }
  for (const std::string& gk : gangs_hit) {
    if (auto g = groups_.find(gk); g != groups_.end()) {
      GroupDisruptionLocked(g->second, sched_api::kReasonPreemptionByScheduler,
                            e.condition.message);
    }
  }
  d->eviction = std::move(e);
  return PreemptionNote::kNominated;
}

Gangs Scheduler::GangsLocked() const {
  Gangs out;
  for (const auto& [key, g] : groups_) {
    if (g.bound.empty()) continue;
    // A group whose PodGroup / Workload is gone is still treated as a gang.
    std::optional<GroupPolicy> policy = PolicyOf(g, policies_);
    if (policy.has_value() && !policy->gang) continue;  // Basic: pod by pod.
    std::vector<std::string>& members = out[key];
    members.assign(g.bound.begin(), g.bound.end());
    std::sort(members.begin(), members.end());
  }
  return out;
}

void Scheduler::WriteNomination(const std::string& key, const std::string& node) {
  std::vector<std::string> parts = absl::StrSplit(key, absl::MaxSplits('/', 1));
  if (parts.size() != 2) return;
  // A merge patch: null removes the field.
  Json patch = {{"status", {{"nominatedNodeName", node.empty() ? Json(nullptr) : Json(node)}}}};
  (void)ctx_.client.MergePatch(pods_.kind(), parts[0], parts[1], patch, /*status=*/true);
}

void Scheduler::ExecuteEviction(const Eviction& e) {
  for (const std::string& key : e.victims) {
    std::vector<std::string> parts = absl::StrSplit(key, absl::MaxSplits('/', 1));
    if (parts.size() != 2) continue;
    ObjectRef victim = pods_.Get(parts[0], parts[1]);
    if (!victim || api::meta::IsBeingDeleted(*victim)) continue;
    Json conds = api::MemberArray(api::MemberObject(*victim, "status"), "conditions");
    if (api::meta::SetConditionIn(conds, api::meta::ConditionShape::kPod, e.condition,
                                  ctx_.clock.Now())) {
      Json patch = {{"status", {{"conditions", std::move(conds)}}}};
      (void)ctx_.client.MergePatch(pods_.kind(), parts[0], parts[1], patch, /*status=*/true);
    }
    client::DeleteOptions opts;
    opts.precondition_uid = api::meta::GetUid(*victim);  // Its grace period is the pod's.
    absl::Status st = ctx_.client.Delete(pods_.kind(), parts[0], parts[1], opts);
    if (st.ok() && opts_.record_events) {
      ctx_.events.Event(*victim, "Normal", e.event_reason, e.event_message);
    }
  }
}

}  // namespace batchd::scheduler::internal
