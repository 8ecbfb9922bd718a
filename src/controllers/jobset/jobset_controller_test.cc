// The JobSet controller: child Jobs, startup order, success policy,
// suspend / resume, TTL, managedBy (failure policy and restarts:
// jobset_failure_test.cc, jobset_restart_test.cc).
#include "controllers/jobset/jobset_test_env.h"
#include "gmock/gmock.h"

namespace batchd::controllers::jobset::testing {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::Not;

TEST_F(JobSetControllerTest, CreatesChildJobsWithLabelsAndStatus) {
  Create(MakeJobSet("js").ReplicatedJob("leader", 1).ReplicatedJob("workers", 2, 3).Obj());
  EXPECT_THAT(JobNames(), ElementsAre("js-leader-0@0", "js-workers-0@0", "js-workers-1@0"));
  const Json job = GetJob("js-workers-1");
  const Json js = GetJobSet();
  EXPECT_EQ(job["metadata"]["labels"]["jobset.sigs.k8s.io/jobset-uid"], js["metadata"]["uid"]);
  EXPECT_EQ(job["metadata"]["labels"]["jobset.sigs.k8s.io/job-global-index"], "2");
  EXPECT_EQ(job["metadata"]["ownerReferences"][0]["name"], "js");
  // Defaults reached the Job: Indexed, the pod subdomain for DNS hostnames.
  EXPECT_EQ(job["spec"]["completionMode"], "Indexed");
  EXPECT_EQ(job["spec"]["template"]["spec"]["subdomain"], "js");
  EXPECT_EQ(job["spec"]["suspend"], false);
  const Json status = Status();
  EXPECT_EQ(status["restarts"], 0);
  EXPECT_EQ(status["replicatedJobsStatus"].size(), 2u);
  EXPECT_EQ(status["replicatedJobsStatus"][1]["name"], "workers");
  EXPECT_THAT(Conditions(), IsEmpty());
}

TEST_F(JobSetControllerTest, ReadyCountsAndRestartingConditionOnlyAfterARestart) {
  Create(MakeJobSet("js").ReplicatedJob("w", 2, 2).Obj());
  SetReady("js-w-0");
  EXPECT_EQ(Status()["replicatedJobsStatus"][0]["ready"], 1);
  EXPECT_EQ(Status()["replicatedJobsStatus"][0]["active"], 1);
  SetReady("js-w-1");
  EXPECT_EQ(Status()["replicatedJobsStatus"][0]["ready"], 2);
  // All ready, but RestartingJobSet=False is only ever written over a True.
  EXPECT_THAT(Conditions(), IsEmpty());
}

TEST_F(JobSetControllerTest, DependsOnReadyHoldsWorkersUntilLeaderIsReady) {
  Create(MakeJobSet("js")
             .ReplicatedJob("leader", 1)
             .ReplicatedJob("workers", 4)
             .DependsOn("workers", "leader", "Ready")
             .Obj());
  EXPECT_THAT(JobNames(), ElementsAre("js-leader-0@0"));
  SetReady("js-leader-0");
  EXPECT_THAT(JobNames(), ElementsAre("js-leader-0@0", "js-workers-0@0", "js-workers-1@0",
                                      "js-workers-2@0", "js-workers-3@0"));
}

TEST_F(JobSetControllerTest, DependsOnCompleteWaitsForSuccess) {
  Create(MakeJobSet("js")
             .ReplicatedJob("init", 2)
             .ReplicatedJob("main", 1)
             .DependsOn("main", "init", "Complete")
             .Obj());
  SetReady("js-init-0");
  SetReady("js-init-1");
  Complete("js-init-0");
  EXPECT_THAT(JobNames(), ElementsAre("js-init-0@0", "js-init-1@0"));
  Complete("js-init-1");
  EXPECT_THAT(JobNames(), Contains("js-main-0@0"));
  EXPECT_THAT(Conditions(), IsEmpty());  // All: main has not succeeded yet.
}

TEST_F(JobSetControllerTest, InOrderStartupStartsOneReplicatedJobAtATime) {
  Create(MakeJobSet("js").ReplicatedJob("a", 1).ReplicatedJob("b", 2).InOrder().Obj());
  EXPECT_THAT(JobNames(), ElementsAre("js-a-0@0"));
  EXPECT_THAT(Conditions(), ElementsAre("StartupPolicyInProgress=True/InOrderStartupPolicyInProgress"));
  SetReady("js-a-0");
  EXPECT_THAT(JobNames(), ElementsAre("js-a-0@0", "js-b-0@0", "js-b-1@0"));
  SetReady("js-b-0");
  SetReady("js-b-1");
  EXPECT_THAT(Conditions(),
              ElementsAre("StartupPolicyInProgress=False/InOrderStartupPolicyInProgress",
                          "StartupPolicyCompleted=True/InOrderStartupPolicyCompleted"));
}

TEST_F(JobSetControllerTest, SuccessPolicyAllCompletesAndRecordsTerminalState) {
  Create(MakeJobSet("js").ReplicatedJob("a", 1).ReplicatedJob("b", 2).Obj());
  Complete("js-a-0");
  Complete("js-b-0");
  EXPECT_THAT(Conditions(), IsEmpty());
  Complete("js-b-1");
  EXPECT_THAT(Conditions(), ElementsAre("Completed=True/AllJobsCompleted"));
  EXPECT_EQ(ConditionMessage("Completed"), "jobset completed successfully");
  EXPECT_EQ(Status()["terminalState"], "Completed");
  EXPECT_EQ(CountEvents("AllJobsCompleted"), 1);
}

TEST_F(JobSetControllerTest, SuccessPolicyAnyOnTargetsDeletesTheActiveJobs) {
  Create(MakeJobSet("js")
             .ReplicatedJob("driver", 1)
             .ReplicatedJob("workers", 3)
             .SuccessPolicy("Any", {"driver"})
             .Obj());
  Complete("js-workers-0");  // Not a target.
  EXPECT_THAT(Conditions(), IsEmpty());
  Complete("js-driver-0");
  EXPECT_EQ(Status()["terminalState"], "Completed");
  // A finished JobSet deletes its still-active Jobs (foreground; the
  // garbage collector finishes the deletion).
  EXPECT_THAT(JobNames(), ElementsAre("js-driver-0@0", "js-workers-0@0"));
}

TEST_F(JobSetControllerTest, JobDeletedByHandIsRecreated) {
  Create(MakeJobSet("js").ReplicatedJob("w", 2).Obj());
  const std::string uid = api::meta::GetUid(GetJob("js-w-1"));
  DeleteJob("js-w-1");
  EXPECT_THAT(JobNames(), ElementsAre("js-w-0@0", "js-w-1@0"));
  EXPECT_NE(api::meta::GetUid(GetJob("js-w-1")), uid);
  EXPECT_EQ(Status()["restarts"], 0);
}

TEST_F(JobSetControllerTest, SuspendAndResume) {
  Create(MakeJobSet("js").ReplicatedJob("w", 2).Suspend(true).Obj());
  EXPECT_EQ(GetJob("js-w-0")["spec"]["suspend"], true);
  EXPECT_EQ(Status()["replicatedJobsStatus"][0]["suspended"], 2);
  EXPECT_THAT(Conditions(), ElementsAre("Suspended=True/SuspendedJobs"));
  // While suspended the template's scheduling fields may change (Kueue);
  // resuming brings them into the Jobs.
  Json rjobs = GetJobSet()["spec"]["replicatedJobs"];
  rjobs[0]["template"]["spec"]["template"]["spec"]["nodeSelector"] = {{"zone", "a"}};
  PatchJobSetSpec({{"replicatedJobs", rjobs}});
  PatchJobSetSpec({{"suspend", false}});
  const Json job = GetJob("js-w-1");
  EXPECT_EQ(job["spec"]["suspend"], false);
  EXPECT_EQ(job["spec"]["template"]["spec"]["nodeSelector"], Json({{"zone", "a"}}));
  EXPECT_THAT(Conditions(), ElementsAre("Suspended=False/ResumeJobs"));
  // Suspending a running JobSet suspends its Jobs.
  PatchJobSetSpec({{"suspend", true}});
  EXPECT_EQ(GetJob("js-w-0")["spec"]["suspend"], true);
  EXPECT_THAT(Conditions(), ElementsAre("Suspended=True/SuspendedJobs"));
}

TEST_F(JobSetControllerTest, ResumeClearsTheStartTimeOfJobsThatRan) {
  Create(MakeJobSet("js").ReplicatedJob("w", 1).Obj());
  SetReady("js-w-0");
  PatchJobSetSpec({{"suspend", true}});
  Json job = GetJob("js-w-0");
  ASSERT_EQ(job["spec"]["suspend"], true);
  job["status"]["active"] = 0;
  job["status"]["ready"] = 0;
  WriteJobStatus(job);
  PatchJobSetSpec({{"suspend", false}});
  job = GetJob("js-w-0");
  EXPECT_EQ(job["spec"]["suspend"], false);
  EXPECT_FALSE(job["status"].contains("startTime"));
}

TEST_F(JobSetControllerTest, TtlDeletesTheFinishedJobSet) {
  Create(MakeJobSet("js").ReplicatedJob("w", 1).Ttl(30).Obj());
  Complete("js-w-0");
  ASSERT_EQ(Status()["terminalState"], "Completed");
  Advance(absl::Seconds(29));
  EXPECT_FALSE(GetJobSet().is_null());
  Advance(absl::Seconds(1));
  EXPECT_TRUE(GetJobSet().is_null());
  EXPECT_THAT(Jobs(), IsEmpty());  // Foreground: its Jobs went first.
}

TEST_F(JobSetControllerTest, ManagedByAnotherControllerIsSkipped) {
  Create(MakeJobSet("js").ReplicatedJob("w", 1).ManagedBy("kueue.x-k8s.io/multikueue").Obj());
  EXPECT_THAT(Jobs(), IsEmpty());
  EXPECT_FALSE(Status().contains("restarts"));
  Create(MakeJobSet("own").ReplicatedJob("w", 1).ManagedBy("jobset.sigs.k8s.io/jobset-controller").Obj());
  EXPECT_THAT(JobNames(), ElementsAre("own-w-0@0"));
}

TEST_F(JobSetControllerTest, CoordinatorAndCustomSubdomain) {
  Create(MakeJobSet("js")
             .ReplicatedJob("leader", 1, 2)
             .ReplicatedJob("w", 1)
             .Coordinator("leader", 0, 1)
             .Subdomain("net")
             .Obj());
  const Json job = GetJob("js-w-0");
  EXPECT_EQ(job["metadata"]["annotations"]["jobset.sigs.k8s.io/coordinator"], "js-leader-0-1.net");
  EXPECT_EQ(job["spec"]["template"]["metadata"]["labels"]["jobset.sigs.k8s.io/coordinator"],
            "js-leader-0-1.net");
  EXPECT_EQ(job["spec"]["template"]["spec"]["subdomain"], "net");
}

TEST_F(JobSetControllerTest, HeadlessServiceForDnsHostnames) {
  const api::KindDef& services = base_.Kind("", "v1", "services");
  Create(MakeJobSet("js").ReplicatedJob("w", 1).Subdomain("net").Obj());
  auto svc = base_.Get(services, "default", "net");
  ASSERT_TRUE(svc.ok()) << svc.status();
  EXPECT_EQ((*svc)["spec"]["clusterIP"], "None");
  EXPECT_EQ((*svc)["spec"]["selector"], Json({{"jobset.sigs.k8s.io/jobset-name", "js"}}));
  EXPECT_EQ((*svc)["spec"]["publishNotReadyAddresses"], true);
  EXPECT_EQ((*svc)["metadata"]["ownerReferences"][0]["name"], "js");
  // Deleted by hand: created again.
  ASSERT_TRUE(base_.Delete(services, "default", "net", {}).ok());
  Settle();
  EXPECT_TRUE(base_.Get(services, "default", "net").ok());
  // Without DNS hostnames there is none.
  Create(MakeJobSet("quiet")
             .ReplicatedJob("w", 1)
             .Set("/spec/network", {{"enableDNSHostnames", false}})
             .Obj());
  EXPECT_FALSE(base_.Get(services, "default", "quiet").ok());
  EXPECT_FALSE(GetJob("quiet-w-0")["spec"]["template"]["spec"].contains("subdomain"));
}

TEST_F(JobSetControllerTest, ExistingJobOfSomebodyElseIsAnError) {
  Json other = {{"apiVersion", "batch/v1"},
                {"kind", "Job"},
                {"metadata", {{"name", "js-w-0"}}},
                {"spec",
                 {{"template",
                   {{"spec",
                     {{"restartPolicy", "Never"},
                      {"containers", {{{"name", "c"}, {"image", "busybox"}}}}}}}}}}};
  ASSERT_TRUE(base_.Create(jobs_, "default", other).ok());
  Create(MakeJobSet("js").ReplicatedJob("w", 2).Obj());
  EXPECT_THAT(EventReasons(), Contains("JobCreationFailed"));
  EXPECT_THAT(JobNames(), ElementsAre("js-w-0@?", "js-w-1@0"));
}

}  // namespace
}  // namespace batchd::controllers::jobset::testing
