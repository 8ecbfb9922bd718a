// spec.maximumExecutionTimeSeconds (Kueue's reconcileMaxExecutionTime): an
// admitted workload that runs past its limit, counting the time of earlier
// admissions (status.accumulatedPastExecutionTimeSeconds), is marked
// DeactivationTarget=MaximumExecutionTimeExceeded, deactivated and evicted
// with reason DeactivatedDueToMaximumExecutionTimeExceeded. FakeClock only.
#include <algorithm>

#include "controllers/queueing/queue_manager_test_env.h"

namespace batchd::controllers::queueing::testing {
namespace {

class MaxExecutionTimeTest : public QueueManagerTest {
 protected:
  void LimitedWorkload(const std::string& name, std::optional<int> limit) {
    Json container = {{"name", "c"}, {"image", "busybox"},
                      {"resources", {{"requests", {{"cpu", "1"}}}}}};
    Json spec = {{"queueName", "lq"},
                 {"podSets",
                  {{{"name", "main"},
                    {"count", 1},
                    {"template", {{"spec", {{"containers", {container}}}}}}}}}};
    if (limit) spec["maximumExecutionTimeSeconds"] = *limit;
    Create("workloads", "ns", {{"metadata", {{"name", name}}}, {"spec", spec}});
  }
  bool Active(const std::string& name) { return Wl(name)["spec"].value("active", true); }
  int WarningEvents() {
    auto evs = stack_->ev.events();
    return static_cast<int>(std::count_if(evs.begin(), evs.end(), [](const auto& e) {
      return e.type == "Warning" && e.reason == "MaximumExecutionTimeExceeded";
    }));
  }
};

TEST_F(MaxExecutionTimeTest, EvictsAndDeactivatesOnceTheLimitIsReached) {
  Basic();
  Start();
  LimitedWorkload("limited", 10);
  LimitedWorkload("unlimited", std::nullopt);
  Settle();
  ASSERT_TRUE(Admitted("limited"));
  ASSERT_TRUE(Admitted("unlimited"));

  Advance(absl::Seconds(9));
  EXPECT_TRUE(Active("limited"));
  EXPECT_EQ(Cond(Wl("limited"), "Evicted"), "");
  EXPECT_EQ(WarningEvents(), 0);

  Advance(absl::Seconds(1));
  Json w = Wl("limited");
  EXPECT_FALSE(w["spec"].value("active", true));
  EXPECT_EQ(Cond(w, "Evicted"), "True/DeactivatedDueToMaximumExecutionTimeExceeded");
  EXPECT_EQ(CondMessage(w, "Evicted"),
            "The workload is deactivated due to exceeding the maximum execution time");
  EXPECT_EQ(Cond(w, "DeactivationTarget"), "");  // consumed by the eviction, as in Kueue
  EXPECT_EQ(WarningEvents(), 1);
  auto evs = stack_->ev.events();
  auto it = std::find_if(evs.begin(), evs.end(),
                         [](const auto& e) { return e.reason == "MaximumExecutionTimeExceeded"; });
  ASSERT_NE(it, evs.end());
  EXPECT_EQ(it->message, "The maximum execution time (10s) exceeded");

  // A workload without a limit runs on; nothing is written twice.
  Advance(absl::Hours(1));
  EXPECT_TRUE(Active("unlimited"));
  EXPECT_EQ(Cond(Wl("unlimited"), "Evicted"), "");
  EXPECT_EQ(WarningEvents(), 1);
}

TEST_F(MaxExecutionTimeTest, CountsTimeAccumulatedInEarlierAdmissions) {
  Basic();
  Start();
  LimitedWorkload("w", 10);
  Patch("workloads", "ns", "w", {{"status", {{"accumulatedPastExecutionTimeSeconds", 7}}}},
        /*status=*/true);
  Settle();
  ASSERT_TRUE(Admitted("w"));
  Advance(absl::Seconds(2));
  EXPECT_TRUE(Active("w"));
  Advance(absl::Seconds(1));
  Json w = Wl("w");
  EXPECT_FALSE(w["spec"].value("active", true));
  EXPECT_EQ(Cond(w, "Evicted"), "True/DeactivatedDueToMaximumExecutionTimeExceeded");
  EXPECT_FALSE(w["status"].contains("accumulatedPastExecutionTimeSeconds"));
}

TEST_F(MaxExecutionTimeTest, DeadlineSurvivesARestart) {
  Basic();
  Start();
  LimitedWorkload("w", 30);
  Settle();
  ASSERT_TRUE(Admitted("w"));
  Advance(absl::Seconds(20));
  Restart();
  Advance(absl::Seconds(9));
  EXPECT_TRUE(Active("w"));
  Advance(absl::Seconds(1));
  EXPECT_FALSE(Active("w"));
  EXPECT_EQ(Cond(Wl("w"), "Evicted"), "True/DeactivatedDueToMaximumExecutionTimeExceeded");
}

}  // namespace
}  // namespace batchd::controllers::queueing::testing
