#include "api/core/v1/taint.h"

#include "gtest/gtest.h"

namespace batchd::api::core_v1 {
namespace {

TEST(TaintTest, ParsesNodeTaints) {
  Json node = Json::parse(R"({"spec":{"taints":[
      {"key":"gpu","value":"yes","effect":"NoSchedule","timeAdded":"2026-01-01T00:00:00Z"},
      {"key":"spot","effect":"NoExecute"},
      {"key":"odd","effect":"Sometimes"}]}})");
  std::vector<Taint> taints = ParseTaints(node);
  ASSERT_EQ(taints.size(), 2u);  // the undefined effect is skipped
  EXPECT_EQ(taints[0], (Taint{"gpu", "yes", TaintEffect::kNoSchedule, "2026-01-01T00:00:00Z"}));
  EXPECT_EQ(taints[1], (Taint{"spot", "", TaintEffect::kNoExecute, ""}));
  EXPECT_TRUE(ParseTaints(Json::object()).empty());
}

TEST(TaintTest, ParsesTolerations) {
  Json spec = Json::parse(R"({"tolerations":[
      {"key":"k","operator":"Exists","effect":"NoExecute","tolerationSeconds":30},
      {"key":"a","value":"b"},
      {"key":"x","operator":"Like"},
      {"key":"y","effect":"Never"}]})");
  std::vector<Toleration> tolerations = ParseTolerations(spec);
  ASSERT_EQ(tolerations.size(), 2u);
  EXPECT_EQ(tolerations[0].op, TolerationOperator::kExists);
  EXPECT_EQ(tolerations[0].effect, TaintEffect::kNoExecute);
  EXPECT_EQ(tolerations[0].toleration_seconds, 30);
  EXPECT_EQ(tolerations[1].op, TolerationOperator::kEqual);  // the default
  EXPECT_EQ(tolerations[1].effect, std::nullopt);
}

TEST(TaintTest, Matching) {
  const Taint gpu{"gpu", "true", TaintEffect::kNoSchedule, ""};
  using Op = TolerationOperator;
  EXPECT_TRUE(ToleratesTaint({"gpu", Op::kEqual, "true", TaintEffect::kNoSchedule, {}}, gpu));
  EXPECT_TRUE(ToleratesTaint({"gpu", Op::kEqual, "true", {}, {}}, gpu));
  EXPECT_FALSE(ToleratesTaint({"gpu", Op::kEqual, "false", {}, {}}, gpu));
  EXPECT_TRUE(ToleratesTaint({"gpu", Op::kExists, "", {}, {}}, gpu));
  EXPECT_TRUE(ToleratesTaint({"", Op::kExists, "", {}, {}}, gpu));
  EXPECT_FALSE(ToleratesTaint({"", Op::kExists, "", TaintEffect::kNoExecute, {}}, gpu));
  EXPECT_FALSE(ToleratesTaint({"x", Op::kExists, "", {}, {}}, gpu));
  EXPECT_FALSE(ToleratesTaint({"", Op::kEqual, "true", {}, {}}, gpu));
  std::vector<Toleration> tolerations = {{"x", Op::kExists, "", {}, {}},
                                         {"gpu", Op::kExists, "", {}, {}}};
  EXPECT_EQ(FindToleration(tolerations, gpu), &tolerations[1]);
  EXPECT_TRUE(Tolerated(tolerations, gpu));
  EXPECT_FALSE(Tolerated({}, gpu));
  EXPECT_STREQ(TaintEffectName(TaintEffect::kPreferNoSchedule), "PreferNoSchedule");
}

}  // namespace
}  // namespace batchd::api::core_v1
