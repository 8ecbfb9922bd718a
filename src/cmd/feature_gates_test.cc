#include "cmd/feature_gates.h"

#include "gtest/gtest.h"

namespace batchd::cmd {
namespace {

TEST(FeatureGatesTest, DefaultsAndValues) {
  auto none = ParseFeatureGates("");
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->workload_with_job);  // batchd's default (Kubernetes 1.36: false).
  auto off = ParseFeatureGates("WorkloadWithJob=false");
  ASSERT_TRUE(off.ok());
  EXPECT_FALSE(off->workload_with_job);
  auto on = ParseFeatureGates(" WorkloadWithJob = T ,");
  ASSERT_TRUE(on.ok());
  EXPECT_TRUE(on->workload_with_job);
}

TEST(FeatureGatesTest, BadInputIsRefused) {
  struct Case {
    std::string flag, want;
  };
  for (const Case& c : std::vector<Case>{
           {"GangScheduling=true", "unrecognized feature gate: GangScheduling"},
           {"WorkloadWithJob", "missing bool value for WorkloadWithJob"},
           {"WorkloadWithJob=maybe",
            "invalid value of WorkloadWithJob=maybe, err: strconv.ParseBool: parsing \"maybe\": "
            "invalid syntax"},
       }) {
    SCOPED_TRACE(c.flag);
    auto r = ParseFeatureGates(c.flag);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().message(), c.want);
  }
}

}  // namespace
}  // namespace batchd::cmd
