#include "controllers/workload/internal/batch_job_adapter.h"

#include <algorithm>
#include <charconv>

#include "absl/strings/str_cat.h"
#include "api/batch/v1/job_view.h"
#include "api/json_access.h"
#include "api/meta/conditions.h"
#include "api/meta/object_meta.h"
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

bool SyncCompletions(const Json& job) {
  auto v = api::meta::GetAnnotation(job, kCompletionsEqualParallelismAnnotation);
  return v && (*v == "true" || *v == "True" || *v == "TRUE" || *v == "1" || *v == "t" ||
               *v == "T");
}

void SetParallelism(Json& job, int32_t count) {
  job["spec"]["parallelism"] = count;
  if (SyncCompletions(job)) job["spec"]["completions"] = count;
}

Json& TemplateSpec(Json& job) {
  Json& spec = job["spec"]["template"]["spec"];
  if (!spec.is_object()) spec = Json::object();
  return spec;
}

// Writes `value` at `spec[key]`, erasing the field when `value` is empty.
bool SetOrErase(Json& spec, const char* key, const Json& value) {
  const bool empty = value.is_null() || value.empty();
  if (empty) return spec.erase(key) > 0;
  if (spec.contains(key) && spec[key] == value) return false;
  spec[key] = value;
  return true;
}

}  // namespace

int32_t JobPodsCount(const Json& job) {
  const JobSpecView spec = JobSpecView::Parse(job);
  return spec.completions ? std::min(spec.parallelism, *spec.completions) : spec.parallelism;
}

std::optional<int32_t> JobMinCount(const Json& job) {
  auto v = api::meta::GetAnnotation(job, kMinParallelismAnnotation);
  if (!v) return std::nullopt;
  int32_t out = 0;
  auto [ptr, ec] = std::from_chars(v->data(), v->data() + v->size(), out);
  if (ec != std::errc() || ptr != v->data() + v->size()) return std::nullopt;
  return out;
}

bool BatchJobAdapter::Skip(const Json& job) const {
  // Child Jobs of a JobSet are queued through their parent's Workload.
  auto owner = api::meta::GetControllerRef(job);
  return owner && owner->api_version.rfind("jobset.x-k8s.io/", 0) == 0;
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
  Json tmpl = api::MemberAt(job, {"spec", "template"});  // A copy: edited below.
  if (!tmpl.is_object()) return absl::InvalidArgumentError("spec.template: Required value");
  if (tmpl.contains("metadata") && tmpl["metadata"].contains("labels")) {
    Json& labels = tmpl["metadata"]["labels"];
    for (const char* l : kManagedLabels) labels.erase(l);
    if (labels.empty()) tmpl["metadata"].erase("labels");
  }
  DefaultRequestsFromLimits(tmpl);
  Json ps = {{"name", "main"}, {"count", JobPodsCount(job)}, {"template", std::move(tmpl)}};
  if (auto min = JobMinCount(job)) ps["minCount"] = *min;
  return std::vector<Json>{std::move(ps)};
}

void BatchJobAdapter::Suspend(Json& job) const { job["spec"]["suspend"] = true; }

absl::Status BatchJobAdapter::RunWithPodSetsInfo(Json& job,
                                                 const std::vector<PodSetInfo>& infos) const {
  if (infos.size() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("expecting 1 podset info, got ", infos.size()));
  }
  const PodSetInfo& info = infos[0];
  job["spec"]["suspend"] = false;
  if (JobMinCount(job)) SetParallelism(job, info.count);
  Json& spec = TemplateSpec(job);
  if (!info.node_selector.empty()) {
    Json selector = spec.contains("nodeSelector") && spec["nodeSelector"].is_object()
                        ? spec["nodeSelector"]
                        : Json::object();
    selector.update(info.node_selector);
    spec["nodeSelector"] = std::move(selector);
  }
  if (!info.tolerations.empty()) {
    Json tolerations = spec.contains("tolerations") && spec["tolerations"].is_array()
                           ? spec["tolerations"]
                           : Json::array();
    for (const Json& t : info.tolerations) {
      if (std::find(tolerations.begin(), tolerations.end(), t) == tolerations.end()) {
        tolerations.push_back(t);
      }
    }
    spec["tolerations"] = std::move(tolerations);
  }
  return absl::OkStatus();
}

bool BatchJobAdapter::RestorePodSetsInfo(Json& job,
                                         const std::vector<PodSetInfo>& originals) const {
  if (originals.empty()) return false;
  const PodSetInfo& info = originals[0];
  bool changed = false;
  if (JobMinCount(job) && JobSpecView::Parse(job).parallelism != info.count) {
    SetParallelism(job, info.count);
    changed = true;
  }
  Json& spec = TemplateSpec(job);
  changed = SetOrErase(spec, "nodeSelector", info.node_selector) || changed;
  changed = SetOrErase(spec, "tolerations", info.tolerations) || changed;
  return changed;
}

bool BatchJobAdapter::ResetStatusForRestore(Json& job) const {
  if (!job.contains("status") || !job["status"].is_object()) return false;
  return job["status"].erase("startTime") > 0;
}

}  // namespace batchd::controllers::workload::internal
