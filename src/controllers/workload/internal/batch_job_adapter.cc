#include "controllers/workload/internal/batch_job_adapter.h"

#include <algorithm>
#include <charconv>

#include "absl/strings/str_cat.h"
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

const Json& Member(const Json& obj, const char* key) {
  static const Json kNull;
  if (!obj.is_object()) return kNull;
  auto it = obj.find(key);
  return it == obj.end() ? kNull : *it;
}

int64_t IntMember(const Json& obj, const char* key, int64_t def) {
  const Json& v = Member(obj, key);
  return v.is_number_integer() ? v.get<int64_t>() : def;
}

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
  const Json& spec = Member(job, "spec");
  int64_t count = IntMember(spec, "parallelism", 1);
  const Json& completions = Member(spec, "completions");
  if (completions.is_number_integer()) count = std::min(count, completions.get<int64_t>());
  return static_cast<int32_t>(count);
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
  const Json& s = Member(Member(job, "spec"), "suspend");
  return s.is_boolean() && s.get<bool>();
}

bool BatchJobAdapter::IsActive(const Json& job) const {
  const Json& status = Member(job, "status");
  return IntMember(status, "active", 0) > 0 || IntMember(status, "terminating", 0) > 0;
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
  const Json& status = Member(job, "status");
  return IntMember(status, "ready", 0) + IntMember(status, "succeeded", 0) >= JobPodsCount(job);
}

absl::StatusOr<std::vector<Json>> BatchJobAdapter::PodSets(const Json& job) const {
  Json tmpl = Member(Member(job, "spec"), "template");
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
  if (JobMinCount(job) && IntMember(Member(job, "spec"), "parallelism", 1) != info.count) {
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
