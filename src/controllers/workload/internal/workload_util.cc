#include "controllers/workload/internal/workload_util.h"

#include <algorithm>
#include <boost/uuid/detail/sha1.hpp>
#include <cctype>
#include <charconv>
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "api/core/v1/pod_view.h"
#include "api/json_access.h"
#include "api/kueue/queue_views.h"
#include "api/kueue/topology_assignment.h"
#include "api/kueue/workload_writers.h"
#include "api/meta/conditions.h"
#include "api/meta/object_meta.h"
#include "api/scheduling/v1/scheduling_v1.h"
#include "common/status_macros.h"

namespace batchd::controllers::workload::internal {

namespace {

using api::core_v1::ContainerSpecView;
using api::core_v1::PodView;
using api::kueue::PodSetAssignmentView;
using api::kueue::PodSetView;
using api::kueue::ResourceFlavorView;
using api::kueue::WorkloadPodSetsView;

// What two pod sets are compared by (EquivalentPodSets). An empty object or
// array and an absent field mean the same thing in a template.
Json OrNull(const Json* v) {
  if (v == nullptr || v->is_null() || (v->is_object() && v->empty()) ||
      (v->is_array() && v->empty())) {
    return nullptr;
  }
  return *v;
}

Json ContainerSignature(const ContainerSpecView& c) {
  Json requests = OrNull(c.requests);
  Json limits = OrNull(c.limits);
  if (limits.is_object()) {  // Limits stand for missing requests (as the Workload's are defaulted).
    if (!requests.is_object()) requests = Json::object();
    for (auto it = limits.begin(); it != limits.end(); ++it) {
      if (!requests.contains(it.key())) requests[it.key()] = it.value();
    }
  }
  return Json::array({std::string(c.name), std::string(c.image), std::move(requests),
                      std::move(limits)});
}

Json ContainersSignature(const Json* containers) {
  Json out = Json::array();
  if (containers == nullptr) return out;
  for (const Json& c : *containers) out.push_back(ContainerSignature(ContainerSpecView::Parse(c)));
  return out;
}

Json TemplateSignature(const Json* pod_template) {
  PodView pod;  // No template: nothing set.
  if (pod_template != nullptr) pod = PodView::Parse(*pod_template);
  return Json::array({ContainersSignature(pod.init_containers), ContainersSignature(pod.containers),
                      OrNull(pod.node_selector), OrNull(pod.tolerations),
                      OrNull(pod.node_affinity), std::string(pod.priority_class_name)});
}

Json TopologySignature(const std::optional<api::kueue::PodSetTopologyRequestView>& r) {
  if (!r) return nullptr;
  Json layers = Json::array();
  for (const auto& [level, size] : r->slice_constraints) {
    layers.push_back(Json::array({std::string(level), size}));
  }
  return Json::array({std::string(r->required), std::string(r->preferred), r->unconstrained,
                      std::string(r->slice_required_topology),
                      r->slice_size ? Json(*r->slice_size) : Json(nullptr), std::move(layers),
                      std::string(r->pod_set_group_name), std::string(r->sub_group_index_label),
                      r->sub_group_count ? Json(*r->sub_group_count) : Json(nullptr)});
}

Json PodSetSignature(const PodSetView& ps) {
  return Json::array({std::string(ps.name), ps.count,
                      ps.min_count ? Json(*ps.min_count) : Json(nullptr),
                      TemplateSignature(ps.pod_template), TopologySignature(ps.topology_request)});
}

void MergeTolerations(Json& into, const Json* more) {
  if (more == nullptr) return;
  for (const Json& t : *more) {
    if (std::find(into.begin(), into.end(), t) == into.end()) into.push_back(t);
  }
}

// Kueue's podSetUpdates of the admission checks (status.admissionChecks[]
// .podSetUpdates): labels, annotations and node selector entries added,
// tolerations appended. A key set to two different values is an error (the
// job does not start), as Kueue's PodSetInfo merge refuses conflicts.
absl::Status ApplyCheckPodSetUpdates(const Json& wl, PodSetInfo& info) {
  for (const Json& check : api::MemberArray(api::MemberObject(wl, "status"), "admissionChecks")) {
    for (const Json& u : api::MemberArray(check, "podSetUpdates")) {
      if (api::StringMember(u, "name") != info.name) continue;
      for (const auto& [field, into] : {std::pair<const char*, Json*>{"labels", &info.labels},
                                        {"annotations", &info.annotations},
                                        {"nodeSelector", &info.node_selector}}) {
        const Json& add = api::MemberObject(u, field);
        for (auto it = add.begin(); it != add.end(); ++it) {
          auto cur = into->find(it.key());
          if (cur != into->end() && *cur != *it) {
            return absl::FailedPreconditionError(absl::StrCat(
                "podSetUpdates of admission check ", std::string(api::StringMember(check, "name")),
                ": conflict for ", field, " ", it.key(), "=", it->dump(), " (already ",
                cur->dump(), ")"));
          }
          (*into)[it.key()] = *it;
        }
      }
      if (const Json* t = api::FindMember(u, "tolerations"); t != nullptr && t->is_array()) {
        MergeTolerations(info.tolerations, t);
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

std::optional<bool> ParseBool(std::string_view s) {
  if (s == "1" || s == "t" || s == "T" || s == "true" || s == "TRUE" || s == "True") return true;
  if (s == "0" || s == "f" || s == "F" || s == "false" || s == "FALSE" || s == "False") {
    return false;
  }
  return std::nullopt;
}

std::string QueueName(const Json& obj) {
  auto label = api::meta::GetLabel(obj, kQueueNameKey);
  if (label && !label->empty()) return *label;
  return api::meta::GetAnnotation(obj, kQueueNameKey).value_or("");
}

std::optional<int32_t> MaxExecutionTimeSeconds(const Json& obj) {
  std::optional<std::string> raw = api::meta::GetLabel(obj, kMaxExecTimeLabel);
  if (!raw) return std::nullopt;
  int32_t v = 0;
  auto [end, ec] = std::from_chars(raw->data(), raw->data() + raw->size(), v);
  if (ec != std::errc() || end != raw->data() + raw->size() || v <= 0) return std::nullopt;
  return v;
}

bool IsElastic(const Json& obj) {
  return api::meta::GetAnnotation(obj, kElasticJobAnnotation).value_or("") == "true";
}

bool HasQuotaReservation(const Json& wl) {
  return api::meta::IsConditionTrue(wl, api::kueue::kQuotaReserved);
}

bool IsAdmitted(const Json& wl) {
  return HasQuotaReservation(wl) && api::meta::IsConditionTrue(wl, api::kueue::kAdmitted);
}

std::string WorkloadName(const GroupVersionKind& gvk, const std::string& owner_name,
                         const std::string& owner_uid) {
  boost::uuids::detail::sha1 h;
  const std::string input = gvk.kind + "\n" + gvk.group + "\n" + owner_name + "\n" + owner_uid;
  h.process_bytes(input.data(), input.size());
  boost::uuids::detail::sha1::digest_type digest;
  h.get_digest(digest);
  char hex[9];
  std::snprintf(hex, sizeof(hex), "%08x", digest[0]);
  std::string kind = gvk.kind;
  std::transform(kind.begin(), kind.end(), kind.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  std::string prefix = kind + "-" + owner_name;
  constexpr size_t kMaxPrefix = 253 - 1 - 5;
  if (prefix.size() > kMaxPrefix) prefix.resize(kMaxPrefix);
  return prefix + "-" + std::string(hex, 5);
}

bool EquivalentPodSets(const std::vector<Json>& job_podsets,
                       const std::vector<PodSetView>& wl_podsets) {
  if (wl_podsets.size() != job_podsets.size()) return false;
  for (size_t i = 0; i < job_podsets.size(); ++i) {
    if (PodSetSignature(PodSetView::Parse(job_podsets[i])) != PodSetSignature(wl_podsets[i])) {
      return false;
    }
  }
  return true;
}

bool EquivalentPodSets(const std::vector<Json>& job_podsets, const Json& wl_podsets) {
  if (!wl_podsets.is_array()) return false;
  std::vector<PodSetView> views;
  for (const Json& ps : wl_podsets) views.push_back(PodSetView::Parse(ps));
  return EquivalentPodSets(job_podsets, views);
}

std::vector<PodSetInfo> PodSetsInfoFromSpec(const std::vector<PodSetView>& pod_sets) {
  std::vector<PodSetInfo> out;
  for (const PodSetView& ps : pod_sets) {
    PodSetInfo info;
    info.name = std::string(ps.name);
    info.count = ps.count;
    if (ps.pod_template != nullptr) {
      const PodView pod = PodView::Parse(*ps.pod_template);
      if (pod.node_selector != nullptr) info.node_selector = *pod.node_selector;
      if (pod.tolerations != nullptr) info.tolerations = *pod.tolerations;
    }
    out.push_back(std::move(info));
  }
  return out;
}

std::vector<PodSetInfo> PodSetsInfoFromSpec(const Json& wl) {
  return PodSetsInfoFromSpec(WorkloadPodSetsView::Parse(wl).pod_sets);
}

std::vector<PodSetInfo> PodSetsInfoFromPodSets(const std::vector<Json>& job_podsets) {
  std::vector<PodSetView> views;
  views.reserve(job_podsets.size());
  for (const Json& ps : job_podsets) views.push_back(PodSetView::Parse(ps));
  return PodSetsInfoFromSpec(views);
}

absl::StatusOr<std::vector<PodSetInfo>> PodSetsInfoFromAdmission(const Json& wl,
                                                                 const FlavorLookup& flavors) {
  std::vector<PodSetInfo> out;
  const WorkloadPodSetsView view = WorkloadPodSetsView::Parse(wl);
  for (size_t i = 0; i < view.assignments.size(); ++i) {
    const PodSetAssignmentView& a = view.assignments[i];
    PodSetInfo info;
    info.name = std::string(a.name);
    const int32_t spec_count = i < view.pod_sets.size() ? view.pod_sets[i].count : 1;
    info.count = a.count.value_or(spec_count);
    for (std::string_view flavor : a.flavors) {  // Distinct and sorted.
      const std::string name(flavor);
      auto rf = flavors(name);
      if (!rf) return absl::NotFoundError(absl::StrCat("ResourceFlavor \"", name, "\" not found"));
      const ResourceFlavorView rfv = ResourceFlavorView::Parse(*rf);
      if (rfv.node_labels != nullptr) info.node_selector.update(*rfv.node_labels);
      MergeTolerations(info.tolerations, rfv.tolerations);
    }
    BATCHD_RETURN_IF_ERROR(ApplyCheckPodSetUpdates(wl, info));
    if (a.topology_assignment != nullptr) {
      // Placed by topology-aware admission: the pods wait behind the
      // topology gate until the ungater gives each its domain.
      info.labels[api::kueue::kTasLabel] = "true";
      info.labels[api::kueue::kPodSetLabel] = info.name;
      info.annotations[api::kueue::kWorkloadAnnotation] = api::meta::GetName(wl);
      info.scheduling_gates.push_back(api::kueue::kTopologySchedulingGate);
    }
    out.push_back(std::move(info));
  }
  return out;
}

absl::Status SetWorkloadPriority(client::Client& client, const Json& job,
                                 std::string priority_class, const std::vector<Json>& podsets,
                                 Json& wl) {
  using api::kueue::PriorityClassSource;
  const api::Scheme& scheme = client.scheme();
  if (auto wpc = api::meta::GetLabel(job, kPriorityClassLabel); wpc && !wpc->empty()) {
    const api::KindDef* k =
        scheme.ByResource(api::kueue::kGroup, api::kueue::kStorageVersion,
                          api::kueue::kWorkloadPriorityClasses);
    if (!k) return absl::FailedPreconditionError("WorkloadPriorityClass is not served");
    BATCHD_ASSIGN_OR_RETURN(Json obj, client.Get(*k, "", *wpc));
    api::kueue::SetPriorityClass(wl, PriorityClassSource::kWorkloadPriorityClass, obj);
    return absl::OkStatus();
  }
  std::string pc = std::move(priority_class);
  for (const Json& ps : podsets) {
    if (!pc.empty()) break;
    const PodSetView view = PodSetView::Parse(ps);
    if (view.pod_template == nullptr) continue;
    pc = std::string(PodView::Parse(*view.pod_template).priority_class_name);
  }
  const api::KindDef* k = scheme.ByResource(api::scheduling_v1::kGroup, "v1", "priorityclasses");
  if (!pc.empty()) {
    if (!k) return absl::FailedPreconditionError("PriorityClass is not served");
    BATCHD_ASSIGN_OR_RETURN(Json obj, client.Get(*k, "", pc));
    api::kueue::SetPriorityClass(wl, PriorityClassSource::kPriorityClass, obj);
    return absl::OkStatus();
  }
  api::kueue::SetPriority(wl, 0);
  if (!k) return absl::OkStatus();
  BATCHD_ASSIGN_OR_RETURN(client::ListResult all, client.List(*k, ""));
  std::vector<const Json*> classes;
  for (const Json& obj : all.items) classes.push_back(&obj);
  const Json* def = api::scheduling_v1::GlobalDefault(classes);  // as the pods' admission picks
  if (def != nullptr) api::kueue::SetPriorityClass(wl, PriorityClassSource::kPriorityClass, *def);
  return absl::OkStatus();
}

Json PodSetsInfoToJson(const std::vector<PodSetInfo>& infos) {
  Json out = Json::array();
  for (const PodSetInfo& i : infos) out.push_back(i.ToJson());
  return out;
}

std::optional<std::vector<PodSetInfo>> PodSetsInfoFromJson(const Json& j) {
  if (!j.is_array()) return std::nullopt;
  std::vector<PodSetInfo> out;
  for (const Json& e : j) {
    auto info = PodSetInfo::FromJson(e);
    if (!info) return std::nullopt;
    out.push_back(std::move(*info));
  }
  return out;
}

}  // namespace batchd::controllers::workload::internal

namespace batchd::controllers::workload {

// The entries of the kOriginalPodSetsAnnotation array: batchd's own
// encoding of a PodSetInfo (not a field of any API object).
Json PodSetInfo::ToJson() const {
  return {{"name", name},
          {"count", count},
          {"nodeSelector", node_selector},
          {"tolerations", tolerations}};
}

std::optional<PodSetInfo> PodSetInfo::FromJson(const Json& j) {
  const Json* name = api::FindMember(j, "name");
  if (name == nullptr || !name->is_string()) return std::nullopt;
  PodSetInfo info;
  info.name = name->get<std::string>();
  info.count = static_cast<int32_t>(api::IntMember(j, "count"));
  if (const Json& s = api::Member(j, "nodeSelector"); s.is_object()) info.node_selector = s;
  if (const Json& t = api::Member(j, "tolerations"); t.is_array()) info.tolerations = t;
  return info;
}

}  // namespace batchd::controllers::workload
