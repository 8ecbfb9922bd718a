#include "controllers/workload/internal/workload_util.h"

#include <algorithm>
#include <boost/uuid/detail/sha1.hpp>
#include <cctype>
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "api/json_access.h"
#include "api/kueue/queue_views.h"
#include "api/meta/conditions.h"
#include "api/meta/object_meta.h"
#include "api/meta/time_util.h"

namespace batchd::controllers::workload::internal {

namespace {

using api::Member;
using api::kueue::PodSetAssignmentView;
using api::kueue::PodSetView;
using api::kueue::WorkloadPodSetsView;

// An empty object/array and null mean the same thing in a template.
Json OrNull(const Json& v) {
  if (v.is_null() || (v.is_object() && v.empty()) || (v.is_array() && v.empty())) return nullptr;
  return v;
}

Json ContainerSignature(const Json& c) {
  Json resources = Member(c, "resources");
  Json sig = {{"name", Member(c, "name")}, {"image", Member(c, "image")}};
  Json requests = OrNull(Member(resources, "requests"));
  Json limits = OrNull(Member(resources, "limits"));
  if (limits.is_object()) {
    if (!requests.is_object()) requests = Json::object();
    for (auto it = limits.begin(); it != limits.end(); ++it) {
      if (!requests.contains(it.key())) requests[it.key()] = it.value();
    }
  }
  sig["requests"] = requests;
  sig["limits"] = limits;
  return sig;
}

Json TemplateSignature(const Json& tmpl) {
  const Json& spec = Member(tmpl, "spec");
  Json sig = Json::object();
  for (const char* list : {"initContainers", "containers"}) {
    Json out = Json::array();
    const Json& cs = Member(spec, list);
    if (cs.is_array()) {
      for (const Json& c : cs) out.push_back(ContainerSignature(c));
    }
    sig[list] = out;
  }
  sig["nodeSelector"] = OrNull(Member(spec, "nodeSelector"));
  sig["tolerations"] = OrNull(Member(spec, "tolerations"));
  sig["nodeAffinity"] = OrNull(Member(Member(spec, "affinity"), "nodeAffinity"));
  sig["priorityClassName"] = Member(spec, "priorityClassName");
  return sig;
}

Json PodSetSignature(const Json& ps) {
  return {{"name", Member(ps, "name")},
          {"count", Member(ps, "count").is_number_integer() ? Member(ps, "count") : Json(1)},
          {"minCount", Member(ps, "minCount")},
          {"template", TemplateSignature(Member(ps, "template"))}};
}

void DefaultContainers(Json& containers) {
  if (!containers.is_array()) return;
  for (Json& c : containers) {
    if (!c.is_object() || !c.contains("resources")) continue;
    Json& res = c["resources"];
    const Json& limits = Member(res, "limits");
    if (!limits.is_object() || limits.empty()) continue;
    Json& requests = res["requests"];
    if (!requests.is_object()) requests = Json::object();
    for (auto it = limits.begin(); it != limits.end(); ++it) {
      if (!requests.contains(it.key())) requests[it.key()] = it.value();
    }
  }
}

void MergeTolerations(Json& into, const Json& more) {
  if (!more.is_array()) return;
  for (const Json& t : more) {
    if (std::find(into.begin(), into.end(), t) == into.end()) into.push_back(t);
  }
}

}  // namespace

std::string QueueName(const Json& obj) {
  auto label = api::meta::GetLabel(obj, kQueueNameKey);
  if (label && !label->empty()) return *label;
  return api::meta::GetAnnotation(obj, kQueueNameKey).value_or("");
}

bool HasQuotaReservation(const Json& wl) {
  return api::meta::IsConditionTrue(wl, kCondQuotaReserved);
}

bool IsAdmitted(const Json& wl) {
  return HasQuotaReservation(wl) && api::meta::IsConditionTrue(wl, kCondAdmitted);
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

void DefaultRequestsFromLimits(Json& pod_template) {
  if (!pod_template.is_object() || !pod_template.contains("spec")) return;
  Json& spec = pod_template["spec"];
  if (!spec.is_object()) return;
  if (spec.contains("containers")) DefaultContainers(spec["containers"]);
  if (spec.contains("initContainers")) DefaultContainers(spec["initContainers"]);
}

bool EquivalentPodSets(const std::vector<Json>& job_podsets, const Json& wl_podsets) {
  if (!wl_podsets.is_array() || wl_podsets.size() != job_podsets.size()) return false;
  for (size_t i = 0; i < job_podsets.size(); ++i) {
    if (PodSetSignature(job_podsets[i]) != PodSetSignature(wl_podsets[i])) return false;
  }
  return true;
}

std::vector<PodSetInfo> PodSetsInfoFromSpec(const Json& wl) {
  std::vector<PodSetInfo> out;
  for (const PodSetView& ps : WorkloadPodSetsView::Parse(wl).pod_sets) {
    PodSetInfo info;
    info.name = std::string(ps.name);
    info.count = ps.count;
    if (ps.pod_template != nullptr) {
      const Json& spec = api::MemberObject(*ps.pod_template, "spec");
      if (const Json& s = Member(spec, "nodeSelector"); s.is_object()) info.node_selector = s;
      if (const Json& t = Member(spec, "tolerations"); t.is_array()) info.tolerations = t;
    }
    out.push_back(std::move(info));
  }
  return out;
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
      const Json& rspec = Member(*rf, "spec");
      const Json& labels = Member(rspec, "nodeLabels");
      if (labels.is_object()) info.node_selector.update(labels);
      MergeTolerations(info.tolerations, Member(rspec, "tolerations"));
    }
    out.push_back(std::move(info));
  }
  return out;
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

Json PodSetInfo::ToJson() const {
  return {{"name", name},
          {"count", count},
          {"nodeSelector", node_selector},
          {"tolerations", tolerations}};
}

std::optional<PodSetInfo> PodSetInfo::FromJson(const Json& j) {
  if (!j.is_object() || !j.contains("name") || !j["name"].is_string()) return std::nullopt;
  PodSetInfo info;
  info.name = j["name"].get<std::string>();
  info.count = j.value("count", 0);
  if (j.contains("nodeSelector") && j["nodeSelector"].is_object()) {
    info.node_selector = j["nodeSelector"];
  }
  if (j.contains("tolerations") && j["tolerations"].is_array()) info.tolerations = j["tolerations"];
  return info;
}

}  // namespace batchd::controllers::workload
