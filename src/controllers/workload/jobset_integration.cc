// The JobSet integration: the controller (generic reconciler over
// JobSetAdapter) and Kueue's JobSet webhook rules as a registry mutator.
#include "controllers/workload/jobset_integration.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/jobset/v1alpha2/jobset_view.h"
#include "api/json_access.h"
#include "api/meta/object_meta.h"
#include "api/validation/names.h"
#include "common/logging.h"
#include "controllers/workload/internal/jobset_adapter.h"
#include "controllers/workload/internal/topology_request.h"
#include "controllers/workload/internal/workload_util.h"
#include "registry/errors.h"

namespace batchd::controllers {
namespace {

namespace js = api::jobset_v1alpha2;
using api::Json;
using api::Path;
using workload::internal::JobSetAdapter;
using workload::internal::kPriorityClassLabel;
using workload::internal::kQueueNameKey;
using workload::internal::kStoppingAnnotation;
using workload::internal::QueueName;

using workload::internal::kAnnotations;
using workload::internal::kLabels;

bool JobSetSuspended(const Json& jobset) {
  return JobSetAdapter().IsSuspended(jobset) &&
         !api::meta::GetAnnotation(jobset, kStoppingAnnotation);
}

void CheckJobSetQueueName(const Json& jobset, api::ErrorList& errs) {
  auto check = [&errs](std::optional<std::string> v, const Path& p) {
    if (!v) return;
    std::vector<std::string> msgs = api::validation::IsDNS1123Subdomain(*v);
    if (!msgs.empty()) errs.push_back(api::Invalid(p.Key(kQueueNameKey), *v, absl::StrJoin(msgs, ",")));
  };
  check(api::meta::GetLabel(jobset, kQueueNameKey), kLabels);
  check(api::meta::GetAnnotation(jobset, kQueueNameKey), kAnnotations);
}

// Each replicated job's pod template topology annotations.
void CheckTopology(const Json& jobset, api::ErrorList& errs) {
  const js::JobSetSpecView spec = js::JobSetSpecView::Parse(jobset);
  for (size_t i = 0; i < spec.replicated_jobs.size(); ++i) {
    const js::ReplicatedJobView& r = spec.replicated_jobs[i];
    if (r.job_template == nullptr) continue;
    const Json& tmpl = api::MemberAt(*r.job_template, {"spec", "template"});
    if (!tmpl.is_object()) continue;
    const int32_t per_job = r.completions ? std::min(r.parallelism, *r.completions) : r.parallelism;
    workload::internal::ValidateTopologyAnnotations(
        tmpl, r.replicas * per_job,
        Path("spec").Child("replicatedJobs").Index(i).Child("template").Child("spec").Child(
            "template").Child("metadata").Child("annotations"),
        errs);
  }
}

void CheckJobSetUpdate(const Json& jobset, const Json& old, api::ErrorList& errs) {
  if (!JobSetSuspended(jobset) && QueueName(jobset) != QueueName(old)) {
    errs.push_back(
        api::Invalid(kLabels.Key(kQueueNameKey), QueueName(jobset), "field is immutable"));
  }
  const std::string wpc = api::meta::GetLabel(jobset, kPriorityClassLabel).value_or("");
  if (wpc != api::meta::GetLabel(old, kPriorityClassLabel).value_or("")) {
    errs.push_back(api::Invalid(kLabels.Key(kPriorityClassLabel), wpc, "field is immutable"));
  }
}

// Kueue's ApplyDefaultForSuspend: queued JobSets start suspended.
void DefaultJobSetSuspend(Json& jobset, const JobIntegrationOptions& options) {
  if (JobSetAdapter().Skip(jobset)) return;
  const bool managed = !QueueName(jobset).empty() ||
                       (options.manage_jobs_without_queue_name &&
                        api::meta::GetNamespace(jobset) != "kube-system");
  if (managed && !JobSetAdapter().IsSuspended(jobset)) JobSetAdapter().Suspend(jobset);
}

}  // namespace

absl::Status RegisterJobSetWebhooks(registry::Registry& registry,
                                    const JobIntegrationOptions& options, bool enabled) {
  const api::KindDef* jobsets = registry.scheme().ByResource(js::kGroup, js::kVersion, js::kPlural);
  if (jobsets == nullptr) return absl::FailedPreconditionError("JobSets are not served");
  if (!enabled) {
    registry.AddMutator(jobsets->GroupResource(), [jobsets](Json& jobset, const Json*) {
      api::ErrorList errs;
      for (const char* field : {"labels", "annotations"}) {
        const Json& m = api::MemberAt(jobset, {"metadata", field});
        if (m.is_object() && m.contains(kQueueNameKey)) {
          errs.push_back(api::Forbidden(
              Path("metadata").Child(field).Key(kQueueNameKey),
              absl::StrCat("queueing JobSets needs the ", kJobSetFramework,
                           " framework in the queueing configuration (integrations.frameworks)")));
        }
      }
      return errs.empty() ? absl::OkStatus()
                          : registry::Invalid(*jobsets, api::meta::GetName(jobset), errs);
    });
    return absl::OkStatus();
  }
  registry.AddMutator(jobsets->GroupResource(),
                      [jobsets, options](Json& jobset, const Json* old) -> absl::Status {
                        if (old == nullptr) DefaultJobSetSuspend(jobset, options);
                        api::ErrorList errs;
                        CheckJobSetQueueName(jobset, errs);
                        CheckTopology(jobset, errs);
                        if (old != nullptr) CheckJobSetUpdate(jobset, *old, errs);
                        if (errs.empty()) return absl::OkStatus();
                        return registry::Invalid(*jobsets, api::meta::GetName(jobset), errs);
                      });
  return absl::OkStatus();
}

void AddJobSetIntegration(reconcile::ControllerContext& ctx, const JobIntegrationOptions& options) {
  workload::IntegrationOptions opts;
  opts.manage_jobs_without_queue_name = options.manage_jobs_without_queue_name;
  opts.wait_for_pods_ready = options.wait_for_pods_ready;
  absl::Status s = workload::AddIntegration(ctx, std::make_shared<JobSetAdapter>(), opts);
  if (!s.ok()) BATCHD_LOG_WARN("jobset integration disabled: {}", std::string(s.message()));
}

}  // namespace batchd::controllers
