// Kueue's Job and JobSet webhook parts for MultiKueue: a new batch/v1 Job
// without spec.managedBy (MultiKueueBatchJobWithManagedBy), or a new JobSet
// without one or with the JobSet controller's, whose queue's ClusterQueue
// applies a MultiKueue AdmissionCheck gets `managedBy:
// kueue.x-k8s.io/multikueue`, so its status is mirrored from the worker
// that runs it (and the manager's Job / JobSet controller leaves it alone).
#include <string>

#include "api/json_access.h"
#include "api/kueue/kueue.h"
#include "api/meta/object_meta.h"
#include "controllers/admissioncheck/admission_checks.h"
#include "controllers/multikueue/multikueue.h"
#include "registry/registry.h"

namespace batchd::controllers::multikueue {
namespace {

using api::Json;
using api::MemberObject;
using api::StringMember;

std::shared_ptr<const Json> Lookup(registry::Registry& reg, const api::KindDef* k,
                                   const std::string& ns, const std::string& name) {
  if (k == nullptr || name.empty()) return nullptr;
  auto r = reg.Get(*k, ns, name);
  if (!r.ok() || *r == nullptr) return nullptr;
  return (*r)->Shared();
}

}  // namespace

absl::Status RegisterMultiKueueJobDefaulting(registry::Registry& registry) {
  const api::Scheme& s = registry.scheme();
  const api::KindDef* jobs = s.ByResource("batch", "v1", "jobs");
  const api::KindDef* jobsets = s.ByResource("jobset.x-k8s.io", "v1alpha2", "jobsets");
  const api::KindDef* lqs = s.ByResource(api::kueue::kGroup, api::kueue::kStorageVersion,
                                         api::kueue::kLocalQueues);
  const api::KindDef* cqs = s.ByResource(api::kueue::kGroup, api::kueue::kStorageVersion,
                                         api::kueue::kClusterQueues);
  const api::KindDef* acs = s.ByResource(api::kueue::kGroup, api::kueue::kStorageVersion,
                                         api::kueue::kAdmissionChecks);
  if (jobs == nullptr) return absl::FailedPreconditionError("batch/v1 Jobs are not served");
  registry::Registry* reg = &registry;
  // `replaceable`: a managedBy value that may be replaced (Kueue's
  // CanDefaultManagedBy: a JobSet's own controller name).
  auto defaulting = [reg, lqs, cqs, acs](std::string_view replaceable) {
    return [reg, lqs, cqs, acs, replaceable](Json& job, const Json* old) {
      if (old != nullptr) return absl::OkStatus();  // managedBy is immutable.
      const Json& spec = MemberObject(job, "spec");
      if (api::HasMember(spec, "managedBy") &&
          (replaceable.empty() || StringMember(spec, "managedBy") != replaceable)) {
        return absl::OkStatus();
      }
      std::string queue = api::meta::GetLabel(job, api::kueue::kQueueNameLabel).value_or("");
      if (queue.empty()) {
        queue = api::meta::GetAnnotation(job, api::kueue::kQueueNameAnnotation).value_or("");
      }
      auto lq = Lookup(*reg, lqs, api::meta::GetNamespace(job), queue);
      if (!lq) return absl::OkStatus();
      auto cq = Lookup(*reg, cqs, "", std::string(StringMember(MemberObject(*lq, "spec"),
                                                               "clusterQueue")));
      if (!cq) return absl::OkStatus();
      for (const std::string& check : admissioncheck::ReferencedChecks(*cq)) {
        auto ac = Lookup(*reg, acs, "", check);
        if (ac && StringMember(MemberObject(*ac, "spec"), "controllerName") == kControllerName) {
          job["spec"]["managedBy"] = kControllerName;
          break;
        }
      }
      return absl::OkStatus();
    };
  };
  registry.AddMutator(jobs->GroupResource(), defaulting(""));
  if (jobsets != nullptr) {
    registry.AddMutator(jobsets->GroupResource(),
                        defaulting("jobset.sigs.k8s.io/jobset-controller"));
  }
  return absl::OkStatus();
}

}  // namespace batchd::controllers::multikueue
