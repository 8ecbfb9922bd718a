// Partial admission (reference §2.9): binary search on pod counts down to minCount.
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "queueing/internal/test_util.h"

namespace batchd::queueing {
namespace {

using namespace batchd::queueing::testing;  // NOLINT

TEST(PartialAdmissionTest, LargestCountThatFits) {
  struct Case {
    std::string name;
    int64_t nominal;
    int64_t used;
    int32_t count;
    std::optional<int32_t> min_count;
    int32_t want_count;  // 0 = not admitted
    bool preempt = false;
  };
  std::vector<Case> cases = {
      {"full size fits", 10, 0, 8, 2, 8},
      {"reduced to what fits", 10, 6, 8, 2, 4},
      {"reduced to minCount", 10, 8, 8, 2, 2},
      {"below minCount: not admitted", 10, 9, 8, 2, 0},
      {"no minCount: all or nothing", 10, 6, 8, std::nullopt, 0},
      {"full size with preemption beats a smaller fit", 10, 6, 8, 2, 0, true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Scenario s;
    CqBuilder cq("a");
    cq.Flavor("default", c.nominal);
    if (c.preempt) cq.Within(PreemptionPolicy::kLowerPriority);
    s.cqs = {cq.Obj()};
    if (c.used) {
      s.admitted = {{WlBuilder("run", "a").Cpu(c.used).Obj(), AdmitOn("a", "default", c.used)}};
    }
    s.pending = {WlBuilder("w", "a").Cpu(1).Count(c.count, c.min_count).Priority(1).Obj()};
    auto core = Load(s);
    auto ds = core->RunCycle(absl::FromUnixSeconds(1));
    Summary r = Summarize(ds);
    if (c.want_count == 0) {
      EXPECT_TRUE(r.admitted.empty());
    } else {
      ASSERT_EQ(r.admitted.size(), 1u);
      EXPECT_EQ(r.count["ns/w"], c.want_count);
      EXPECT_EQ(ds[0].admission.pod_sets[0].resource_usage.at("cpu"), U(c.want_count));
    }
    if (c.preempt) {
      EXPECT_EQ(r.preempted.size(), 1u);
    }
  }
}

}  // namespace
}  // namespace batchd::queueing
