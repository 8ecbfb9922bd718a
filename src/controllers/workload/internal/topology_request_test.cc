// The topology annotations of a pod template (or a plain pod): what becomes
// the pod set's topologyRequest, and what the webhooks refuse, with paths.
#include "controllers/workload/internal/topology_request.h"

#include <string>
#include <vector>

#include "api/kueue/topology_assignment.h"
#include "api/meta/object_meta.h"
#include "gtest/gtest.h"

namespace batchd::controllers::workload::internal {
namespace {

using api::Json;
namespace k = api::kueue;

Json Template(const std::map<std::string, std::string>& annotations) {
  Json t = {{"metadata", Json::object()}, {"spec", Json::object()}};
  for (const auto& [key, value] : annotations) api::meta::SetAnnotation(t, key, value);
  return t;
}

std::string Errors(const Json& tmpl, int32_t pods) {
  api::ErrorList errs;
  ValidateTopologyAnnotations(tmpl, pods, api::Path("metadata").Child("annotations"), errs);
  std::string out;
  for (const api::FieldError& e : errs) out += (out.empty() ? "" : "\n") + e.Message();
  return out;
}

TEST(TopologyAnnotationsTest, MultiLayerSlicesBecomeLayers) {
  Json t = Template({{k::kPodSetRequiredTopology, "block"},
                     {k::kPodSetSliceRequiredTopologyConstraints,
                      R"([{"topology":"rack","size":8},{"topology":"kubernetes.io/hostname","size":4}])"}});
  EXPECT_EQ(Errors(t, 16), "");
  auto r = TopologyRequestFromTemplate(t, "idx");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->required, "block");
  ASSERT_EQ(r->slice_layers.size(), 2u);
  EXPECT_EQ(r->slice_layers[0].topology, "rack");
  EXPECT_EQ(r->slice_layers[0].size, 8);
  EXPECT_EQ(r->slice_layers[1].topology, "kubernetes.io/hostname");
  EXPECT_EQ(r->slice_layers[1].size, 4);
  EXPECT_TRUE(r->slice_required_topology.empty());
}

TEST(TopologyAnnotationsTest, GroupNameNeedsARequiredOrPreferredLevel) {
  Json t = Template({{k::kPodSetPreferredTopology, "rack"}, {k::kPodSetGroupName, "lws"}});
  EXPECT_EQ(Errors(t, 4), "");
  auto r = TopologyRequestFromTemplate(t, "idx");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->pod_set_group_name, "lws");
}

TEST(TopologyAnnotationsTest, BadAnnotationsAreRefusedWithPaths) {
  const std::string constraints =
      "metadata.annotations[kueue.x-k8s.io/podset-slice-required-topology-constraints]";
  const std::string group = "metadata.annotations[kueue.x-k8s.io/podset-group-name]";
  struct Case {
    std::string name;
    std::map<std::string, std::string> annotations;
    int32_t pods;
    std::string want;
  };
  const std::vector<Case> cases = {
      {"not JSON", {{k::kPodSetSliceRequiredTopologyConstraints, "rack=2"}}, 4,
       constraints + ": Invalid value: \"rack=2\": must be a valid JSON array of "
                     "{\"topology\", \"size\"} objects"},
      {"four layers",
       {{k::kPodSetSliceRequiredTopologyConstraints,
         R"([{"topology":"a","size":8},{"topology":"b","size":4},{"topology":"c","size":2},{"topology":"d","size":1}])"}},
       8,
       constraints + ": Invalid value: \"[{\\\"topology\\\":\\\"a\\\",\\\"size\\\":8},{\\\"topology\\\":"
                     "\\\"b\\\",\\\"size\\\":4},{\\\"topology\\\":\\\"c\\\",\\\"size\\\":2},"
                     "{\\\"topology\\\":\\\"d\\\",\\\"size\\\":1}]\": topology constraints must "
                     "contain between 1 and 3 entries"},
      {"layers that do not divide",
       {{k::kPodSetSliceRequiredTopologyConstraints,
         R"([{"topology":"rack","size":6},{"topology":"rack","size":4}])"}},
       12,
       constraints + "[1].topology: Duplicate value: \"rack\"\n" + constraints +
           "[1].size: Invalid value: 4: must evenly divide the parent layer size 6"},
      {"outermost layer does not divide the pods",
       {{k::kPodSetSliceRequiredTopologyConstraints, R"([{"topology":"rack","size":4}])"}}, 6,
       constraints + "[0].size: Invalid value: 4: must divide the pod count 6"},
      {"with the single-layer form",
       {{k::kPodSetSliceRequiredTopology, "rack"},
        {k::kPodSetSliceSize, "2"},
        {k::kPodSetSliceRequiredTopologyConstraints, R"([{"topology":"rack","size":2}])"}},
       4,
       constraints + ": Forbidden: may not be set when "
                     "'kueue.x-k8s.io/podset-slice-required-topology' is specified\n" +
           constraints + ": Forbidden: may not be set when 'kueue.x-k8s.io/podset-slice-size' "
                         "is specified"},
      {"group without a level", {{k::kPodSetGroupName, "g"}}, 4,
       group + ": Forbidden: may not be set when neither "
               "'kueue.x-k8s.io/podset-preferred-topology' nor "
               "'kueue.x-k8s.io/podset-required-topology' is specified"},
      {"numeric group", {{k::kPodSetRequiredTopology, "rack"}, {k::kPodSetGroupName, "42"}}, 4,
       group + ": Invalid value: \"42\": must not be a number"},
      {"group with slices",
       {{k::kPodSetRequiredTopology, "rack"},
        {k::kPodSetGroupName, "g"},
        {k::kPodSetSliceRequiredTopology, "rack"},
        {k::kPodSetSliceSize, "2"}},
       4,
       group + ": Forbidden: may not be set when 'kueue.x-k8s.io/podset-slice-size' is "
               "specified\n" +
           group + ": Forbidden: may not be set when "
                   "'kueue.x-k8s.io/podset-slice-required-topology' is specified"},
      {"a plain pod: the count is unknown, not checked",
       {{k::kPodSetSliceRequiredTopology, "rack"}, {k::kPodSetSliceSize, "3"}}, 0, ""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(Errors(Template(c.annotations), c.pods), c.want);
  }
}

}  // namespace
}  // namespace batchd::controllers::workload::internal
