// Restarts survive a controller crash: the attempt number lives in the
// JobSet's status and in each Job's restart-attempt label, so a controller
// started over the same store at any point of a restart finishes it with
// no duplicate Job and no second count.
#include "controllers/jobset/jobset_test_env.h"
#include "gmock/gmock.h"

namespace batchd::controllers::jobset::testing {
namespace {

using ::testing::ElementsAre;

Json Workers() { return MakeJobSet("js").ReplicatedJob("w", 3).MaxRestarts(3).Obj(); }

TEST_F(JobSetControllerTest, CrashAfterCountingBeforeDeletingOldJobs) {
  Create(Workers());
  ASSERT_EQ(fault_.job_creates, 3);
  fault_.fail_job_deletes = true;
  fault_.job_create_budget = 0;
  Fail("js-w-1");
  // The restart is counted; nothing of the old attempt could be replaced.
  EXPECT_EQ(Status()["restarts"], 1);
  EXPECT_THAT(JobNames(), ElementsAre("js-w-0@0", "js-w-1@0", "js-w-2@0"));
  // The controller dies and a new one starts over the same store.
  fault_.fail_job_deletes = false;
  fault_.job_create_budget = -1;
  Restart();
  EXPECT_EQ(Status()["restarts"], 1);
  EXPECT_EQ(Status()["restartsCountTowardsMax"], 1);
  EXPECT_THAT(JobNames(), ElementsAre("js-w-0@1", "js-w-1@1", "js-w-2@1"));
  EXPECT_EQ(fault_.job_creates, 6);
}

TEST_F(JobSetControllerTest, CrashHalfwayThroughCreatingTheNewAttempt) {
  Create(Workers());
  fault_.job_create_budget = 1;
  Fail("js-w-0");
  EXPECT_THAT(JobNames(), ElementsAre("js-w-0@1"));
  fault_.job_create_budget = -1;
  Restart();
  EXPECT_EQ(Status()["restarts"], 1);
  EXPECT_THAT(JobNames(), ElementsAre("js-w-0@1", "js-w-1@1", "js-w-2@1"));
  EXPECT_EQ(fault_.job_creates, 6);
  // The restarted controller goes on counting from the stored attempt.
  Fail("js-w-2");
  EXPECT_EQ(Status()["restarts"], 2);
  EXPECT_THAT(JobNames(), ElementsAre("js-w-0@2", "js-w-1@2", "js-w-2@2"));
}

TEST_F(JobSetControllerTest, RestartsAfterACrashAtEveryStepCountOnce) {
  // Crash after each single Job create of the restart: whatever the
  // interleaving, three new Jobs and one count.
  Create(Workers());
  fault_.job_create_budget = 0;
  Fail("js-w-2");
  for (int step = 0; step < 3; ++step) {
    fault_.job_create_budget = 1;
    Restart();
    EXPECT_EQ(Status()["restarts"], 1);
  }
  fault_.job_create_budget = -1;
  Restart();
  EXPECT_THAT(JobNames(), ElementsAre("js-w-0@1", "js-w-1@1", "js-w-2@1"));
  EXPECT_EQ(fault_.job_creates, 6);
  EXPECT_EQ(Status()["restarts"], 1);
}

}  // namespace
}  // namespace batchd::controllers::jobset::testing
