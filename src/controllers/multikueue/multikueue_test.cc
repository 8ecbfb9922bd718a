// MultiKueue's dispatch state machine in one process: the manager (queue
// manager, admission-check controllers and the MultiKueue controllers over
// an in-memory registry on a FakeClock) and two fake worker clusters (their
// own in-memory registries, reached through a fake Dialer; a worker can be
// made unreachable). The test plays the workers' Kueue and Job controller
// (quota reservations, job status) and the manager's job integration.
#include "controllers/multikueue/multikueue.h"

#include <map>

#include "absl/strings/escaping.h"
#include "api/meta/time_util.h"
#include "controllers/admissioncheck/admission_checks.h"
#include "controllers/admissioncheck/controllers.h"
#include "controllers/multikueue/internal/multikueue_impl.h"
#include "controllers/queueing/queue_manager_test_env.h"

namespace batchd::controllers::multikueue {
namespace {

using api::Json;
using ::testing::HasSubstr;

// A client that answers Unavailable while `down`.
class SwitchableClient : public client::Client {
 public:
  explicit SwitchableClient(client::Client& inner) : inner_(inner) {}
  bool down = false;
  int calls = 0;
  const api::Scheme& scheme() const override { return inner_.scheme(); }
  absl::StatusOr<Json> Get(const api::KindDef& k, const std::string& ns,
                           const std::string& name) override {
    if (absl::Status s = Check(); !s.ok()) return s;
    return inner_.Get(k, ns, name);
  }
  absl::StatusOr<client::ListResult> List(const api::KindDef& k, const std::string& ns,
                                          const client::Selector& sel) override {
    if (absl::Status s = Check(); !s.ok()) return s;
    return inner_.List(k, ns, sel);
  }
  absl::StatusOr<Json> Create(const api::KindDef& k, const std::string& ns, Json obj) override {
    if (absl::Status s = Check(); !s.ok()) return s;
    return inner_.Create(k, ns, std::move(obj));
  }
  absl::StatusOr<Json> Update(const api::KindDef& k, Json obj) override {
    if (absl::Status s = Check(); !s.ok()) return s;
    return inner_.Update(k, std::move(obj));
  }
  absl::StatusOr<Json> UpdateStatus(const api::KindDef& k, Json obj) override {
    if (absl::Status s = Check(); !s.ok()) return s;
    return inner_.UpdateStatus(k, std::move(obj));
  }
  absl::StatusOr<Json> MergePatch(const api::KindDef& k, const std::string& ns,
                                  const std::string& name, const Json& patch,
                                  bool status) override {
    if (absl::Status s = Check(); !s.ok()) return s;
    return inner_.MergePatch(k, ns, name, patch, status);
  }
  absl::Status Delete(const api::KindDef& k, const std::string& ns, const std::string& name,
                      const client::DeleteOptions& opts) override {
    if (absl::Status s = Check(); !s.ok()) return s;
    return inner_.Delete(k, ns, name, opts);
  }
  absl::StatusOr<std::unique_ptr<client::WatchStream>> Watch(const api::KindDef& k,
                                                             const std::string& ns,
                                                             const client::Selector& sel,
                                                             const std::string& rv) override {
    if (absl::Status s = Check(); !s.ok()) return s;
    return inner_.Watch(k, ns, sel, rv);
  }

 private:
  absl::Status Check() {
    ++calls;
    return down ? absl::UnavailableError("connection refused") : absl::OkStatus();
  }
  client::Client& inner_;
};

// A worker cluster: its own store and registry.
struct FakeCluster {
  explicit FakeCluster(Clock& clock) : reg(store, api::BuiltinScheme(), clock) {
    EXPECT_TRUE(reg.Start().ok());
    Json ns = {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", "ns"}}}};
    EXPECT_TRUE(client.Create(client.Kind("", "v1", "namespaces"), "", ns).ok());
  }
  store::MemoryStore store;
  registry::Registry reg;
  client::InProcessClient client{reg};
  std::shared_ptr<SwitchableClient> front = std::make_shared<SwitchableClient>(client);
};

// kubeconfig text "cluster: <name>" -> that fake cluster; anything else fails.
class FakeDialer : public Dialer {
 public:
  std::map<std::string, FakeCluster*> clusters;
  absl::StatusOr<std::shared_ptr<client::Client>> Dial(const std::string& kubeconfig,
                                                       const std::string& source,
                                                       const std::string&) override {
    for (auto& [name, c] : clusters) {
      if (kubeconfig == "cluster: " + name) return std::shared_ptr<client::Client>(c->front);
    }
    return absl::InvalidArgumentError("kubeconfig " + source + ": no server for cluster");
  }
};

class MultiKueueTest : public queueing::testing::QueueManagerTest {
 protected:
  void StartAll(MultiKueueOptions opts = {}) {
    dialer_->clusters = {{"w1", &w1_}, {"w2", &w2_}};
    opts.dialer = dialer_;
    opts_ = opts;
    stack_ = std::make_unique<Stack>(client_, clock_, queueing::QueueingConfig{});
    admissioncheck::AddAdmissionCheckControllers(stack_->ctx);
    AddMultiKueueControllers(stack_->ctx, opts);
    ASSERT_TRUE(stack_->mgr.SyncAll().ok());
    Settle();
  }
  void Secret(const std::string& name, const std::string& kubeconfig) {
    const api::KindDef& k = client_.Kind("", "v1", "secrets");
    Json s = {{"apiVersion", "v1"}, {"kind", "Secret"},
              {"metadata", {{"name", name}, {"namespace", kSecretNamespace}}},
              {"data", {{"kubeconfig", absl::Base64Escape(kubeconfig)}}}};
    auto r = client_.Create(k, kSecretNamespace, s);
    ASSERT_TRUE(r.ok()) << r.status();
  }
  void Cluster(const std::string& name, const std::string& secret) {
    Create("multikueueclusters", "",
           {{"metadata", {{"name", name}}},
            {"spec", {{"clusterSource", {{"kubeConfig", {{"location", secret}}}}}}}});
  }
  // Manager setup: secrets and MultiKueueClusters w1, w2, config `cfg`,
  // check `mk`, ClusterQueue `cq` (cpu 3) using it, LocalQueue ns/lq.
  void Setup(MultiKueueOptions opts = {}) {
    Namespace(kSecretNamespace);
    Secret("w1-secret", "cluster: w1");
    Secret("w2-secret", "cluster: w2");
    Cluster("w1", "w1-secret");
    Cluster("w2", "w2-secret");
    Create("multikueueconfigs", "",
           {{"metadata", {{"name", "cfg"}}}, {"spec", {{"clusters", {"w1", "w2"}}}}});
    Create("admissionchecks", "",
           {{"metadata", {{"name", "mk"}}},
            {"spec",
             {{"controllerName", kControllerName},
              {"parameters",
               {{"apiGroup", "kueue.x-k8s.io"}, {"kind", "MultiKueueConfig"}, {"name", "cfg"}}}}}});
    Basic({{"admissionChecksStrategy", {{"admissionChecks", {{{"name", "mk"}}}}}}});
    StartAll(opts);
  }
  // A suspended Job in ns and the Workload its integration would create.
  void JobAndWorkload(const std::string& name, bool managed = true) {
    const api::KindDef& jk = client_.Kind("batch", "v1", "jobs");
    Json container = {{"name", "c"}, {"image", "busybox"},
                      {"resources", {{"requests", {{"cpu", "1"}}}}}};
    Json job = {{"apiVersion", "batch/v1"}, {"kind", "Job"},
                {"metadata", {{"name", name}, {"namespace", "ns"},
                              {"labels", {{"kueue.x-k8s.io/queue-name", "lq"}}}}},
                {"spec", {{"suspend", true},
                          {"template", {{"spec", {{"restartPolicy", "Never"},
                                                  {"containers", {container}}}}}}}}};
    if (managed) job["spec"]["managedBy"] = kControllerName;
    auto j = client_.Create(jk, "ns", job);
    ASSERT_TRUE(j.ok()) << j.status();
    job_ = *j;
    Create("workloads", "ns",
           {{"metadata",
             {{"name", "wl-" + name},
              {"ownerReferences",
               {{{"apiVersion", "batch/v1"}, {"kind", "Job"}, {"name", name},
                 {"uid", (*j)["metadata"]["uid"]}, {"controller", true}}}}}},
            {"spec",
             {{"queueName", "lq"},
              {"podSets", {{{"name", "main"}, {"count", 1},
                            {"template", {{"spec", {{"containers", {container}}}}}}}}}}}});
    Settle();
  }
  // What the job integration does once the manager's Workload is admitted.
  void Unsuspend(const std::string& name) {
    auto r = client_.MergePatch(client_.Kind("batch", "v1", "jobs"), "ns", name,
                                {{"spec", {{"suspend", false}}}});
    ASSERT_TRUE(r.ok()) << r.status();
    Settle();
  }
  static const api::KindDef& RKind(FakeCluster& c, const char* plural) {
    return std::string(plural) == "jobs" ? c.client.Kind("batch", "v1", "jobs")
                                         : c.client.Kind("kueue.x-k8s.io", "v1beta2", plural);
  }
  static std::optional<Json> RGet(FakeCluster& c, const char* plural, const std::string& name) {
    auto r = c.client.Get(RKind(c, plural), "ns", name);
    if (!r.ok()) return std::nullopt;
    return *r;
  }
  // The worker's Kueue reserves quota for (and admits) its copy.
  void Reserve(FakeCluster& c, const std::string& wl) {
    Json w = *RGet(c, "workloads", wl);
    const std::string now = api::meta::FormatRfc3339(clock_.Now());
    w["status"]["admission"] = {
        {"clusterQueue", "cq"},
        {"podSetAssignments",
         {{{"name", "main"}, {"flavors", {{"cpu", "default"}}}, {"resourceUsage", {{"cpu", "1"}}},
           {"count", 1}}}}};
    w["status"]["conditions"] = {
        {{"type", "QuotaReserved"}, {"status", "True"}, {"reason", "QuotaReserved"},
         {"message", "Quota reserved in ClusterQueue cq"}, {"lastTransitionTime", now}},
        {{"type", "Admitted"}, {"status", "True"}, {"reason", "Admitted"},
         {"message", "The workload is admitted"}, {"lastTransitionTime", now}}};
    auto r = c.client.UpdateStatus(RKind(c, "workloads"), w);
    ASSERT_TRUE(r.ok()) << r.status();
  }
  void RemoteJobStatus(FakeCluster& c, const std::string& job, Json status) {
    Json j = *RGet(c, "jobs", job);
    j["status"] = std::move(status);
    auto r = c.client.UpdateStatus(RKind(c, "jobs"), j);
    ASSERT_TRUE(r.ok()) << r.status();
  }
  void RemoteFinish(FakeCluster& c, const std::string& wl) {
    Json w = *RGet(c, "workloads", wl);
    w["status"]["conditions"].push_back(
        {{"type", "Finished"}, {"status", "True"}, {"reason", "Succeeded"},
         {"message", "Job finished successfully"},
         {"lastTransitionTime", api::meta::FormatRfc3339(clock_.Now())}});
    auto r = c.client.UpdateStatus(RKind(c, "workloads"), w);
    ASSERT_TRUE(r.ok()) << r.status();
  }
  std::string CheckState(const std::string& wl) {
    const Json w = Wl(wl);
    const Json* s = admissioncheck::FindCheckState(w, "mk");
    return s == nullptr ? "" : s->value("state", "");
  }
  std::string CheckMessage(const std::string& wl) {
    const Json w = Wl(wl);
    const Json* s = admissioncheck::FindCheckState(w, "mk");
    return s == nullptr ? "" : s->value("message", "");
  }
  Json ManagerJob(const std::string& name) {
    auto r = client_.Get(client_.Kind("batch", "v1", "jobs"), "ns", name);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : Json();
  }
  // One sync round of the dispatcher.
  void Sync() { Advance(opts_.sync_interval); }

  FakeCluster w1_{clock_};
  FakeCluster w2_{clock_};
  std::shared_ptr<FakeDialer> dialer_ = std::make_shared<FakeDialer>();
  MultiKueueOptions opts_;
  Json job_;
};

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
  JobAndWorkload("j");
  Reserve(w1_, "wl-j");
  Sync();
  ASSERT_EQ(CheckState("wl-j"), "Ready");
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

TEST_F(MultiKueueTest, LostWorkerMakesTheCheckRetryAfterWorkerLostTimeout) {
  MultiKueueOptions opts;
  opts.worker_lost_timeout = absl::Minutes(5);
  Setup(opts);
  JobAndWorkload("j");
  Reserve(w1_, "wl-j");
  Sync();
  ASSERT_EQ(CheckState("wl-j"), "Ready");
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
  JobAndWorkload("j");
  Reserve(w1_, "wl-j");
  Sync();
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
  JobAndWorkload("j");
  Reserve(w1_, "wl-j");
  Sync();
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

TEST_F(MultiKueueTest, CopyEvictedOnTheWorkerMakesTheCheckRetry) {
  Setup();
  JobAndWorkload("j");
  Reserve(w1_, "wl-j");
  Sync();
  ASSERT_EQ(CheckState("wl-j"), "Ready");
  // The worker's Kueue preempts it: the reservation goes.
  Json w = *RGet(w1_, "workloads", "wl-j");
  w["status"].erase("admission");
  for (Json& c : w["status"]["conditions"]) {
    c["status"] = "False";
    c["reason"] = "Preempted";
  }
  ASSERT_TRUE(w1_.client.UpdateStatus(RKind(w1_, "workloads"), w).ok());
  Sync();
  EXPECT_EQ(CheckState("wl-j"), "Retry");
  EXPECT_EQ(CheckMessage("wl-j"), "The workload lost its reservation on \"w1\"");
  // The copies and the job are withdrawn.
  Sync();
  EXPECT_FALSE(RGet(w1_, "jobs", "j"));
  EXPECT_FALSE(RGet(w1_, "workloads", "wl-j"));
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

TEST_F(MultiKueueTest, WorkloadOfAnotherKindIsRejected) {
  Setup();
  Workload("bare", "lq", "1");
  Settle();
  EXPECT_EQ(CheckState("bare"), "Rejected");
  EXPECT_THAT(CheckMessage("bare"), HasSubstr("No multikueue adapter found"));
  EXPECT_FALSE(RGet(w1_, "workloads", "bare"));
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
}  // namespace batchd::controllers::multikueue
