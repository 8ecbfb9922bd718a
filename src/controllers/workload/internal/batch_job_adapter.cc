#include "controllers/workload/internal/batch_job_adapter.h"

#include <algorithm>
#include <charconv>

#include "absl/strings/str_cat.h"
#include "api/batch/v1/job_status_writer.h"
#include "api/batch/v1/job_view.h"
#include "api/batch/v1/job_writers.h"
#include "api/kueue/workload_writers.h"
#include "api/meta/conditions.h"
#include "api/meta/object_meta.h"
#include "api/kueue/topology_assignment.h"
#include "controllers/workload/internal/topology_request.h"
#include "controllers/workload/internal/workload_util.h"

namespace batchd::controllers::workload::internal {

namespace {

// Labels the Job controller manages on the template; they are not part of
// what the Workload describes.
constexpr const char* kManagedLabels[] = {"job-name", "controller-uid",
                                          "batch.kubernetes.io/job-name",
                                          "batch.kubernetes.io/controller-uid"};

using api::batch_v1::JobSpecView;
using api::batch_v1::JobStatusView;

// The one pod set of a Job (Kueue's default pod set name).
constexpr char kMainPodSet[] = "main";

bool SyncCompletions(const Json& job) {
  auto v = api::meta::GetAnnotation(job, kCompletionsEqualParallelismAnnotation);
  return v && ParseBool(*v).value_or(false);
}

int32_t PodsCount(const JobSpecView& spec) {
  return spec.completions ? std::min(spec.parallelism, *spec.completions) : spec.parallelism;
}

void SetPodCount(Json& job, int32_t count) {
  api::batch_v1::SetParallelism(job, count);
  if (SyncCompletions(job)) api::batch_v1::SetCompletions(job, count);
}

}  // namespace

int32_t JobPodsCount(const Json& job) { return PodsCount(JobSpecView::Parse(job)); }

std::optional<int32_t> JobMinCount(const Json& job) {
  auto v = api::meta::GetAnnotation(job, kMinParallelismAnnotation);
  if (!v) return std::nullopt;
  int32_t out = 0;
  auto [ptr, ec] = std::from_chars(v->data(), v->data() + v->size(), out);
  if (ec != std::errc() || ptr != v->data() + v->size()) return std::nullopt;
  return out;
}

bool BatchJobAdapter::Skip(const Json& job) const {
  // Child Jobs of a JobSet are queued through their parent's Workload, when
  // the JobSet framework is integrated; a Job owned by any kind batchd does
  // not integrate is a plain Job.
  if (!jobset_integrated_) return false;
  auto owner = api::meta::GetControllerRef(job);
  return owner && owner->api_version.rfind("jobset.x-k8s.io/", 0) == 0 && owner->kind == "JobSet";
}

bool BatchJobAdapter::IsSuspended(const Json& job) const {
  return JobSpecView::Parse(job).suspend;
}

bool BatchJobAdapter::IsActive(const Json& job) const {
  const JobStatusView status = JobStatusView::Parse(job);
  return status.active > 0 || status.terminating.value_or(0) > 0;
}

std::optional<FinishedState> BatchJobAdapter::Finished(const Json& job) const {
  for (const char* type : {"Complete", "Failed"}) {
    if (auto c = api::meta::GetCondition(job, type); c && c->status == api::meta::kConditionTrue) {
      return FinishedState{c->type == "Complete", c->message};
    }
  }
  return std::nullopt;
}

bool BatchJobAdapter::PodsReady(const Json& job) const {
  const JobStatusView status = JobStatusView::Parse(job);
  return status.ready.value_or(0) + status.succeeded >= JobPodsCount(job);
}

absl::StatusOr<std::vector<Json>> BatchJobAdapter::PodSets(const Json& job) const {
  const JobSpecView spec = JobSpecView::Parse(job);
  if (spec.pod_template == nullptr) {
    return absl::InvalidArgumentError("spec.template: Required value");
  }
  Json tmpl = *spec.pod_template;  // A copy: edited below.
  for (const char* l : kManagedLabels) api::meta::RemoveLabel(tmpl, l);
  StripTopologyMarks(tmpl);
  api::kueue::UseLimitsAsMissingRequests(tmpl);
  std::optional<api::kueue::PodSetTopologyRequestValue> topology =
      TopologyRequestFromTemplate(tmpl, kJobCompletionIndexLabel);
  std::vector<Json> out;
  out.push_back(
      api::kueue::NewPodSet(kMainPodSet, PodsCount(spec), JobMinCount(job), std::move(tmpl)));
  if (topology) api::kueue::SetPodSetTopologyRequest(out.back(), *topology);
  return out;
}

void BatchJobAdapter::Suspend(Json& job) const { api::batch_v1::SetSuspend(job, true); }

absl::Status BatchJobAdapter::RunWithPodSetsInfo(Json& job,
                                                 const std::vector<PodSetInfo>& infos) const {
  if (infos.size() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("expecting 1 podset info, got ", infos.size()));
  }
  const PodSetInfo& info = infos[0];
  api::batch_v1::SetSuspend(job, false);
  if (JobMinCount(job)) SetPodCount(job, info.count);
  api::batch_v1::MergeTemplateNodeSelector(job, info.node_selector);
  api::batch_v1::MergeTemplateTolerations(job, info.tolerations);
  api::batch_v1::MergeTemplateLabels(job, info.labels);
  api::batch_v1::MergeTemplateAnnotations(job, info.annotations);
  for (const std::string& gate : info.scheduling_gates) {
    api::batch_v1::AddTemplateSchedulingGate(job, gate);
  }
  return absl::OkStatus();
}

bool BatchJobAdapter::RestorePodSetsInfo(Json& job,
                                         const std::vector<PodSetInfo>& originals) const {
  if (originals.empty()) return false;
  const PodSetInfo& info = originals[0];
  bool changed = false;
  if (JobMinCount(job) && JobSpecView::Parse(job).parallelism != info.count) {
    SetPodCount(job, info.count);
    changed = true;
  }
  changed = api::batch_v1::ReplaceTemplateNodeSelector(job, info.node_selector) || changed;
  changed = api::batch_v1::ReplaceTemplateTolerations(job, info.tolerations) || changed;
  // Topology-aware admission's marks go; the next admission adds its own.
  changed = api::batch_v1::RemoveTemplateLabel(job, api::kueue::kTasLabel) || changed;
  changed = api::batch_v1::RemoveTemplateLabel(job, api::kueue::kPodSetLabel) || changed;
  changed = api::batch_v1::RemoveTemplateAnnotation(job, api::kueue::kWorkloadAnnotation) || changed;
  changed =
      api::batch_v1::RemoveTemplateSchedulingGate(job, api::kueue::kTopologySchedulingGate) ||
      changed;
  return changed;
}

bool BatchJobAdapter::ResetStatusForRestore(Json& job) const {
  return api::batch_v1::ClearJobStartTime(job);
}

namespace {

// Kueue's terminalIndexesCount: indexes below `completions` listed in either
// interval list ("1,3-5"), counted once; malformed entries are skipped.
int32_t TerminalIndexes(std::string_view completed, std::string_view failed, int32_t completions) {
  if (completions <= 0) return 0;
  std::vector<std::pair<int64_t, int64_t>> intervals;
  for (std::string_view list : {completed, failed}) {
    while (!list.empty()) {
      size_t comma = list.find(',');
      std::string_view item = list.substr(0, comma);
      list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
      size_t dash = item.find('-');
      std::string_view a = item.substr(0, dash);
      std::string_view b = dash == std::string_view::npos ? a : item.substr(dash + 1);
      int64_t first = 0, last = 0;
      auto [pa, ea] = std::from_chars(a.data(), a.data() + a.size(), first);
      auto [pb, eb] = std::from_chars(b.data(), b.data() + b.size(), last);
      if (ea != std::errc() || eb != std::errc() || pa != a.data() + a.size() ||
          pb != b.data() + b.size() || first < 0 || last < first) {
        continue;
      }
      last = std::min<int64_t>(last, completions - 1);
      if (first <= last) intervals.emplace_back(first, last);
    }
  }
  std::sort(intervals.begin(), intervals.end());
  int64_t count = 0, counted_to = -1;
  for (const auto& [first, last] : intervals) {
    int64_t from = std::max(first, counted_to + 1);
    if (from > last) continue;
    count += last - from + 1;
    counted_to = last;
  }
  return static_cast<int32_t>(count);
}

}  // namespace

// Kueue's Job.ReclaimablePods: once some pods are terminal and the work left
// no longer fills every parallel slot, the slots beyond it are reclaimable.
std::vector<std::pair<std::string, int32_t>> BatchJobAdapter::ReclaimablePods(
    const Json& job) const {
  const api::batch_v1::JobSpecView spec = api::batch_v1::JobSpecView::Parse(job);
  const api::batch_v1::JobStatusView status = api::batch_v1::JobStatusView::Parse(job);
  const int32_t parallelism = spec.parallelism;
  const int32_t completions = spec.completions.value_or(parallelism);
  int32_t terminal = status.succeeded;
  if (spec.completion_mode == api::batch_v1::CompletionMode::kIndexed) {
    terminal = TerminalIndexes(status.completed_indexes, status.failed_indexes.value_or(""),
                               completions);
  }
  if (parallelism <= 1 || terminal <= 0) return {};
  const int32_t remaining = std::max(completions - terminal, 0);
  if (remaining >= parallelism) return {};
  return {{"main", parallelism - remaining}};
}

}  // namespace batchd::controllers::workload::internal
