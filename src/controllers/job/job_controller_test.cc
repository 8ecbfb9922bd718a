// Job controller: pod creation, counting, completion, suspend/resume,
// managedBy, and the finalizer/uncounted protocol across a restart.
#include "api/batch/v1/batch_v1.h"
#include "controllers/job/job_test_env.h"

namespace batchd::controllers::job::testing {
namespace {

using api::testing::MakeJob;

TEST_F(JobControllerTest, CreatesPodsWithOwnerFinalizerAndLabels) {
  CreateJob(MakeJob("j").Completions(3).Parallelism(2).Obj());
  std::vector<Json> pods = Pods("j");
  ASSERT_EQ(pods.size(), 2u);
  Json job = GetJob("j");
  for (const Json& p : pods) {
    EXPECT_EQ(p["metadata"]["generateName"], "j-");
    EXPECT_TRUE(api::meta::HasFinalizer(p, api::batch_v1::kJobTrackingFinalizer));
    auto ref = api::meta::GetControllerRef(p);
    ASSERT_TRUE(ref.has_value());
    EXPECT_EQ(ref->kind, "Job");
    EXPECT_EQ(ref->uid, api::meta::GetUid(job));
    EXPECT_TRUE(ref->block_owner_deletion);
    EXPECT_EQ(api::meta::GetLabel(p, api::batch_v1::kControllerUidLabel),
              api::meta::GetUid(job));
  }
  EXPECT_EQ(Count("j", "active"), 2);
  EXPECT_FALSE(Status("j").value("startTime", "").empty());
  EXPECT_EQ(CountEvents("SuccessfulCreate"), 2);
}

TEST_F(JobControllerTest, CompletionsWithParallelismRunToComplete) {
  CreateJob(MakeJob("j").Completions(3).Parallelism(2).Obj());
  struct Step {
    std::string name;
    int want_active, want_succeeded;
  };
  const Step steps[] = {{"first wave done", 1, 2}, {"last pod done", 0, 3}};
  for (const auto& s : steps) {
    SCOPED_TRACE(s.name);
    FinishAll("j", 0);
    EXPECT_EQ(Count("j", "active"), s.want_active);
    EXPECT_EQ(Count("j", "succeeded"), s.want_succeeded);
  }
  EXPECT_EQ(Conditions("j"), (std::vector<std::string>{"SuccessCriteriaMet=True/CompletionsReached",
                                                       "Complete=True/CompletionsReached"}));
  Json st = Status("j");
  EXPECT_FALSE(st.value("completionTime", "").empty());
  EXPECT_EQ(st["uncountedTerminatedPods"], Json::object());
  for (const Json& p : Pods("j")) {
    EXPECT_FALSE(api::meta::HasFinalizer(p, api::batch_v1::kJobTrackingFinalizer));
  }
  EXPECT_EQ(CountEvents("Completed"), 1);
}

TEST_F(JobControllerTest, ReadyCountsRunningReadyPods) {
  CreateJob(MakeJob("j").Completions(2).Parallelism(2).Obj());
  auto pods = ActivePods("j");
  ASSERT_EQ(pods.size(), 2u);
  SetRunning(pods[0], true);
  SetRunning(pods[1], false);
  EXPECT_EQ(Count("j", "ready"), 1);
  EXPECT_EQ(Count("j", "active"), 2);
}

TEST_F(JobControllerTest, WorkQueueJobStopsCreatingAfterFirstSuccess) {
  Json job = MakeJob("wq").Parallelism(3).Obj();
  CreateJob(job);
  auto pods = ActivePods("wq");
  ASSERT_EQ(pods.size(), 3u);
  Finish(pods[0], 0);
  EXPECT_EQ(ActivePods("wq").size(), 2u) << "no replacement after a success";
  Finish(pods[1], 1);  // Later failures are ignored for completion.
  EXPECT_EQ(ActivePods("wq").size(), 1u);
  EXPECT_TRUE(Conditions("wq").empty());
  Finish(pods[2], 0);
  EXPECT_EQ(Count("wq", "succeeded"), 2);
  EXPECT_EQ(Count("wq", "failed"), 1);
  EXPECT_EQ(Conditions("wq").back(), "Complete=True/CompletionsReached");
}

TEST_F(JobControllerTest, SuspendDeletesPodsAndResumeRecreates) {
  Json job = CreateJob(MakeJob("s").Completions(2).Parallelism(2).Obj());
  ASSERT_EQ(ActivePods("s").size(), 2u);
  UpdateJobSpec("s", {{"suspend", true}});
  EXPECT_TRUE(Pods("s").empty()) << "suspend deletes the pods";
  EXPECT_EQ(Count("s", "active"), 0);
  EXPECT_EQ(Count("s", "failed"), 0) << "deleted pods are not failures";
  EXPECT_EQ(Conditions("s"), (std::vector<std::string>{"Suspended=True/JobSuspended"}));
  const std::string started = Status("s").value("startTime", "");
  clock_.Advance(absl::Seconds(30));
  UpdateJobSpec("s", {{"suspend", false}});
  EXPECT_EQ(ActivePods("s").size(), 2u);
  EXPECT_EQ(Conditions("s"), (std::vector<std::string>{"Suspended=False/JobResumed"}));
  EXPECT_NE(Status("s").value("startTime", ""), started);
  EXPECT_EQ(Status("s").value("startTime", ""), api::meta::FormatRfc3339(clock_.Now()))
      << "startTime reset on resume";
  EXPECT_EQ(CountEvents("Suspended"), 1);
  EXPECT_EQ(CountEvents("Resumed"), 1);
}

TEST_F(JobControllerTest, CreatedSuspendedHasNoPodsNorStartTime) {
  CreateJob(MakeJob("s").Suspend(true).Obj());
  EXPECT_TRUE(Pods("s").empty());
  EXPECT_FALSE(Status("s").contains("startTime"));
  EXPECT_EQ(Conditions("s"), (std::vector<std::string>{"Suspended=True/JobSuspended"}));
}

// Issue #14 (workloads stuck Evicted + QuotaReserved after preemption): the
// queue suspends a running Job and clears its startTime (as Kueue's stop
// does) while its pods finish. Before the Job controller syncs, they are
// Succeeded. A suspended Job still counts finished pods and releases them;
// one whose completions are all done finishes, with a startTime (a finished
// Job without one is refused: the sync failed forever, the pod kept its
// finalizer and status.active stayed 1, so the Workload never let go).
TEST_F(JobControllerTest, PodsFinishingWhileSuspendedAreCountedAndReleased) {
  struct Case {
    std::string name;
    int pods, succeed;  // completions = parallelism = pods; `succeed` finish.
    bool complete;
  };
  for (const Case& c : std::vector<Case>{{"last pod done", 1, 1, true},
                                         {"all pods done", 2, 2, true},
                                         {"one of two done", 2, 1, false}}) {
    SCOPED_TRACE(c.name);
    const std::string name = "ps-" + std::to_string(c.pods) + "-" + std::to_string(c.succeed);
    CreateJob(MakeJob(name).Completions(c.pods).Parallelism(c.pods).Obj());
    std::vector<Json> pods = ActivePods(name);
    ASSERT_EQ(pods.size(), static_cast<size_t>(c.pods));
    for (const Json& p : pods) SetRunning(p, true);
    clock_.Advance(absl::Seconds(5));
    // The queue's stop and the pods' exits, all before the controller syncs.
    ASSERT_TRUE(base_.MergePatch(jobs_, "default", name, {{"spec", {{"suspend", true}}}}).ok());
    Json job = GetJob(name);
    ASSERT_TRUE(job["status"].contains("startTime"));
    job["status"].erase("startTime");
    auto w = base_.UpdateStatus(jobs_, job);
    ASSERT_TRUE(w.ok()) << w.status();
    for (int i = 0; i < c.succeed; ++i) {
      Finish(*base_.Get(pods_, "default", api::meta::GetName(pods[i])), 0, Json::array(),
             /*settle=*/false);
    }
    Settle();

    EXPECT_EQ(Count(name, "succeeded"), c.succeed);
    EXPECT_EQ(Count(name, "active"), 0);
    EXPECT_EQ(Count(name, "failed"), 0) << "pods deleted for the suspension are not failures";
    for (const Json& p : Pods(name)) {
      EXPECT_FALSE(api::meta::HasFinalizer(p, api::batch_v1::kJobTrackingFinalizer))
          << api::meta::GetName(p);
    }
    Json st = Status(name);
    EXPECT_EQ(st.value("uncountedTerminatedPods", Json::object()), Json::object());
    if (c.complete) {
      EXPECT_EQ(Conditions(name).back(), "Complete=True/CompletionsReached");
      EXPECT_EQ(st.value("startTime", ""), api::meta::FormatRfc3339(clock_.Now()));
      EXPECT_EQ(st.value("completionTime", ""), st.value("startTime", ""));
    } else {
      EXPECT_EQ(Conditions(name).back(), "Suspended=True/JobSuspended");
      EXPECT_FALSE(st.contains("startTime"));
      EXPECT_EQ(Pods(name).size(), static_cast<size_t>(c.succeed)) << "the running pod went";
    }
  }
}

TEST_F(JobControllerTest, ManagedByOtherControllerIsSkipped) {
  CreateJob(MakeJob("m").Set(Json::json_pointer("/spec/managedBy"), "example.com/other").Obj());
  EXPECT_TRUE(Pods("m").empty());
  EXPECT_FALSE(Status("m").contains("startTime"));
}

TEST_F(JobControllerTest, ParallelismScaleDownDeletesExtraPods) {
  CreateJob(MakeJob("p").Completions(10).Parallelism(4).Obj());
  ASSERT_EQ(ActivePods("p").size(), 4u);
  UpdateJobSpec("p", {{"parallelism", 1}});
  EXPECT_EQ(ActivePods("p").size(), 1u);
  EXPECT_EQ(Count("p", "failed"), 0);
  EXPECT_EQ(CountEvents("SuccessfulDelete"), 3);
}

TEST_F(JobControllerTest, AtMost500CreatesPerSync) {
  ASSERT_TRUE(base_.Create(jobs_, "default", MakeJob("big").Completions(600).Parallelism(600).Obj())
                  .ok());
  stack_->mgr.RunUntilIdle(1);  // Exactly one reconcile.
  EXPECT_EQ(Pods("big").size(), 500u);
  Settle();
  EXPECT_EQ(Pods("big").size(), 600u);
  EXPECT_EQ(Count("big", "active"), 600);
}

TEST_F(JobControllerTest, DeletedRunningPodCountsAsFailedAndIsReplaced) {
  CreateJob(MakeJob("del").Completions(1).Obj());
  Json p = ActivePods("del")[0];
  ASSERT_TRUE(base_.Delete(pods_, "default", api::meta::GetName(p)).ok());
  Settle();
  EXPECT_EQ(Count("del", "failed"), 1);
  Advance(absl::Seconds(10));
  EXPECT_EQ(ActivePods("del").size(), 1u);
}

TEST_F(JobControllerTest, CrashAfterUncountedWriteDoesNotDoubleCount) {
  CreateJob(MakeJob("c").Completions(2).Parallelism(2).Obj());
  auto pods = ActivePods("c");
  ASSERT_EQ(pods.size(), 2u);
  // The controller records the UID as uncounted, then "dies" before the
  // finalizer is removed.
  fault_.fail_pod_updates = true;
  Finish(pods[0], 0, Json::array(), /*settle=*/false);
  stack_->mgr.RunUntilIdle(50);
  Json st = Status("c");
  ASSERT_EQ(st["uncountedTerminatedPods"].value("succeeded", Json::array()).size(), 1u);
  EXPECT_EQ(st.value("succeeded", 0), 0);
  fault_.fail_pod_updates = false;
  Restart();
  EXPECT_EQ(Count("c", "succeeded"), 1);
  EXPECT_EQ(Status("c")["uncountedTerminatedPods"], Json::object());
  // And again after another restart nothing changes.
  Restart();
  EXPECT_EQ(Count("c", "succeeded"), 1);
  Finish(ActivePods("c")[0], 0);
  EXPECT_EQ(Count("c", "succeeded"), 2);
  EXPECT_EQ(Conditions("c").back(), "Complete=True/CompletionsReached");
}

// A Job finishing with every pod terminal takes one status write (counts,
// both conditions, completionTime, no uncounted UIDs) and then the
// finalizer removal: two store writes, not the three of the uncounted
// protocol, in one update chain (one store commit).
TEST_F(JobControllerTest, FinishingJobCountsAndCompletesInOneStatusWrite) {
  CreateJob(MakeJob("one").Completions(1).Obj());
  auto pods = ActivePods("one");
  ASSERT_EQ(pods.size(), 1u);
  Finish(pods[0], 0, Json::array(), /*settle=*/false);
  const int64_t rev = store_.Revision();
  const int chains = fault_.write_chains;
  Settle();
  EXPECT_EQ(store_.Revision(), rev + 2);
  EXPECT_EQ(fault_.write_chains, chains + 1);
  EXPECT_EQ(Conditions("one"), (std::vector<std::string>{"SuccessCriteriaMet=True/CompletionsReached",
                                                         "Complete=True/CompletionsReached"}));
  Json st = Status("one");
  EXPECT_EQ(st.value("succeeded", 0), 1);
  EXPECT_EQ(Count("one", "active"), 0);
  EXPECT_EQ(st["uncountedTerminatedPods"], Json::object());
  EXPECT_FALSE(st.value("completionTime", "").empty());
  EXPECT_FALSE(api::meta::HasFinalizer(Pods("one")[0], api::batch_v1::kJobTrackingFinalizer));
  EXPECT_EQ(CountEvents("Completed"), 1);
}

// The controller stops after the finishing write, before the finalizer
// goes: the finished Job's next sync releases the pod and counts nothing
// again.
TEST_F(JobControllerTest, CrashAfterFinishingWriteReleasesThePodOnce) {
  CreateJob(MakeJob("f").Completions(1).Obj());
  auto pods = ActivePods("f");
  ASSERT_EQ(pods.size(), 1u);
  fault_.fail_pod_updates = true;
  Finish(pods[0], 0, Json::array(), /*settle=*/false);
  stack_->mgr.RunUntilIdle(50);
  EXPECT_EQ(Conditions("f").back(), "Complete=True/CompletionsReached");
  EXPECT_EQ(Status("f").value("succeeded", 0), 1);
  EXPECT_TRUE(api::meta::HasFinalizer(Pods("f")[0], api::batch_v1::kJobTrackingFinalizer));
  fault_.fail_pod_updates = false;
  Restart();
  EXPECT_FALSE(api::meta::HasFinalizer(Pods("f")[0], api::batch_v1::kJobTrackingFinalizer));
  EXPECT_EQ(Status("f").value("succeeded", 0), 1);
  EXPECT_EQ(CountEvents("Completed"), 0);  // the restarted controller records nothing again
}

// A Job's first sync creates its pods and writes its status (startTime,
// active) in one write chain: the pods first, then the status, one commit.
TEST_F(JobControllerTest, NewPodsAndStatusInOneChain) {
  const int64_t rev = store_.Revision();
  const int chains = fault_.write_chains;
  CreateJob(MakeJob("n").Completions(2).Parallelism(2).Obj());
  EXPECT_EQ(fault_.write_chains, chains + 1);
  EXPECT_EQ(store_.Revision(), rev + 4);  // The Job, two pods, its status.
  EXPECT_EQ(ActivePods("n").size(), 2u);
  EXPECT_EQ(Count("n", "active"), 2);
  EXPECT_FALSE(Status("n").value("startTime", "").empty());
  EXPECT_EQ(CountEvents("SuccessfulCreate"), 2);
}

// A pod create that fails stops the chain: no status counts pods that are
// not there; the next sync creates them and writes the status.
TEST_F(JobControllerTest, FailedCreateWritesNoStatusAndIsRetried) {
  fault_.fail_pod_creates = true;
  CreateJob(MakeJob("fc").Completions(2).Parallelism(2).Obj());
  EXPECT_TRUE(Pods("fc").empty());
  EXPECT_EQ(Count("fc", "active"), 0);
  EXPECT_GE(CountEvents("FailedCreate"), 1);
  fault_.fail_pod_creates = false;
  Advance(absl::Seconds(30));
  EXPECT_EQ(ActivePods("fc").size(), 2u);
  EXPECT_EQ(Count("fc", "active"), 2);
  EXPECT_FALSE(Status("fc").value("startTime", "").empty());
}

// A pod changes between the informer's copy the finishing chain is built
// from and the chain's write (a stale release): the status lands, the chain
// stops at that pod, the pods from it on are released on their latest
// versions, and each is counted once.
TEST_F(JobControllerTest, StaleReleaseInTheFinishingChainIsRetried) {
  CreateJob(MakeJob("s").Completions(2).Parallelism(2).Obj());
  auto pods = ActivePods("s");
  ASSERT_EQ(pods.size(), 2u);
  Finish(pods[0], 0);
  Finish(pods[1], 0, Json::array(), /*settle=*/false);
  fault_.before_chain = [&] {
    for (const Json& p : Pods("s")) {
      Json touched = p;
      touched["metadata"]["annotations"]["touched"] = "yes";
      ASSERT_TRUE(base_.Update(pods_, std::move(touched)).ok());
    }
  };
  const int64_t rev = store_.Revision();
  Settle();
  EXPECT_EQ(fault_.before_chain, nullptr);  // The chain ran.
  EXPECT_EQ(Conditions("s").back(), "Complete=True/CompletionsReached");
  EXPECT_EQ(Count("s", "succeeded"), 2);
  for (const Json& p : Pods("s")) {
    EXPECT_FALSE(api::meta::HasFinalizer(p, api::batch_v1::kJobTrackingFinalizer));
    EXPECT_EQ(p["metadata"]["annotations"].value("touched", ""), "yes");
  }
  EXPECT_GT(store_.Revision(), rev + 3);  // The touches, the status, the releases.
  Restart();
  EXPECT_EQ(Count("s", "succeeded"), 2);
  EXPECT_EQ(CountEvents("Completed"), 0);
}

TEST_F(JobControllerTest, CrashAfterFinalizerRemovalCountsOnce) {
  CreateJob(MakeJob("c").Completions(3).Parallelism(1).Obj());
  Finish(ActivePods("c")[0], 1);
  EXPECT_EQ(Count("c", "failed"), 1);
  Restart();
  Restart();
  EXPECT_EQ(Count("c", "failed"), 1);
}

TEST_F(JobControllerTest, OrphanedPodFinalizersAreRemovedWhenJobIsDeleted) {
  CreateJob(MakeJob("o").Completions(1).Obj());
  ASSERT_EQ(Pods("o").size(), 1u);
  client::DeleteOptions orphan;
  orphan.propagation_policy = "Orphan";
  ASSERT_TRUE(base_.Delete(jobs_, "default", "o", orphan).ok());
  Settle();
  auto pods = Pods("o");
  ASSERT_EQ(pods.size(), 1u);
  EXPECT_FALSE(api::meta::HasFinalizer(pods[0], api::batch_v1::kJobTrackingFinalizer));
}

}  // namespace
}  // namespace batchd::controllers::job::testing
