// The queue manager after a restart: a fresh manager over a store that
// already holds admitted, evicted-but-not-cleared, pending and finished
// Workloads rebuilds exactly the usage they hold, admits nothing over quota
// and finishes the evictions that were in flight.
#include <string>
#include <vector>

#include "controllers/queueing/queue_manager_test_env.h"

namespace batchd::controllers::queueing {
namespace {

using api::Json;
using ::testing::HasSubstr;
using testing::Quota;

class RestartTest : public testing::QueueManagerTest {
 protected:
  Json Condition(const std::string& type, const std::string& status, const std::string& reason,
                 const std::string& message = "m") {
    return {{"type", type},
            {"status", status},
            {"reason", reason},
            {"message", message},
            {"lastTransitionTime", api::meta::FormatRfc3339(clock_.Now())}};
  }
  // Writes the status a previous process left behind: an admission of `cpu`
  // in `cq` (when not empty) and `conditions`.
  void LeaveStatus(const std::string& name, const std::string& cq, const std::string& cpu,
                   std::vector<Json> conditions) {
    Json w = Wl(name);
    w["status"] = Json::object();
    if (!cq.empty()) {
      w["status"]["admission"] = {
          {"clusterQueue", cq},
          {"podSetAssignments",
           Json::array({{{"name", "main"},
                         {"flavors", {{"cpu", "default"}}},
                         {"resourceUsage", {{"cpu", cpu}}},
                         {"count", 1}}})}};
    }
    w["status"]["conditions"] = conditions;
    auto r = client_.UpdateStatus(Kind("workloads"), w);
    ASSERT_TRUE(r.ok()) << r.status();
  }
  std::vector<Json> AdmittedConds() {
    return {Condition("QuotaReserved", "True", "QuotaReserved"),
            Condition("Admitted", "True", "Admitted")};
  }
  void LeaveAdmitted(const std::string& name, const std::string& cpu) {
    LeaveStatus(name, "cq", cpu, AdmittedConds());
  }
  void LeaveEvicted(const std::string& name, const std::string& cpu) {
    std::vector<Json> c = AdmittedConds();
    c.push_back(Condition("Evicted", "True", "Preempted"));
    c.push_back(Condition("Preempted", "True", "InClusterQueue"));
    LeaveStatus(name, "cq", cpu, c);
  }
  void LeaveFinished(const std::string& name, const std::string& cpu) {
    std::vector<Json> c = AdmittedConds();
    c.push_back(Condition("Finished", "True", "Succeeded"));
    LeaveStatus(name, "cq", cpu, c);
  }
  void Finish(const std::string& name) {
    Json w = Wl(name);
    w["status"]["conditions"].push_back(Condition("Finished", "True", "Succeeded"));
    auto r = client_.UpdateStatus(Kind("workloads"), w);
    ASSERT_TRUE(r.ok()) << r.status();
    Settle();
  }
  // Millicpu held by the stored Workloads of ns: admitted and not Finished
  // (what the quota invariant is about, read from the objects).
  int64_t HeldMilli() {
    auto r = client_.List(Kind("workloads"), "ns");
    EXPECT_TRUE(r.ok());
    int64_t total = 0;
    for (const Json& w : r->items) {
      if (!w.value("status", Json::object()).contains("admission")) continue;
      if (Cond(w, "Finished").rfind("True", 0) == 0) continue;
      std::string cpu = w["status"]["admission"]["podSetAssignments"][0]["resourceUsage"]["cpu"];
      total += cpu.back() == 'm' ? std::stoll(cpu.substr(0, cpu.size() - 1))
                                 : std::stoll(cpu) * 1000;
    }
    return total;
  }
  std::vector<std::string> AdmittedAmong(const std::vector<std::string>& names) {
    std::vector<std::string> out;
    for (const std::string& n : names) {
      if (Admitted(n)) out.push_back(n);
    }
    return out;
  }
};

TEST_F(RestartTest, RebuildsUsageFromStoredWorkloadsAndAdmitsNothingOverQuota) {
  // What the previous process left: 4 cpu of quota, 4 held (2 + 1 running, 1
  // evicted whose job has not stopped yet), a finished one (not held) and
  // three pending.
  Basic();
  Patch("clusterqueues", "", "cq",
        {{"spec", {{"resourceGroups",
                    {{{"coveredResources", {"cpu"}},
                      {"flavors", {{{"name", "default"}, {"resources", {Quota("cpu", "4")}}}}}}}}}}});
  for (const char* n : {"done", "run2", "run1", "evicted", "p1", "p2", "p3"}) {
    Workload(n, "lq", std::string(n) == "run2" || std::string(n) == "done" ? "2" : "1");
    clock_.Advance(absl::Seconds(1));
  }
  LeaveFinished("done", "2");
  LeaveAdmitted("run2", "2");
  LeaveAdmitted("run1", "1");
  LeaveEvicted("evicted", "1");
  ASSERT_EQ(HeldMilli(), 4000);

  Start();
  EXPECT_EQ(HeldMilli(), 4000) << "admitted over quota after the restart";
  EXPECT_THAT(AdmittedAmong({"p1", "p2", "p3"}), ::testing::IsEmpty());
  Json cq = Get("clusterqueues", "", "cq");
  EXPECT_EQ(cq["status"]["reservingWorkloads"], 3);
  EXPECT_EQ(cq["status"]["admittedWorkloads"], 3);
  EXPECT_EQ(cq["status"]["pendingWorkloads"], 3);
  EXPECT_EQ(cq["status"]["flavorsReservation"][0]["resources"][0]["total"], "4");
  EXPECT_THAT(Metrics(), HasSubstr("kueue_cluster_queue_resource_usage{cohort=\"\","
                                   "cluster_queue=\"cq\",flavor=\"default\",resource=\"cpu\"} 4\n"));
  EXPECT_EQ(Cond(Wl("evicted"), "Evicted"), "True/Preempted") << "eviction kept";
  EXPECT_EQ(Cond(Wl("run1"), "Evicted"), "") << "nothing else evicted";
  EXPECT_EQ(Cond(Wl("done"), "Finished"), "True/Succeeded");

  // The evicted job stops and its reservation is cleared: one slot frees.
  ClearAdmission("evicted");
  EXPECT_EQ(HeldMilli(), 4000);
  EXPECT_EQ(AdmittedAmong({"evicted", "p1", "p2", "p3"}).size(), 1u);

  // A second restart in the middle changes nothing.
  Restart();
  EXPECT_EQ(HeldMilli(), 4000);
  EXPECT_EQ(AdmittedAmong({"evicted", "p1", "p2", "p3"}).size(), 1u);

  Finish("run2");
  EXPECT_EQ(HeldMilli(), 4000);
  EXPECT_EQ(AdmittedAmong({"evicted", "p1", "p2", "p3"}).size(), 3u);
  cq = Get("clusterqueues", "", "cq");
  EXPECT_EQ(cq["status"]["reservingWorkloads"], 4);
  EXPECT_EQ(cq["status"]["pendingWorkloads"], 1);
}

TEST_F(RestartTest, EvictionInFlightIsFinishedNotRepeated) {
  // Before the crash: `high` preempted `low1` (Evicted written, job not
  // stopped yet). The restarted manager must not pick another victim (Kueue
  // orders already-evicted candidates first), and admits `high` only once
  // low1's reservation is cleared.
  Basic({{"preemption", {{"withinClusterQueue", "LowerPriority"}}}});
  for (const char* n : {"low1", "low2", "low3"}) {
    Workload(n, "lq", "1", /*priority=*/1);
    clock_.Advance(absl::Seconds(1));
  }
  Workload("high", "lq", "1", /*priority=*/100);
  LeaveEvicted("low1", "1");  // Admitted first; low3 last (the newest candidate).
  clock_.Advance(absl::Seconds(1));
  LeaveAdmitted("low2", "1");
  clock_.Advance(absl::Seconds(1));
  LeaveAdmitted("low3", "1");

  Start();
  EXPECT_EQ(HeldMilli(), 3000);
  EXPECT_FALSE(Admitted("high")) << "admitted before the victim released its quota";
  EXPECT_EQ(Cond(Wl("low2"), "Evicted"), "") << "a second victim for one preemptor";
  EXPECT_EQ(Cond(Wl("low3"), "Evicted"), "") << "a second victim for one preemptor";
  EXPECT_EQ(Cond(Wl("low1"), "Evicted"), "True/Preempted");

  ClearAdmission("low1");
  EXPECT_TRUE(Admitted("high"));
  EXPECT_FALSE(Admitted("low1"));
  EXPECT_TRUE(Admitted("low2"));
  EXPECT_TRUE(Admitted("low3"));
  EXPECT_EQ(HeldMilli(), 3000);
}

TEST_F(RestartTest, PreemptsTheMostRecentlyAdmittedAfterRestart) {
  // Kueue's candidate order among equal priorities: most recently admitted
  // first. After a restart that is the QuotaReserved time, not the name.
  Basic({{"preemption", {{"withinClusterQueue", "LowerPriority"}}}});
  for (const char* n : {"a-newest", "b-oldest", "c-middle"}) Workload(n, "lq", "1", 1);
  Workload("high", "lq", "1", /*priority=*/100);
  LeaveAdmitted("b-oldest", "1");
  clock_.Advance(absl::Seconds(1));
  LeaveAdmitted("c-middle", "1");
  clock_.Advance(absl::Seconds(1));
  LeaveAdmitted("a-newest", "1");
  clock_.Advance(absl::Seconds(1));

  Start();
  EXPECT_EQ(Cond(Wl("a-newest"), "Evicted"), "True/Preempted");
  EXPECT_EQ(Cond(Wl("b-oldest"), "Evicted"), "");
  EXPECT_EQ(Cond(Wl("c-middle"), "Evicted"), "");
  EXPECT_FALSE(Admitted("high"));
  ClearAdmission("a-newest");
  EXPECT_TRUE(Admitted("high"));
  EXPECT_EQ(HeldMilli(), 3000);
}

TEST_F(RestartTest, StoppedQueueDrainsAdmittedWorkloadsAfterRestart) {
  // HoldAndDrain was set just before the crash; evictions were not written.
  Basic({{"stopPolicy", "HoldAndDrain"}});
  Workload("a", "lq", "1");
  Workload("b", "lq", "1");
  LeaveAdmitted("a", "1");
  LeaveEvicted("b", "1");
  Workload("p", "lq", "1");

  Start();
  EXPECT_EQ(Cond(Wl("a"), "Evicted"), "True/ClusterQueueStopped");
  EXPECT_EQ(Cond(Wl("b"), "Evicted"), "True/Preempted") << "an existing eviction is kept";
  EXPECT_FALSE(Admitted("p"));
  ClearAdmission("a");
  ClearAdmission("b");
  EXPECT_EQ(HeldMilli(), 0);
  EXPECT_THAT(AdmittedAmong({"a", "b", "p"}), ::testing::IsEmpty());
}

TEST_F(RestartTest, DeletedAdmittedWorkloadWhileDownReleasesQuota) {
  Basic();
  Workload("gone", "lq", "3");
  Workload("p", "lq", "2");
  LeaveAdmitted("gone", "3");
  Start();
  EXPECT_FALSE(Admitted("p"));
  stack_.reset();  // Down: the Workload is deleted meanwhile.
  ASSERT_TRUE(client_.Delete(Kind("workloads"), "ns", "gone").ok());
  Start();
  EXPECT_TRUE(Admitted("p"));
  EXPECT_EQ(HeldMilli(), 2000);
}

}  // namespace
}  // namespace batchd::controllers::queueing
