#include "controllers/workload/internal/topology_request.h"

#include <charconv>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/json_access.h"
#include "api/kueue/topology_assignment.h"
#include "api/meta/object_meta.h"
#include "controllers/workload/internal/workload_util.h"

namespace batchd::controllers::workload::internal {
namespace {

namespace k = api::kueue;
using api::Json;

std::optional<std::string> Annotation(const Json& pod_template, const char* key) {
  return api::meta::GetAnnotation(pod_template, key);
}

std::optional<int32_t> ParseInt32(const std::string& s) {
  int32_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

// A topology level is a node label key: a non-empty qualified name.
bool LooksLikeLabelKey(const std::string& s) {
  if (s.empty() || s.size() > 316) return false;
  for (char c : s) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '_' || c == '.' || c == '/';
    if (!ok) return false;
  }
  return true;
}

}  // namespace

std::optional<k::PodSetTopologyRequestValue> TopologyRequestFromTemplate(
    const Json& pod_template, std::string_view pod_index_label) {
  k::PodSetTopologyRequestValue r;
  bool any = false;
  if (auto v = Annotation(pod_template, k::kPodSetRequiredTopology)) {
    r.required = *v;
    any = true;
  } else if (auto v = Annotation(pod_template, k::kPodSetPreferredTopology)) {
    r.preferred = *v;
    any = true;
  } else if (auto v = Annotation(pod_template, k::kPodSetUnconstrainedTopology)) {
    r.unconstrained = ParseBool(*v).value_or(false);
    any = r.unconstrained;
  }
  if (auto v = Annotation(pod_template, k::kPodSetSliceRequiredTopology)) {
    r.slice_required_topology = *v;
    if (auto size = Annotation(pod_template, k::kPodSetSliceSize)) r.slice_size = ParseInt32(*size);
    any = true;
  }
  if (!any) return std::nullopt;
  r.pod_index_label = std::string(pod_index_label);
  return r;
}

void ValidateTopologyAnnotations(const Json& pod_template, int32_t pod_count,
                                 const api::Path& annotations_path, api::ErrorList& errs) {
  std::vector<std::string> modes;
  for (const char* key : {k::kPodSetRequiredTopology, k::kPodSetPreferredTopology,
                          k::kPodSetUnconstrainedTopology}) {
    if (Annotation(pod_template, key)) modes.push_back(key);
  }
  if (modes.size() > 1) {
    errs.push_back(api::Invalid(
        annotations_path, Json(),
        absl::StrCat("must not contain more than one topology annotation: [",
                     absl::StrJoin(modes, ", "), "]")));
  }
  for (const char* key : {k::kPodSetRequiredTopology, k::kPodSetPreferredTopology,
                          k::kPodSetSliceRequiredTopology}) {
    if (auto v = Annotation(pod_template, key); v && !LooksLikeLabelKey(*v)) {
      errs.push_back(api::Invalid(annotations_path.Key(key), *v,
                                  "must be a node label key naming a topology level"));
    }
  }
  if (auto v = Annotation(pod_template, k::kPodSetUnconstrainedTopology); v && !ParseBool(*v)) {
    errs.push_back(
        api::Invalid(annotations_path.Key(k::kPodSetUnconstrainedTopology), *v, "must be a boolean"));
  }
  auto slice_topology = Annotation(pod_template, k::kPodSetSliceRequiredTopology);
  auto slice_size = Annotation(pod_template, k::kPodSetSliceSize);
  const api::Path size_path = annotations_path.Key(k::kPodSetSliceSize);
  if (slice_topology && !slice_size) {
    errs.push_back(api::Required(
        size_path, absl::StrCat("slice size is required if ", k::kPodSetSliceRequiredTopology,
                                " is set")));
  }
  if (slice_size && !slice_topology) {
    errs.push_back(api::Forbidden(
        size_path, absl::StrCat("cannot be set without ", k::kPodSetSliceRequiredTopology)));
  }
  if (slice_size) {
    std::optional<int32_t> n = ParseInt32(*slice_size);
    if (!n || *n < 1) {
      errs.push_back(api::Invalid(size_path, *slice_size, "must be a positive integer"));
    } else if (*n > pod_count) {
      errs.push_back(api::Invalid(size_path, *n,
                                  absl::StrCat("must not be greater than the pod count ", pod_count)));
    } else if (pod_count % *n != 0) {
      errs.push_back(api::Invalid(
          size_path, *n, absl::StrCat("must divide the pod count ", pod_count)));
    }
  }
  // Accepted by Kueue, not implemented by batchd: refused rather than ignored.
  for (const char* key : {k::kPodSetSliceRequiredTopologyConstraints, k::kPodSetGroupName}) {
    if (Annotation(pod_template, key)) {
      errs.push_back(api::Forbidden(annotations_path.Key(key), "not supported by batchd"));
    }
  }
}

bool StripTopologyMarks(Json& pod_template) {
  bool changed = api::meta::RemoveLabel(pod_template, k::kTasLabel);
  changed = api::meta::RemoveLabel(pod_template, k::kPodSetLabel) || changed;
  changed = api::meta::RemoveAnnotation(pod_template, k::kWorkloadAnnotation) || changed;
  Json* gates = api::FindMutableMemberAt(pod_template, {"spec", "schedulingGates"});
  if (gates != nullptr && gates->is_array()) {
    for (auto it = gates->begin(); it != gates->end(); ++it) {
      if (api::StringMember(*it, "name") == k::kTopologySchedulingGate) {
        gates->erase(it);
        changed = true;
        break;
      }
    }
    if (gates->empty()) api::FindMutableMemberAt(pod_template, {"spec"})->erase("schedulingGates");
  }
  return changed;
}

}  // namespace batchd::controllers::workload::internal
