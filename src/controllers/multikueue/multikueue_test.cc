// MultiKueue's dispatch state machine in one process: the manager (queue
// manager, admission-check controllers and the MultiKueue controllers over
// an in-memory registry on a FakeClock) and two fake worker clusters (their
// own in-memory registries, reached through a fake Dialer; a worker can be
// made unreachable). The test plays the workers' Kueue and Job controller
// (quota reservations, job status) and the manager's job integration.
#include "controllers/multikueue/multikueue.h"

#include <deque>
#include <iostream>
#include <map>
#include <optional>

#include "absl/strings/escaping.h"
#include "api/meta/time_util.h"
#include "api/testing/jobset_builders.h"
#include "common/testing/fake_clock.h"
#include "controllers/admissioncheck/admission_checks.h"
#include "controllers/admissioncheck/controllers.h"
#include "controllers/multikueue/internal/multikueue_impl.h"
#include "controllers/multikueue/internal/remote_watch.h"
#include "controllers/queueing/queue_manager_test_env.h"

namespace batchd::controllers::multikueue {
namespace {

using api::Json;
using ::testing::HasSubstr;

class SwitchableClient;

// A watch of SwitchableClient: ends when its client cuts the watches, and
// hands out the client's injected events first.
class ControlledWatch : public client::WatchStream {
 public:
  ControlledWatch(std::unique_ptr<client::WatchStream> inner, SwitchableClient& owner, int gen)
      : inner_(std::move(inner)), owner_(owner), gen_(gen) {}
  bool Next(client::WatchEvent* ev, absl::Duration timeout) override;
  bool done() const override;

 private:
  std::unique_ptr<client::WatchStream> inner_;
  SwitchableClient& owner_;
  const int gen_;
  bool ended_ = false;
};

// A client that answers Unavailable while `down`, counts the requests by
// verb, and controls its watches (tests drive it from one thread).
class SwitchableClient : public client::Client {
 public:
  explicit SwitchableClient(client::Client& inner) : inner_(inner) {}
  bool down = false;
  int calls = 0;
  int gets = 0, lists = 0, watches = 0, writes = 0;
  // Ends every watch opened so far (a connection that closed).
  int cut_generation = 0;
  void CutWatches() { ++cut_generation; }
  // Events handed out before any real one (the next watch to ask gets them).
  std::deque<client::WatchEvent> inject;
  // Every watch opened from now on starts with this event (garbage).
  std::optional<client::WatchEvent> poison;
  const api::Scheme& scheme() const override { return inner_.scheme(); }
  absl::StatusOr<Json> Get(const api::KindDef& k, const std::string& ns,
                           const std::string& name) override {
    ++gets;
    if (absl::Status s = Check(); !s.ok()) return s;
    return inner_.Get(k, ns, name);
  }
  absl::StatusOr<client::ListResult> List(const api::KindDef& k, const std::string& ns,
                                          const client::Selector& sel) override {
    ++lists;
    if (absl::Status s = Check(); !s.ok()) return s;
    return inner_.List(k, ns, sel);
  }
  absl::StatusOr<Json> Create(const api::KindDef& k, const std::string& ns, Json obj) override {
    ++writes;
    if (absl::Status s = Check(); !s.ok()) return s;
    return inner_.Create(k, ns, std::move(obj));
  }
  absl::StatusOr<Json> Update(const api::KindDef& k, Json obj) override {
    ++writes;
    if (absl::Status s = Check(); !s.ok()) return s;
    return inner_.Update(k, std::move(obj));
  }
  absl::StatusOr<Json> UpdateStatus(const api::KindDef& k, Json obj) override {
    ++writes;
    if (absl::Status s = Check(); !s.ok()) return s;
    return inner_.UpdateStatus(k, std::move(obj));
  }
  absl::StatusOr<Json> MergePatch(const api::KindDef& k, const std::string& ns,
                                  const std::string& name, const Json& patch,
                                  bool status) override {
    ++writes;
    if (absl::Status s = Check(); !s.ok()) return s;
    return inner_.MergePatch(k, ns, name, patch, status);
  }
  absl::Status Delete(const api::KindDef& k, const std::string& ns, const std::string& name,
                      const client::DeleteOptions& opts) override {
    ++writes;
    if (absl::Status s = Check(); !s.ok()) return s;
    return inner_.Delete(k, ns, name, opts);
  }
  absl::StatusOr<std::unique_ptr<client::WatchStream>> Watch(const api::KindDef& k,
                                                             const std::string& ns,
                                                             const client::Selector& sel,
                                                             const std::string& rv) override {
    ++watches;
    if (absl::Status s = Check(); !s.ok()) return s;
    auto w = inner_.Watch(k, ns, sel, rv);
    if (!w.ok()) return w.status();
    if (poison) inject.push_back(*poison);
    return std::unique_ptr<client::WatchStream>(
        new ControlledWatch(std::move(*w), *this, cut_generation));
  }

 private:
  absl::Status Check() {
    ++calls;
    return down ? absl::UnavailableError("connection refused") : absl::OkStatus();
  }
  client::Client& inner_;
};

bool ControlledWatch::Next(client::WatchEvent* ev, absl::Duration timeout) {
  if (ended_ || owner_.cut_generation > gen_) {
    ended_ = true;
    return false;
  }
  if (!owner_.inject.empty()) {
    *ev = owner_.inject.front();
    owner_.inject.pop_front();
    return true;
  }
  return inner_->Next(ev, timeout);
}

bool ControlledWatch::done() const {
  return ended_ || owner_.cut_generation > gen_ || inner_->done();
}

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
    dialer_->clusters = {{"w1", &w1_}, {"w2", &w2_}, {"w3", &w3_}, {"w4", &w4_}};
    opts.dialer = dialer_;
    opts.watch_threads = false;  // pumped on the FakeClock
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
  void Setup(MultiKueueOptions opts = {}, std::vector<std::string> clusters = {"w1", "w2"}) {
    Namespace(kSecretNamespace);
    for (const std::string& c : clusters) {
      Secret(c + "-secret", "cluster: " + c);
      Cluster(c, c + "-secret");
    }
    Create("multikueueconfigs", "",
           {{"metadata", {{"name", "cfg"}}}, {"spec", {{"clusters", clusters}}}});
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
    if (std::string(plural) == "jobs") return c.client.Kind("batch", "v1", "jobs");
    if (std::string(plural) == "jobsets") {
      return c.client.Kind("jobset.x-k8s.io", "v1alpha2", "jobsets");
    }
    return c.client.Kind("kueue.x-k8s.io", "v1beta2", plural);
  }
  static std::optional<Json> RGet(FakeCluster& c, const char* plural, const std::string& name) {
    auto r = c.client.Get(RKind(c, plural), "ns", name);
    if (!r.ok()) return std::nullopt;
    return *r;
  }
  // The worker's Kueue reserves quota for (and admits) its copy.
  void Reserve(FakeCluster& c, const std::string& wl, const std::string& podset = "main") {
    Json w = *RGet(c, "workloads", wl);
    const std::string now = api::meta::FormatRfc3339(clock_.Now());
    w["status"]["admission"] = {
        {"clusterQueue", "cq"},
        {"podSetAssignments",
         {{{"name", podset}, {"flavors", {{"cpu", "default"}}}, {"resourceUsage", {{"cpu", "1"}}},
           {"count", 1}}}}};
    w["status"]["conditions"] = {
        {{"type", "QuotaReserved"}, {"status", "True"}, {"reason", "QuotaReserved"},
         {"message", "Quota reserved in ClusterQueue cq"}, {"lastTransitionTime", now}},
        {{"type", "Admitted"}, {"status", "True"}, {"reason", "Admitted"},
         {"message", "The workload is admitted"}, {"lastTransitionTime", now}}};
    auto r = c.client.UpdateStatus(RKind(c, "workloads"), w);
    ASSERT_TRUE(r.ok()) << r.status();
  }
  void RemoteStatus(FakeCluster& c, const char* plural, const std::string& name, Json status) {
    Json j = *RGet(c, plural, name);
    j["status"] = std::move(status);
    auto r = c.client.UpdateStatus(RKind(c, plural), j);
    ASSERT_TRUE(r.ok()) << r.status();
  }
  void RemoteJobStatus(FakeCluster& c, const std::string& job, Json status) {
    RemoteStatus(c, "jobs", job, std::move(status));
  }
  // A copy of a manager Workload as MultiKueue makes it (origin label).
  static Json CopyOf(const std::string& name, const std::string& uid = "uid-1") {
    return internal::RemoteWorkload(
        {{"metadata", {{"name", name}, {"namespace", "ns"}, {"uid", uid}}},
         {"spec", {{"queueName", "lq"},
                   {"podSets", {{{"name", "main"}, {"count", 1},
                                 {"template", {{"spec", {{"containers",
                                                          {{{"name", "c"}, {"image", "b"}}}}}}}}}}}}}},
        "multikueue");
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

  // A queued JobSet in ns (managedBy MultiKueue unless `managed_by` says
  // otherwise; "" for none) and the Workload its integration would create.
  void JobSetAndWorkload(const std::string& name,
                         std::optional<std::string> managed_by = std::string(kControllerName)) {
    const api::KindDef& k = client_.Kind("jobset.x-k8s.io", "v1alpha2", "jobsets");
    auto b = api::testing::MakeJobSet(name, "ns").ReplicatedJob("w", 1, 1).Suspend(true);
    if (managed_by) b.ManagedBy(*managed_by);
    Json js = b.Obj();
    js["metadata"]["labels"] = {{"kueue.x-k8s.io/queue-name", "lq"}};
    auto j = client_.Create(k, "ns", js);
    ASSERT_TRUE(j.ok()) << j.status();
    Json container = {{"name", "main"}, {"image", "busybox"},
                      {"resources", {{"requests", {{"cpu", "1"}}}}}};
    Create("workloads", "ns",
           {{"metadata",
             {{"name", "wl-" + name},
              {"ownerReferences",
               {{{"apiVersion", "jobset.x-k8s.io/v1alpha2"}, {"kind", "JobSet"}, {"name", name},
                 {"uid", (*j)["metadata"]["uid"]}, {"controller", true}}}}}},
            {"spec",
             {{"queueName", "lq"},
              {"podSets", {{{"name", "w"}, {"count", 1},
                            {"template", {{"spec", {{"containers", {container}}}}}}}}}}}});
    Settle();
  }
  Json ManagerJobSet(const std::string& name) {
    auto r = client_.Get(client_.Kind("jobset.x-k8s.io", "v1alpha2", "jobsets"), "ns", name);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : Json();
  }

  FakeCluster w1_{clock_};
  FakeCluster w2_{clock_};
  FakeCluster w3_{clock_};
  FakeCluster w4_{clock_};
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
  JobAndWorkload("j");
  Reserve(w1_, "wl-j");
  Sync();
  ASSERT_EQ(CheckState("wl-j"), "Ready");
  // The worker's Kueue preempts it: Retry, evicted, queued again; the next
  // dispatch is a first round again.
  Json w = *RGet(w1_, "workloads", "wl-j");
  w["status"].erase("admission");
  for (Json& c : w["status"]["conditions"]) c["status"] = "False";
  ASSERT_TRUE(w1_.client.UpdateStatus(RKind(w1_, "workloads"), w).ok());
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

TEST_F(MultiKueueTest, RemoteWatchResumesFromTheLastResourceVersionWithoutAList) {
  ASSERT_TRUE(w1_.client.Create(RKind(w1_, "workloads"), "ns", CopyOf("a")).ok());
  Json theirs = CopyOf("b");
  theirs["metadata"]["labels"][kOriginLabel] = "other-manager";
  ASSERT_TRUE(w1_.client.Create(RKind(w1_, "workloads"), "ns", theirs).ok());
  int changes = 0;
  internal::RemoteWatch rw(w1_.front, RKind(w1_, "workloads"), kOriginLabel, "multikueue", clock_,
                           {}, [&](const client::ObjectRef&) { ++changes; });
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

TEST_F(MultiKueueTest, RemoteWatchListsAgainWhenItsResourceVersionExpired) {
  ASSERT_TRUE(w1_.client.Create(RKind(w1_, "workloads"), "ns", CopyOf("a")).ok());
  internal::RemoteWatch rw(w1_.front, RKind(w1_, "workloads"), kOriginLabel, "multikueue", clock_,
                           {}, nullptr);
  rw.Pump(absl::ZeroDuration());
  client::WatchEvent expired{"ERROR",
                             {{"kind", "Status"}, {"status", "Failure"}, {"reason", "Expired"},
                              {"code", 410}, {"message", "too old resource version"}}};
  w1_.front->inject.push_back(expired);
  rw.Pump(absl::ZeroDuration());
  EXPECT_EQ(rw.stats().expired, 1);
  rw.Pump(absl::ZeroDuration());  // at once
  EXPECT_EQ(rw.stats().lists, 2);
  EXPECT_TRUE(rw.Synced());
  EXPECT_TRUE(rw.Get("ns", "a"));
  // 410s back to back: the next list waits (a worker that answers nothing
  // else is not listed in a loop).
  w1_.front->inject.push_back(expired);
  rw.Pump(absl::ZeroDuration());
  rw.Pump(absl::ZeroDuration());
  EXPECT_EQ(rw.stats().lists, 2);
  clock_.Advance(absl::Seconds(2));
  rw.Pump(absl::ZeroDuration());
  EXPECT_EQ(rw.stats().lists, 3);
}

TEST_F(MultiKueueTest, RemoteWatchDropsGarbageAndBacksOff) {
  ASSERT_TRUE(w1_.client.Create(RKind(w1_, "workloads"), "ns", CopyOf("a")).ok());
  internal::RemoteWatch rw(w1_.front, RKind(w1_, "workloads"), kOriginLabel, "multikueue", clock_,
                           {}, nullptr);
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
  JobAndWorkload("j");
  Reserve(w1_, "wl-j");
  Sync();
  ASSERT_EQ(CheckState("wl-j"), "Ready");
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
}  // namespace batchd::controllers::multikueue
