#include "controllers/gc/finished_retention.h"

#include "controllers/gc/gc_test_env.h"
#include "gtest/gtest.h"

namespace batchd::controllers {
namespace {

// What objectRetentionPolicies.workloads.afterFinished does to Workloads,
// shown on Jobs and their Complete condition: deleted `after` past the
// condition's transition, not before; unfinished objects are kept.
TEST(FinishedRetentionTest, DeletesObjectsFinishedLongEnoughAgo) {
  testing::GcEnv env(/*gc=*/false);
  env.Job("done-early");
  env.Job("done-late");
  env.Job("running");
  env.FinishJob("done-early");
  env.clock_.Advance(absl::Minutes(30));
  env.FinishJob("done-late");
  FinishedRetentionSweeper sweeper(env.reg_, env.clock_, env.Jobs(), "Complete", absl::Hours(1));
  env.clock_.Advance(absl::Minutes(29));
  EXPECT_EQ(sweeper.Sweep(), 0);
  env.clock_.Advance(absl::Minutes(1));
  EXPECT_EQ(sweeper.Sweep(), 1);
  auto exists = [&](const char* n) { return env.client_.Get(env.Jobs(), "default", n).ok(); };
  EXPECT_FALSE(exists("done-early"));
  EXPECT_TRUE(exists("done-late"));
  env.clock_.Advance(absl::Hours(2));
  EXPECT_EQ(sweeper.Sweep(), 1);
  EXPECT_FALSE(exists("done-late"));
  EXPECT_TRUE(exists("running"));
}

}  // namespace
}  // namespace batchd::controllers
