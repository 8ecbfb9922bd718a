// Test-only fixture for the Job integration: an in-memory registry on a
// FakeClock with the Job webhook, the real Job controller, the garbage
// collector and the Job integration, driven by Manager::RunUntilIdle. The
// test plays the other actors: kctl (writes Workload status: reservation,
// admission, eviction) and the node (moves pods through phases).
#pragma once

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "api/meta/object_meta.h"
#include "api/meta/time_util.h"
#include "api/testing/builders.h"
#include "client/in_process_client.h"
#include "common/testing/fake_clock.h"
#include "controllers/gc/gc_controller.h"
#include "controllers/job/job_controller.h"
#include "controllers/workload/workload_controller.h"
#include "gtest/gtest.h"
#include "store/memory/memory_store.h"

namespace batchd::controllers::workload::testing {

using api::Json;
using api::testing::MakeJob;

inline constexpr char kQueue[] = "kueue.x-k8s.io/queue-name";

// A condition as kctl writes it.
inline Json Cond(const std::string& type, const std::string& status, const std::string& reason,
                 const std::string& message = "") {
  return {{"type", type},
          {"status", status},
          {"reason", reason},
          {"message", message},
          {"lastTransitionTime", "2024-01-01T00:00:00Z"}};
}

class IntegrationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(reg_.Start().ok());
    ASSERT_TRUE(RegisterJobWebhooks(reg_, options_).ok());
    ctx_ = std::make_unique<reconcile::ControllerContext>(
        reconcile::ControllerContext{client_, informers_, mgr_, clock_, events_});
    AddJobController(*ctx_);
    AddGarbageCollector(*ctx_);
    AddJobIntegration(*ctx_, options_);
    ASSERT_TRUE(mgr_.SyncAll().ok());
    Settle();
  }

  // A process restart: a fresh Manager, informers and controllers (Job
  // controller, garbage collector, Job integration) over the same store;
  // the old ones are never driven again. Converges before returning.
  void Restart() {
    restarted_ = std::make_unique<Process>(client_, clock_, options_);
    ASSERT_TRUE(restarted_->mgr.SyncAll().ok());
    Settle();
  }

  void Settle() {
    reconcile::Manager& mgr = restarted_ ? restarted_->mgr : mgr_;
    int steps = mgr.RunUntilIdle(20000);
    ASSERT_LT(steps, 20000) << "controllers did not converge";
  }

  // Creates through the registry (and so through the Job webhook).
  Json Create(const api::KindDef& k, Json obj, const std::string& ns = "default") {
    auto r = client_.Create(k, ns, std::move(obj));
    EXPECT_TRUE(r.ok()) << r.status();
    Settle();
    return r.ok() ? *r : Json();
  }
  Json Get(const api::KindDef& k, const std::string& name, const std::string& ns = "default") {
    auto r = client_.Get(k, ns, name);
    return r.ok() ? *r : Json();
  }
  Json GetJob(const std::string& name) { return Get(jobs_, name); }

  const api::KindDef& Kind(const char* group, const char* version, const char* plural) {
    return client_.Kind(group, version, plural);
  }
  // The spot ResourceFlavor (nodeLabels + a toleration), created once.
  void EnsureFlavor() {
    if (!Get(flavors_, "spot", "").is_null()) return;
    Json rf = {{"apiVersion", "kueue.x-k8s.io/v1beta2"},
               {"kind", "ResourceFlavor"},
               {"metadata", {{"name", "spot"}}},
               {"spec",
                {{"nodeLabels", {{"instance-type", "spot"}}},
                 {"tolerations", Json::array({{{"key", "spot"},
                                               {"operator", "Exists"},
                                               {"effect", "NoSchedule"}}})}}}};
    Create(flavors_, rf, "");
  }
  // The Workload controlled by Job `job` (null when none).
  Json WorkloadOf(const std::string& job) {
    for (Json& w : Workloads()) {
      auto owner = api::meta::GetControllerRef(w);
      if (owner && owner->name == job) return w;
    }
    return Json();
  }

  std::vector<Json> Workloads() {
    auto r = client_.List(workloads_, "default");
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? r->items : std::vector<Json>{};
  }
  // The only Workload of the namespace (fails the test when not exactly one).
  Json OnlyWorkload() {
    auto all = Workloads();
    EXPECT_EQ(all.size(), 1u);
    return all.empty() ? Json() : all[0];
  }

  // kctl: writes `conditions` (merged by type) and optionally the admission.
  void WriteWorkloadStatus(const std::vector<Json>& conditions, Json admission = nullptr) {
    Json wl = OnlyWorkload();
    Json& conds = wl["status"]["conditions"];
    if (!conds.is_array()) conds = Json::array();
    for (const Json& c : conditions) {
      auto it = std::find_if(conds.begin(), conds.end(),
                             [&](const Json& e) { return e["type"] == c["type"]; });
      if (it != conds.end()) {
        *it = c;
      } else {
        conds.push_back(c);
      }
    }
    if (!admission.is_null()) wl["status"]["admission"] = admission;
    auto r = client_.UpdateStatus(workloads_, wl);
    ASSERT_TRUE(r.ok()) << r.status();
    Settle();
  }
  // kctl admits the only Workload with every podSet on `flavor` for cpu.
  void Admit(const std::string& flavor, int count) {
    Json admission = {
        {"clusterQueue", "cq"},
        {"podSetAssignments",
         Json::array({{{"name", "main"},
                       {"flavors", {{"cpu", flavor}}},
                       {"resourceUsage", {{"cpu", std::to_string(count)}}},
                       {"count", count}}})}};
    WriteWorkloadStatus({Cond("QuotaReserved", "True", "QuotaReserved",
                              "Quota reserved in ClusterQueue cq"),
                         Cond("Admitted", "True", "Admitted",
                              "The workload is admitted")},
                        admission);
  }

  std::vector<Json> Pods(const std::string& job) {
    auto r = client_.List(pods_, "default", {"batch.kubernetes.io/job-name=" + job, ""});
    EXPECT_TRUE(r.ok());
    std::vector<Json> out;
    for (Json& p : r.ok() ? r->items : std::vector<Json>{}) {
      if (!api::meta::IsBeingDeleted(p)) out.push_back(std::move(p));
    }
    return out;
  }
  // The fake node: a pod is Running (Ready) or terminated with `exit_code`.
  void SetRunning(const Json& pod) {
    Json p = pod;
    p["status"]["phase"] = "Running";
    p["status"]["conditions"] = Json::array({{{"type", "Ready"}, {"status", "True"}}});
    auto r = client_.UpdateStatus(pods_, p);
    ASSERT_TRUE(r.ok()) << r.status();
    Settle();
  }
  void Terminate(const Json& pod, int exit_code) {
    Json p = pod;
    std::string now = api::meta::FormatRfc3339(clock_.Now());
    p["status"]["phase"] = exit_code == 0 ? "Succeeded" : "Failed";
    p["status"]["containerStatuses"] = Json::array(
        {{{"name", "main"},
          {"ready", false},
          {"restartCount", 0},
          {"image", "busybox"},
          {"imageID", ""},
          {"state",
           {{"terminated",
             {{"exitCode", exit_code}, {"startedAt", now}, {"finishedAt", now},
              {"reason", exit_code == 0 ? "Completed" : "Error"}}}}}}});
    auto r = client_.UpdateStatus(pods_, p);
    ASSERT_TRUE(r.ok()) << r.status();
    Settle();
  }

  std::vector<std::string> EventReasons() { return events_.Reasons(); }

  // The controllers of a restarted process (Restart()).
  struct Process {
    Process(client::Client& c, Clock& clock, const JobIntegrationOptions& options)
        : mgr(clock), informers(c, mgr), ctx{c, informers, mgr, clock, events} {
      AddJobController(ctx);
      AddGarbageCollector(ctx);
      AddJobIntegration(ctx, options);
    }
    reconcile::Manager mgr;
    reconcile::InformerFactory informers;
    reconcile::FakeEventRecorder events;
    reconcile::ControllerContext ctx;
  };

  JobIntegrationOptions options_;
  FakeClock clock_;
  store::MemoryStore store_;
  registry::Registry reg_{store_, api::BuiltinScheme(), clock_};
  client::InProcessClient client_{reg_};
  reconcile::Manager mgr_{clock_};
  reconcile::InformerFactory informers_{client_, mgr_};
  reconcile::FakeEventRecorder events_;
  std::unique_ptr<reconcile::ControllerContext> ctx_;
  std::unique_ptr<Process> restarted_;
  const api::KindDef& jobs_ = client_.Kind("batch", "v1", "jobs");
  const api::KindDef& pods_ = client_.Kind("", "v1", "pods");
  const api::KindDef& workloads_ = client_.Kind("kueue.x-k8s.io", "v1beta2", "workloads");
  const api::KindDef& flavors_ = client_.Kind("kueue.x-k8s.io", "v1beta2", "resourceflavors");
};

}  // namespace batchd::controllers::workload::testing
