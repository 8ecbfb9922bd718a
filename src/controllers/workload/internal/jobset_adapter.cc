#include "controllers/workload/internal/jobset_adapter.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "api/batch/v1/job_writers.h"
#include "api/jobset/v1alpha2/jobset_view.h"
#include "api/json_access.h"
#include "api/kueue/topology_assignment.h"
#include "api/kueue/workload_writers.h"
#include "api/meta/conditions.h"
#include "api/meta/object_meta.h"
#include "controllers/workload/internal/topology_request.h"
#include "controllers/workload/internal/workload_util.h"

namespace batchd::controllers::workload::internal {

namespace js = api::jobset_v1alpha2;

namespace {

// Pods one Job of `r` runs at once.
int32_t PodsPerJob(const js::ReplicatedJobView& r) {
  return r.completions ? std::min(r.parallelism, *r.completions) : r.parallelism;
}

// The JobTemplateSpec of replicated job `i` (shaped like a Job: its
// `spec.template` is the pod template, so the Job writers edit it).
Json* JobTemplate(Json& jobset, size_t i) {
  Json* rjobs = api::FindMutableMemberAt(jobset, {"spec", "replicatedJobs"});
  if (rjobs == nullptr || !rjobs->is_array() || i >= rjobs->size()) return nullptr;
  Json& t = (*rjobs)[i]["template"];
  if (!t.is_object()) t = Json::object();
  return &t;
}

size_t ReplicatedJobCount(const Json& jobset) {
  return api::MemberArray(api::Member(jobset, "spec"), "replicatedJobs").size();
}

}  // namespace

bool JobSetAdapter::Skip(const Json& jobset) const {
  // A JobSet MultiKueue dispatches (managedBy kueue.x-k8s.io/multikueue) is
  // queued here and runs on a worker cluster; other managers' are skipped.
  const js::JobSetView v = js::JobSetView::Parse(jobset);
  if (v.spec.managed_by && *v.spec.managed_by == "kueue.x-k8s.io/multikueue") return false;
  return v.ManagedByOther();
}

bool JobSetAdapter::IsSuspended(const Json& jobset) const {
  return js::JobSetSpecView::Parse(jobset).suspend;
}

bool JobSetAdapter::IsActive(const Json& jobset) const {
  for (const js::ReplicatedJobStatusView& r : js::JobSetStatusView::Parse(jobset).replicated_jobs) {
    if (r.active > 0) return true;
  }
  return false;
}

std::optional<FinishedState> JobSetAdapter::Finished(const Json& jobset) const {
  for (const char* type : {js::kConditionCompleted, js::kConditionFailed}) {
    if (auto c = api::meta::GetCondition(jobset, type); c && c->status == api::meta::kConditionTrue) {
      return FinishedState{c->type == js::kConditionCompleted, c->message};
    }
  }
  return std::nullopt;
}

bool JobSetAdapter::PodsReady(const Json& jobset) const {
  const js::JobSetSpecView spec = js::JobSetSpecView::Parse(jobset);
  const js::JobSetStatusView status = js::JobSetStatusView::Parse(jobset);
  for (const js::ReplicatedJobView& r : spec.replicated_jobs) {
    const js::ReplicatedJobStatusView* s = status.ReplicatedJob(r.name);
    if (s == nullptr || int64_t{s->ready} + s->succeeded < r.replicas) return false;
  }
  return true;
}

absl::StatusOr<std::vector<Json>> JobSetAdapter::PodSets(const Json& jobset) const {
  const js::JobSetSpecView spec = js::JobSetSpecView::Parse(jobset);
  std::vector<Json> out;
  for (const js::ReplicatedJobView& r : spec.replicated_jobs) {
    const Json& pod_template =
        r.job_template != nullptr ? api::MemberAt(*r.job_template, {"spec", "template"}) : Json();
    if (!pod_template.is_object()) {
      return absl::InvalidArgumentError(
          absl::StrCat("replicatedJob ", std::string(r.name), ": spec.template: Required value"));
    }
    Json tmpl = pod_template;  // A copy: edited below.
    StripTopologyMarks(tmpl);
    api::kueue::UseLimitsAsMissingRequests(tmpl);
    std::optional<api::kueue::PodSetTopologyRequestValue> topology =
        TopologyRequestFromTemplate(tmpl, kJobCompletionIndexLabel);
    out.push_back(api::kueue::NewPodSet(r.name, r.replicas * PodsPerJob(r), std::nullopt,
                                        std::move(tmpl)));
    if (topology) {
      // Pods rank by their Job's index among the replicas, then by their
      // completion index within it.
      topology->sub_group_index_label = js::kJobIndexKey;
      topology->sub_group_count = r.replicas;
      api::kueue::SetPodSetTopologyRequest(out.back(), *topology);
    }
  }
  if (out.empty()) return absl::InvalidArgumentError("spec.replicatedJobs: Required value");
  return out;
}

void JobSetAdapter::Suspend(Json& jobset) const {
  api::MutableObject(jobset, "spec")["suspend"] = true;
}

absl::Status JobSetAdapter::RunWithPodSetsInfo(Json& jobset,
                                               const std::vector<PodSetInfo>& infos) const {
  const size_t n = ReplicatedJobCount(jobset);
  if (infos.size() != n) {
    return absl::InvalidArgumentError(
        absl::StrCat("expecting ", n, " podset infos, got ", infos.size()));
  }
  api::MutableObject(jobset, "spec")["suspend"] = false;
  for (size_t i = 0; i < n; ++i) {
    Json* t = JobTemplate(jobset, i);
    const PodSetInfo& info = infos[i];
    api::batch_v1::MergeTemplateNodeSelector(*t, info.node_selector);
    api::batch_v1::MergeTemplateTolerations(*t, info.tolerations);
    api::batch_v1::MergeTemplateLabels(*t, info.labels);
    api::batch_v1::MergeTemplateAnnotations(*t, info.annotations);
    for (const std::string& gate : info.scheduling_gates) {
      api::batch_v1::AddTemplateSchedulingGate(*t, gate);
    }
  }
  return absl::OkStatus();
}

bool JobSetAdapter::RestorePodSetsInfo(Json& jobset,
                                       const std::vector<PodSetInfo>& originals) const {
  bool changed = false;
  const size_t n = std::min(ReplicatedJobCount(jobset), originals.size());
  for (size_t i = 0; i < n; ++i) {
    Json* t = JobTemplate(jobset, i);
    changed = api::batch_v1::ReplaceTemplateNodeSelector(*t, originals[i].node_selector) || changed;
    changed = api::batch_v1::ReplaceTemplateTolerations(*t, originals[i].tolerations) || changed;
    changed = api::batch_v1::RemoveTemplateLabel(*t, api::kueue::kTasLabel) || changed;
    changed = api::batch_v1::RemoveTemplateLabel(*t, api::kueue::kPodSetLabel) || changed;
    changed =
        api::batch_v1::RemoveTemplateAnnotation(*t, api::kueue::kWorkloadAnnotation) || changed;
    changed = api::batch_v1::RemoveTemplateSchedulingGate(*t, api::kueue::kTopologySchedulingGate) ||
              changed;
  }
  return changed;
}

}  // namespace batchd::controllers::workload::internal
