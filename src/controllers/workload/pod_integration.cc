// The plain pod integration: Kueue's pod webhook as a registry mutator, and
// the controller (internal/pod_reconciler.h) wired into a Manager.
#include "controllers/workload/pod_integration.h"

#include <memory>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/core/v1/pod_view.h"
#include "api/kueue/kueue.h"
#include "api/meta/object_meta.h"
#include "api/validation/names.h"
#include "common/logging.h"
#include "controllers/queueing/config.h"
#include "controllers/workload/internal/pod_adapter.h"
#include "controllers/workload/internal/pod_reconciler.h"
#include "controllers/workload/internal/topology_request.h"
#include "controllers/workload/internal/workload_util.h"
#include "registry/errors.h"

namespace batchd::controllers {
namespace {

using api::Json;
using api::Path;
using namespace workload::internal;  // NOLINT: the pod integration's vocabulary

using workload::internal::kAnnotations;
using workload::internal::kLabels;

// Owners whose pods Kueue queues through them (the integrations batchd
// runs), and how far up an owner chain it looks (Kueue's limit is 10).
constexpr int kOwnerChainLimit = 4;

bool QueuedKind(std::string_view api_version, std::string_view kind) {
  return (api_version == "batch/v1" && kind == "Job") ||
         (api_version.rfind("jobset.x-k8s.io/", 0) == 0 && kind == "JobSet");
}

// Kueue's FindAncestorJobManagedByKueue: an owner (or its owner...) of a kind
// Kueue queues that has a queue name (any, when manageJobsWithoutQueueName).
bool OwnerQueuedByKueue(registry::Registry& reg, const Json& pod, bool manage_all) {
  const api::Scheme& scheme = reg.scheme();
  std::string ns = api::meta::GetNamespace(pod);
  std::optional<api::meta::OwnerReference> ref = api::meta::GetControllerRef(pod);
  for (int depth = 0; ref && depth < kOwnerChainLimit; ++depth) {
    const size_t slash = ref->api_version.find('/');
    const std::string group = slash == std::string::npos ? "" : ref->api_version.substr(0, slash);
    const std::string version =
        slash == std::string::npos ? ref->api_version : ref->api_version.substr(slash + 1);
    const api::KindDef* k = scheme.ByKind(group, version, ref->kind);
    if (k == nullptr) return false;
    auto owner = reg.Get(*k, k->namespaced ? ns : "", ref->name);
    if (!owner.ok()) return false;
    std::shared_ptr<const Json> obj = (*owner)->Shared();
    if (QueuedKind(ref->api_version, ref->kind) && (manage_all || !QueueName(*obj).empty())) {
      return true;
    }
    ref = api::meta::GetControllerRef(*obj);
  }
  return false;
}

// Whether Kueue manages pods of the pod's namespace (its labels, plus the
// kubernetes.io/metadata.name label Kubernetes gives every namespace).
bool NamespaceManaged(registry::Registry& reg, const std::string& ns,
                      const std::vector<api::labels::LabelSelector>& selectors) {
  std::map<std::string, std::string> labels;
  if (const api::KindDef* k = reg.scheme().ByResource("", "v1", "namespaces")) {
    if (auto obj = reg.Get(*k, "", ns); obj.ok()) labels = api::meta::Labels(*(*obj)->Shared());
  }
  labels["kubernetes.io/metadata.name"] = ns;
  for (const api::labels::LabelSelector& s : selectors) {
    if (!s.Matches(labels)) return false;
  }
  return true;
}

void CheckDnsSubdomain(const std::optional<std::string>& value, const Path& path,
                       api::ErrorList& errs) {
  if (!value) return;
  auto msgs = api::validation::IsDNS1123Subdomain(*value);
  if (!msgs.empty()) errs.push_back(api::Invalid(path, *value, absl::StrJoin(msgs, ",")));
}

// Kueue's validateCommon: managed label value, queue name, group metadata,
// topology annotations.
void ValidateCommon(const Json& pod, api::ErrorList& errs) {
  if (auto v = api::meta::GetLabel(pod, kManagedLabel); v && *v != kManagedValue) {
    errs.push_back(api::Forbidden(kLabels.Key(kManagedLabel),
                                  absl::StrCat("managed label value can only be '",
                                               kManagedValue, "'")));
  }
  CheckDnsSubdomain(api::meta::GetLabel(pod, kQueueNameKey), kLabels.Key(kQueueNameKey), errs);
  const std::string both =
      absl::StrCat("both the '", kGroupTotalCountAnnotation, "' annotation and the '",
                   kGroupNameLabel, "' label should be set");
  const auto total = api::meta::GetAnnotation(pod, kGroupTotalCountAnnotation);
  const auto group = api::meta::GetLabel(pod, kGroupNameLabel);
  if (!group || group->empty()) {
    if (total) errs.push_back(api::Required(kLabels.Key(kGroupNameLabel), both));
  } else {
    CheckDnsSubdomain(group, kLabels.Key(kGroupNameLabel), errs);
    if (!total) errs.push_back(api::Required(kAnnotations.Key(kGroupTotalCountAnnotation), both));
  }
  if (total) {
    if (auto n = GroupTotalCount(pod); !n.ok()) {
      errs.push_back(api::Invalid(kAnnotations.Key(kGroupTotalCountAnnotation), *total,
                                  std::string(n.status().message())));
    }
  }
  ValidateTopologyAnnotations(pod, /*pod_count=*/0, kAnnotations, errs);
}

void ValidateUpdate(const Json& pod, const Json& old, api::ErrorList& errs) {
  // The queue may change while the pod waits (gated), as a Job's while suspended.
  if (!IsGated(pod) && QueueName(pod) != QueueName(old)) {
    errs.push_back(api::Invalid(kLabels.Key(kQueueNameKey), QueueName(pod), "field is immutable"));
  }
  auto wpc = api::meta::GetLabel(pod, kPriorityClassLabel).value_or("");
  if (wpc != api::meta::GetLabel(old, kPriorityClassLabel).value_or("")) {
    errs.push_back(api::Invalid(kLabels.Key(kPriorityClassLabel), wpc, "field is immutable"));
  }
  if (const std::string was = GroupName(old); !was.empty() && GroupName(pod) != was) {
    errs.push_back(api::Invalid(kLabels.Key(kGroupNameLabel), GroupName(pod), "field is immutable"));
  }
  if (!GroupName(pod).empty() && IsUnretriable(old) && !IsUnretriable(pod)) {
    errs.push_back(api::Forbidden(kAnnotations.Key(kRetriableInGroupAnnotation),
                                  "unretriable pod group can't be converted to retriable"));
  }
}

}  // namespace

api::labels::LabelSelector DefaultManagedNamespaceSelector() {
  auto s = api::labels::LabelSelector::Parse(
      "kubernetes.io/metadata.name notin (kube-system,kueue-system)");
  return s.ok() ? *s : api::labels::LabelSelector::Nothing();
}

PodHook MakePodWebhook(registry::Registry& registry, const PodIntegrationOptions& options) {
  const api::KindDef* pods = registry.scheme().ByResource("", "v1", "pods");
  return [&registry, pods, options](Json& pod, const Json* old) -> absl::Status {
    if (old == nullptr) {
      // Kueue's Default: queued pods (all, with manageJobsWithoutQueueName)
      // of managed namespaces that no queued Job or JobSet owns.
      const bool queued = !QueueName(pod).empty() || options.manage_jobs_without_queue_name;
      if (queued && options.pod_selector.Matches(api::meta::Labels(pod)) &&
          NamespaceManaged(registry, api::meta::GetNamespace(pod), options.namespace_selectors) &&
          !OwnerQueuedByKueue(registry, pod, options.manage_jobs_without_queue_name)) {
        MarkManaged(pod);
      }
    }
    api::ErrorList errs;
    ValidateCommon(pod, errs);
    if (old != nullptr) ValidateUpdate(pod, *old, errs);
    if (errs.empty()) return absl::OkStatus();
    return registry::Invalid(*pods, api::meta::GetName(pod), errs);
  };
}

absl::Status RegisterPodWebhooks(registry::Registry& registry,
                                 const PodIntegrationOptions& options) {
  if (registry.scheme().ByResource("", "v1", "pods") == nullptr) {
    return absl::FailedPreconditionError("v1 Pods are not served");
  }
  registry.AddMutator("pods", MakePodWebhook(registry, options));
  return absl::OkStatus();
}

PodIntegrationOptions PodIntegrationOptionsFrom(const queueing::QueueingConfig& config) {
  PodIntegrationOptions o;
  o.manage_jobs_without_queue_name = config.manage_jobs_without_queue_name;
  if (config.managed_jobs_namespace_selector) {
    o.namespace_selectors = {*config.managed_jobs_namespace_selector};
  }
  if (config.pod_namespace_selector) {
    o.namespace_selectors.push_back(*config.pod_namespace_selector);
  }
  if (config.pod_selector) o.pod_selector = *config.pod_selector;
  o.wait_for_pods_ready = config.wait_for_pods_ready.enable;
  return o;
}

void AddPodIntegration(reconcile::ControllerContext& ctx, const PodIntegrationOptions& options) {
  const api::Scheme& scheme = ctx.client.scheme();
  const api::KindDef* pods = scheme.ByResource("", "v1", "pods");
  const api::KindDef* wls =
      scheme.ByResource(api::kueue::kGroup, api::kueue::kStorageVersion, api::kueue::kWorkloads);
  const api::KindDef* rfs = scheme.ByResource(api::kueue::kGroup, api::kueue::kStorageVersion,
                                              api::kueue::kResourceFlavors);
  if (pods == nullptr || wls == nullptr || rfs == nullptr) {
    BATCHD_LOG_WARN("pod integration disabled: the scheme lacks pods or Kueue's v1beta2 kinds");
    return;
  }
  // The informer handlers own the reconciler, as AddIntegration's do.
  auto reconciler =
      std::make_shared<PodReconciler>(ctx, *pods, *wls, *rfs, options.wait_for_pods_ready);
  reconcile::Controller& c = ctx.manager.AddController(std::make_unique<reconcile::Controller>(
      "pod-workload-integration", *reconciler, ctx.clock));
  reconciler->Wire(c, reconciler);
}

}  // namespace batchd::controllers
