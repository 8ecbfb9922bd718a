#include "controllers/jobset/internal/volume_claims.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "api/core/v1/claim_deletion.h"
#include "api/jobset/v1alpha2/constants.h"
#include "api/meta/object_meta.h"
#include "common/string_view.h"

namespace batchd::controllers::jobset::internal {

namespace js = api::jobset_v1alpha2;
using api::Json;

std::set<std::string> RecordedClaimNodes(const Json& jobset) {
  std::set<std::string> out;
  const std::optional<std::string> v = api::meta::GetAnnotation(jobset, js::kClaimNodesAnnotation);
  if (!v) return out;
  for (absl::string_view n : absl::StrSplit(*v, ',', absl::SkipEmpty())) out.emplace(n);
  return out;
}

std::string ClaimNodesValue(const std::set<std::string>& nodes) {
  return absl::StrJoin(nodes, ",");
}

std::vector<std::string> ClaimsToDelete(const js::JobSetView& view) {
  std::vector<std::string> out;
  for (const js::VolumeClaimView& c : view.spec.volume_claims) {
    if (c.delete_with_jobset) out.push_back(js::ClaimName(c.name, view.meta.name));
  }
  return out;
}

std::string ClaimCleanupPodName(std::string_view jobset, size_t index) {
  return absl::StrCat(Sv(jobset), "-claims-", index);
}

Json NewClaimCleanupPod(const js::JobSetView& view, const std::string& node, size_t index,
                        const std::vector<std::string>& claims) {
  Json volumes = Json::array();
  for (size_t i = 0; i < claims.size(); ++i) {
    volumes.push_back({{"name", absl::StrCat("claim-", i)},
                       {"persistentVolumeClaim", {{"claimName", claims[i]}}}});
  }
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata",
           {{"name", ClaimCleanupPodName(view.meta.name, index)},
            {"namespace", std::string(view.meta.namespace_)},
            {"labels", {{js::kClaimCleanupLabel, std::string(view.meta.uid)}}},
            {"annotations", {{api::core_v1::kDeleteClaimsAnnotation, "true"}}}}},
          {"spec",
           {{"nodeName", node},
            {"restartPolicy", "Never"},
            {"terminationGracePeriodSeconds", 0},
            {"tolerations", Json::array({{{"operator", "Exists"}}})},
            {"volumes", volumes},
            {"containers", Json::array({{{"name", "delete-claims"},
                                         {"image", "batchd/delete-claims"},
                                         {"command", Json::array({"true"})}}})}}}};
}

}  // namespace batchd::controllers::jobset::internal
