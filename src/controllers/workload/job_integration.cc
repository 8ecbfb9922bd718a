// The batch/v1 Job integration: the controller (generic reconciler over
// BatchJobAdapter) and Kueue's Job webhook rules as a registry mutator.
#include <charconv>
#include <climits>
#include <string>
#include <type_traits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "api/batch/v1/job_view.h"
#include "api/batch/v1/job_writers.h"
#include "api/kueue/workload_slices.h"
#include "api/meta/object_meta.h"
#include "api/validation/names.h"
#include "common/logging.h"
#include "controllers/queueing/config.h"
#include "controllers/workload/internal/batch_job_adapter.h"
#include "controllers/workload/internal/topology_request.h"
#include "controllers/workload/internal/workload_util.h"
#include "controllers/workload/jobset_integration.h"
#include "controllers/workload/workload_controller.h"
#include "registry/errors.h"

namespace batchd::controllers {

using reconcile::ControllerContext;

namespace {

using api::Json;
using api::Path;
using api::batch_v1::JobSpecView;
using workload::internal::BatchJobAdapter;
using workload::internal::JobMinCount;
using workload::internal::JobPodsCount;
using workload::internal::kCompletionsEqualParallelismAnnotation;
using workload::internal::kElasticJobAnnotation;
using workload::internal::kMaxExecTimeLabel;
using workload::internal::kMinParallelismAnnotation;
using workload::internal::kPriorityClassLabel;
using workload::internal::kQueueNameKey;
using workload::internal::kStoppingAnnotation;
using workload::internal::ParseBool;
using workload::internal::QueueName;
using workload::internal::ValidateTopologyAnnotations;

// The field paths of the webhook's errors.
using workload::internal::kAnnotations;
using workload::internal::kLabels;
const Path kSpec = Path("spec");

bool Suspended(const Json& job) {
  return BatchJobAdapter().IsSuspended(job) && !api::meta::GetAnnotation(job, kStoppingAnnotation);
}

void CheckQueueName(const Json& job, api::ErrorList& errs) {
  auto check = [&errs](std::optional<std::string> v, const Path& p) {
    if (!v) return;
    auto msgs = api::validation::IsDNS1123Subdomain(*v);
    if (msgs.empty()) return;
    std::string joined;
    for (const auto& m : msgs) joined += (joined.empty() ? "" : ",") + m;
    errs.push_back(api::Invalid(p.Key(kQueueNameKey), *v, joined));
  };
  check(api::meta::GetLabel(job, kQueueNameKey), kLabels);
  check(api::meta::GetAnnotation(job, kQueueNameKey), kAnnotations);
}

void CheckMinParallelism(const Json& job, api::ErrorList& errs) {
  auto raw = api::meta::GetAnnotation(job, kMinParallelismAnnotation);
  if (!raw) return;
  const Path p = kAnnotations.Key(kMinParallelismAnnotation);
  auto v = JobMinCount(job);
  if (!v) {
    errs.push_back(api::Invalid(p, *raw, "must be an integer"));
    return;
  }
  const int32_t count = JobPodsCount(job);
  if (*v <= 0 || *v >= count) {
    errs.push_back(api::Invalid(p, *v, absl::StrCat("should be between 0 and ", count - 1)));
  }
}

void CheckSyncCompletions(const Json& job, api::ErrorList& errs) {
  auto raw = api::meta::GetAnnotation(job, kCompletionsEqualParallelismAnnotation);
  if (!raw) return;
  const Path p = kAnnotations.Key(kCompletionsEqualParallelismAnnotation);
  auto enabled = ParseBool(*raw);
  if (!enabled) {
    errs.push_back(api::Invalid(p, *raw, "must be a boolean"));
    return;
  }
  if (!*enabled) return;
  const JobSpecView spec = JobSpecView::Parse(job);
  if (spec.completion_mode != api::batch_v1::CompletionMode::kIndexed) {
    errs.push_back(api::Invalid(p, *raw, "should not be enabled for NonIndexed jobs"));
  }
  if (spec.parallelism != spec.completions.value_or(1)) {
    errs.push_back(api::Invalid(
        kSpec.Child("completions"), spec.completions ? Json(*spec.completions) : Json(),
        absl::StrCat("should be equal to parallelism when ", kCompletionsEqualParallelismAnnotation,
                     " is annotation is true")));
  }
}

// Kueue's validateCreateForMaxExecTime: an integer above 0.
void CheckMaxExecTime(const Json& job, api::ErrorList& errs) {
  std::optional<std::string> raw = api::meta::GetLabel(job, kMaxExecTimeLabel);
  if (!raw) return;
  const Path p = kLabels.Key(kMaxExecTimeLabel);
  int64_t v = 0;
  auto [end, ec] = std::from_chars(raw->data(), raw->data() + raw->size(), v);
  if (ec != std::errc() || end != raw->data() + raw->size() || v > INT32_MAX) {
    // Kueue reads the label as an int32: a larger value would be ignored there.
    const bool range = ec == std::errc::result_out_of_range || (ec == std::errc() && v > INT32_MAX);
    errs.push_back(api::Invalid(p, *raw,
                                absl::StrCat("strconv.Atoi: parsing \"", *raw, "\": ",
                                             range ? "value out of range" : "invalid syntax")));
  } else if (v <= 0) {
    errs.push_back(api::Invalid(p, v, "should be greater than 0"));
  }
}

// Elastic Jobs (kueue.x-k8s.io/elastic-job: "true"): not with partial
// admission (Kueue's workload webhook), and the mark cannot change (Kueue's
// validatedUpdateForEnabledWorkloadSlice). A running elastic Job may change
// its parallelism both ways: its Workload shrinks in place, or a new
// Workload slice is admitted for the bigger size (controllers/workload/
// internal/elastic_slices.cc).
void CheckElastic(const Json& job, const Json* old, api::ErrorList& errs) {
  const bool elastic = workload::internal::IsElastic(job);
  const Path p = kAnnotations.Key(kElasticJobAnnotation);
  if (old != nullptr && elastic != workload::internal::IsElastic(*old)) {
    errs.push_back(api::Invalid(p, elastic, "field is immutable"));
    return;
  }
  if (!elastic) return;
  if (api::meta::GetAnnotation(job, kMinParallelismAnnotation)) {
    errs.push_back(api::Invalid(kAnnotations.Key(kMinParallelismAnnotation),
                                *api::meta::GetAnnotation(job, kMinParallelismAnnotation),
                                "partial admission and elastic job cannot be used together"));
  }
}

void CheckUpdate(const Json& job, const Json& old, api::ErrorList& errs) {
  if (!Suspended(job) && QueueName(job) != QueueName(old)) {
    errs.push_back(api::Invalid(kLabels.Key(kQueueNameKey), QueueName(job), "field is immutable"));
  }
  auto wpc = api::meta::GetLabel(job, kPriorityClassLabel).value_or("");
  if (wpc != api::meta::GetLabel(old, kPriorityClassLabel).value_or("")) {
    errs.push_back(api::Invalid(kLabels.Key(kPriorityClassLabel), wpc, "field is immutable"));
  }
  // Kueue's validateUpdateForMaxExecTime: fixed unless the job stays suspended.
  auto limit = api::meta::GetLabel(job, kMaxExecTimeLabel).value_or("");
  if ((!Suspended(job) || !Suspended(old)) &&
      limit != api::meta::GetLabel(old, kMaxExecTimeLabel).value_or("")) {
    errs.push_back(api::Invalid(kLabels.Key(kMaxExecTimeLabel), limit, "field is immutable"));
  }
  const JobSpecView spec = JobSpecView::Parse(job);
  const JobSpecView old_spec = JobSpecView::Parse(old);
  if (api::meta::GetAnnotation(old, kMinParallelismAnnotation) && !old_spec.suspend &&
      old_spec.parallelism != spec.parallelism) {
    errs.push_back(api::Forbidden(
        kSpec.Child("parallelism"),
        "cannot change when partial admission is enabled and the job is not suspended"));
  }
  auto sync = [](const Json& j) {
    auto raw = api::meta::GetAnnotation(j, kCompletionsEqualParallelismAnnotation);
    return raw && ParseBool(*raw).value_or(false);
  };
  if (Suspended(job) == Suspended(old) && !Suspended(job) && sync(job) != sync(old)) {
    errs.push_back(api::Forbidden(kAnnotations.Key(kCompletionsEqualParallelismAnnotation),
                                  "field is immutable while the job is not suspended"));
  }
}

// Kueue's ApplyDefaultForSuspend: queued Jobs start suspended. The pods of
// a queued elastic Job start gated (kueue.x-k8s.io/elastic-job) until a
// Workload slice covering them is admitted (Kueue's job webhook Default).
void DefaultSuspend(Json& job, const JobIntegrationOptions& options) {
  if (BatchJobAdapter(options.jobset_integrated).Skip(job)) return;
  const bool queued = !QueueName(job).empty();
  const bool managed = queued || (options.manage_jobs_without_queue_name &&
                                  api::meta::GetNamespace(job) != "kube-system");
  if (managed && !BatchJobAdapter().IsSuspended(job)) api::batch_v1::SetSuspend(job, true);
  if (managed && workload::internal::IsElastic(job)) {
    api::batch_v1::AddTemplateSchedulingGate(job, api::kueue::kElasticJobSchedulingGate);
  }
}

// Detects `Registry::AddMutator(group_resource, hook)` (the hook the
// registry owner is adding) without naming it when it is absent.
template <typename R, typename = void>
struct HasAddMutator : std::false_type {};
template <typename R>
struct HasAddMutator<R, std::void_t<decltype(std::declval<R&>().AddMutator(
                            std::string(), std::declval<JobHook>()))>> : std::true_type {};

template <typename R>
absl::Status AddHook(R& registry, JobHook hook) {
  if constexpr (HasAddMutator<R>::value) {
    registry.AddMutator("jobs.batch", std::move(hook));
    return absl::OkStatus();
  } else {
    (void)registry;
    (void)hook;
    return absl::UnimplementedError("the registry has no mutation hook");
  }
}

}  // namespace

JobHook MakeJobWebhook(const api::KindDef& jobs, const JobIntegrationOptions& options) {
  return [&jobs, options](Json& job, const Json* old) -> absl::Status {
    if (old == nullptr) DefaultSuspend(job, options);
    api::ErrorList errs;
    CheckQueueName(job, errs);
    if (old == nullptr || api::meta::GetAnnotation(job, kMinParallelismAnnotation) !=
                              api::meta::GetAnnotation(*old, kMinParallelismAnnotation)) {
      CheckMinParallelism(job, errs);
    }
    CheckSyncCompletions(job, errs);
    if (old == nullptr) CheckMaxExecTime(job, errs);
    CheckElastic(job, old, errs);
    if (const Json* tmpl = api::batch_v1::JobSpecView::Parse(job).pod_template; tmpl != nullptr) {
      ValidateTopologyAnnotations(*tmpl, JobPodsCount(job),
                                  kSpec.Child("template").Child("metadata").Child("annotations"),
                                  errs);
    }
    if (old != nullptr) CheckUpdate(job, *old, errs);
    if (errs.empty()) return absl::OkStatus();
    return registry::Invalid(jobs, api::meta::GetName(job), errs);
  };
}

absl::Status RegisterJobWebhooks(registry::Registry& registry,
                                 const JobIntegrationOptions& options) {
  const api::KindDef* jobs = registry.scheme().ByResource("batch", "v1", "jobs");
  if (jobs == nullptr) return absl::FailedPreconditionError("batch/v1 Jobs are not served");
  return AddHook(registry, MakeJobWebhook(*jobs, options));
}

JobIntegrationOptions JobIntegrationOptionsFrom(const queueing::QueueingConfig& config) {
  JobIntegrationOptions o;
  o.manage_jobs_without_queue_name = config.manage_jobs_without_queue_name;
  o.jobset_integrated = config.FrameworkEnabled(kJobSetFramework);
  o.wait_for_pods_ready = config.wait_for_pods_ready.enable;
  return o;
}

void AddJobIntegration(ControllerContext& ctx, const JobIntegrationOptions& options) {
  workload::IntegrationOptions opts;
  opts.manage_jobs_without_queue_name = options.manage_jobs_without_queue_name;
  opts.wait_for_pods_ready = options.wait_for_pods_ready;
  absl::Status s =
      workload::AddIntegration(ctx, std::make_shared<BatchJobAdapter>(options.jobset_integrated), opts);
  if (!s.ok()) BATCHD_LOG_WARN("job integration disabled: {}", std::string(s.message()));
}

}  // namespace batchd::controllers
