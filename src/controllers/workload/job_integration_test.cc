// The Job integration end to end in process: webhook, Job controller, garbage
// collector and the integration on one registry; the test writes Workload
// status as kctl would and moves pods as a node would.
#include <algorithm>

#include "controllers/workload/integration_test_env.h"
#include "api/meta/conditions.h"
#include "controllers/workload/internal/workload_util.h"
#include "registry/errors.h"

namespace batchd::controllers::workload::testing {
namespace {

bool HasEvent(const std::vector<std::string>& reasons, const std::string& r) {
  return std::find(reasons.begin(), reasons.end(), r) != reasons.end();
}

Json QueuedJob(const std::string& name, int parallelism) {
  return MakeJob(name)
      .Label(kQueue, "lq")
      .Parallelism(parallelism)
      .Completions(parallelism)
      .Set("/spec/template/spec/containers/0/resources"_json_pointer,
           {{"limits", {{"cpu", "2"}, {"memory", "1Gi"}}}, {"requests", {{"memory", "512Mi"}}}})
      .Obj();
}

std::string CondStr(const Json& wl, const std::string& type) {
  auto c = api::meta::GetCondition(wl, type);
  return c ? c->status + "/" + c->reason : "absent";
}

Json PriorityClass(const std::string& name, int value, bool global_default) {
  return {{"apiVersion", "scheduling.k8s.io/v1"},
          {"kind", "PriorityClass"},
          {"metadata", {{"name", name}}},
          {"value", value},
          {"globalDefault", global_default}};
}

TEST_F(IntegrationTest, PriorityComesFromWorkloadOrPodPriorityClass) {
  Create(Kind("kueue.x-k8s.io", "v1beta2", "workloadpriorityclasses"),
         {{"apiVersion", "kueue.x-k8s.io/v1beta2"},
          {"kind", "WorkloadPriorityClass"},
          {"metadata", {{"name", "high"}}},
          {"value", 1000}},
         "");
  Create(Kind("scheduling.k8s.io", "v1", "priorityclasses"), PriorityClass("low", 10, false), "");
  struct Case {
    std::string name;
    Json job;
    Json want_ref;  // null: no reference.
    int want_priority;
  };
  std::vector<Case> cases = {
      {"workload priority class label wins",
       MakeJob("a").Label(kQueue, "lq").Label("kueue.x-k8s.io/priority-class", "high")
           .Set("/spec/template/spec/priorityClassName"_json_pointer, "low").Obj(),
       {{"group", "kueue.x-k8s.io"}, {"kind", "WorkloadPriorityClass"}, {"name", "high"}}, 1000},
      {"pod priority class",
       MakeJob("b").Label(kQueue, "lq")
           .Set("/spec/template/spec/priorityClassName"_json_pointer, "low").Obj(),
       {{"group", "scheduling.k8s.io"}, {"kind", "PriorityClass"}, {"name", "low"}}, 10},
      {"no class, no global default", MakeJob("c").Label(kQueue, "lq").Obj(), nullptr, 0},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Json job = Create(jobs_, c.job);
    Json wl = WorkloadOf(api::meta::GetName(job));
    EXPECT_EQ(wl["spec"].value("priority", -1), c.want_priority);
    EXPECT_EQ(wl["spec"].value("priorityClassRef", Json()), c.want_ref);
  }
  Create(Kind("scheduling.k8s.io", "v1", "priorityclasses"), PriorityClass("dflt", 7, true), "");
  Create(jobs_, MakeJob("d").Label(kQueue, "lq").Obj());
  Json wl = WorkloadOf("d");
  EXPECT_EQ(wl["spec"].value("priority", -1), 7) << "globalDefault PriorityClass";
  EXPECT_EQ(wl["spec"]["priorityClassRef"]["name"], "dflt");
}

TEST_F(IntegrationTest, QueuedJobIsSuspendedAndGetsAWorkload) {
  Json job = Create(jobs_, QueuedJob("j", 3));
  EXPECT_TRUE(GetJob("j")["spec"].value("suspend", false)) << "created suspended";
  EXPECT_TRUE(Pods("j").empty());
  Json wl = OnlyWorkload();
  const std::string uid = api::meta::GetUid(job);
  EXPECT_EQ(api::meta::GetName(wl),
            internal::WorkloadName({"batch", "v1", "Job", "jobs"}, "j", uid));
  EXPECT_EQ(api::meta::GetName(wl).rfind("job-j-", 0), 0u);
  EXPECT_EQ(api::meta::GetLabel(wl, "kueue.x-k8s.io/job-uid").value_or(""), uid);
  auto owner = api::meta::GetControllerRef(wl);
  ASSERT_TRUE(owner.has_value());
  EXPECT_EQ(owner->uid, uid);
  EXPECT_EQ(owner->kind, "Job");
  EXPECT_EQ(owner->api_version, "batch/v1");
  EXPECT_EQ(wl["spec"]["queueName"], "lq");
  EXPECT_EQ(wl["spec"].value("priority", -1), 0);
  ASSERT_EQ(wl["spec"]["podSets"].size(), 1u);
  const Json& ps = wl["spec"]["podSets"][0];
  EXPECT_EQ(ps["name"], "main");
  EXPECT_EQ(ps["count"], 3);
  EXPECT_FALSE(ps.contains("minCount"));
  const Json& res = ps["template"]["spec"]["containers"][0]["resources"];
  EXPECT_EQ(res["requests"]["cpu"], "2") << "requests default to limits";
  EXPECT_EQ(res["requests"]["memory"], "512Mi") << "explicit requests are kept";
  EXPECT_TRUE(HasEvent(EventReasons(), "CreatedWorkload"));
}

TEST_F(IntegrationTest, RegistryRejectsQueueChangeOfRunningJob) {
  EnsureFlavor();
  Create(jobs_, QueuedJob("j", 1));
  Admit("spot", 1);
  auto r = client_.MergePatch(jobs_, "default", "j",
                              {{"metadata", {{"labels", {{kQueue, "other"}}}}}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(registry::GetPayload(r.status()).reason, "Invalid");
  EXPECT_EQ(GetJob("j")["metadata"]["labels"][kQueue], "lq");
}

TEST_F(IntegrationTest, JobWithoutQueueIsUntouched) {
  Create(jobs_, MakeJob("plain").Parallelism(2).Obj());
  EXPECT_FALSE(GetJob("plain")["spec"].value("suspend", false));
  EXPECT_TRUE(Workloads().empty());
  EXPECT_EQ(Pods("plain").size(), 2u) << "the Job controller runs it directly";
}

TEST_F(IntegrationTest, StaysSuspendedWhilePending) {
  Create(jobs_, QueuedJob("j", 2));
  WriteWorkloadStatus({Cond("QuotaReserved", "False", "Pending", "waiting for quota")});
  EXPECT_TRUE(GetJob("j")["spec"].value("suspend", false));
  EXPECT_TRUE(Pods("j").empty());
  EXPECT_EQ(CondStr(OnlyWorkload(), "PodsReady"), "absent") << "nothing written while pending";
}

TEST_F(IntegrationTest, AdmissionInjectsFlavorAndStartsJob) {
  EnsureFlavor();
  Create(jobs_, QueuedJob("j", 2));
  Admit("spot", 2);
  Json job = GetJob("j");
  EXPECT_FALSE(job["spec"].value("suspend", true));
  const Json& pod_spec = job["spec"]["template"]["spec"];
  EXPECT_EQ(pod_spec["nodeSelector"], Json({{"instance-type", "spot"}}));
  ASSERT_EQ(pod_spec["tolerations"].size(), 1u);
  EXPECT_EQ(pod_spec["tolerations"][0]["key"], "spot");
  auto pods = Pods("j");
  ASSERT_EQ(pods.size(), 2u) << "the Job controller created the pods";
  EXPECT_EQ(pods[0]["spec"]["nodeSelector"]["instance-type"], "spot");
  EXPECT_TRUE(HasEvent(EventReasons(), "Started"));
  EXPECT_EQ(api::meta::GetName(OnlyWorkload()).rfind("job-j-", 0), 0u)
      << "the running job still matches its Workload";
  // waitForPodsReady is off: Kueue keeps no PodsReady condition, nor does batchd.
  for (const Json& p : pods) SetRunning(p);
  EXPECT_EQ(CondStr(OnlyWorkload(), "PodsReady"), "absent");
}

// With waitForPodsReady on, the Workload's PodsReady condition follows the
// pods: False/WaitForStart once admitted, True once they all run.
class WaitForPodsReadyTest : public IntegrationTest {
 protected:
  WaitForPodsReadyTest() { options_.wait_for_pods_ready = true; }
};

TEST_F(WaitForPodsReadyTest, PodsReadyFollowsThePods) {
  EnsureFlavor();
  Create(jobs_, QueuedJob("j", 2));
  WriteWorkloadStatus({Cond("QuotaReserved", "False", "Pending", "waiting for quota")});
  EXPECT_EQ(CondStr(OnlyWorkload(), "PodsReady"), "absent") << "nothing written while pending";
  Admit("spot", 2);
  auto pods = Pods("j");
  ASSERT_EQ(pods.size(), 2u);
  EXPECT_EQ(CondStr(OnlyWorkload(), "PodsReady"), "False/WaitForStart");
  SetRunning(pods[0]);
  EXPECT_EQ(CondStr(OnlyWorkload(), "PodsReady"), "False/WaitForStart") << "one of two";
  SetRunning(pods[1]);
  EXPECT_EQ(CondStr(OnlyWorkload(), "PodsReady"), "True/PodsReady");
}

TEST_F(IntegrationTest, PartialAdmissionRunsAdmittedCount) {
  EnsureFlavor();
  Json job = MakeJob("p").Label(kQueue, "lq").Parallelism(4).Completions(8)
                 .Annotation("kueue.x-k8s.io/job-min-parallelism", "2").Obj();
  Create(jobs_, job);
  EXPECT_EQ(OnlyWorkload()["spec"]["podSets"][0]["minCount"], 2);
  Admit("spot", 3);
  EXPECT_EQ(GetJob("p")["spec"]["parallelism"], 3);
  EXPECT_EQ(Pods("p").size(), 3u);
  EXPECT_EQ(Workloads().size(), 1u) << "partial admission is not a podSet change";
}

struct EvictCase {
  std::string name;
  bool active;            // Workload spec.active.
  std::string requeued;   // Expected Requeued status/reason.
};

TEST_F(IntegrationTest, EvictionStopsJobRestoresTemplateAndRequeues) {
  for (const EvictCase& c : std::vector<EvictCase>{
           {"preempted", true, "True/Preempted"}, {"deactivated", false, "False/Preempted"}}) {
    SCOPED_TRACE(c.name);
    EnsureFlavor();
    const std::string name = "e-" + c.name;
    Create(jobs_, MakeJob(name).Label(kQueue, "lq").Parallelism(4)
                      .Annotation("kueue.x-k8s.io/job-min-parallelism", "1").Obj());
    auto wls = Workloads();
    // Only this job's Workload: the earlier case's stays requeued.
    auto mine = [&]() { return WorkloadOf(name); };
    Json wl = mine();
    if (!c.active) {
      wl["spec"]["active"] = false;
      ASSERT_TRUE(client_.Update(workloads_, wl).ok());
      wl = mine();
    }
    wl["status"]["admission"] = {
        {"clusterQueue", "cq"},
        {"podSetAssignments",
         Json::array({{{"name", "main"}, {"flavors", {{"cpu", "spot"}}}, {"count", 2}}})}};
    wl["status"]["conditions"] = Json::array(
        {Cond("QuotaReserved", "True", "QuotaReserved"), Cond("Admitted", "True", "Admitted")});
    ASSERT_TRUE(client_.UpdateStatus(workloads_, wl).ok());
    Settle();
    ASSERT_EQ(Pods(name).size(), 2u);
    EXPECT_EQ(GetJob(name)["spec"]["parallelism"], 2);

    wl = mine();
    wl["status"]["conditions"].push_back(
        Cond("Evicted", "True", "Preempted", "Preempted to accommodate a workload"));
    ASSERT_TRUE(client_.UpdateStatus(workloads_, wl).ok());
    Settle();

    Json job = GetJob(name);
    EXPECT_TRUE(job["spec"].value("suspend", false));
    EXPECT_FALSE(job["spec"]["template"]["spec"].contains("nodeSelector")) << "restored";
    EXPECT_FALSE(job["spec"]["template"]["spec"].contains("tolerations")) << "restored";
    EXPECT_EQ(job["spec"]["parallelism"], 4) << "partial admission undone";
    EXPECT_FALSE(api::meta::GetAnnotation(job, "kueue.x-k8s.io/stopping").has_value());
    EXPECT_TRUE(Pods(name).empty()) << "the Job controller deleted the pods";
    wl = mine();
    EXPECT_FALSE(wl["status"].contains("admission")) << "reservation cleared";
    EXPECT_EQ(CondStr(wl, "QuotaReserved"), "False/Pending");
    EXPECT_EQ(api::meta::GetCondition(wl, "QuotaReserved")->message,
              "Preempted to accommodate a workload");
    EXPECT_EQ(CondStr(wl, "Admitted"), "False/NoReservation");
    EXPECT_EQ(CondStr(wl, "Requeued"), c.requeued);
    EXPECT_EQ(wls.size(), Workloads().size()) << "the same Workload is requeued";
  }
}

// Issue #14: a Workload evicted (preempted) while its job's pods exit. The
// integration's stop (suspend, clear startTime, restore) lands first, then
// the pods are Succeeded before the Job controller syncs. A job whose
// completions are all done finishes its Workload; one with work left gives
// its quota back (no pod active) and is requeued. Before the fix the first
// stayed Evicted with QuotaReserved for ever (the Job controller's finishing
// write was refused for lack of a startTime).
TEST_F(IntegrationTest, PodsExitingWhileEvictedFinishOrRequeue) {
  struct Case {
    std::string name;
    int pods, succeed;
    std::string finished, quota_reserved;  // Workload conditions after.
  };
  for (const Case& c : std::vector<Case>{{"done", 1, 1, "True/Succeeded", "True/QuotaReserved"},
                                         {"half", 2, 1, "absent", "False/Pending"}}) {
    SCOPED_TRACE(c.name);
    EnsureFlavor();
    Create(jobs_, QueuedJob(c.name, c.pods));
    Json wl = WorkloadOf(c.name);
    wl["status"]["admission"] = {
        {"clusterQueue", "cq"},
        {"podSetAssignments",
         Json::array({{{"name", "main"}, {"flavors", {{"cpu", "spot"}}}, {"count", c.pods}}})}};
    wl["status"]["conditions"] = Json::array(
        {Cond("QuotaReserved", "True", "QuotaReserved"), Cond("Admitted", "True", "Admitted")});
    ASSERT_TRUE(client_.UpdateStatus(workloads_, wl).ok());
    Settle();
    std::vector<Json> pods = Pods(c.name);
    ASSERT_EQ(pods.size(), static_cast<size_t>(c.pods));
    for (const Json& p : pods) SetRunning(p);
    ASSERT_EQ(GetJob(c.name)["status"].value("active", 0), c.pods);

    wl = WorkloadOf(c.name);
    wl["status"]["conditions"].push_back(
        Cond("Evicted", "True", "Preempted", "Preempted to accommodate a workload"));
    ASSERT_TRUE(client_.UpdateStatus(workloads_, wl).ok());
    // One reconcile at a time until the integration's stop has landed (the
    // Job controller has nothing to do before it: only the Workload changed).
    for (int step = 0; step < 50; ++step) {
      Json job = GetJob(c.name);
      if (job["spec"].value("suspend", false) && !job["status"].contains("startTime")) break;
      ASSERT_EQ(mgr_.RunUntilIdle(1), 1) << "went idle before the stop";
    }
    ASSERT_FALSE(GetJob(c.name)["status"].contains("startTime"));
    ASSERT_EQ(Pods(c.name).size(), static_cast<size_t>(c.pods)) << "no sync of the Job yet";
    for (int i = 0; i < c.succeed; ++i) {
      Terminate(*client_.Get(pods_, "default", api::meta::GetName(pods[i])), 0);
    }

    Json job = GetJob(c.name);
    EXPECT_EQ(job["status"].value("succeeded", 0), c.succeed);
    EXPECT_EQ(job["status"].value("active", 0), 0);
    auto all = client_.List(pods_, "default", {"batch.kubernetes.io/job-name=" + c.name, ""});
    ASSERT_TRUE(all.ok());
    for (const Json& p : all->items) {
      EXPECT_FALSE(api::meta::HasFinalizer(p, "batch.kubernetes.io/job-tracking"))
          << api::meta::GetName(p);
    }
    wl = WorkloadOf(c.name);
    EXPECT_EQ(CondStr(wl, "Finished"), c.finished);
    EXPECT_EQ(CondStr(wl, "QuotaReserved"), c.quota_reserved);
    if (c.finished == "absent") {
      EXPECT_FALSE(wl["status"].contains("admission")) << "quota released";
      EXPECT_EQ(CondStr(wl, "Requeued"), "True/Preempted");
    }
  }
}

TEST_F(IntegrationTest, FinishedJobFinishesWorkload) {
  struct Case {
    std::string name;
    int exit_code;
    std::string finished;
  };
  for (const Case& c : std::vector<Case>{{"ok", 0, "True/Succeeded"}, {"bad", 1, "True/Failed"}}) {
    SCOPED_TRACE(c.name);
    EnsureFlavor();
    Create(jobs_, MakeJob(c.name).Label(kQueue, "lq").Set("/spec/backoffLimit"_json_pointer, 0)
                      .Obj());
    Admit("spot", 1);
    auto pods = Pods(c.name);
    ASSERT_EQ(pods.size(), 1u);
    Terminate(pods[0], c.exit_code);
    Json wl = OnlyWorkload();
    EXPECT_EQ(CondStr(wl, "Finished"), c.finished);
    EXPECT_TRUE(HasEvent(EventReasons(), "FinishedWorkload"));
    // Clean up for the next case: deleting the Job deletes its Workload.
    ASSERT_TRUE(client_.Delete(jobs_, "default", c.name, {.propagation_policy = "Background"}).ok());
    Settle();
    EXPECT_TRUE(Workloads().empty());
  }
}

TEST_F(IntegrationTest, DeletingJobDeletesWorkloadEvenWhenOrphaning) {
  Create(jobs_, QueuedJob("j", 1));
  ASSERT_EQ(Workloads().size(), 1u);
  // batch/v1's default propagation is Orphan: the GC drops the owner
  // reference, and the integration still removes the Workload.
  ASSERT_TRUE(client_.Delete(jobs_, "default", "j").ok());
  Settle();
  EXPECT_TRUE(GetJob("j").is_null());
  EXPECT_TRUE(Workloads().empty());
}

TEST_F(IntegrationTest, PodSetChangeWhilePendingReplacesWorkload) {
  Create(jobs_, QueuedJob("j", 2));
  Json before = OnlyWorkload();
  auto r = client_.MergePatch(jobs_, "default", "j", {{"spec", {{"parallelism", 1}}}});
  ASSERT_TRUE(r.ok()) << r.status();
  Settle();
  Json after = OnlyWorkload();
  EXPECT_NE(api::meta::GetUid(after), api::meta::GetUid(before)) << "a new Workload";
  EXPECT_EQ(after["spec"]["podSets"][0]["count"], 1);
  EXPECT_TRUE(HasEvent(EventReasons(), "DeletedWorkload"));
  EXPECT_TRUE(GetJob("j")["spec"].value("suspend", false));
}

TEST_F(IntegrationTest, QueueNameChangeWhileSuspendedFollows) {
  Create(jobs_, QueuedJob("j", 1));
  auto r = client_.MergePatch(jobs_, "default", "j",
                              {{"metadata", {{"labels", {{kQueue, "other"}}}}}});
  ASSERT_TRUE(r.ok()) << r.status();
  Settle();
  EXPECT_EQ(OnlyWorkload()["spec"]["queueName"], "other");
}

TEST_F(IntegrationTest, DeletedWorkloadStopsRunningJobAndIsRecreated) {
  EnsureFlavor();
  Create(jobs_, QueuedJob("j", 2));
  Admit("spot", 2);
  ASSERT_EQ(Pods("j").size(), 2u);
  Json wl = OnlyWorkload();
  ASSERT_TRUE(client_.Delete(workloads_, "default", api::meta::GetName(wl)).ok());
  Settle();
  Json job = GetJob("j");
  EXPECT_TRUE(job["spec"].value("suspend", false));
  EXPECT_FALSE(job["spec"]["template"]["spec"].contains("nodeSelector"))
      << "restored from the annotation";
  EXPECT_TRUE(Pods("j").empty());
  Json again = OnlyWorkload();
  EXPECT_NE(api::meta::GetUid(again), api::meta::GetUid(wl));
  EXPECT_FALSE(again.contains("status") && again["status"].contains("admission"));
}

class ManageAllTest : public IntegrationTest {
 protected:
  ManageAllTest() { options_.manage_jobs_without_queue_name = true; }
};

TEST_F(ManageAllTest, JobWithoutQueueIsQueuedToo) {
  Create(jobs_, MakeJob("plain").Obj());
  EXPECT_TRUE(GetJob("plain")["spec"].value("suspend", false));
  EXPECT_TRUE(Pods("plain").empty());
  EXPECT_EQ(OnlyWorkload()["spec"].value("queueName", "x"), "");
}

}  // namespace
}  // namespace batchd::controllers::workload::testing

namespace batchd::controllers::workload::testing {
namespace {

constexpr char kMaxExec[] = "kueue.x-k8s.io/max-exec-time-seconds";

// Kueue's jobframework: the label becomes spec.maximumExecutionTimeSeconds;
// the webhook refuses a value that is not a positive int32 and a change while
// the job runs.
TEST_F(IntegrationTest, MaxExecTimeLabelBecomesTheWorkloadLimit) {
  EnsureFlavor();
  Create(jobs_, MakeJob("j").Label(kQueue, "lq").Label(kMaxExec, "30").Obj());
  EXPECT_EQ(OnlyWorkload()["spec"].value("maximumExecutionTimeSeconds", 0), 30);

  for (const char* bad : {"0", "-5", "abc", "1.5", "99999999999"}) {
    SCOPED_TRACE(bad);
    auto r = client_.Create(jobs_, "default",
                            MakeJob("bad").Label(kQueue, "lq").Label(kMaxExec, bad).Obj());
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(registry::GetPayload(r.status()).reason, "Invalid");
    EXPECT_NE(std::string(r.status().message()).find(kMaxExec), std::string::npos)
        << r.status();
  }

  Admit("spot", 1);
  ASSERT_FALSE(GetJob("j")["spec"].value("suspend", true));
  auto r = client_.MergePatch(jobs_, "default", "j",
                              {{"metadata", {{"labels", {{kMaxExec, "60"}}}}}});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(std::string(r.status().message()).find("field is immutable"), std::string::npos)
      << r.status();
}

// Kueue: when Admitted turns False, the time it was True adds to
// status.accumulatedPastExecutionTimeSeconds.
TEST_F(IntegrationTest, EvictionAccumulatesTheAdmittedTime) {
  EnsureFlavor();
  Create(jobs_, MakeJob("j").Label(kQueue, "lq").Label(kMaxExec, "100").Obj());
  auto at_now = [this](Json c) {
    c["lastTransitionTime"] = api::meta::FormatRfc3339(clock_.Now());
    return c;
  };
  for (int round : {1, 2}) {
    SCOPED_TRACE(round);
    Json admission = {{"clusterQueue", "cq"},
                      {"podSetAssignments",
                       Json::array({{{"name", "main"},
                                     {"flavors", {{"cpu", "spot"}}},
                                     {"resourceUsage", {{"cpu", "1"}}},
                                     {"count", 1}}})}};
    WriteWorkloadStatus({at_now(Cond("QuotaReserved", "True", "QuotaReserved")),
                         at_now(Cond("Admitted", "True", "Admitted")),
                         at_now(Cond("Evicted", "False", "QuotaReserved"))},
                        admission);
    ASSERT_EQ(Pods("j").size(), 1u);
    clock_.Advance(absl::Seconds(42));
    WriteWorkloadStatus({at_now(Cond("Evicted", "True", "Preempted", "Preempted"))});
    Json wl = OnlyWorkload();
    EXPECT_FALSE(wl["status"].contains("admission"));
    EXPECT_EQ(wl["status"].value("accumulatedPastExecutionTimeSeconds", -1), 42 * round);
  }
}

// Kueue's Job.ReclaimablePods: once the work left no longer fills every
// parallel slot, the Workload reports the idle slots as reclaimable.
TEST_F(IntegrationTest, FinishedPodsBecomeReclaimable) {
  EnsureFlavor();
  Create(jobs_, QueuedJob("j", 4));  // parallelism = completions = 4
  Admit("spot", 4);
  std::vector<Json> pods = Pods("j");
  ASSERT_EQ(pods.size(), 4u);
  EXPECT_FALSE(OnlyWorkload()["status"].contains("reclaimablePods"));
  Terminate(pods[0], 0);
  Terminate(pods[1], 0);
  // 2 succeeded, 2 to go with 4 slots: 2 reclaimable.
  Json wl = OnlyWorkload();
  ASSERT_TRUE(wl["status"].contains("reclaimablePods")) << wl["status"].dump();
  EXPECT_EQ(wl["status"]["reclaimablePods"],
            Json::array({{{"name", "main"}, {"count", 2}}}));
  EXPECT_EQ(CondStr(wl, "Admitted"), "True/Admitted") << "still running";
}

constexpr char kElastic[] = "kueue.x-k8s.io/elastic-job";

// Elastic Jobs: a running Job's scale-down shrinks its Workload in place
// (same Workload, still admitted, no restart); the mark is immutable and
// excludes partial admission.
TEST_F(IntegrationTest, ElasticJobScalesDownInPlace) {
  EnsureFlavor();
  Create(jobs_, MakeJob("e").Label(kQueue, "lq").Annotation(kElastic, "true")
                    .Parallelism(4).Completions(8).Obj());
  Json before = OnlyWorkload();
  EXPECT_EQ(api::meta::GetAnnotation(before, kElastic).value_or(""), "true");
  Admit("spot", 4);
  ASSERT_EQ(Pods("e").size(), 4u);

  auto r = client_.MergePatch(jobs_, "default", "e", {{"spec", {{"parallelism", 2}}}});
  ASSERT_TRUE(r.ok()) << r.status();
  Settle();
  Json wl = OnlyWorkload();
  EXPECT_EQ(api::meta::GetUid(wl), api::meta::GetUid(before)) << "the same Workload";
  EXPECT_EQ(wl["spec"]["podSets"][0]["count"], 2);
  EXPECT_EQ(CondStr(wl, "Admitted"), "True/Admitted");
  EXPECT_FALSE(GetJob("e")["spec"].value("suspend", true)) << "never stopped";
  EXPECT_FALSE(HasEvent(EventReasons(), "Stopped"));
  EXPECT_EQ(Pods("e").size(), 2u);

  r = client_.MergePatch(jobs_, "default", "e",
                         {{"metadata", {{"annotations", {{kElastic, nullptr}}}}}});
  EXPECT_FALSE(r.ok()) << "the mark is immutable";

  auto c = client_.Create(jobs_, "default",
                          MakeJob("ep").Label(kQueue, "lq").Annotation(kElastic, "true")
                              .Annotation("kueue.x-k8s.io/job-min-parallelism", "1")
                              .Parallelism(2).Obj());
  EXPECT_FALSE(c.ok()) << "elastic and partial admission together";
}

// kctl's side of a slice's admission: `wl` gets `count` pods on `flavor`.
void AdmitWorkload(client::Client& c, const api::KindDef& kind, Json wl, int count) {
  wl["status"]["admission"] = {
      {"clusterQueue", "cq"},
      {"podSetAssignments",
       Json::array({{{"name", "main"},
                     {"flavors", {{"cpu", "spot"}}},
                     {"resourceUsage", {{"cpu", std::to_string(count)}}},
                     {"count", count}}})}};
  wl["status"]["conditions"] = Json::array(
      {Cond("QuotaReserved", "True", "QuotaReserved", "Quota reserved in ClusterQueue cq"),
       Cond("Admitted", "True", "Admitted", "The workload is admitted")});
  auto r = c.UpdateStatus(kind, wl);
  ASSERT_TRUE(r.ok()) << r.status();
}

int Gated(const std::vector<Json>& pods) {
  int n = 0;
  for (const Json& p : pods) {
    for (const Json& g : p["spec"].value("schedulingGates", Json::array())) {
      if (g.value("name", "") == "kueue.x-k8s.io/elastic-job") ++n;
    }
  }
  return n;
}

// Elastic Jobs scale up through a Workload slice (Kueue's
// ElasticJobsViaWorkloadSlices): pods start gated and are ungated as far as
// the admitted slice covers them; a scale-up creates a slice replacing the
// admitted Workload while the job keeps running at its old size; once the
// slice is admitted (and the old one Finished) the new pods start, and the
// first ones were never restarted. A scale back below the admitted size
// before the slice is admitted drops the slice.
TEST_F(IntegrationTest, ElasticJobScalesUpThroughAWorkloadSlice) {
  EnsureFlavor();
  Create(jobs_, MakeJob("e").Label(kQueue, "lq").Annotation(kElastic, "true")
                    .Parallelism(2).Completions(20).Obj());
  Json job = GetJob("e");
  ASSERT_EQ(job["spec"]["template"]["spec"]["schedulingGates"][0]["name"],
            "kueue.x-k8s.io/elastic-job");
  Admit("spot", 2);
  std::vector<Json> first = Pods("e");
  ASSERT_EQ(first.size(), 2u);
  EXPECT_EQ(Gated(first), 0) << "admitted pods are ungated";
  const Json old = OnlyWorkload();

  auto r = client_.MergePatch(jobs_, "default", "e", {{"spec", {{"parallelism", 6}}}});
  ASSERT_TRUE(r.ok()) << r.status();
  Settle();
  std::vector<Json> wls = Workloads();
  ASSERT_EQ(wls.size(), 2u);
  Json slice;
  for (const Json& w : wls) {
    if (api::meta::GetName(w) != api::meta::GetName(old)) slice = w;
  }
  EXPECT_EQ(api::meta::GetAnnotation(slice, "kueue.x-k8s.io/workload-slice-replacement-for")
                .value_or(""),
            "default/" + api::meta::GetName(old));
  EXPECT_EQ(slice["spec"]["podSets"][0]["count"], 6);
  EXPECT_EQ(CondStr(Get(workloads_, api::meta::GetName(old)), "Admitted"), "True/Admitted");
  EXPECT_FALSE(GetJob("e")["spec"].value("suspend", true)) << "keeps running";
  EXPECT_FALSE(HasEvent(EventReasons(), "Stopped"));
  std::vector<Json> pods = Pods("e");
  ASSERT_EQ(pods.size(), 6u);
  EXPECT_EQ(Gated(pods), 4) << "the new pods wait for the slice";

  // The queue manager admits the slice and finishes the old one.
  AdmitWorkload(client_, workloads_, slice, 6);
  Json o = Get(workloads_, api::meta::GetName(old));
  o["status"]["conditions"].push_back(
      Cond("Finished", "True", "WorkloadSliceReplaced", "replaced"));
  ASSERT_TRUE(client_.UpdateStatus(workloads_, o).ok());
  Settle();
  pods = Pods("e");
  ASSERT_EQ(pods.size(), 6u);
  EXPECT_EQ(Gated(pods), 0);
  for (const Json& f : first) {
    EXPECT_TRUE(std::any_of(pods.begin(), pods.end(), [&](const Json& p) {
      return api::meta::GetUid(p) == api::meta::GetUid(f);
    })) << "never restarted: " << api::meta::GetName(f);
  }
  EXPECT_EQ(Workloads().size(), 2u) << "the replaced slice stays for the record";

  // 6 -> 3: the admitted slice shrinks in place.
  r = client_.MergePatch(jobs_, "default", "e", {{"spec", {{"parallelism", 3}}}});
  ASSERT_TRUE(r.ok()) << r.status();
  Settle();
  EXPECT_EQ(Get(workloads_, api::meta::GetName(slice))["spec"]["podSets"][0]["count"], 3);
  EXPECT_EQ(Pods("e").size(), 3u);

  // 3 -> 5 and back to 2 before the slice is admitted: the slice goes, the
  // admitted Workload shrinks, nothing restarts.
  r = client_.MergePatch(jobs_, "default", "e", {{"spec", {{"parallelism", 5}}}});
  ASSERT_TRUE(r.ok());
  Settle();
  EXPECT_EQ(Workloads().size(), 3u);  // the replaced one, the admitted one, the new slice
  // The admission still says 6 pods, the shrunk spec 3: only 3 run.
  EXPECT_EQ(Gated(Pods("e")), 2) << "the 2 new pods wait for their slice";
  r = client_.MergePatch(jobs_, "default", "e", {{"spec", {{"parallelism", 2}}}});
  ASSERT_TRUE(r.ok());
  Settle();
  wls = Workloads();
  ASSERT_EQ(wls.size(), 2u);
  EXPECT_EQ(Get(workloads_, api::meta::GetName(slice))["spec"]["podSets"][0]["count"], 2);
  EXPECT_EQ(CondStr(Get(workloads_, api::meta::GetName(slice)), "Admitted"), "True/Admitted");
  EXPECT_FALSE(HasEvent(EventReasons(), "Stopped"));
}

}  // namespace
}  // namespace batchd::controllers::workload::testing
