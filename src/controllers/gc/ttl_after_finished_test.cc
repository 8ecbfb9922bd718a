#include <optional>
#include <string>
#include <vector>

#include "controllers/gc/gc_test_env.h"
#include "gtest/gtest.h"

namespace batchd::controllers {
namespace {

using api::Json;
using testing::GcEnv;

TEST(TtlAfterFinishedTest, DeletesAtTheRightInstant) {
  struct Case {
    std::string name;
    std::optional<int> ttl;
    bool finish, failed;
    std::optional<absl::Duration> want_gone_after;  // nullopt: never deleted.
  };
  std::vector<Case> cases = {
      {"ttl 60 complete", 60, true, false, absl::Seconds(60)},
      {"ttl 60 failed", 60, true, true, absl::Seconds(60)},
      {"ttl 0 deletes at once", 0, true, false, absl::ZeroDuration()},
      {"no ttl", std::nullopt, true, false, std::nullopt},
      {"not finished", 5, false, false, std::nullopt},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    GcEnv e(/*gc=*/false, /*ttl=*/true);
    Json job = api::testing::MakeJob("j").Obj();
    if (c.ttl) job["spec"]["ttlSecondsAfterFinished"] = *c.ttl;
    e.MustCreate(e.Jobs(), job);
    e.mgr_.RunUntilIdle();
    if (c.finish) e.FinishJob("j", c.failed);
    e.mgr_.RunUntilIdle();
    if (c.want_gone_after && *c.want_gone_after == absl::ZeroDuration()) {
      EXPECT_FALSE(e.Exists(e.Jobs(), "j"));
      continue;
    }
    absl::Duration just_before =
        c.want_gone_after ? *c.want_gone_after - absl::Milliseconds(1) : absl::Hours(1);
    e.clock_.Advance(just_before);
    e.mgr_.RunUntilIdle();
    EXPECT_TRUE(e.Exists(e.Jobs(), "j"));
    if (!c.want_gone_after) continue;
    e.clock_.Advance(absl::Milliseconds(1));
    e.mgr_.RunUntilIdle();
    EXPECT_FALSE(e.Exists(e.Jobs(), "j"));
  }
}

TEST(TtlAfterFinishedTest, DeletionCascadesToPodsThroughTheGarbageCollector) {
  GcEnv e(/*gc=*/true, /*ttl=*/true);
  Json job = api::testing::MakeJob("j").Obj();
  job["spec"]["ttlSecondsAfterFinished"] = 30;
  job = e.MustCreate(e.Jobs(), job);
  e.Pod("p", {GcEnv::Ref(job)});
  e.FinishJob("j");
  e.mgr_.RunUntilIdle();
  e.clock_.Advance(absl::Seconds(29));
  e.mgr_.RunUntilIdle();
  EXPECT_TRUE(e.Exists(e.Pods(), "p"));
  e.clock_.Advance(absl::Seconds(1));
  e.mgr_.RunUntilIdle();
  EXPECT_FALSE(e.Exists(e.Jobs(), "j"));
  EXPECT_FALSE(e.Exists(e.Pods(), "p"));
}

}  // namespace
}  // namespace batchd::controllers
