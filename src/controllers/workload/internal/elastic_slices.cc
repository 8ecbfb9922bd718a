// Elastic jobs (kueue.x-k8s.io/elastic-job: "true", Kueue's
// ElasticJobsViaWorkloadSlices; keps/77-dynamically-sized-jobs) in the
// generic reconciler:
//   scale-down  the admitted Workload's counts shrink in place: its quota
//               is released at once and the job keeps running;
//   scale-up    of a running job: a new Workload slice for the new size,
//               annotated kueue.x-k8s.io/workload-slice-replacement-for =
//               "<ns>/<admitted slice>". The job keeps running on the old
//               slice; the queue manager admits the new one as a whole
//               (the old slice's usage counts as its own) and marks the old
//               Finished (WorkloadSliceReplaced); the job goes on under the
//               new one. A scale back before that deletes the pending slice.
// Pods of an elastic job are created with the scheduling gate
// kueue.x-k8s.io/elastic-job (the Job webhook puts it on the template) and
// are ungated here, as many as the admitted slice covers: the running pods
// are never stopped, the new ones start once their slice is admitted.
// Replaced slices are kept for the record while their replacement lives
// (one per job), older ones are deleted.
#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "api/batch/v1/batch_v1.h"
#include "api/core/v1/pod_view.h"
#include "api/json_access.h"
#include "api/kueue/queue_views.h"
#include "api/kueue/workload_slices.h"
#include "api/kueue/workload_writers.h"
#include "api/meta/conditions.h"
#include "api/meta/object_meta.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "controllers/workload/internal/reconciler.h"
#include "controllers/workload/internal/workload_util.h"
#include "registry/errors.h"

namespace batchd::controllers::workload::internal {

using api::kueue::kElasticJobSchedulingGate;
using api::kueue::kWorkloadSliceReplacementFor;
using api::kueue::kWorkloadSliceReplaced;
using reconcile::Controller;

namespace {

using registry::IsGone;

bool Replaced(const Json& wl) {
  auto c = api::meta::GetCondition(wl, api::kueue::kFinished);
  return c && c->status == api::meta::kConditionTrue && c->reason == kWorkloadSliceReplaced;
}

std::string ReplacementFor(const Json& wl) {
  return api::meta::GetAnnotation(wl, kWorkloadSliceReplacementFor).value_or("");
}

std::string KeyOf(const Json& wl) {
  return api::meta::GetNamespace(wl) + "/" + api::meta::GetName(wl);
}

// Pod counts per pod set of `podsets` (a job's) or a Workload's spec.podSets.
std::vector<int64_t> Counts(const std::vector<Json>& podsets) {
  std::vector<int64_t> out;
  for (const Json& ps : podsets) out.push_back(api::IntMember(ps, "count", 1));
  return out;
}
std::vector<int64_t> WorkloadCounts(const Json& wl) {
  std::vector<int64_t> out;
  const Json& list = api::Member(api::Member(wl, "spec"), "podSets");
  if (list.is_array()) {
    for (const Json& ps : list) out.push_back(api::IntMember(ps, "count", 1));
  }
  return out;
}

// The same pods as the Workload's, at least as many of each and more of one.
bool Grows(const std::vector<Json>& podsets, const Json& wl) {
  const std::vector<int64_t> want = Counts(podsets), have = WorkloadCounts(wl);
  if (want.size() != have.size()) return false;
  bool more = false;
  for (size_t i = 0; i < want.size(); ++i) {
    if (want[i] < have[i]) return false;
    more = more || want[i] > have[i];
  }
  if (!more) return false;
  std::vector<Json> same = podsets;
  for (size_t i = 0; i < same.size(); ++i) same[i]["count"] = have[i];
  return EquivalentPodSets(same, api::Member(api::Member(wl, "spec"), "podSets"));
}

}  // namespace

absl::Status IntegrationReconciler::DeleteWorkload(const Json& job, const Json& wl,
                                                   const std::string& why) {
  client::DeleteOptions opts;
  opts.precondition_uid = api::meta::GetUid(wl);
  absl::Status s =
      ctx_.client.Delete(wl_kind_, api::meta::GetNamespace(wl), api::meta::GetName(wl), opts);
  if (!s.ok() && !IsGone(s)) return s;
  ctx_.events.Event(job, "Normal", "DeletedWorkload",
                    absl::StrCat(why, ": ", KeyOf(wl)));
  return absl::OkStatus();
}

absl::StatusOr<IntegrationReconciler::Matched> IntegrationReconciler::EnsureElasticWorkloads(
    Json& job, const std::vector<Json>& podsets) {
  const std::string ns = api::meta::GetNamespace(job);
  const std::string uid = api::meta::GetUid(job);
  std::vector<Json> active, replaced, stale;
  for (const std::string& wl_name : OwnedNames(ns + "/" + api::meta::GetName(job))) {
    client::ObjectRef wl = workloads_.Get(ns, wl_name);
    if (!wl || OwnerKey(*wl).empty()) continue;
    const Json* limit = api::FindMemberAt(*wl, {"spec", "maximumExecutionTimeSeconds"});
    const std::optional<int32_t> wl_limit =
        limit != nullptr && limit->is_number_integer() ? std::optional(limit->get<int32_t>())
                                                       : std::nullopt;
    if (!api::meta::IsControlledBy(*wl, uid) || wl_limit != MaxExecutionTimeSeconds(job)) {
      stale.push_back(*wl);
    } else if (Replaced(*wl)) {
      replaced.push_back(*wl);
    } else {
      active.push_back(*wl);
    }
  }
  Matched m;
  // The slice that replaces another active one, and that other one.
  const Json* next = nullptr;
  const Json* prev = nullptr;
  for (const Json& a : active) {
    for (const Json& b : active) {
      if (&a != &b && ReplacementFor(a) == KeyOf(b)) {
        next = &a;
        prev = &b;
      }
    }
  }
  if (next != nullptr && active.size() == 2) {
    if (HasQuotaReservation(*next)) {
      // Admitted; the queue manager finishes `prev`.
      if (EquivalentPodSets(podsets, api::Member(api::Member(*next, "spec"), "podSets"))) {
        m.wl = std::make_shared<const Json>(*next);
        return m;
      }
      active = {*next};  // Resized below like any admitted Workload.
      prev = next = nullptr;
    } else if (!HasQuotaReservation(*prev)) {
      // The running slice lost its reservation (evicted): its pending
      // successor stands alone.
      BATCHD_RETURN_IF_ERROR(DeleteWorkload(job, *prev, "Deleted the evicted workload slice"));
      m.requeue = true;
      return m;
    } else if (EquivalentPodSets(podsets, api::Member(api::Member(*next, "spec"), "podSets"))) {
      // Runs at its old size while the bigger slice waits.
      m.wl = std::make_shared<const Json>(*prev);
      return m;
    } else {
      // Scaled again before the slice was admitted: a new slice, or none.
      BATCHD_RETURN_IF_ERROR(DeleteWorkload(job, *next, "Deleted the outdated workload slice"));
      m.requeue = true;
      return m;
    }
  }
  for (size_t i = 1; i < active.size(); ++i) stale.push_back(active[i]);
  if (!active.empty()) {
    Json& wl = active[0];
    if (EquivalentPodSets(podsets, api::Member(api::Member(wl, "spec"), "podSets"))) {
      m.wl = std::make_shared<const Json>(wl);
    } else if (HasQuotaReservation(wl) && !Suspended(job) && Grows(podsets, wl)) {
      BATCHD_RETURN_IF_ERROR(CreateSlice(job, podsets, wl));
      m.wl = std::make_shared<const Json>(wl);
    } else {
      BATCHD_ASSIGN_OR_RETURN(std::optional<Json> resized, ResizeElastic(wl, podsets));
      if (resized) {
        m.wl = std::make_shared<const Json>(std::move(*resized));
      } else {
        stale.push_back(wl);
      }
    }
  }
  // Replaced slices: the one the current Workload names stays for the record.
  const std::string keep = m.wl ? ReplacementFor(*m.wl) : "";
  for (const Json& r : replaced) {
    if (KeyOf(r) != keep) {
      BATCHD_RETURN_IF_ERROR(DeleteWorkload(job, r, "Deleted a replaced workload slice"));
    }
  }
  if (!m.wl) BATCHD_RETURN_IF_ERROR(StopJobWithoutWorkload(job, stale));
  for (const Json& wl : stale) {
    BATCHD_RETURN_IF_ERROR(DeleteWorkload(job, wl, "Deleted not matching Workload"));
    m.requeue = true;
  }
  return m;
}

absl::Status IntegrationReconciler::CreateSlice(const Json& job, const std::vector<Json>& podsets,
                                                const Json& old) {
  const std::string ns = api::meta::GetNamespace(job);
  // Kueue names slices by the job's generation (a new name per scale-up).
  const std::string name =
      WorkloadName(gvk_, api::meta::GetName(job),
                   absl::StrCat(api::meta::GetUid(job), "/", api::meta::GetGeneration(job)));
  if (workloads_.Get(ns, name)) return absl::OkStatus();  // Created already.
  Json wl = api::kueue::NewWorkload(ns, name, QueueName(job), podsets);
  if (const std::string uid = api::meta::GetUid(job); !uid.empty()) {
    api::meta::SetLabel(wl, kJobUidLabel, uid);
  }
  api::meta::SetOwnerReference(wl, api::meta::NewControllerRef(job));
  if (std::optional<int32_t> limit = MaxExecutionTimeSeconds(job)) {
    wl["spec"]["maximumExecutionTimeSeconds"] = *limit;
  }
  api::meta::SetAnnotation(wl, kElasticJobAnnotation, "true");
  api::meta::SetAnnotation(wl, kWorkloadSliceReplacementFor, KeyOf(old));
  if (const Json* p = api::FindMemberAt(old, {"spec", "priority"}); p != nullptr) {
    wl["spec"]["priority"] = *p;
  }
  if (const Json* p = api::FindMemberAt(old, {"spec", "priorityClassRef"}); p != nullptr) {
    wl["spec"]["priorityClassRef"] = *p;
  }
  auto r = ctx_.client.Create(wl_kind_, ns, std::move(wl));
  if (!r.ok() && !absl::IsAlreadyExists(r.status())) return r.status();
  if (r.ok()) {
    ctx_.events.Event(job, "Normal", "CreatedWorkload",
                      absl::StrCat("Created Workload slice: ", ns, "/", name,
                                   " replacing ", KeyOf(old)));
  }
  return absl::OkStatus();
}

void IntegrationReconciler::WireElasticPods() {
  auto on_pod = [this](const client::ObjectRef& pod, bool deleted) {
    const std::string job_key = api::meta::ControllerKey(*pod, gvk_.ApiVersion(), gvk_.kind);
    if (job_key.empty()) return;
    const std::string pod_name = api::meta::GetName(*pod);
    // Read in place: this runs for every pod event of every Job.
    bool gated = false;
    if (!deleted) {
      const Json& gates = api::MemberAt(*pod, {"spec", "schedulingGates"});
      if (gates.is_array()) {
        for (const Json& g : gates) {
          gated = gated || api::AsString(api::Member(g, "name")) == kElasticJobSchedulingGate;
        }
      }
    }
    {
      absl::MutexLock lock(&mu_);
      auto it = gated_.find(job_key);
      if (gated) {
        gated_[job_key].insert(pod_name);
      } else if (it != gated_.end()) {
        it->second.erase(pod_name);
        if (it->second.empty()) gated_.erase(it);
      } else {
        return;
      }
    }
    if (gated && queue_ != nullptr) queue_->Add(job_key);
  };
  pods_.AddHandlers({[on_pod](const client::ObjectRef& o) { on_pod(o, false); },
                     [on_pod](const client::ObjectRef&, const client::ObjectRef& o) {
                       on_pod(o, false);
                     },
                     [on_pod](const client::ObjectRef& o) { on_pod(o, true); }});
}

// Ungates gated pods while fewer than the admitted count run ungated. Only
// jobs with gated pods pay for the listing of their pods.
absl::Status IntegrationReconciler::UngateElasticPods(const Json& job, const Json& wl) {
  const std::string ns = api::meta::GetNamespace(job);
  {
    absl::MutexLock lock(&mu_);
    if (!gated_.contains(ns + "/" + api::meta::GetName(job))) return absl::OkStatus();
  }
  int64_t admitted = 0;
  const api::kueue::WorkloadPodSetsView sets = api::kueue::WorkloadPodSetsView::Parse(wl);
  for (size_t i = 0; i < sets.assignments.size(); ++i) {
    // A scale-down shrinks the spec count in place; the admission keeps the old one.
    int32_t spec_count = i < sets.pod_sets.size() ? sets.pod_sets[i].count : 0;
    admitted += std::min(sets.assignments[i].count.value_or(spec_count), spec_count);
  }
  std::vector<client::ObjectRef> gated;
  int64_t running = 0;
  for (const client::ObjectRef& pod : pods_.ListMatching(
           ns, absl::StrCat(api::batch_v1::kControllerUidLabel, "=", api::meta::GetUid(job)))) {
    const api::core_v1::PodView v = api::core_v1::PodView::Parse(*pod);
    if (v.terminal() || api::meta::IsBeingDeleted(*pod)) continue;
    if (v.HasSchedulingGate(kElasticJobSchedulingGate)) {
      gated.push_back(pod);
    } else {
      ++running;
    }
  }
  std::sort(gated.begin(), gated.end(), [](const client::ObjectRef& a, const client::ObjectRef& b) {
    return api::meta::GetName(*a) < api::meta::GetName(*b);
  });
  absl::Status result = absl::OkStatus();
  for (const client::ObjectRef& pod : gated) {
    if (running >= admitted) break;
    const api::core_v1::PodView v = api::core_v1::PodView::Parse(*pod);
    auto r = ctx_.client.MergePatch(
        pod_kind_, ns, api::meta::GetName(*pod),
        api::core_v1::UngatePatch(v, kElasticJobSchedulingGate, Json::object()));
    if (!r.ok() && !IsGone(r.status())) {
      result = r.status();
      continue;
    }
    ++running;
  }
  return result;
}

}  // namespace batchd::controllers::workload::internal
