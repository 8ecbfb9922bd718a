#include "controllers/workload/internal/pod_adapter.h"

#include <boost/uuid/detail/sha1.hpp>
#include <charconv>
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "api/core/v1/pod_view.h"
#include "api/json_access.h"
#include "api/kueue/topology_assignment.h"
#include "api/kueue/workload_writers.h"
#include "api/meta/object_meta.h"
#include "controllers/workload/internal/topology_request.h"

namespace batchd::controllers::workload::internal {
namespace {

using api::Json;
using api::core_v1::PodPhase;
using api::core_v1::PodView;

// What a container contributes to its pod's role (Kueue's ContainersShape).
Json ContainersShape(const Json& containers) {
  Json out = Json::array();
  if (!containers.is_array()) return out;
  for (const Json& c : containers) {
    out.push_back({{"requests", api::MemberAt(c, {"resources", "requests"})},
                   {"ports", api::Member(c, "ports")}});
  }
  return out;
}

}  // namespace

std::string GroupName(const Json& pod) {
  return api::meta::GetLabel(pod, kGroupNameLabel).value_or("");
}

absl::StatusOr<int32_t> GroupTotalCount(const Json& pod) {
  auto raw = api::meta::GetAnnotation(pod, kGroupTotalCountAnnotation);
  if (!raw) {
    return absl::InvalidArgumentError(
        absl::StrCat("failed to extract '", kGroupTotalCountAnnotation, "' annotation"));
  }
  int64_t n = 0;
  auto [end, ec] = std::from_chars(raw->data(), raw->data() + raw->size(), n);
  if (ec != std::errc() || end != raw->data() + raw->size() || raw->empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("strconv.Atoi: parsing \"", *raw, "\": invalid syntax"));
  }
  if (n < 1 || n > INT32_MAX) {
    return absl::InvalidArgumentError(absl::StrCat(
        "incorrect annotation value '", kGroupTotalCountAnnotation, "=", *raw,
        "': group total count should be greater than zero"));
  }
  return static_cast<int32_t>(n);
}

bool IsManaged(const Json& pod) {
  return api::meta::GetLabel(pod, kManagedLabel).value_or("") == kManagedValue;
}

bool IsGated(const Json& pod) { return PodView::Parse(pod).HasSchedulingGate(kAdmissionGate); }

bool IsUnretriable(const Json& pod) {
  return api::meta::GetAnnotation(pod, kRetriableInGroupAnnotation).value_or("") == "false";
}

bool RunnableOrSucceeded(const Json& pod) {
  const PodView v = PodView::Parse(pod);
  if (v.meta.being_deleted() && v.node_name.empty()) return false;
  return v.phase != PodPhase::kFailed;
}

std::string ComputeRoleHash(const Json& spec) {
  Json shape = {{"initContainers", ContainersShape(api::Member(spec, "initContainers"))},
                {"containers", ContainersShape(api::Member(spec, "containers"))}};
  for (const char* f : {"nodeSelector", "affinity", "tolerations", "runtimeClassName", "priority",
                        "topologySpreadConstraints", "overhead", "resourceClaims"}) {
    shape[f] = api::Member(spec, f);
  }
  if (const Json* r = api::FindMember(spec, "resources")) shape["resources"] = api::Member(*r, "requests");
  const std::string text = Json{{"spec", std::move(shape)}}.dump();
  boost::uuids::detail::sha1 h;
  h.process_bytes(text.data(), text.size());
  boost::uuids::detail::sha1::digest_type digest;
  h.get_digest(digest);
  char hex[9];
  std::snprintf(hex, sizeof(hex), "%08x", digest[0]);
  return std::string(hex, 8);
}

std::string RoleHash(const Json& pod) {
  if (auto v = api::meta::GetAnnotation(pod, kRoleHashAnnotation); v && !v->empty()) return *v;
  return ComputeRoleHash(api::Member(pod, "spec"));
}

void MarkManaged(Json& pod) {
  api::meta::SetLabel(pod, kManagedLabel, kManagedValue);
  api::meta::AddFinalizer(pod, kPodFinalizer);
  api::core_v1::AddSchedulingGate(pod, kAdmissionGate);
  api::core_v1::AddSchedulingGate(pod, api::kueue::kTopologySchedulingGate);
  if (auto source = api::meta::GetAnnotation(pod, kPodGroupPodIndexLabelAnnotation)) {
    api::meta::SetLabel(pod, kPodGroupPodIndexLabel,
                        api::meta::GetLabel(pod, *source).value_or(""));
  }
  api::meta::SetAnnotation(pod, kRoleHashAnnotation, RoleHash(pod));
}

Json PodSetOf(const Json& pod, const std::string& name, int32_t count) {
  Json spec = api::Member(pod, "spec");
  if (spec.is_object()) {
    // What the pod carries for Kueue and the kubelet is not its shape.
    for (const char* f : {"schedulingGates", "nodeName"}) spec.erase(f);
  }
  Json tmpl = {{"spec", std::move(spec)}};
  api::kueue::UseLimitsAsMissingRequests(tmpl);
  Json out = api::kueue::NewPodSet(name, count, std::nullopt, std::move(tmpl));
  if (auto topology = TopologyRequestFromTemplate(pod, kPodGroupPodIndexLabel)) {
    api::kueue::SetPodSetTopologyRequest(out, *topology);
  }
  return out;
}

bool PodAdapter::IsSuspended(const Json& pod) const {
  return PodView::Parse(pod).terminal() || IsGated(pod);
}

bool PodAdapter::IsActive(const Json& pod) const {
  return PodView::Parse(pod).phase == PodPhase::kRunning;
}

std::optional<FinishedState> PodAdapter::Finished(const Json& pod) const {
  const PodView v = PodView::Parse(pod);
  if (!v.terminal()) return std::nullopt;
  return FinishedState{v.phase == PodPhase::kSucceeded, std::string(v.message)};
}

bool PodAdapter::PodsReady(const Json& pod) const {
  return PodView::Parse(pod).ConditionStatus("Ready") == "True";
}

absl::StatusOr<std::vector<Json>> PodAdapter::PodSets(const Json& pod) const {
  return std::vector<Json>{PodSetOf(pod, "main", 1)};
}

absl::Status PodAdapter::RunWithPodSetsInfo(Json& pod, const std::vector<PodSetInfo>& infos) const {
  if (infos.size() != 1) {
    return absl::InvalidArgumentError(absl::StrCat("expecting 1 pod set info, got ", infos.size()));
  }
  const PodSetInfo& info = infos[0];
  api::core_v1::MergeNodeSelector(pod, info.node_selector);
  api::core_v1::MergeTolerations(pod, info.tolerations);
  for (auto it = info.labels.begin(); it != info.labels.end(); ++it) {
    api::meta::SetLabel(pod, it.key(), it.value().get<std::string>());
  }
  for (auto it = info.annotations.begin(); it != info.annotations.end(); ++it) {
    api::meta::SetAnnotation(pod, it.key(), it.value().get<std::string>());
  }
  api::core_v1::RemoveSchedulingGate(pod, kAdmissionGate);
  bool topology = false;
  for (const std::string& g : info.scheduling_gates) {
    topology = topology || g == api::kueue::kTopologySchedulingGate;
  }
  // Placed without topology-aware admission: nothing will lift that gate.
  if (!topology) api::core_v1::RemoveSchedulingGate(pod, api::kueue::kTopologySchedulingGate);
  return absl::OkStatus();
}

}  // namespace batchd::controllers::workload::internal
