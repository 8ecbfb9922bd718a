#include "controllers/job/workload_with_job.h"

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "api/json_access.h"
#include "api/meta/object_meta.h"
#include "common/string_view.h"
#include "registry/errors.h"

namespace batchd::controllers::job {

using api::Json;
using api::batch_v1::JobSpecView;

namespace {

constexpr char kSchedulingGroup[] = "scheduling.k8s.io";
constexpr char kSchedulingVersion[] = "v1alpha2";
constexpr size_t kDnsLabelMax = 63;
constexpr size_t kDnsSubdomainMax = 253;

// FNV-1a, 32 bits.
uint32_t Fnv32a(std::string_view s) {
  uint32_t h = 2166136261u;
  for (unsigned char c : s) {
    h ^= c;
    h *= 16777619u;
  }
  return h;
}

// The decimal digits of `h` spelt in letters and digits that form no words
// (as Kubernetes' generated name suffixes are).
std::string SafeHash(uint32_t h) {
  static constexpr char kAlphabet[] = "bcdfghjklmnpqrstvwxz2456789";
  std::string digits = std::to_string(h), out;
  for (char d : digits) out.push_back(kAlphabet[static_cast<unsigned char>(d) % 27]);
  return out;
}

std::string Truncate(std::string_view s, size_t max) {
  return std::string(s.substr(0, std::min(s.size(), max)));
}

bool SetsSchedulingGroup(const Json* pod_template) {
  if (pod_template == nullptr) return false;
  const Json& spec = api::Member(*pod_template, "spec");
  for (const char* f : {"schedulingGroup", "workloadRef"}) {
    const Json* v = api::FindMember(spec, f);
    if (v != nullptr && !v->is_null()) return true;
  }
  return false;
}

// Whether `wl` names Job `job_name` in spec.controllerRef.
bool RefersToJob(const Json& wl, std::string_view job_name) {
  const Json& ref = api::MemberAt(wl, {"spec", "controllerRef"});
  return api::StringMember(ref, "apiGroup") == "batch" && api::StringMember(ref, "kind") == "Job" &&
         api::StringMember(ref, "name") == job_name;
}

// Whether PodGroup `pg` was made from a template of Workload `workload`.
bool MadeFromWorkload(const Json& pg, std::string_view workload) {
  return api::StringMember(api::MemberAt(pg, {"spec", "podGroupTemplateRef", "workload"}),
                           "workloadName") == workload;
}

}  // namespace

bool IsGangCandidate(const JobSpecView& spec, const Json& job) {
  if (spec.completion_mode != api::batch_v1::CompletionMode::kIndexed) return false;
  if (spec.parallelism <= 1 || !spec.completions.has_value() ||
      *spec.completions != spec.parallelism) {
    return false;
  }
  if (SetsSchedulingGroup(spec.pod_template)) return false;
  std::optional<api::meta::OwnerReference> owner = api::meta::GetControllerRef(job);
  return !owner.has_value() || (owner->kind == "CronJob" && owner->api_version == "batch/v1");
}

std::string WorkloadNameForJob(std::string_view job_name, std::string_view job_uid) {
  const std::string hash = SafeHash(Fnv32a(job_uid));
  return absl::StrCat(Truncate(job_name, kDnsSubdomainMax - hash.size() - 1), "-", hash);
}

std::string PodGroupTemplateNameForJob(std::string_view job_name) {
  // A DNS label: the Job name (itself a label) cut to leave room for "-pgt-0".
  return absl::StrCat(Truncate(job_name, kDnsLabelMax - 6), "-pgt-0");
}

std::string PodGroupNameFor(std::string_view workload, std::string_view template_name) {
  const std::string hash =
      SafeHash(Fnv32a(absl::StrCat(Sv(workload), "/", Sv(template_name))));
  const size_t room = kDnsSubdomainMax - hash.size() - 2;
  std::string wl(workload), tpl(template_name);
  if (wl.size() + tpl.size() > room) {  // Each part keeps at least half the room.
    const size_t half = room / 2;
    if (wl.size() <= half) {
      tpl.resize(room - wl.size());
    } else if (tpl.size() <= half) {
      wl.resize(room - tpl.size());
    } else {
      wl.resize(room - half);
      tpl.resize(half);
    }
  }
  return absl::StrCat(wl, "-", tpl, "-", hash);
}

Json NewWorkloadForJob(const Json& job) {
  const std::string job_name = api::meta::GetName(job);
  const JobSpecView spec = JobSpecView::Parse(job);
  Json wl = {
      {"apiVersion", absl::StrCat(kSchedulingGroup, "/", kSchedulingVersion)},
      {"kind", "Workload"},
      {"metadata",
       {{"name", WorkloadNameForJob(job_name, api::meta::GetUid(job))},
        {"namespace", api::meta::GetNamespace(job)}}},
      {"spec",
       {{"controllerRef", {{"apiGroup", "batch"}, {"kind", "Job"}, {"name", job_name}}},
        {"podGroupTemplates",
         Json::array({{{"name", PodGroupTemplateNameForJob(job_name)},
                       {"schedulingPolicy", {{"gang", {{"minCount", spec.parallelism}}}}}}})}}}};
  api::meta::SetOwnerReference(wl, api::meta::NewControllerRef(job));
  return wl;
}

Json NewPodGroupForWorkload(const Json& job, const Json& workload) {
  const std::string wl_name = api::meta::GetName(workload);
  const Json& templates = api::MemberArray(api::MemberObject(workload, "spec"), "podGroupTemplates");
  const Json& tmpl = templates.empty() ? api::EmptyObject() : templates[0];
  const std::string tmpl_name = api::CopyStringMember(tmpl, "name");
  Json spec = {{"podGroupTemplateRef",
                {{"workload", {{"workloadName", wl_name}, {"podGroupTemplateName", tmpl_name}}}}},
               {"schedulingPolicy", api::Member(tmpl, "schedulingPolicy")}};
  if (const Json* mode = api::FindMember(tmpl, "disruptionMode"); mode != nullptr) {
    spec["disruptionMode"] = *mode;
  }
  Json pg = {{"apiVersion", absl::StrCat(kSchedulingGroup, "/", kSchedulingVersion)},
             {"kind", "PodGroup"},
             {"metadata",
              {{"name", PodGroupNameFor(wl_name, tmpl_name)},
               {"namespace", api::meta::GetNamespace(job)}}},
             {"spec", std::move(spec)}};
  api::meta::SetOwnerReference(pg, api::meta::NewControllerRef(job));
  // The Workload owns it too, without blocking the Workload's deletion.
  api::meta::OwnerReference wl_ref;
  wl_ref.api_version = absl::StrCat(kSchedulingGroup, "/", kSchedulingVersion);
  wl_ref.kind = "Workload";
  wl_ref.name = wl_name;
  wl_ref.uid = api::meta::GetUid(workload);
  api::meta::SetOwnerReference(pg, wl_ref);
  return pg;
}

void SetPodSchedulingGroup(Json& pod, std::string_view pod_group) {
  api::MutableObject(pod, "spec")["schedulingGroup"] = {{"podGroupName", pod_group}};
}

api::ErrorList ValidateParallelismUpdate(const Json& job, const Json& old) {
  const JobSpecView spec = JobSpecView::Parse(job);
  const JobSpecView old_spec = JobSpecView::Parse(old);
  if (spec.parallelism == old_spec.parallelism) return {};
  if (!IsGangCandidate(spec, job) && !IsGangCandidate(old_spec, old)) return {};
  return {api::Forbidden(api::Path("spec").Child("parallelism"),
                         "cannot be changed for an Indexed Job with parallelism equal to "
                         "completions while the WorkloadWithJob feature gate is enabled: it is "
                         "the minCount of the Job's gang (PodGroup), which is immutable")};
}

absl::Status AddParallelismValidation(registry::Registry& registry) {
  const api::KindDef* jobs = registry.scheme().ByResource("batch", "v1", "jobs");
  if (jobs == nullptr) return absl::FailedPreconditionError("batch/v1 Jobs are not served");
  registry.AddMutator("jobs.batch", [jobs](Json& job, const Json* old) -> absl::Status {
    if (old == nullptr) return absl::OkStatus();
    api::ErrorList errs = ValidateParallelismUpdate(job, *old);
    if (errs.empty()) return absl::OkStatus();
    return registry::Invalid(*jobs, api::meta::GetName(job), errs);
  });
  return absl::OkStatus();
}

PodGroupSource::PodGroupSource(reconcile::ControllerContext& ctx)
    : ctx_(ctx),
      workload_kind_(ctx.client.Kind(kSchedulingGroup, kSchedulingVersion, "workloads")),
      pod_group_kind_(ctx.client.Kind(kSchedulingGroup, kSchedulingVersion, "podgroups")),
      workloads_(ctx.informers.For(workload_kind_)),
      pod_groups_(ctx.informers.For(pod_group_kind_)) {}

absl::StatusOr<std::string> PodGroupSource::EnsurePodGroup(const JobSpecView& spec,
                                                           const Json& job, bool has_started) {
  if (!IsGangCandidate(spec, job)) return std::string();
  bool skip = false;
  absl::StatusOr<Json> wl = EnsureWorkload(job, has_started, &skip);
  if (!wl.ok()) return wl.status();
  if (skip) return std::string();
  return EnsurePodGroupOf(job, *wl);
}

absl::StatusOr<Json> PodGroupSource::EnsureWorkload(const Json& job, bool has_started,
                                                    bool* skip) {
  const std::string ns = api::meta::GetNamespace(job);
  const std::string job_name = api::meta::GetName(job);
  const std::string job_uid = api::meta::GetUid(job);
  std::vector<client::ObjectRef> found;
  for (const client::ObjectRef& wl : workloads_.List(ns)) {
    if (RefersToJob(*wl, job_name)) found.push_back(wl);
  }
  if (found.empty()) {
    // The informer may lag behind a Workload created by an earlier sync: the
    // registry has it under its deterministic name.
    auto wl = ctx_.client.Get(workload_kind_, ns, WorkloadNameForJob(job_name, job_uid));
    if (wl.ok() && RefersToJob(*wl, job_name)) {
      found.push_back(std::make_shared<const Json>(std::move(*wl)));
    }
  }
  if (found.size() > 1) {
    ctx_.events.Event(job, "Warning", "WorkloadNotUsed",
                      absl::StrCat(found.size(), " Workloads refer to the Job; its pods are "
                                                 "scheduled one by one"));
    *skip = true;
    return Json();
  }
  if (found.size() == 1) {
    const Json& wl = *found[0];
    const size_t templates =
        api::MemberArray(api::MemberObject(wl, "spec"), "podGroupTemplates").size();
    // Not made by the Job controller for this Job (a user's, a previous
    // Job's of the same name), or not of one template: pod by pod.
    *skip = !api::meta::IsControlledBy(wl, job_uid) || templates != 1;
    return wl;
  }
  if (has_started) {
    *skip = true;  // It ran without a gang; a gang for its rest would never form.
    return Json();
  }
  auto created = ctx_.client.Create(workload_kind_, ns, NewWorkloadForJob(job));
  if (!created.ok() && registry::GetPayload(created.status()).reason == "AlreadyExists") {
    created = ctx_.client.Get(workload_kind_, ns, WorkloadNameForJob(job_name, job_uid));
    if (created.ok() && !api::meta::IsControlledBy(*created, job_uid)) *skip = true;
    return created;
  }
  if (!created.ok()) {
    ctx_.events.Event(job, "Warning", "FailedCreate",
                      absl::StrCat("Error creating Workload: ", created.status().message()));
    return created.status();
  }
  ctx_.events.Event(job, "Normal", "WorkloadCreated",
                    absl::StrCat("Created Workload ", api::meta::GetName(*created), " for Job ",
                                 job_name));
  return created;
}

absl::StatusOr<std::string> PodGroupSource::EnsurePodGroupOf(const Json& job,
                                                             const Json& workload) {
  const std::string ns = api::meta::GetNamespace(job);
  const std::string job_uid = api::meta::GetUid(job);
  const std::string wl_name = api::meta::GetName(workload);
  Json want = NewPodGroupForWorkload(job, workload);
  const std::string name = api::meta::GetName(want);
  std::vector<client::ObjectRef> found;
  for (const client::ObjectRef& pg : pod_groups_.List(ns)) {
    if (MadeFromWorkload(*pg, wl_name)) found.push_back(pg);
  }
  if (found.empty()) {
    auto pg = ctx_.client.Get(pod_group_kind_, ns, name);
    if (pg.ok() && MadeFromWorkload(*pg, wl_name)) {
      found.push_back(std::make_shared<const Json>(std::move(*pg)));
    }
  }
  if (found.size() == 1) {
    return api::meta::IsControlledBy(*found[0], job_uid) ? api::meta::GetName(*found[0])
                                                         : std::string();
  }
  if (found.size() > 1) {
    ctx_.events.Event(job, "Warning", "WorkloadNotUsed",
                      absl::StrCat(found.size(), " PodGroups were made from Workload ", wl_name,
                                   "; the Job's pods are scheduled one by one"));
    return std::string();
  }
  auto created = ctx_.client.Create(pod_group_kind_, ns, std::move(want));
  if (created.ok()) return name;
  if (registry::GetPayload(created.status()).reason == "AlreadyExists") {
    auto pg = ctx_.client.Get(pod_group_kind_, ns, name);
    if (!pg.ok()) return pg.status();
    return api::meta::IsControlledBy(*pg, job_uid) ? name : std::string();
  }
  ctx_.events.Event(job, "Warning", "FailedCreate",
                    absl::StrCat("Error creating PodGroup: ", created.status().message()));
  return created.status();
}

}  // namespace batchd::controllers::job
