#include "api/jobset/v1alpha2/jobset_writers.h"

#include "api/jobset/v1alpha2/constants.h"
#include "api/jobset/v1alpha2/jobset_view.h"
#include "gtest/gtest.h"

namespace batchd::api::jobset_v1alpha2 {
namespace {

const absl::Time kT0 = absl::FromUnixSeconds(1767225600);

TEST(JobSetWritersTest, ReplicatedJobsStatusChangesOnlyWhenDifferent) {
  Json js = {{"status", Json::object()}};
  std::vector<ReplicatedJobCounts> counts = {{"a", 1, 0, 0, 1, 0}, {"b", 0, 2, 0, 0, 0}};
  EXPECT_TRUE(SetReplicatedJobsStatus(js, counts));
  EXPECT_FALSE(SetReplicatedJobsStatus(js, counts));
  std::vector<ReplicatedJobCounts> reordered = {counts[1], counts[0]};
  EXPECT_FALSE(SetReplicatedJobsStatus(js, reordered));
  counts[0].ready = 0;
  EXPECT_TRUE(SetReplicatedJobsStatus(js, counts));
  EXPECT_EQ(JobSetStatusView::Parse(js).ReplicatedJob("a")->ready, 0);
}

TEST(JobSetWritersTest, ConditionsFollowUpstream) {
  Json js = {{"metadata", {{"generation", 3}}}};
  // A False condition that does not exist is not added.
  EXPECT_FALSE(SetJobSetCondition(js, {kConditionRestarting, "False", "JobsReady", "m"}, kT0));
  EXPECT_TRUE(SetJobSetCondition(js, {kConditionRestarting, "True", "R", "m1"}, kT0));
  // Same status, new message: rewritten, transition time kept.
  EXPECT_TRUE(SetJobSetCondition(js, {kConditionRestarting, "True", "R", "m2"},
                                 kT0 + absl::Seconds(5)));
  EXPECT_EQ(js["status"]["conditions"][0]["lastTransitionTime"], "2026-01-01T00:00:00Z");
  EXPECT_EQ(js["status"]["conditions"][0]["message"], "m2");
  EXPECT_FALSE(js["status"]["conditions"][0].contains("observedGeneration"));
  // Status change: transition time moves.
  EXPECT_TRUE(SetJobSetCondition(js, {kConditionRestarting, "False", "JobsReady", "m"},
                                 kT0 + absl::Seconds(9)));
  EXPECT_EQ(js["status"]["conditions"][0]["lastTransitionTime"], "2026-01-01T00:00:09Z");
  EXPECT_FALSE(SetJobSetCondition(js, {kConditionRestarting, "False", "JobsReady", "m"},
                                  kT0 + absl::Seconds(20)));
}

TEST(JobSetWritersTest, StartupPolicyConditionsAreExclusive) {
  Json js = Json::object();
  EXPECT_TRUE(SetJobSetCondition(js, {kConditionStartupInProgress, "True", "a", "b"}, kT0));
  EXPECT_TRUE(SetJobSetCondition(js, {kConditionStartupCompleted, "True", "c", "d"}, kT0));
  ASSERT_EQ(js["status"]["conditions"].size(), 2u);
  EXPECT_EQ(js["status"]["conditions"][0]["status"], "False");
  EXPECT_EQ(js["status"]["conditions"][1]["status"], "True");
}

TEST(JobSetWritersTest, RestartsAndTerminalState) {
  Json js = Json::object();
  EXPECT_TRUE(SetRestarts(js, 0, 0));
  EXPECT_EQ(js["status"]["restarts"], 0);
  EXPECT_FALSE(js["status"].contains("restartsCountTowardsMax"));
  EXPECT_FALSE(SetRestarts(js, 0, 0));
  EXPECT_TRUE(SetRestarts(js, 2, 1));
  EXPECT_EQ(JobSetStatusView::Parse(js).restarts_count_towards_max, 1);
  EXPECT_TRUE(SetTerminalState(js, kTerminalFailed));
  EXPECT_FALSE(SetTerminalState(js, kTerminalFailed));
  EXPECT_EQ(JobSetStatusView::Parse(js).terminal_state, "Failed");
}

}  // namespace
}  // namespace batchd::api::jobset_v1alpha2
