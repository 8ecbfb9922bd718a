#include "controllers/workload/internal/topology_request.h"

#include <charconv>
#include <climits>
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

using SliceLayer = k::PodSetTopologyRequestValue::SliceLayer;

// The multi-layer slice annotation's layers; nullopt when it is not a JSON
// array of {topology: string, size: int32} objects.
std::optional<std::vector<SliceLayer>> ParseSliceLayers(const std::string& raw) {
  const Json parsed = Json::parse(raw, nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_array()) return std::nullopt;
  std::vector<SliceLayer> out;
  for (const Json& e : parsed) {
    if (!e.is_object()) return std::nullopt;
    for (const auto& [key, value] : e.items()) {
      if (key != "topology" && key != "size") return std::nullopt;
    }
    const Json& topology = api::Member(e, "topology");
    const Json& size = api::Member(e, "size");
    if (!topology.is_string() || !size.is_number_integer()) return std::nullopt;
    const int64_t n = size.get<int64_t>();
    if (n < INT32_MIN || n > INT32_MAX) return std::nullopt;
    out.push_back({topology.get<std::string>(), static_cast<int32_t>(n)});
  }
  return out;
}

void ValidateSliceLayers(const std::string& raw, int32_t pod_count, const api::Path& path,
                         api::ErrorList& errs) {
  std::optional<std::vector<SliceLayer>> layers = ParseSliceLayers(raw);
  if (!layers) {
    errs.push_back(api::Invalid(path, raw,
                                "must be a valid JSON array of {\"topology\", \"size\"} objects"));
    return;
  }
  if (layers->empty() || layers->size() > 3) {
    errs.push_back(api::Invalid(path, raw, "topology constraints must contain between 1 and 3 entries"));
    return;
  }
  for (size_t i = 0; i < layers->size(); ++i) {
    const SliceLayer& l = (*layers)[i];
    if (!LooksLikeLabelKey(l.topology)) {
      errs.push_back(api::Invalid(path.Index(i).Child("topology"), l.topology,
                                  "must be a node label key naming a topology level"));
    }
    for (size_t j = 0; j < i; ++j) {
      if ((*layers)[j].topology == l.topology) {
        errs.push_back(api::Duplicate(path.Index(i).Child("topology"), l.topology));
        break;
      }
    }
    if (l.size < 1) {
      errs.push_back(api::Invalid(path.Index(i).Child("size"), l.size,
                                  "must be greater than or equal to 1"));
    } else if (i > 0 && (*layers)[i - 1].size > 0 && (*layers)[i - 1].size % l.size != 0) {
      errs.push_back(api::Invalid(path.Index(i).Child("size"), l.size,
                                  absl::StrCat("must evenly divide the parent layer size ",
                                               (*layers)[i - 1].size)));
    }
  }
  const int32_t outer = (*layers)[0].size;
  if (pod_count > 0 && outer > 0 && (outer > pod_count || pod_count % outer != 0)) {
    errs.push_back(api::Invalid(path.Index(0).Child("size"), outer,
                                absl::StrCat("must divide the pod count ", pod_count)));
  }
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
  } else if (auto v = Annotation(pod_template, k::kPodSetSliceRequiredTopologyConstraints)) {
    if (auto layers = ParseSliceLayers(*v)) r.slice_layers = std::move(*layers);
    any = true;
  }
  if (auto v = Annotation(pod_template, k::kPodSetGroupName);
      v && (!r.required.empty() || !r.preferred.empty())) {
    r.pod_set_group_name = *v;
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
    } else if (pod_count > 0 && *n > pod_count) {
      errs.push_back(api::Invalid(size_path, *n,
                                  absl::StrCat("must not be greater than the pod count ", pod_count)));
    } else if (pod_count > 0 && pod_count % *n != 0) {
      errs.push_back(api::Invalid(
          size_path, *n, absl::StrCat("must divide the pod count ", pod_count)));
    }
  }
  auto constraints = Annotation(pod_template, k::kPodSetSliceRequiredTopologyConstraints);
  const api::Path constraints_path = annotations_path.Key(k::kPodSetSliceRequiredTopologyConstraints);
  if (constraints) {
    for (const char* key : {k::kPodSetSliceRequiredTopology, k::kPodSetSliceSize}) {
      if (Annotation(pod_template, key)) {
        errs.push_back(api::Forbidden(constraints_path,
                                      absl::StrCat("may not be set when '", key, "' is specified")));
      }
    }
    ValidateSliceLayers(*constraints, pod_count, constraints_path, errs);
  }
  if (auto group = Annotation(pod_template, k::kPodSetGroupName)) {
    const api::Path group_path = annotations_path.Key(k::kPodSetGroupName);
    if (!group->empty() &&
        group->find_first_not_of("0123456789") == std::string::npos) {
      errs.push_back(api::Invalid(group_path, *group, "must not be a number"));
    }
    for (const char* key : {k::kPodSetSliceSize, k::kPodSetSliceRequiredTopology,
                            k::kPodSetSliceRequiredTopologyConstraints}) {
      if (Annotation(pod_template, key)) {
        errs.push_back(api::Forbidden(group_path,
                                      absl::StrCat("may not be set when '", key, "' is specified")));
      }
    }
    if (!Annotation(pod_template, k::kPodSetRequiredTopology) &&
        !Annotation(pod_template, k::kPodSetPreferredTopology)) {
      errs.push_back(api::Forbidden(
          group_path, absl::StrCat("may not be set when neither '", k::kPodSetPreferredTopology,
                                   "' nor '", k::kPodSetRequiredTopology, "' is specified")));
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
