// MultiKueue reaching its workers: lost, unreachable and misconfigured
// workers, the watches it reads them through (no request per workload,
// resumption, expiry, garbage) and failing writes (fixture:
// multikueue_test_env.h).
#include <iostream>
#include <string>

#include "controllers/multikueue/multikueue_test_env.h"

namespace batchd::controllers::multikueue::testing {
namespace {

TEST_F(MultiKueueTest, LostWorkerMakesTheCheckRetryAfterWorkerLostTimeout) {
  MultiKueueOptions opts;
  opts.worker_lost_timeout = absl::Minutes(5);
  Setup(opts);
  ASSERT_NO_FATAL_FAILURE(DispatchTo(w1_, "j"));
  w1_.front->down = true;
  Advance(opts_.probe_interval);
  EXPECT_EQ(Cond(Get("multikueueclusters", "", "w1"), "Active"), "False/ClientConnectionFailed");
  EXPECT_THAT(CondMessage(Get("multikueueclusters", "", "w1"), "Active"),
              HasSubstr("connection refused"));
  Json ac = Get("admissionchecks", "", "mk");
  EXPECT_EQ(Cond(ac, "Active"), "True/SomeActiveClusters");
  EXPECT_EQ(CondMessage(ac, "Active"), "Inactive clusters: [w1]");
  // Not yet: the worker may come back.
  Advance(absl::Minutes(4));
  EXPECT_EQ(CheckState("wl-j"), "Ready");
  Advance(absl::Minutes(1) + opts_.sync_interval);
  EXPECT_EQ(CheckState("wl-j"), "Retry");
  EXPECT_THAT(CheckMessage("wl-j"), HasSubstr("Reserving remote lost"));
  EXPECT_EQ(Cond(Wl("wl-j"), "Evicted"), "True/AdmissionCheck");
}

TEST_F(MultiKueueTest, EvictionClearsTheMirroredStatusOnceTheJobIsSuspended) {
  MultiKueueOptions opts;
  opts.worker_lost_timeout = absl::Minutes(1);
  Setup(opts);
  ASSERT_NO_FATAL_FAILURE(DispatchTo(w1_, "j"));
  Unsuspend("j");
  RemoteJobStatus(w1_, "j", {{"active", 1}, {"startTime", api::meta::FormatRfc3339(clock_.Now())}});
  Sync();
  ASSERT_EQ(ManagerJob("j")["status"]["active"], 1);
  w1_.front->down = true;
  Advance(absl::Seconds(20));  // the probe: every workerLostTimeout / 3
  Advance(absl::Minutes(1) + opts_.sync_interval);
  ASSERT_EQ(Cond(Wl("wl-j"), "Evicted"), "True/AdmissionCheck");
  // Still running as far as the manager knows until the job is stopped.
  EXPECT_EQ(ManagerJob("j")["status"]["active"], 1);
  // The job integration suspends it; then nothing mirrored is left, so its
  // quota can be released.
  ASSERT_TRUE(client_.MergePatch(client_.Kind("batch", "v1", "jobs"), "ns", "j",
                                 {{"spec", {{"suspend", true}}}}).ok());
  Settle();
  Sync();
  Json job = ManagerJob("j");
  EXPECT_FALSE(job["status"].contains("active"));
  EXPECT_FALSE(job["status"].contains("startTime"));
}

TEST_F(MultiKueueTest, WorkerBackBeforeTimeoutKeepsTheWorkload) {
  Setup();  // Default workerLostTimeout: 15m.
  ASSERT_NO_FATAL_FAILURE(DispatchTo(w1_, "j"));
  w1_.front->down = true;
  Advance(opts_.probe_interval);
  Advance(absl::Minutes(14));
  EXPECT_EQ(CheckState("wl-j"), "Ready");
  w1_.front->down = false;
  Advance(opts_.probe_interval);
  EXPECT_EQ(Cond(Get("multikueueclusters", "", "w1"), "Active"), "True/Active");
  Advance(absl::Minutes(5));
  EXPECT_EQ(CheckState("wl-j"), "Ready");
  EXPECT_EQ(Wl("wl-j")["status"]["clusterName"], "w1");
}

TEST_F(MultiKueueTest, UnreachableAndBadClusters) {
  w2_.front->down = true;
  Setup();
  Json w2 = Get("multikueueclusters", "", "w2");
  EXPECT_EQ(Cond(w2, "Active"), "False/ClientConnectionFailed");
  // A Secret that names no cluster, and a missing Secret.
  Secret("bad", "cluster: nowhere");
  Cluster("w3", "bad");
  Cluster("w4", "missing");
  Settle();
  EXPECT_EQ(Cond(Get("multikueueclusters", "", "w3"), "Active"), "False/BadConfig");
  EXPECT_THAT(CondMessage(Get("multikueueclusters", "", "w3"), "Active"),
              HasSubstr("no server for cluster"));
  EXPECT_EQ(Cond(Get("multikueueclusters", "", "w4"), "Active"), "False/BadConfig");
  EXPECT_THAT(CondMessage(Get("multikueueclusters", "", "w4"), "Active"),
              HasSubstr("kueue-system/missing"));
  // Dispatch goes to the reachable worker only.
  JobAndWorkload("j");
  EXPECT_TRUE(RGet(w1_, "workloads", "wl-j"));
  EXPECT_EQ(Wl("wl-j")["status"]["nominatedClusterNames"], Json({"w1"}));
  // Every cluster down: the check and its ClusterQueue go inactive.
  w1_.front->down = true;
  Advance(opts_.probe_interval);
  Json ac = Get("admissionchecks", "", "mk");
  EXPECT_EQ(Cond(ac, "Active"), "False/NoUsableClusters");
  EXPECT_EQ(CondMessage(ac, "Active"), "Inactive clusters: [w1 w2]");
  EXPECT_EQ(Cond(Get("clusterqueues", "", "cq"), "Active"), "False/AdmissionCheckInactive");
}

TEST_F(MultiKueueTest, CheckWithBadParametersIsInactive) {
  Create("admissionchecks", "",
         {{"metadata", {{"name", "mk"}}},
          {"spec",
           {{"controllerName", kControllerName},
            {"parameters",
             {{"apiGroup", "kueue.x-k8s.io"}, {"kind", "MultiKueueConfig"}, {"name", "nope"}}}}}});
  StartAll();
  Json ac = Get("admissionchecks", "", "mk");
  EXPECT_EQ(Cond(ac, "Active"), "False/BadConfig");
  EXPECT_THAT(CondMessage(ac, "Active"), HasSubstr("MultiKueueConfig \"nope\" not found"));
}

// The manager reads the workers through watches: with jobs waiting and then
// running for minutes, not one GET is sent per workload (the old polling
// sent one per worker every 2 s while waiting, two every 2 s while running).
TEST_F(MultiKueueTest, WatchingTheWorkersCostsNoRequestPerWorkload) {
  Setup();
  for (FakeCluster* c : {&w1_, &w2_}) c->front->gets = c->front->lists = c->front->watches = 0;
  const int n = 3;  // the ClusterQueue's quota
  // In steps of the old polling period, so that every timer (probes,
  // watch pumps, the old 2 s re-reads) fires as it would.
  auto run_for = [&](absl::Duration d) {
    for (absl::Duration t; t < d; t += absl::Seconds(2)) Advance(absl::Seconds(2));
  };
  for (int i = 0; i < n; ++i) JobAndWorkload("j" + std::to_string(i));
  run_for(absl::Minutes(1));  // waiting for a reservation
  for (int i = 0; i < n; ++i) Reserve(w1_, "wl-j" + std::to_string(i));
  Sync();
  for (int i = 0; i < n; ++i) {
    ASSERT_EQ(CheckState("wl-j" + std::to_string(i)), "Ready");
    Unsuspend("j" + std::to_string(i));
    RemoteJobStatus(w1_, "j" + std::to_string(i),
                    {{"active", 1}, {"startTime", api::meta::FormatRfc3339(clock_.Now())}});
  }
  run_for(absl::Minutes(10));  // running
  for (int i = 0; i < n; ++i) EXPECT_EQ(ManagerJob("j" + std::to_string(i))["status"]["active"], 1);
  const int gets = w1_.front->gets + w2_.front->gets;
  const int lists = w1_.front->lists + w2_.front->lists;
  const int watches = w1_.front->watches + w2_.front->watches;
  std::cout << "11 min, " << n << " workloads, 2 workers: GETs " << gets << ", LISTs " << lists
            << " (probes), WATCHes " << watches << "\n";
  RecordProperty("gets", gets);
  RecordProperty("lists", lists);
  EXPECT_EQ(gets, 0);
  // The probes: one LIST per worker every 10 s, and each watch's first
  // LIST; the watches stay open (reopened every 5 minutes from their
  // resourceVersion, without a LIST).
  EXPECT_LE(lists, 2 * (11 * 6 + 2 + 3));
  EXPECT_LE(watches, 2 * 3 * 4);
}

TEST_F(RemoteWatchTest, ResumesFromTheLastResourceVersionWithoutAList) {
  Json theirs = CopyOf("b");
  theirs["metadata"]["labels"][kOriginLabel] = "other-manager";
  ASSERT_TRUE(w1_.client.Create(RKind(w1_, "workloads"), "ns", theirs).ok());
  int changes = 0;
  internal::RemoteWatch& rw = Watch([&](const client::ObjectRef&) { ++changes; });
  EXPECT_FALSE(rw.Synced());
  rw.Pump(absl::ZeroDuration());
  EXPECT_TRUE(rw.Synced());
  EXPECT_EQ(rw.List().size(), 1u);  // ours only
  EXPECT_EQ(changes, 1);
  // The connection closes; what happens meanwhile arrives on the resumed watch.
  w1_.front->CutWatches();
  rw.Pump(absl::ZeroDuration());
  ASSERT_TRUE(w1_.client.Create(RKind(w1_, "workloads"), "ns", CopyOf("c")).ok());
  rw.Pump(absl::ZeroDuration());
  EXPECT_TRUE(rw.Get("ns", "c"));
  EXPECT_EQ(changes, 2);
  ASSERT_TRUE(w1_.client.Delete(RKind(w1_, "workloads"), "ns", "a").ok());
  rw.Pump(absl::ZeroDuration());
  EXPECT_FALSE(rw.Get("ns", "a"));
  EXPECT_EQ(rw.stats().lists, 1);
  EXPECT_EQ(rw.stats().resumes, 1);
  EXPECT_EQ(w1_.front->lists, 1);
  // A watch open for 5 minutes is reopened, from its resourceVersion too.
  clock_.Advance(absl::Minutes(5));
  rw.Pump(absl::ZeroDuration());
  ASSERT_TRUE(w1_.client.Create(RKind(w1_, "workloads"), "ns", CopyOf("d")).ok());
  rw.Pump(absl::ZeroDuration());
  EXPECT_TRUE(rw.Get("ns", "d"));
  EXPECT_EQ(rw.stats().resumes, 2);
  EXPECT_EQ(rw.stats().lists, 1);
  EXPECT_TRUE(rw.Synced());
  EXPECT_FALSE(rw.UnsyncedSince());
}

TEST_F(RemoteWatchTest, ListsAgainWhenItsResourceVersionExpired) {
  internal::RemoteWatch& rw = Watch();
  rw.Pump(absl::ZeroDuration());
  w1_.front->inject.push_back(Expired());
  rw.Pump(absl::ZeroDuration());
  EXPECT_EQ(rw.stats().expired, 1);
  rw.Pump(absl::ZeroDuration());  // at once
  EXPECT_EQ(rw.stats().lists, 2);
  EXPECT_TRUE(rw.Synced());
  EXPECT_TRUE(rw.Get("ns", "a"));
  // 410s back to back: the next list waits (a worker that answers nothing
  // else is not listed in a loop).
  w1_.front->inject.push_back(Expired());
  rw.Pump(absl::ZeroDuration());
  rw.Pump(absl::ZeroDuration());
  EXPECT_EQ(rw.stats().lists, 2);
  clock_.Advance(absl::Seconds(2));
  rw.Pump(absl::ZeroDuration());
  EXPECT_EQ(rw.stats().lists, 3);
}

TEST_F(RemoteWatchTest, DropsGarbageAndBacksOff) {
  internal::RemoteWatch& rw = Watch();
  rw.Pump(absl::ZeroDuration());
  ASSERT_TRUE(rw.Synced());
  const absl::Time t0 = clock_.Now();
  // An object that is not one.
  w1_.front->inject.push_back({"MODIFIED", Json("garbage")});
  rw.Pump(absl::ZeroDuration());
  EXPECT_FALSE(rw.Synced());
  EXPECT_EQ(rw.stats().garbage, 1);
  EXPECT_THAT(rw.last_error(), HasSubstr("not a JSON object"));
  EXPECT_EQ(rw.UnsyncedSince(), t0);
  EXPECT_TRUE(rw.Get("ns", "a"));  // the last good state is kept, unsynced
  rw.Pump(absl::ZeroDuration());
  EXPECT_EQ(rw.stats().lists, 1);  // backing off: 1 s
  clock_.Advance(absl::Seconds(1));
  // Every watch now starts with garbage of another shape: each retry waits
  // twice as long.
  w1_.front->poison = client::WatchEvent{"ADDED", {{"metadata", {{"name", "x"}}}}};
  rw.Pump(absl::ZeroDuration());
  EXPECT_EQ(rw.stats().lists, 2);
  EXPECT_EQ(rw.stats().garbage, 2);
  EXPECT_THAT(rw.last_error(), HasSubstr("resourceVersion"));
  clock_.Advance(absl::Seconds(1));
  rw.Pump(absl::ZeroDuration());
  EXPECT_EQ(rw.stats().lists, 2);  // 2 s now
  clock_.Advance(absl::Seconds(1));
  w1_.front->poison = client::WatchEvent{"HELLO", {{"metadata", {{"name", "x"}}}}};
  rw.Pump(absl::ZeroDuration());
  EXPECT_EQ(rw.stats().lists, 3);
  EXPECT_EQ(rw.stats().garbage, 3);
  EXPECT_THAT(rw.last_error(), HasSubstr("HELLO"));
  EXPECT_EQ(rw.UnsyncedSince(), t0);  // still the same streak
  // The worker behaves again: synced, and healthy once the watch stays open.
  w1_.front->poison.reset();
  w1_.front->inject.clear();
  clock_.Advance(absl::Seconds(4));
  rw.Pump(absl::ZeroDuration());
  EXPECT_TRUE(rw.Synced());
  EXPECT_EQ(rw.UnsyncedSince(), t0);
  clock_.Advance(absl::Seconds(10));
  rw.Pump(absl::ZeroDuration());
  EXPECT_FALSE(rw.UnsyncedSince());
  EXPECT_EQ(rw.stats().lists, 4);
}

TEST_F(MultiKueueTest, WorkerWhoseWatchAnswersGarbageIsLost) {
  MultiKueueOptions opts;
  opts.worker_lost_timeout = absl::Minutes(1);  // probes every 20 s
  Setup(opts);
  ASSERT_NO_FATAL_FAILURE(DispatchTo(w1_, "j"));
  // w1 answers its probes but every watch with garbage.
  w1_.front->poison = client::WatchEvent{"MODIFIED", Json::array({1, 2, 3})};
  w1_.front->CutWatches();
  // The cut is seen, the resumed watches answer garbage (the streak
  // starts), relists get garbage again: once in trouble for longer than a
  // probe period (20 s), the worker is inactive.
  const absl::Time cut = clock_.Now();
  auto active = [&] { return Cond(Get("multikueueclusters", "", "w1"), "Active"); };
  while (active() == "True/Active" && clock_.Now() - cut < absl::Minutes(3)) {
    Advance(absl::Seconds(5));
  }
  Json mkc = Get("multikueueclusters", "", "w1");
  EXPECT_EQ(Cond(mkc, "Active"), "False/ClientConnectionFailed");
  EXPECT_THAT(CondMessage(mkc, "Active"), HasSubstr("watching workloads: the watch sent"));
  EXPECT_GT(clock_.Now() - cut, absl::Seconds(20));
  EXPECT_LE(clock_.Now() - cut, absl::Seconds(50));
  // workerLostTimeout counts from the first garbage, not from then.
  while (CheckState("wl-j") == "Ready" && clock_.Now() - cut < absl::Minutes(5)) {
    Advance(absl::Seconds(5));
  }
  EXPECT_EQ(CheckState("wl-j"), "Retry");
  EXPECT_GE(clock_.Now() - cut, absl::Minutes(1));
  EXPECT_LE(clock_.Now() - cut, absl::Seconds(75));
  EXPECT_THAT(CheckMessage("wl-j"), HasSubstr("Reserving remote lost"));
}

// A worker whose write fails in transport (it hangs or went away between
// two probes) is skipped until its next probe passes: one failed request,
// not one per workload.
TEST_F(MultiKueueTest, WorkerFailingAWriteIsSkippedUntilItsNextProbe) {
  Setup();
  w1_.front->down = true;
  const int before = w1_.front->calls;
  JobAndWorkload("a");
  EXPECT_EQ(Wl("wl-a")["status"]["nominatedClusterNames"], Json({"w2"}));
  EXPECT_EQ(w1_.front->calls - before, 1);
  JobAndWorkload("b");
  EXPECT_EQ(Wl("wl-b")["status"]["nominatedClusterNames"], Json({"w2"}));
  EXPECT_EQ(w1_.front->calls - before, 1);
  w1_.front->down = false;
  Advance(opts_.probe_interval);
  EXPECT_TRUE(RGet(w1_, "workloads", "wl-a"));
  EXPECT_TRUE(RGet(w1_, "workloads", "wl-b"));
  EXPECT_EQ(Wl("wl-b")["status"]["nominatedClusterNames"], Json({"w1", "w2"}));
}

}  // namespace
}  // namespace batchd::controllers::multikueue::testing
