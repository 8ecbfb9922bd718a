// The Job integration across a process restart: the controllers stop being
// driven ("crash"), the world moves on (evictions written, pods finishing,
// Jobs created), and a fresh set of controllers over the same store must
// carry every Job on from where it is, with exactly one Workload each.
#include <map>
#include <string>
#include <vector>

#include "controllers/workload/integration_test_env.h"
#include "api/meta/conditions.h"
#include "controllers/workload/internal/workload_util.h"

namespace batchd::controllers::workload::testing {
namespace {

std::string CondStr(const Json& obj, const std::string& type) {
  auto c = api::meta::GetCondition(obj, type);
  return c ? c->status + "/" + c->reason : "absent";
}

class RestartTest : public IntegrationTest {
 protected:
  // kctl admits Job `job`'s Workload (1 pod, 1 cpu on spot); no settling.
  void AdmitNoSettle(const std::string& job) {
    Json wl = WorkloadOf(job);
    ASSERT_FALSE(wl.is_null()) << job;
    wl["status"]["admission"] = {
        {"clusterQueue", "cq"},
        {"podSetAssignments", Json::array({{{"name", "main"},
                                            {"flavors", {{"cpu", "spot"}}},
                                            {"resourceUsage", {{"cpu", "1"}}},
                                            {"count", 1}}})}};
    wl["status"]["conditions"] = Json::array(
        {Cond("QuotaReserved", "True", "QuotaReserved"), Cond("Admitted", "True", "Admitted")});
    auto r = client_.UpdateStatus(workloads_, wl);
    ASSERT_TRUE(r.ok()) << r.status();
  }
  void EvictNoSettle(const std::string& job) {
    Json wl = WorkloadOf(job);
    wl["status"]["conditions"].push_back(Cond("Evicted", "True", "Preempted", "Preempted"));
    auto r = client_.UpdateStatus(workloads_, wl);
    ASSERT_TRUE(r.ok()) << r.status();
  }
  // The node: the pod ran and exited 0; no settling.
  void SucceedNoSettle(const Json& pod) {
    Json p = pod;
    std::string now = api::meta::FormatRfc3339(clock_.Now());
    p["status"]["phase"] = "Succeeded";
    p["status"]["containerStatuses"] = Json::array(
        {{{"name", "main"}, {"ready", false}, {"restartCount", 0}, {"image", "busybox"},
          {"imageID", ""},
          {"state", {{"terminated", {{"exitCode", 0}, {"startedAt", now}, {"finishedAt", now},
                                     {"reason", "Completed"}}}}}}});
    auto r = client_.UpdateStatus(pods_, p);
    ASSERT_TRUE(r.ok()) << r.status();
  }
  Json QueuedJob(const std::string& name) {
    return MakeJob(name)
        .Label(kQueue, "lq")
        .Set("/spec/backoffLimit"_json_pointer, 0)
        .Set("/spec/template/spec/containers/0/resources"_json_pointer,
             {{"requests", {{"cpu", "1"}}}})
        .Obj();
  }
  int WorkloadCount(const std::string& job) {
    int n = 0;
    for (const Json& w : Workloads()) {
      auto owner = api::meta::GetControllerRef(w);
      if (owner && owner->name == job) ++n;
    }
    return n;
  }
  // name -> resourceVersion of every Job, Workload and Pod.
  std::map<std::string, std::string> Versions() {
    std::map<std::string, std::string> out;
    for (const api::KindDef* k : {&jobs_, &workloads_, &pods_}) {
      auto r = client_.List(*k, "default");
      EXPECT_TRUE(r.ok());
      for (const Json& o : r->items) {
        out[k->kind + "/" + api::meta::GetName(o)] = api::meta::GetResourceVersion(o);
      }
    }
    return out;
  }
};

TEST_F(RestartTest, EveryJobCarriesOnFromWhereItWas) {
  EnsureFlavor();
  for (const char* n : {"run", "evict", "finish"}) {
    Create(jobs_, QueuedJob(n));
    AdmitNoSettle(n);
    Settle();
    ASSERT_EQ(Pods(n).size(), 1u) << n;
    SetRunning(Pods(n)[0]);
  }
  Create(jobs_, QueuedJob("pending"));

  // Crash: from here the first process's controllers never run again.
  EvictNoSettle("evict");                   // kctl preempted it just before.
  SucceedNoSettle(Pods("finish")[0]);       // Its pod finished while down.
  auto created = client_.Create(jobs_, "default", QueuedJob("new"));  // Created while down.
  ASSERT_TRUE(created.ok()) << created.status();
  Restart();

  struct Case {
    std::string job;
    bool suspended;
    bool admission;         // Workload still holds a reservation.
    std::string finished;   // Workload Finished condition.
    size_t pods;
  };
  for (const Case& c : std::vector<Case>{{"run", false, true, "absent", 1},
                                         {"evict", true, false, "absent", 0},
                                         {"finish", false, true, "True/Succeeded", 1},
                                         {"pending", true, false, "absent", 0},
                                         {"new", true, false, "absent", 0}}) {
    SCOPED_TRACE(c.job);
    Json job = GetJob(c.job);
    EXPECT_EQ(job["spec"].value("suspend", false), c.suspended);
    EXPECT_EQ(WorkloadCount(c.job), 1);
    Json wl = WorkloadOf(c.job);
    EXPECT_EQ(wl.value("status", Json::object()).contains("admission"), c.admission);
    EXPECT_EQ(CondStr(wl, "Finished"), c.finished);
    EXPECT_EQ(Pods(c.job).size(), c.pods);
  }
  EXPECT_EQ(CondStr(WorkloadOf("evict"), "Requeued"), "True/Preempted");
  EXPECT_EQ(GetJob("finish")["status"].value("succeeded", 0), 1);

  // A second restart with nothing new to do writes nothing.
  auto before = Versions();
  Restart();
  EXPECT_EQ(Versions(), before);

  // The requeued job is admitted again and runs exactly one pod.
  AdmitNoSettle("evict");
  Settle();
  EXPECT_FALSE(GetJob("evict")["spec"].value("suspend", true));
  EXPECT_EQ(Pods("evict").size(), 1u);
  EXPECT_EQ(WorkloadCount("evict"), 1);
}

TEST_F(RestartTest, StopInterruptedBetweenWritesIsFinished) {
  // The first process suspended the evicted job (marked stopping) and
  // crashed before resetting its status and restoring the template.
  EnsureFlavor();
  Create(jobs_, QueuedJob("j"));
  AdmitNoSettle("j");
  Settle();
  ASSERT_EQ(Pods("j").size(), 1u);
  EvictNoSettle("j");
  Json job = GetJob("j");
  job["spec"]["suspend"] = true;
  api::meta::SetAnnotation(job, internal::kStoppingAnnotation, "true");
  ASSERT_TRUE(client_.Update(jobs_, job).ok());
  Restart();
  job = GetJob("j");
  EXPECT_TRUE(job["spec"].value("suspend", false));
  EXPECT_FALSE(api::meta::GetAnnotation(job, internal::kStoppingAnnotation).has_value());
  EXPECT_FALSE(job["spec"]["template"]["spec"].contains("nodeSelector")) << "template restored";
  EXPECT_TRUE(Pods("j").empty());
  Json wl = WorkloadOf("j");
  EXPECT_FALSE(wl["status"].contains("admission")) << "reservation released";
  EXPECT_EQ(CondStr(wl, "Requeued"), "True/Preempted");
  EXPECT_EQ(WorkloadCount("j"), 1);
}

TEST_F(RestartTest, JobThatFinishedWhileBeingStoppedFinishesItsWorkload) {
  // The eviction's first write (suspend + stopping mark) landed, then the
  // pod succeeded and the Job completed before the status reset: the reset
  // (startTime removal) is invalid for a finished Job. The Workload must
  // still become Finished, or its quota stays reserved forever.
  EnsureFlavor();
  Create(jobs_, QueuedJob("j"));
  AdmitNoSettle("j");
  Settle();
  ASSERT_EQ(Pods("j").size(), 1u);
  SetRunning(Pods("j")[0]);
  EvictNoSettle("j");
  SucceedNoSettle(Pods("j")[0]);
  Json job = GetJob("j");
  job["spec"]["suspend"] = true;
  api::meta::SetAnnotation(job, internal::kStoppingAnnotation, "true");
  auto updated = client_.Update(jobs_, job);
  ASSERT_TRUE(updated.ok()) << updated.status();
  job = *updated;
  std::string now = api::meta::FormatRfc3339(clock_.Now());
  job["status"]["active"] = 0;
  job["status"]["ready"] = 0;
  job["status"]["succeeded"] = 1;
  job["status"]["completionTime"] = now;
  job["status"]["conditions"] = Json::array(
      {{{"type", "SuccessCriteriaMet"}, {"status", "True"}, {"reason", "CompletionsReached"},
        {"message", "Reached expected number of succeeded pods"}, {"lastTransitionTime", now},
        {"lastProbeTime", now}},
       {{"type", "Complete"}, {"status", "True"}, {"reason", "CompletionsReached"},
        {"message", "Reached expected number of succeeded pods"}, {"lastTransitionTime", now},
        {"lastProbeTime", now}}});
  auto st = client_.UpdateStatus(jobs_, job);
  ASSERT_TRUE(st.ok()) << st.status();

  Restart();
  job = GetJob("j");
  EXPECT_EQ(CondStr(job, "Complete"), "True/CompletionsReached");
  EXPECT_FALSE(api::meta::GetAnnotation(job, internal::kStoppingAnnotation).has_value());
  EXPECT_EQ(CondStr(WorkloadOf("j"), "Finished"), "True/Succeeded");
  EXPECT_EQ(WorkloadCount("j"), 1);
}

}  // namespace
}  // namespace batchd::controllers::workload::testing
