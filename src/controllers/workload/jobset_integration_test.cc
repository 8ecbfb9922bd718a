// The JobSet integration in process: the Kueue webhooks (JobSet and Job), the
// JobSet controller, the garbage collector and both integrations on one
// registry; the test writes Workload status as kctl would and child Job
// status as the Job controller would.
#include "controllers/workload/jobset_integration.h"

#include <algorithm>

#include "api/meta/conditions.h"
#include "api/meta/object_meta.h"
#include "api/testing/jobset_builders.h"
#include "client/in_process_client.h"
#include "common/testing/fake_clock.h"
#include "controllers/gc/gc_controller.h"
#include "controllers/jobset/jobset_controller.h"
#include "controllers/workload/internal/jobset_adapter.h"
#include "controllers/workload/workload_controller.h"
#include "gtest/gtest.h"
#include "registry/errors.h"
#include "store/memory/memory_store.h"

namespace batchd::controllers {
namespace {

using api::Json;
using api::testing::MakeJobSet;

constexpr char kQueue[] = "kueue.x-k8s.io/queue-name";

Json Cond(const std::string& type, const std::string& status, const std::string& reason,
          const std::string& message = "") {
  return {{"type", type}, {"status", status}, {"reason", reason}, {"message", message},
          {"lastTransitionTime", "2024-01-01T00:00:00Z"}};
}

class JobSetIntegrationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(reg_.Start().ok());
    ASSERT_TRUE(RegisterJobSetWebhooks(reg_, {}).ok());
    ASSERT_TRUE(RegisterJobWebhooks(reg_, {}).ok());
    AddJobSetController(ctx_);
    AddGarbageCollector(ctx_);
    AddJobIntegration(ctx_, {});
    AddJobSetIntegration(ctx_, {});
    ASSERT_TRUE(mgr_.SyncAll().ok());
    Json rf = {{"apiVersion", "kueue.x-k8s.io/v1beta2"},
               {"kind", "ResourceFlavor"},
               {"metadata", {{"name", "spot"}}},
               {"spec",
                {{"nodeLabels", {{"instance-type", "spot"}}},
                 {"tolerations", Json::array({{{"key", "spot"},
                                               {"operator", "Exists"},
                                               {"effect", "NoSchedule"}}})}}}};
    ASSERT_TRUE(c_.Create(flavors_, "", rf).ok());
    Settle();
  }
  void Settle() { ASSERT_LT(mgr_.RunUntilIdle(20000), 20000); }

  // leader: 1 Job of 1 pod; workers: 2 Jobs of 2 pods (1 cpu each).
  Json Queued(const std::string& name = "js") {
    Json js = MakeJobSet(name).ReplicatedJob("leader", 1, 1).ReplicatedJob("workers", 2, 2).Obj();
    js["metadata"]["labels"][kQueue] = "lq";
    for (Json& r : js["spec"]["replicatedJobs"]) {
      r["template"]["spec"]["template"]["spec"]["containers"][0]["resources"] = {
          {"requests", {{"cpu", "1"}}}};
    }
    return js;
  }
  Json GetJobSet(const std::string& name = "js") {
    auto r = c_.Get(jobsets_, "default", name);
    return r.ok() ? *r : Json();
  }
  std::vector<Json> List(const api::KindDef& k) {
    auto r = c_.List(k, "default", {});
    return r.ok() ? r->items : std::vector<Json>{};
  }
  // kctl: conditions merged by type, and the admission when given.
  void WriteWorkload(const std::vector<Json>& conditions, Json admission = nullptr) {
    std::vector<Json> wls = List(workloads_);
    ASSERT_EQ(wls.size(), 1u);
    Json wl = wls[0];
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
    ASSERT_TRUE(c_.UpdateStatus(workloads_, wl).ok());
    Settle();
  }
  void Admit() {
    Json admission = {{"clusterQueue", "cq"}, {"podSetAssignments", Json::array()}};
    for (const auto& [name, count] : std::vector<std::pair<std::string, int>>{{"leader", 1},
                                                                               {"workers", 4}}) {
      admission["podSetAssignments"].push_back({{"name", name},
                                                {"flavors", {{"cpu", "spot"}}},
                                                {"resourceUsage", {{"cpu", std::to_string(count)}}},
                                                {"count", count}});
    }
    WriteWorkload({Cond("QuotaReserved", "True", "QuotaReserved"),
                   Cond("Admitted", "True", "Admitted")},
                  admission);
  }
  // The child Jobs' spec.suspend values, by name.
  std::map<std::string, bool> JobsSuspended() {
    std::map<std::string, bool> out;
    for (const Json& j : List(jobs_)) out[api::meta::GetName(j)] = j["spec"].value("suspend", false);
    return out;
  }

  FakeClock clock_;
  store::MemoryStore store_;
  registry::Registry reg_{store_, api::BuiltinScheme(), clock_};
  client::InProcessClient c_{reg_};
  reconcile::Manager mgr_{clock_};
  reconcile::InformerFactory inf_{c_, mgr_};
  reconcile::FakeEventRecorder ev_;
  reconcile::ControllerContext ctx_{c_, inf_, mgr_, clock_, ev_};
  const api::KindDef& jobsets_ = c_.Kind("jobset.x-k8s.io", "v1alpha2", "jobsets");
  const api::KindDef& jobs_ = c_.Kind("batch", "v1", "jobs");
  const api::KindDef& workloads_ = c_.Kind("kueue.x-k8s.io", "v1beta2", "workloads");
  const api::KindDef& flavors_ = c_.Kind("kueue.x-k8s.io", "v1beta2", "resourceflavors");
};

TEST_F(JobSetIntegrationTest, QueuedJobSetWaitsAsOneWorkloadAndStartsWhole) {
  auto created = c_.Create(jobsets_, "default", Queued());
  ASSERT_TRUE(created.ok()) << created.status();
  EXPECT_EQ((*created)["spec"]["suspend"], true);  // The webhook suspends it.
  Settle();

  // One Workload for the JobSet, a pod set per replicated job; the child
  // Jobs exist, suspended, and have no Workload of their own.
  std::vector<Json> wls = List(workloads_);
  ASSERT_EQ(wls.size(), 1u);
  EXPECT_EQ(api::meta::GetControllerRef(wls[0])->kind, "JobSet");
  EXPECT_EQ(wls[0]["spec"]["queueName"], "lq");
  const Json& podsets = wls[0]["spec"]["podSets"];
  ASSERT_EQ(podsets.size(), 2u);
  EXPECT_EQ(podsets[0]["name"], "leader");
  EXPECT_EQ(podsets[0]["count"], 1);
  EXPECT_EQ(podsets[1]["name"], "workers");
  EXPECT_EQ(podsets[1]["count"], 4);
  EXPECT_EQ(JobsSuspended(), (std::map<std::string, bool>{
                                 {"js-leader-0", true}, {"js-workers-0", true}, {"js-workers-1", true}}));

  // Admitted: the JobSet runs with the flavor's node labels and toleration,
  // and the JobSet controller resumes every child Job with them.
  Admit();
  Json js = GetJobSet();
  EXPECT_EQ(js["spec"]["suspend"], false);
  for (const Json& r : js["spec"]["replicatedJobs"]) {
    EXPECT_EQ(r["template"]["spec"]["template"]["spec"]["nodeSelector"],
              Json({{"instance-type", "spot"}}));
  }
  EXPECT_EQ(JobsSuspended(), (std::map<std::string, bool>{
                                 {"js-leader-0", false}, {"js-workers-0", false}, {"js-workers-1", false}}));
  for (const Json& j : List(jobs_)) {
    EXPECT_EQ(j["spec"]["template"]["spec"]["nodeSelector"], Json({{"instance-type", "spot"}}))
        << api::meta::GetName(j);
    EXPECT_EQ(j["spec"]["template"]["spec"]["tolerations"][0]["key"], "spot");
  }

  // Evicted: suspended again, the templates as they were.
  WriteWorkload({Cond("Evicted", "True", "Preempted", "Preempted to accommodate a workload")});
  js = GetJobSet();
  EXPECT_EQ(js["spec"]["suspend"], true);
  for (const Json& r : js["spec"]["replicatedJobs"]) {
    EXPECT_FALSE(r["template"]["spec"]["template"]["spec"].contains("nodeSelector"));
  }
  EXPECT_EQ(JobsSuspended(), (std::map<std::string, bool>{
                                 {"js-leader-0", true}, {"js-workers-0", true}, {"js-workers-1", true}}));
}

TEST_F(JobSetIntegrationTest, FinishedJobSetFinishesItsWorkload) {
  ASSERT_TRUE(c_.Create(jobsets_, "default", Queued()).ok());
  Settle();
  Admit();
  // Every child Job completes (as the Job controller would report it).
  for (Json j : List(jobs_)) {
    j["status"]["conditions"] = {Cond("SuccessCriteriaMet", "True", "CompletionsReached"),
                                 Cond("Complete", "True", "CompletionsReached")};
    j["status"]["succeeded"] = j["spec"].value("completions", 1);
    j["status"]["startTime"] = "2024-01-01T00:00:00Z";
    j["status"]["completionTime"] = "2024-01-01T00:00:01Z";
    ASSERT_TRUE(c_.UpdateStatus(jobs_, j).ok());
  }
  Settle();
  EXPECT_EQ(GetJobSet()["status"]["terminalState"], "Completed");
  std::vector<Json> wls = List(workloads_);
  ASSERT_EQ(wls.size(), 1u);
  auto fin = api::meta::GetCondition(wls[0], "Finished");
  ASSERT_TRUE(fin.has_value());
  EXPECT_EQ(fin->status, "True");
}

// A JobSet MultiKueue dispatches (managedBy kueue.x-k8s.io/multikueue) is
// queued here like any other — its admission starts it on this server only
// as far as its spec goes: the JobSet controller leaves it to the worker,
// so no child Job is created here. Another manager's JobSet is not queued.
TEST_F(JobSetIntegrationTest, JobSetManagedByMultiKueueIsQueuedButRunsNoChildJobHere) {
  Json js = Queued();
  js["spec"]["managedBy"] = "kueue.x-k8s.io/multikueue";
  ASSERT_TRUE(c_.Create(jobsets_, "default", js).ok());
  Json other = Queued("other");
  other["spec"]["managedBy"] = "example.com/other";
  ASSERT_TRUE(c_.Create(jobsets_, "default", other).ok());
  Settle();
  std::vector<Json> wls = List(workloads_);
  ASSERT_EQ(wls.size(), 1u);
  EXPECT_EQ(wls[0]["metadata"]["ownerReferences"][0]["name"], "js");
  Admit();
  EXPECT_EQ(GetJobSet()["spec"]["suspend"], false);
  EXPECT_TRUE(List(jobs_).empty());
}

TEST_F(JobSetIntegrationTest, WebhookRules) {
  Json bad = Queued("bad");
  bad["metadata"]["labels"][kQueue] = "Not_A_Queue";
  auto r = c_.Create(jobsets_, "default", bad);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("metadata.labels[kueue.x-k8s.io/queue-name]: Invalid value"),
            std::string::npos)
      << r.status();
  // No queue name: runs unqueued, not suspended.
  Json plain = MakeJobSet("plain").ReplicatedJob("w", 1, 1).Obj();
  auto p = c_.Create(jobsets_, "default", plain);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ((*p)["spec"].value("suspend", false), false);
  // A running JobSet keeps its queue.
  ASSERT_TRUE(c_.Create(jobsets_, "default", Queued()).ok());
  Settle();
  Admit();
  Json js = GetJobSet();
  js["metadata"]["labels"][kQueue] = "other";
  auto u = c_.Update(jobsets_, js);
  ASSERT_FALSE(u.ok());
  EXPECT_NE(u.status().message().find("field is immutable"), std::string::npos) << u.status();
}

TEST(JobSetAdapterTest, TopologyRequestPerPodSet) {
  Json js = MakeJobSet("js").ReplicatedJob("leader", 1, 1).ReplicatedJob("workers", 3, 4).Obj();
  js["spec"]["replicatedJobs"][1]["template"]["spec"]["template"]["metadata"]["annotations"] = {
      {"kueue.x-k8s.io/podset-required-topology", "rack"}};
  auto podsets = workload::internal::JobSetAdapter().PodSets(js);
  ASSERT_TRUE(podsets.ok()) << podsets.status();
  ASSERT_EQ(podsets->size(), 2u);
  EXPECT_FALSE((*podsets)[0].contains("topologyRequest"));
  EXPECT_EQ((*podsets)[1]["count"], 12);
  EXPECT_EQ((*podsets)[1]["topologyRequest"], Json::parse(R"({
    "required": "rack", "podIndexLabel": "batch.kubernetes.io/job-completion-index",
    "subGroupIndexLabel": "jobset.sigs.k8s.io/job-index", "subGroupCount": 3})"));
}

TEST(JobSetIntegrationDisabledTest, QueueNameRefusedWithoutTheFramework) {
  FakeClock clock;
  store::MemoryStore store;
  registry::Registry reg{store, api::BuiltinScheme(), clock};
  ASSERT_TRUE(reg.Start().ok());
  ASSERT_TRUE(RegisterJobSetWebhooks(reg, {}, /*enabled=*/false).ok());
  client::InProcessClient c{reg};
  Json js = MakeJobSet("js").ReplicatedJob("w", 1, 1).Obj();
  js["metadata"]["labels"][kQueue] = "lq";
  auto r = c.Create(c.Kind("jobset.x-k8s.io", "v1alpha2", "jobsets"), "default", js);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("metadata.labels[kueue.x-k8s.io/queue-name]: Forbidden: "
                                      "queueing JobSets needs the jobset.x-k8s.io/jobset "
                                      "framework"),
            std::string::npos)
      << r.status();
}

}  // namespace
}  // namespace batchd::controllers
