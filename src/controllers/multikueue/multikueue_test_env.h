// The fixture of MultiKueue's tests (multikueue_*_test.cc): the manager
// (queue manager, admission-check controllers and the MultiKueue controllers
// over an in-memory registry on a FakeClock) and four fake worker clusters
// (their own in-memory registries, reached through a fake Dialer; a worker
// can be made unreachable, its watches cut or fed garbage). The tests play
// the workers' Kueue and Job controller (quota reservations, job status) and
// the manager's job integration. One test thread.
#pragma once

#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "api/meta/time_util.h"
#include "api/testing/jobset_builders.h"
#include "common/testing/fake_clock.h"
#include "controllers/admissioncheck/admission_checks.h"
#include "controllers/admissioncheck/controllers.h"
#include "controllers/multikueue/internal/multikueue_impl.h"
#include "controllers/multikueue/internal/remote_watch.h"
#include "controllers/multikueue/multikueue.h"
#include "controllers/queueing/queue_manager_test_env.h"

namespace batchd::controllers::multikueue::testing {

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

inline bool ControlledWatch::Next(client::WatchEvent* ev, absl::Duration timeout) {
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

inline bool ControlledWatch::done() const {
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
  // A managed Job `job` dispatched: its copy reserved on `c`, the check Ready.
  void DispatchTo(FakeCluster& c, const std::string& job) {
    JobAndWorkload(job);
    Reserve(c, "wl-" + job);
    Sync();
    ASSERT_EQ(CheckState("wl-" + job), "Ready");
  }
  // The worker's Kueue preempts the copy `wl`: its reservation goes.
  void RemotePreempt(FakeCluster& c, const std::string& wl) {
    Json w = *RGet(c, "workloads", wl);
    w["status"].erase("admission");
    for (Json& cond : w["status"]["conditions"]) {
      cond["status"] = "False";
      cond["reason"] = "Preempted";
    }
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

// RemoteWatch alone over worker w1, which holds one copy of ours ("a").
class RemoteWatchTest : public MultiKueueTest {
 protected:
  void SetUp() override {
    MultiKueueTest::SetUp();
    ASSERT_TRUE(w1_.client.Create(RKind(w1_, "workloads"), "ns", CopyOf("a")).ok());
  }
  // A watch of w1's Workloads of origin "multikueue", not yet pumped.
  internal::RemoteWatch& Watch(std::function<void(const client::ObjectRef&)> on_change = nullptr) {
    rw_ = std::make_unique<internal::RemoteWatch>(w1_.front, RKind(w1_, "workloads"),
                                                  kOriginLabel, "multikueue", clock_,
                                                  internal::RemoteWatchOptions{},
                                                  std::move(on_change));
    return *rw_;
  }
  // The worker's answer to a watch resumed from a compacted resourceVersion.
  static client::WatchEvent Expired() {
    return {"ERROR",
            {{"kind", "Status"}, {"status", "Failure"}, {"reason", "Expired"}, {"code", 410},
             {"message", "too old resource version"}}};
  }

  std::unique_ptr<internal::RemoteWatch> rw_;
};

}  // namespace batchd::controllers::multikueue::testing
