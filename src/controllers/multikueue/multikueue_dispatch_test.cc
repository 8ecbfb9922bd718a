// MultiKueue dispatching Jobs and JobSets to worker clusters: nomination,
// the first reservation wins, status mirrored back, copies withdrawn, the
// incremental dispatcher, garbage collection, defaulting and validation
// (fixture: multikueue_test_env.h).
#include <optional>
#include <string>

#include "controllers/multikueue/multikueue_test_env.h"

namespace batchd::controllers::multikueue::testing {
namespace {

TEST_F(MultiKueueTest, ClustersAndCheckBecomeActive) {
  Setup();
  Json mkc = Get("multikueueclusters", "", "w1");
  EXPECT_EQ(Cond(mkc, "Active"), "True/Active");
  EXPECT_EQ(mkc["spec"]["clusterSource"]["kubeConfig"]["locationType"], "Secret");  // defaulted
  EXPECT_EQ(Cond(Get("admissionchecks", "", "mk"), "Active"), "True/Active");
  EXPECT_EQ(Cond(Get("clusterqueues", "", "cq"), "Active"), "True/Ready");
}

TEST_F(MultiKueueTest, FirstWorkerToReserveWinsAndTheOtherCopyIsWithdrawn) {
  Setup();
  JobAndWorkload("j");
  Json wl = Wl("wl-j");
  EXPECT_EQ(Cond(wl, "QuotaReserved"), "True/QuotaReserved");
  EXPECT_EQ(CheckState("wl-j"), "Pending");
  EXPECT_EQ(Cond(wl, "Admitted"), "");
  // A copy on each worker, labelled with the origin and the manager's uid.
  auto c1 = RGet(w1_, "workloads", "wl-j");
  auto c2 = RGet(w2_, "workloads", "wl-j");
  ASSERT_TRUE(c1 && c2);
  EXPECT_EQ((*c1)["metadata"]["labels"][kOriginLabel], "multikueue");
  EXPECT_EQ((*c1)["metadata"]["annotations"][kOriginUidAnnotation], wl["metadata"]["uid"]);
  EXPECT_EQ((*c1)["spec"]["queueName"], "lq");
  EXPECT_FALSE((*c1)["metadata"].contains("ownerReferences"));
  EXPECT_EQ(wl["status"]["nominatedClusterNames"], Json({"w1", "w2"}));
  // No job anywhere before a worker reserves quota.
  EXPECT_FALSE(RGet(w1_, "jobs", "j"));
  EXPECT_FALSE(RGet(w2_, "jobs", "j"));

  Reserve(w2_, "wl-j");
  Sync();
  wl = Wl("wl-j");
  EXPECT_EQ(CheckState("wl-j"), "Ready");
  EXPECT_EQ(CheckMessage("wl-j"), "The workload got reservation on \"w2\"");
  EXPECT_EQ(wl["status"]["clusterName"], "w2");
  EXPECT_FALSE(wl["status"].contains("nominatedClusterNames"));
  EXPECT_EQ(Cond(wl, "Admitted"), "True/Admitted");
  // The loser's copy is gone; the job exists on the winner only.
  EXPECT_FALSE(RGet(w1_, "workloads", "wl-j"));
  EXPECT_FALSE(RGet(w1_, "jobs", "j"));
  auto rj = RGet(w2_, "jobs", "j");
  ASSERT_TRUE(rj);
  EXPECT_EQ((*rj)["metadata"]["labels"][kPrebuiltWorkloadLabel], "wl-j");
  EXPECT_EQ((*rj)["metadata"]["labels"][kOriginLabel], "multikueue");
  EXPECT_FALSE((*rj)["spec"].contains("managedBy"));
  EXPECT_EQ((*rj)["spec"]["suspend"], true);
  // w1 reserving later changes nothing: its copy is gone for good.
  Sync();
  EXPECT_FALSE(RGet(w1_, "workloads", "wl-j"));
  EXPECT_EQ(Wl("wl-j")["status"]["clusterName"], "w2");
}

TEST_F(MultiKueueTest, JobStatusIsMirroredAndFinishedIsCopiedBack) {
  Setup();
  ASSERT_NO_FATAL_FAILURE(DispatchTo(w1_, "j"));
  Unsuspend("j");
  const std::string t0 = api::meta::FormatRfc3339(clock_.Now());
  RemoteJobStatus(w1_, "j", {{"active", 1}, {"ready", 1}, {"startTime", t0}});
  Sync();
  Json job = ManagerJob("j");
  EXPECT_EQ(job["status"]["active"], 1);
  EXPECT_EQ(job["status"]["startTime"], t0);
  EXPECT_EQ(job["spec"]["managedBy"], kControllerName);

  const std::string t1 = api::meta::FormatRfc3339(clock_.Now());
  RemoteJobStatus(w1_, "j",
                  {{"active", 0}, {"ready", 0}, {"succeeded", 1}, {"startTime", t0},
                   {"completionTime", t1},
                   {"conditions",
                    {{{"type", "SuccessCriteriaMet"}, {"status", "True"}, {"reason", "CompletionsReached"},
                      {"message", "Reached expected number of succeeded pods"},
                      {"lastProbeTime", t1}, {"lastTransitionTime", t1}},
                     {{"type", "Complete"}, {"status", "True"}, {"reason", "CompletionsReached"},
                      {"message", "Reached expected number of succeeded pods"},
                      {"lastProbeTime", t1}, {"lastTransitionTime", t1}}}}});
  RemoteFinish(w1_, "wl-j");
  Sync();
  job = ManagerJob("j");
  EXPECT_EQ(job["status"]["succeeded"], 1);
  EXPECT_EQ(Cond(job, "Complete"), "True/CompletionsReached");
  EXPECT_EQ(Cond(Wl("wl-j"), "Finished"), "True/Succeeded");
  // Finished: the copies go.
  Sync();
  EXPECT_FALSE(RGet(w1_, "workloads", "wl-j"));
  EXPECT_FALSE(RGet(w1_, "jobs", "j"));
}

TEST_F(MultiKueueTest, JobWithoutManagedByKeepsTheCheckPending) {
  Setup();
  JobAndWorkload("j", /*managed=*/false);
  Reserve(w1_, "wl-j");
  Sync();
  EXPECT_EQ(CheckState("wl-j"), "Pending");
  EXPECT_EQ(CheckMessage("wl-j"), "The workload got reservation on \"w1\"");
  EXPECT_EQ(Cond(Wl("wl-j"), "Admitted"), "");
  EXPECT_TRUE(RGet(w1_, "jobs", "j"));
  RemoteFinish(w1_, "wl-j");
  Sync();
  EXPECT_EQ(Cond(Wl("wl-j"), "Finished"), "True/Succeeded");
  EXPECT_EQ(ManagerJob("j")["spec"]["suspend"], true);
}

TEST_F(MultiKueueTest, DeletingTheManagerWorkloadDeletesTheCopies) {
  Setup();
  JobAndWorkload("j");
  ASSERT_TRUE(RGet(w2_, "workloads", "wl-j"));
  Reserve(w1_, "wl-j");
  Sync();
  ASSERT_TRUE(RGet(w1_, "jobs", "j"));
  ASSERT_TRUE(client_.Delete(Kind("workloads"), "ns", "wl-j").ok());
  Settle();
  EXPECT_FALSE(RGet(w1_, "workloads", "wl-j"));
  EXPECT_FALSE(RGet(w1_, "jobs", "j"));
  EXPECT_FALSE(RGet(w2_, "workloads", "wl-j"));
}

TEST_F(MultiKueueTest, CopyEvictedOnTheWorkerMakesTheCheckRetry) {
  Setup();
  ASSERT_NO_FATAL_FAILURE(DispatchTo(w1_, "j"));
  // The worker's Kueue preempts it: the reservation goes.
  ASSERT_NO_FATAL_FAILURE(RemotePreempt(w1_, "wl-j"));
  Sync();
  EXPECT_EQ(CheckState("wl-j"), "Retry");
  EXPECT_EQ(CheckMessage("wl-j"), "The workload lost its reservation on \"w1\"");
  // The copies and the job are withdrawn.
  Sync();
  EXPECT_FALSE(RGet(w1_, "jobs", "j"));
  EXPECT_FALSE(RGet(w1_, "workloads", "wl-j"));
}

TEST_F(MultiKueueTest, WorkloadOfAnotherKindIsRejected) {
  Setup();
  Workload("bare", "lq", "1");
  Settle();
  EXPECT_EQ(CheckState("bare"), "Rejected");
  EXPECT_THAT(CheckMessage("bare"), HasSubstr("No multikueue adapter found"));
  EXPECT_FALSE(RGet(w1_, "workloads", "bare"));
}

TEST_F(MultiKueueTest, JobSetRunsOnTheWinnerAndItsStatusIsMirrored) {
  Setup();
  JobSetAndWorkload("js");
  EXPECT_EQ(CheckState("wl-js"), "Pending");
  ASSERT_TRUE(RGet(w1_, "workloads", "wl-js"));
  ASSERT_TRUE(RGet(w2_, "workloads", "wl-js"));
  EXPECT_FALSE(RGet(w1_, "jobsets", "js"));
  EXPECT_FALSE(RGet(w2_, "jobsets", "js"));

  Reserve(w1_, "wl-js", "w");
  Sync();
  EXPECT_EQ(CheckState("wl-js"), "Ready");
  EXPECT_EQ(CheckMessage("wl-js"), "The workload got reservation on \"w1\"");
  EXPECT_EQ(Wl("wl-js")["status"]["clusterName"], "w1");
  EXPECT_FALSE(RGet(w2_, "workloads", "wl-js"));
  EXPECT_FALSE(RGet(w2_, "jobsets", "js"));
  // The JobSet on the winner: prebuilt Workload, origin, no managedBy.
  auto rjs = RGet(w1_, "jobsets", "js");
  ASSERT_TRUE(rjs);
  EXPECT_EQ((*rjs)["metadata"]["labels"][kPrebuiltWorkloadLabel], "wl-js");
  EXPECT_EQ((*rjs)["metadata"]["labels"][kOriginLabel], "multikueue");
  EXPECT_EQ((*rjs)["metadata"]["labels"]["kueue.x-k8s.io/queue-name"], "lq");
  EXPECT_FALSE((*rjs)["spec"].contains("managedBy"));
  EXPECT_EQ((*rjs)["spec"]["suspend"], true);
  EXPECT_EQ((*rjs)["spec"]["replicatedJobs"][0]["name"], "w");

  // Its status reaches the manager's JobSet.
  RemoteStatus(w1_, "jobsets", "js",
               {{"replicatedJobsStatus", {{{"name", "w"}, {"ready", 1}, {"succeeded", 0},
                                           {"failed", 0}, {"active", 1}, {"suspended", 0}}}}});
  Sync();
  EXPECT_EQ(ManagerJobSet("js")["status"]["replicatedJobsStatus"][0]["active"], 1);

  const std::string t = api::meta::FormatRfc3339(clock_.Now());
  RemoteStatus(w1_, "jobsets", "js",
               {{"terminalState", "Completed"},
                {"conditions", {{{"type", "Completed"}, {"status", "True"},
                                 {"reason", "AllJobsCompleted"},
                                 {"message", "jobset completed successfully"},
                                 {"lastTransitionTime", t}}}},
                {"replicatedJobsStatus", {{{"name", "w"}, {"ready", 0}, {"succeeded", 1},
                                           {"failed", 0}, {"active", 0}, {"suspended", 0}}}}});
  RemoteFinish(w1_, "wl-js");
  Sync();
  Json js = ManagerJobSet("js");
  EXPECT_EQ(Cond(js, "Completed"), "True/AllJobsCompleted");
  EXPECT_EQ(js["status"]["terminalState"], "Completed");
  EXPECT_EQ(Cond(Wl("wl-js"), "Finished"), "True/Succeeded");
  // Finished: the copies go.
  Sync();
  EXPECT_FALSE(RGet(w1_, "jobsets", "js"));
  EXPECT_FALSE(RGet(w1_, "workloads", "wl-js"));
}

TEST_F(MultiKueueTest, DeletingAJobSetsWorkloadWithdrawsItsJobSet) {
  Setup();
  JobSetAndWorkload("js");
  Reserve(w2_, "wl-js", "w");
  Sync();
  ASSERT_TRUE(RGet(w2_, "jobsets", "js"));
  ASSERT_TRUE(client_.Delete(Kind("workloads"), "ns", "wl-js").ok());
  Settle();
  EXPECT_FALSE(RGet(w2_, "jobsets", "js"));
  EXPECT_FALSE(RGet(w2_, "workloads", "wl-js"));
  EXPECT_FALSE(RGet(w1_, "workloads", "wl-js"));
}

TEST_F(MultiKueueTest, JobSetNotManagedByMultiKueueIsRejected) {
  Setup();
  JobSetAndWorkload("js", std::nullopt);
  EXPECT_EQ(CheckState("wl-js"), "Rejected");
  EXPECT_EQ(CheckMessage("wl-js"),
            "The owner is not managed by Kueue: Expecting spec.managedBy to be "
            "\"kueue.x-k8s.io/multikueue\" not \"\"");
  EXPECT_FALSE(RGet(w1_, "workloads", "wl-js"));
  EXPECT_FALSE(RGet(w2_, "workloads", "wl-js"));
}

TEST_F(MultiKueueTest, IncrementalDispatcherNominatesThreeWorkersPerRound) {
  MultiKueueOptions opts;
  opts.dispatcher_name = kDispatcherIncremental;
  Setup(opts, {"w4", "w3", "w2", "w1"});  // rounds go by name, not by the config's order
  JobAndWorkload("j");
  EXPECT_EQ(Wl("wl-j")["status"]["nominatedClusterNames"], Json({"w1", "w2", "w3"}));
  EXPECT_TRUE(RGet(w1_, "workloads", "wl-j"));
  EXPECT_TRUE(RGet(w2_, "workloads", "wl-j"));
  EXPECT_TRUE(RGet(w3_, "workloads", "wl-j"));
  EXPECT_FALSE(RGet(w4_, "workloads", "wl-j"));
  // A round lasts 5 minutes (Kueue's: while now - start <= 5m).
  Advance(absl::Minutes(5));
  EXPECT_FALSE(RGet(w4_, "workloads", "wl-j"));
  EXPECT_EQ(Wl("wl-j")["status"]["nominatedClusterNames"], Json({"w1", "w2", "w3"}));
  Advance(absl::Seconds(2));
  EXPECT_EQ(Wl("wl-j")["status"]["nominatedClusterNames"], Json({"w1", "w2", "w3", "w4"}));
  EXPECT_TRUE(RGet(w4_, "workloads", "wl-j"));
  // Every worker nominated: nothing more happens until one reserves.
  Advance(absl::Minutes(6));
  EXPECT_EQ(Wl("wl-j")["status"]["nominatedClusterNames"], Json({"w1", "w2", "w3", "w4"}));
  Reserve(w4_, "wl-j");
  Sync();
  EXPECT_EQ(CheckState("wl-j"), "Ready");
  EXPECT_EQ(Wl("wl-j")["status"]["clusterName"], "w4");
  EXPECT_FALSE(Wl("wl-j")["status"].contains("nominatedClusterNames"));
  EXPECT_TRUE(RGet(w4_, "jobs", "j"));
  for (FakeCluster* c : {&w1_, &w2_, &w3_}) EXPECT_FALSE(RGet(*c, "workloads", "wl-j"));
}

TEST_F(MultiKueueTest, IncrementalDispatcherStartsOverAfterAnEviction) {
  MultiKueueOptions opts;
  opts.dispatcher_name = kDispatcherIncremental;
  Setup(opts, {"w1", "w2", "w3", "w4"});
  ASSERT_NO_FATAL_FAILURE(DispatchTo(w1_, "j"));
  // The worker's Kueue preempts it: Retry, evicted, queued again; the next
  // dispatch is a first round again.
  ASSERT_NO_FATAL_FAILURE(RemotePreempt(w1_, "wl-j"));
  Sync();
  ASSERT_EQ(Cond(Wl("wl-j"), "Evicted"), "True/AdmissionCheck");
  // The job integration's part: the Job is suspended (it never ran here)
  // and the quota released.
  Json evicted = Wl("wl-j");
  evicted["status"].erase("admission");
  for (Json& c : evicted["status"]["conditions"]) {
    if (c["type"] == "QuotaReserved" || c["type"] == "Admitted") {
      c["status"] = "False";
      c["reason"] = "Pending";
    }
  }
  ASSERT_TRUE(client_.UpdateStatus(Kind("workloads"), evicted).ok());
  Settle();
  EXPECT_FALSE(RGet(w1_, "workloads", "wl-j"));
  Advance(absl::Minutes(2));  // requeued (backoff) and reserved again
  ASSERT_EQ(Cond(Wl("wl-j"), "QuotaReserved"), "True/QuotaReserved");
  EXPECT_EQ(Wl("wl-j")["status"]["nominatedClusterNames"], Json({"w1", "w2", "w3"}));
  EXPECT_TRUE(RGet(w1_, "workloads", "wl-j"));
  EXPECT_FALSE(RGet(w4_, "workloads", "wl-j"));
}

TEST_F(MultiKueueTest, GarbageCollectionRemovesOrphanedCopies) {
  Setup();
  // A copy whose manager workload no longer exists (e.g. deleted while the
  // manager was down).
  Json orphan = internal::RemoteWorkload(
      {{"metadata", {{"name", "gone"}, {"namespace", "ns"}, {"uid", "old-uid"}}},
       {"spec", {{"queueName", "lq"},
                 {"podSets", {{{"name", "main"}, {"count", 1},
                               {"template", {{"spec", {{"containers",
                                                        {{{"name", "c"}, {"image", "b"}}}}}}}}}}}}}},
      "multikueue");
  ASSERT_TRUE(w1_.client.Create(RKind(w1_, "workloads"), "ns", orphan).ok());
  // Copies of another origin are not ours.
  orphan["metadata"]["name"] = "theirs";
  orphan["metadata"]["labels"][kOriginLabel] = "other-manager";
  ASSERT_TRUE(w1_.client.Create(RKind(w1_, "workloads"), "ns", orphan).ok());
  Advance(absl::Minutes(1) + opts_.probe_interval);
  EXPECT_FALSE(RGet(w1_, "workloads", "gone"));
  EXPECT_TRUE(RGet(w1_, "workloads", "theirs"));
}

TEST_F(MultiKueueTest, QueuedJobsOfAMultiKueueQueueDefaultToManagedBy) {
  ASSERT_TRUE(RegisterMultiKueueJobDefaulting(reg_).ok());
  Setup();
  LocalQueue("ns", "plain", "other");  // a queue whose ClusterQueue does not exist
  const api::KindDef& jk = client_.Kind("batch", "v1", "jobs");
  auto job = [&](const std::string& name, const std::string& queue) {
    Json j = {{"apiVersion", "batch/v1"}, {"kind", "Job"},
              {"metadata", {{"name", name}, {"namespace", "ns"},
                            {"labels", {{"kueue.x-k8s.io/queue-name", queue}}}}},
              {"spec", {{"template", {{"spec", {{"restartPolicy", "Never"},
                                                {"containers", {{{"name", "c"},
                                                                 {"image", "busybox"}}}}}}}}}}};
    auto r = client_.Create(jk, "ns", j);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : Json();
  };
  EXPECT_EQ(job("a", "lq")["spec"]["managedBy"], kControllerName);
  EXPECT_FALSE(job("b", "plain")["spec"].contains("managedBy"));
  EXPECT_FALSE(job("c", "missing")["spec"].contains("managedBy"));
  // JobSets too: without managedBy or with the JobSet controller's (Kueue's
  // CanDefaultManagedBy); another manager's is kept.
  const api::KindDef& jsk = client_.Kind("jobset.x-k8s.io", "v1alpha2", "jobsets");
  auto jobset = [&](const std::string& name, const std::string& queue,
                    std::optional<std::string> managed_by) {
    auto b = api::testing::MakeJobSet(name, "ns").ReplicatedJob("w", 1, 1);
    if (managed_by) b.ManagedBy(*managed_by);
    Json js = b.Obj();
    js["metadata"]["labels"] = {{"kueue.x-k8s.io/queue-name", queue}};
    auto r = client_.Create(jsk, "ns", js);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : Json();
  };
  EXPECT_EQ(jobset("d", "lq", std::nullopt)["spec"]["managedBy"], kControllerName);
  EXPECT_EQ(jobset("e", "lq", "jobset.sigs.k8s.io/jobset-controller")["spec"]["managedBy"],
            kControllerName);
  EXPECT_EQ(jobset("f", "lq", "example.com/other")["spec"]["managedBy"], "example.com/other");
  EXPECT_FALSE(jobset("g", "plain", std::nullopt)["spec"].contains("managedBy"));
}

TEST_F(MultiKueueTest, ValidationNamesTheField) {
  Start();
  auto bad = [&](const char* plural, Json obj) {
    obj["apiVersion"] = "kueue.x-k8s.io/v1beta2";
    obj["kind"] = Kind(plural).kind;
    auto r = client_.Create(Kind(plural), "", obj);
    EXPECT_FALSE(r.ok());
    return std::string(r.status().message());
  };
  EXPECT_THAT(bad("multikueueclusters", {{"metadata", {{"name", "a"}}}, {"spec", Json::object()}}),
              HasSubstr("spec.clusterSource: Required value"));
  EXPECT_THAT(bad("multikueueclusters",
                  {{"metadata", {{"name", "a"}}},
                   {"spec", {{"clusterSource", {{"clusterProfileRef", {{"name", "p"}}}}}}}}),
              HasSubstr("spec.clusterSource.clusterProfileRef: Forbidden"));
  EXPECT_THAT(bad("multikueueclusters",
                  {{"metadata", {{"name", "a"}}},
                   {"spec", {{"clusterSource",
                              {{"kubeConfig", {{"location", "x"}, {"locationType", "File"}}}}}}}}),
              HasSubstr("spec.clusterSource.kubeConfig.locationType: Unsupported value"));
  EXPECT_THAT(bad("multikueueclusters",
                  {{"metadata", {{"name", "a"}}},
                   {"spec", {{"clusterSource", {{"kubeConfig", {{"location", "Bad_Name"}}}}}}}}),
              HasSubstr("spec.clusterSource.kubeConfig.location: Invalid value"));
  EXPECT_THAT(bad("multikueueconfigs",
                  {{"metadata", {{"name", "c"}}}, {"spec", {{"clusters", Json::array()}}}}),
              HasSubstr("spec.clusters: Required value"));
  EXPECT_THAT(bad("multikueueconfigs",
                  {{"metadata", {{"name", "c"}}}, {"spec", {{"clusters", {"a", "a"}}}}}),
              HasSubstr("spec.clusters[1]: Duplicate value"));
  // v1beta1's spec.kubeConfig is stored under clusterSource.
  const api::KindDef& v1 = client_.Kind("kueue.x-k8s.io", "v1beta1", "multikueueclusters");
  auto r = client_.Create(v1, "", {{"apiVersion", "kueue.x-k8s.io/v1beta1"},
                                   {"kind", "MultiKueueCluster"},
                                   {"metadata", {{"name", "old"}}},
                                   {"spec", {{"kubeConfig", {{"location", "/etc/kc"},
                                                             {"locationType", "Path"}}}}}});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)["spec"]["kubeConfig"]["location"], "/etc/kc");
  EXPECT_EQ(Get("multikueueclusters", "", "old")["spec"]["clusterSource"]["kubeConfig"]
               ["locationType"],
            "Path");
}

}  // namespace
}  // namespace batchd::controllers::multikueue::testing
