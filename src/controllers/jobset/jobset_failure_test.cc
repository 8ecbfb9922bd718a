// The JobSet controller's failure policy: default failure, rules (reasons,
// message patterns, targets), actions, maxRestarts, restart strategies.
#include "controllers/jobset/jobset_test_env.h"
#include "gmock/gmock.h"

namespace batchd::controllers::jobset::testing {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

TEST_F(JobSetControllerTest, WithoutFailurePolicyAFailedJobFailsTheJobSet) {
  Create(MakeJobSet("js").ReplicatedJob("w", 2).Obj());
  Fail("js-w-1");
  EXPECT_THAT(Conditions(), ElementsAre("Failed=True/FailedJobs"));
  EXPECT_EQ(ConditionMessage("Failed"),
            "jobset failed due to one or more job failures (first failed job: js-w-1)");
  EXPECT_EQ(Status()["terminalState"], "Failed");
  // The still-active Job is deleted; the failed one stays.
  EXPECT_THAT(JobNames(), ElementsAre("js-w-1@0"));
  EXPECT_EQ(CountEvents("FailedJobs"), 1);
}

TEST_F(JobSetControllerTest, DefaultActionRestartsUpToMaxRestarts) {
  Create(MakeJobSet("js").ReplicatedJob("w", 2).MaxRestarts(2).Obj());
  const std::string uid0 = api::meta::GetUid(GetJob("js-w-0"));
  Fail("js-w-1");
  EXPECT_EQ(Status()["restarts"], 1);
  EXPECT_EQ(Status()["restartsCountTowardsMax"], 1);
  EXPECT_THAT(Conditions(), ElementsAre("RestartingJobSet=True/DefaultFailurePolicy"));
  EXPECT_EQ(ConditionMessage("RestartingJobSet"),
            "applying RestartJobSet failure policy action (first failed job: js-w-1)");
  // Every Job of the old attempt was replaced by one of the new attempt.
  EXPECT_THAT(JobNames(), ElementsAre("js-w-0@1", "js-w-1@1"));
  EXPECT_NE(api::meta::GetUid(GetJob("js-w-0")), uid0);
  EXPECT_EQ(CountEvents("RestartJobSetFailurePolicyAction"), 1);
  // Ready again: the restart is over.
  SetReady("js-w-0");
  SetReady("js-w-1");
  EXPECT_THAT(Conditions(), ElementsAre("RestartingJobSet=False/JobsReady"));
  Fail("js-w-0");
  EXPECT_EQ(Status()["restarts"], 2);
  Fail("js-w-0");
  EXPECT_EQ(Status()["restarts"], 2);
  EXPECT_THAT(Conditions(), ElementsAre("RestartingJobSet=False/JobSetFailed",
                                        "Failed=True/ReachedMaxRestarts"));
  EXPECT_EQ(ConditionMessage("Failed"),
            "jobset failed due to reaching max number of restarts (first failed job: js-w-0)");
}

TEST_F(JobSetControllerTest, RulesMatchReasonAndTargetInOrder) {
  Create(MakeJobSet("js")
             .ReplicatedJob("leader", 1)
             .ReplicatedJob("workers", 2)
             .MaxRestarts(5)
             .Rule("leaderFails", "FailJobSet", {}, {"leader"})
             .Rule("retriable", "RestartJobSet", {"PodFailurePolicy"}, {"workers"})
             .Rule("", "FailJobSet")
             .Obj());
  Fail("js-workers-0", "PodFailurePolicy", "Container main for pod x failed with exit code 3");
  EXPECT_EQ(Status()["restarts"], 1);
  EXPECT_THAT(Conditions(), ElementsAre("RestartingJobSet=True/FailurePolicy_retriable"));
  Fail("js-workers-1", "BackoffLimitExceeded");
  EXPECT_EQ(Status()["restarts"], 1);
  EXPECT_THAT(Conditions(), Contains("Failed=True/FailJobSetFailurePolicyAction"));
  EXPECT_EQ(ConditionMessage("Failed"),
            "applying FailJobSet failure policy action (first failed job: js-workers-1)");
}

TEST_F(JobSetControllerTest, MessagePatternsAreRe2SearchesOfTheFailureMessage) {
  Create(MakeJobSet("js")
             .ReplicatedJob("w", 1)
             .MaxRestarts(5)
             .Rule("code3", "FailJobSet", {}, {}, {"exit code [3]\\b"})
             .Obj());
  Fail("js-w-0", "PodFailurePolicy", "Container main failed with exit code 4");
  EXPECT_EQ(Status()["restarts"], 1);  // No match: the default RestartJobSet.
  Fail("js-w-0", "PodFailurePolicy", "Container main failed with exit code 3 matching rule");
  EXPECT_THAT(Conditions(), Contains("Failed=True/FailJobSetFailurePolicyAction"));
}

TEST_F(JobSetControllerTest, EarliestFailedJobIsTheOneReported) {
  Create(MakeJobSet("js").ReplicatedJob("w", 3).Obj());
  // Two Jobs fail in one reconcile's view: the earlier one is named.
  Json late = GetJob("js-w-0"), early = GetJob("js-w-2");
  const std::string t1 = api::meta::FormatRfc3339(clock_.Now() + absl::Seconds(5));
  const std::string t0 = api::meta::FormatRfc3339(clock_.Now());
  for (auto [j, t] : {std::pair<Json*, std::string>{&late, t1}, {&early, t0}}) {
    (*j)["status"] = {{"startTime", t0},
                      {"failed", 1},
                      {"conditions",
                       {{{"type", "FailureTarget"}, {"status", "True"}, {"reason", "R"},
                         {"message", "m"}, {"lastTransitionTime", t}},
                        {{"type", "Failed"}, {"status", "True"}, {"reason", "R"},
                         {"message", "m"}, {"lastTransitionTime", t}}}}};
    ASSERT_TRUE(base_.UpdateStatus(jobs_, *j).ok());
  }
  Settle();
  EXPECT_EQ(ConditionMessage("Failed"),
            "jobset failed due to one or more job failures (first failed job: js-w-2)");
}

TEST_F(JobSetControllerTest, RestartIgnoringMaxRestartsDoesNotCount) {
  Create(MakeJobSet("js")
             .ReplicatedJob("w", 1)
             .MaxRestarts(0)
             .Rule("preempted", "RestartJobSetAndIgnoreMaxRestarts", {"DeadlineExceeded"})
             .Obj());
  for (int i = 1; i <= 3; ++i) {
    Fail("js-w-0", "DeadlineExceeded", "Job was active longer than specified deadline");
    EXPECT_EQ(Status()["restarts"], i);
  }
  EXPECT_FALSE(Status().contains("restartsCountTowardsMax"));
  EXPECT_EQ(CountEvents("RestartJobSetAndIgnoreMaxRestartsFailurePolicyAction"), 3);
  Fail("js-w-0", "BackoffLimitExceeded");  // Default action, maxRestarts 0.
  EXPECT_THAT(Conditions(), Contains("Failed=True/ReachedMaxRestarts"));
}

TEST_F(JobSetControllerTest, RecreateReplacesEachJobAsSoonAsItIsGone) {
  Create(MakeJobSet("js").ReplicatedJob("w", 2).MaxRestarts(1).Obj());
  // A finalizer keeps js-w-0 (old attempt) from going away.
  Json j = GetJob("js-w-0");
  j["metadata"]["finalizers"] = {"example.com/hold"};
  ASSERT_TRUE(base_.Update(jobs_, j).ok());
  Fail("js-w-1");
  EXPECT_THAT(JobNames(), ElementsAre("js-w-0@0", "js-w-1@1"));
  j = GetJob("js-w-0");
  j["metadata"].erase("finalizers");
  ASSERT_TRUE(base_.Update(jobs_, j).ok());
  Settle();
  EXPECT_THAT(JobNames(), ElementsAre("js-w-0@1", "js-w-1@1"));
}

TEST_F(JobSetControllerTest, BlockingRecreateWaitsForEveryOldJob) {
  Create(MakeJobSet("js")
             .ReplicatedJob("w", 2)
             .MaxRestarts(1)
             .RestartStrategy("BlockingRecreate")
             .Obj());
  Json j = GetJob("js-w-0");
  j["metadata"]["finalizers"] = {"example.com/hold"};
  ASSERT_TRUE(base_.Update(jobs_, j).ok());
  Fail("js-w-1");
  EXPECT_THAT(JobNames(), ElementsAre("js-w-0@0"));
  j = GetJob("js-w-0");
  j["metadata"].erase("finalizers");
  ASSERT_TRUE(base_.Update(jobs_, j).ok());
  Settle();
  EXPECT_THAT(JobNames(), ElementsAre("js-w-0@1", "js-w-1@1"));
}

TEST_F(JobSetControllerTest, OldAttemptsAreDeletedInForeground) {
  Create(MakeJobSet("js").ReplicatedJob("w", 1).MaxRestarts(1).Obj());
  Json j = GetJob("js-w-0");
  j["metadata"]["finalizers"] = {"example.com/hold"};
  ASSERT_TRUE(base_.Update(jobs_, j).ok());
  Fail("js-w-0");
  EXPECT_TRUE(api::meta::IsBeingDeleted(GetJob("js-w-0")));
  EXPECT_THAT(fault_.job_delete_policies, ElementsAre("Foreground"));
}

}  // namespace
}  // namespace batchd::controllers::jobset::testing
