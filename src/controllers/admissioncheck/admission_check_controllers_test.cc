// Two-phase admission end to end inside one process: the queue manager and
// the admission-check controllers over an in-memory registry on a FakeClock.
// An external check controller is played by the test (status patches).
#include "controllers/admissioncheck/controllers.h"

#include <map>
#include <random>
#include <set>

#include "api/meta/time_util.h"
#include "controllers/admissioncheck/admission_checks.h"
#include "controllers/queueing/queue_manager_test_env.h"

namespace batchd::controllers::admissioncheck {
namespace {

using api::Json;
using ::testing::HasSubstr;

class AdmissionCheckTest : public queueing::testing::QueueManagerTest {
 protected:
  void StartAll(queueing::QueueingConfig cfg = {}) {
    stack_ = std::make_unique<Stack>(client_, clock_, cfg);
    AddAdmissionCheckControllers(stack_->ctx);
    ASSERT_TRUE(stack_->mgr.SyncAll().ok());
    Settle();
  }
  // An AdmissionCheck of an external controller; `active` sets Active=True
  // as that controller would.
  void Check(const std::string& name, bool active, const std::string& controller = "example.com/x",
             Json params = nullptr) {
    Json spec = {{"controllerName", controller}};
    if (!params.is_null()) spec["parameters"] = params;
    Create("admissionchecks", "", {{"metadata", {{"name", name}}}, {"spec", spec}});
    if (active) SetActive(name);
    Settle();
  }
  void SetActive(const std::string& name) {
    Patch("admissionchecks", "", name,
          {{"status",
            {{"conditions",
              {{{"type", "Active"}, {"status", "True"}, {"reason", "Active"}, {"message", "ok"},
                {"lastTransitionTime", api::meta::FormatRfc3339(clock_.Now())}}}}}}},
          /*status=*/true);
    Settle();
  }
  // What an external check controller writes.
  void SetState(const std::string& wl, const std::string& check, const std::string& state,
                std::optional<int> requeue_after = std::nullopt, Json updates = nullptr) {
    Json w = Wl(wl);
    for (Json& s : w["status"]["admissionChecks"]) {
      if (s["name"] != check) continue;
      s["state"] = state;
      s["lastTransitionTime"] = api::meta::FormatRfc3339(clock_.Now());
      if (requeue_after) s["requeueAfterSeconds"] = *requeue_after;
      if (!updates.is_null()) s["podSetUpdates"] = updates;
    }
    auto r = client_.UpdateStatus(Kind("workloads"), w);
    ASSERT_TRUE(r.ok()) << r.status();
    Settle();
  }
  std::string State(const std::string& wl, const std::string& check) {
    Json w = Wl(wl);
    const Json* s = FindCheckState(w, check);
    return s == nullptr ? "" : (*s)["state"].get<std::string>();
  }
  bool Reserved(const std::string& wl) { return Cond(Wl(wl), "QuotaReserved") == "True/QuotaReserved"; }
  void Finish(const std::string& wl) {
    Patch("workloads", "ns", wl,
          {{"status", {{"conditions", Json::array({{{"type", "Finished"}, {"status", "True"},
                                                    {"reason", "Succeeded"}, {"message", "done"},
                                                    {"lastTransitionTime",
                                                     api::meta::FormatRfc3339(clock_.Now())}}})}}}},
          /*status=*/true);
    Settle();
  }
  void Delete(const char* plural, const std::string& name) {
    client::DeleteOptions opts;
    ASSERT_TRUE(client_.Delete(Kind(plural), "", name, opts).ok());
    Settle();
  }
  bool Exists(const char* plural, const std::string& name) {
    return client_.Get(Kind(plural), "", name).ok();
  }
  // A Ready node with `cpu` allocatable and `labels`.
  void Node(const std::string& name, const std::string& cpu, Json labels) {
    const api::KindDef& k = client_.Kind("", "v1", "nodes");
    Json n = {{"apiVersion", "v1"}, {"kind", "Node"},
              {"metadata", {{"name", name}, {"labels", labels}}}};
    auto r = client_.Create(k, "", n);
    ASSERT_TRUE(r.ok()) << r.status();
    Json st = *r;
    st["status"] = {{"allocatable", {{"cpu", cpu}, {"pods", "110"}}},
                    {"capacity", {{"cpu", cpu}, {"pods", "110"}}},
                    {"conditions", {{{"type", "Ready"}, {"status", "True"}, {"reason", "KubeletReady"},
                                     {"message", "ready"},
                                     {"lastTransitionTime", api::meta::FormatRfc3339(clock_.Now())},
                                     {"lastHeartbeatTime", api::meta::FormatRfc3339(clock_.Now())}}}}};
    auto u = client_.UpdateStatus(k, st);
    ASSERT_TRUE(u.ok()) << u.status();
    Settle();
  }
  // The provisioning check `prov` with ProvisioningRequestConfig `prc`.
  void Provisioning(Json prc_spec) {
    Create("provisioningrequestconfigs", "", {{"metadata", {{"name", "prc"}}}, {"spec", prc_spec}});
    Check("prov", false, kProvisioningController,
          {{"apiGroup", "kueue.x-k8s.io"}, {"kind", "ProvisioningRequestConfig"}, {"name", "prc"}});
  }
  Json Rules(std::vector<std::string> names) {
    Json rules = Json::array();
    for (auto& n : names) rules.push_back({{"name", n}});
    return {{"admissionChecksStrategy", {{"admissionChecks", rules}}}};
  }
};

TEST_F(AdmissionCheckTest, QuotaReservedThenAdmittedWhenEveryCheckIsReady) {
  StartAll();
  Check("a", true);
  Check("b", true);
  Basic(Rules({"a", "b"}));
  Workload("w", "lq", "1");
  Settle();
  Json w = Wl("w");
  EXPECT_EQ(Cond(w, "QuotaReserved"), "True/QuotaReserved");
  EXPECT_EQ(Cond(w, "Admitted"), "");  // Not admitted before the checks.
  EXPECT_EQ(State("w", "a"), "Pending");
  EXPECT_EQ(State("w", "b"), "Pending");
  // Quota is held while the checks run.
  EXPECT_EQ(Get("clusterqueues", "", "cq")["status"]["reservingWorkloads"], 1);

  SetState("w", "a", "Ready");
  EXPECT_EQ(Cond(Wl("w"), "Admitted"), "");
  SetState("w", "b", "Ready");
  EXPECT_EQ(Cond(Wl("w"), "Admitted"), "True/Admitted");
  EXPECT_EQ(CondMessage(Wl("w"), "Admitted"), "The workload is admitted");
  EXPECT_THAT(stack_->ev.Reasons(), ::testing::Contains("Admitted"));

  // A check leaving Ready un-admits it (the job integration then stops the job).
  SetState("w", "b", "Pending");
  EXPECT_EQ(Cond(Wl("w"), "Admitted"), "False/UnsatisfiedChecks");
}

// The reconciles of controller `name` so far.
int64_t Reconciles(const reconcile::Manager& mgr, const std::string& name) {
  for (const auto& [n, count] : mgr.ProcessedByController()) {
    if (n == name) return count;
  }
  return -1;
}

TEST_F(AdmissionCheckTest, AdmittedWorkloadsWithoutChecksAndQueueStatusWritesWakeNothing) {
  StartAll();
  Basic();
  Workload("w", "lq", "1");
  Settle();
  ASSERT_TRUE(Admitted("w"));
  const int64_t checks = Reconciles(stack_->mgr, "admission-checks");
  const int64_t in_use = Reconciles(stack_->mgr, "resource-in-use");
  ASSERT_GE(checks, 0);
  ASSERT_GE(in_use, 0);
  // Admitted without checks: its later changes are nothing to the checks
  // controller, nor the ClusterQueue's status writes to resource-in-use.
  SetPodsReady("w");
  Finish("w");
  EXPECT_EQ(Reconciles(stack_->mgr, "admission-checks"), checks);
  EXPECT_EQ(Reconciles(stack_->mgr, "resource-in-use"), in_use);
  EXPECT_FALSE(Wl("w")["status"].contains("admissionChecks"));
  // A ClusterQueue's spec change still wakes resource-in-use.
  Json cq = Get("clusterqueues", "", "cq");
  cq["spec"]["stopPolicy"] = "Hold";
  ASSERT_TRUE(client_.Update(Kind("clusterqueues"), cq).ok());
  Settle();
  EXPECT_GT(Reconciles(stack_->mgr, "resource-in-use"), in_use);
}

TEST_F(AdmissionCheckTest, AWorkloadWaitingForChecksDoesNotBlockAdmission) {
  queueing::QueueingConfig cfg;
  cfg.wait_for_pods_ready.enable = true;
  cfg.wait_for_pods_ready.block_admission = true;
  StartAll(cfg);
  Check("ac", true);
  Basic(Rules({"ac"}));
  ClusterQueue("plain", "3");
  LocalQueue("ns", "plain-lq", "plain");
  Workload("gated", "lq", "1");
  Settle();
  ASSERT_TRUE(Reserved("gated"));
  Workload("free", "plain-lq", "1");
  Settle();
  EXPECT_TRUE(Admitted("free"));  // Only admitted workloads without PodsReady block.
  SetPodsReady("free");
  SetState("gated", "ac", "Ready");
  EXPECT_TRUE(Admitted("gated"));
  Workload("next", "plain-lq", "1");
  Settle();
  EXPECT_FALSE(Reserved("next"));  // gated is admitted and not ready: blocks now.
}

TEST_F(AdmissionCheckTest, ChecksApplyOnlyToTheirFlavors) {
  StartAll();
  Check("gpu-only", true);
  Basic({{"admissionChecksStrategy",
          {{"admissionChecks", {{{"name", "gpu-only"}, {"onFlavors", {"gpu"}}}}}}}});
  Workload("w", "lq", "1");
  Settle();
  EXPECT_TRUE(Admitted("w"));  // Flavor `default`: no check applies.
  EXPECT_FALSE(Wl("w")["status"].contains("admissionChecks"));
}

TEST_F(AdmissionCheckTest, MissingOrInactiveCheckMakesTheClusterQueueInactive) {
  StartAll();
  Basic(Rules({"ac"}));
  Workload("w", "lq", "1");
  Settle();
  Json cq = Get("clusterqueues", "", "cq");
  EXPECT_EQ(Cond(cq, "Active"), "False/AdmissionCheckNotFound");
  EXPECT_EQ(CondMessage(cq, "Active"),
            "Can't admit new workloads: references missing AdmissionCheck(s): [ac].");
  EXPECT_FALSE(Reserved("w"));
  EXPECT_EQ(CondMessage(Wl("w"), "QuotaReserved"), "ClusterQueue cq is inactive");

  Check("ac", false);  // No controller took it: inactive.
  cq = Get("clusterqueues", "", "cq");
  EXPECT_EQ(Cond(cq, "Active"), "False/AdmissionCheckInactive");
  EXPECT_EQ(CondMessage(cq, "Active"),
            "Can't admit new workloads: references inactive AdmissionCheck(s): [ac].");
  EXPECT_FALSE(Reserved("w"));

  SetActive("ac");
  EXPECT_EQ(Cond(Get("clusterqueues", "", "cq"), "Active"), "True/Ready");
  EXPECT_TRUE(Reserved("w"));
  EXPECT_EQ(State("w", "ac"), "Pending");
}

TEST_F(AdmissionCheckTest, RetryReleasesQuotaAndRequeuesAfterTheDelay) {
  StartAll();
  Check("ac", true);
  Basic(Rules({"ac"}));
  Workload("w", "lq", "1");
  Settle();
  ASSERT_TRUE(Reserved("w"));
  SetState("w", "ac", "Retry", 60);
  Json w = Wl("w");
  EXPECT_EQ(Cond(w, "Evicted"), "True/AdmissionCheck");
  EXPECT_EQ(CondMessage(w, "Evicted"), "At least one admission check is false");
  EXPECT_EQ(w["status"]["requeueState"]["requeueAt"],
            api::meta::FormatRfc3339(clock_.Now() + absl::Seconds(60)));
  // The job integration releases the reservation once the job is stopped.
  ClearAdmission("w");
  EXPECT_EQ(State("w", "ac"), "Pending");
  EXPECT_EQ(Wl("w")["status"]["admissionChecks"][0]["retryCount"], 1);
  EXPECT_FALSE(Reserved("w"));
  Advance(absl::Seconds(30));
  EXPECT_FALSE(Reserved("w"));  // Still backing off.
  Advance(absl::Seconds(31));
  EXPECT_TRUE(Reserved("w"));
  EXPECT_EQ(Cond(Wl("w"), "Evicted"), "False/QuotaReserved");
  EXPECT_EQ(State("w", "ac"), "Pending");
  SetState("w", "ac", "Ready");
  EXPECT_TRUE(Admitted("w"));
}

TEST_F(AdmissionCheckTest, RejectedDeactivatesTheWorkload) {
  StartAll();
  Check("ac", true);
  Basic(Rules({"ac"}));
  Workload("w", "lq", "1");
  Settle();
  SetState("w", "ac", "Rejected");
  Json w = Wl("w");
  EXPECT_EQ(w["spec"]["active"], false);
  EXPECT_EQ(Cond(w, "Evicted"), "True/DeactivatedDueToAdmissionCheck");
  EXPECT_EQ(CondMessage(w, "Evicted"),
            "The workload is deactivated due to Admission check(s): [ac], were rejected");
  ClearAdmission("w");
  Advance(absl::Minutes(5));
  EXPECT_FALSE(Reserved("w"));  // Never admitted again.
}

TEST_F(AdmissionCheckTest, PodSetUpdatesAreKeptOnTheWorkload) {
  StartAll();
  Check("ac", true);
  Basic(Rules({"ac"}));
  Workload("w", "lq", "1");
  Settle();
  SetState("w", "ac", "Ready", std::nullopt,
           Json::array({{{"name", "main"}, {"nodeSelector", {{"pool", "a"}}}}}));
  EXPECT_TRUE(Admitted("w"));
  EXPECT_EQ(Wl("w")["status"]["admissionChecks"][0]["podSetUpdates"][0]["nodeSelector"]["pool"],
            "a");
}

// --- the built-in provisioning check ---------------------------------------

TEST_F(AdmissionCheckTest, ProvisioningCheckIsActiveOnlyWithUsableParameters) {
  StartAll();
  Check("noparams", false, kProvisioningController);
  Json ac = Get("admissionchecks", "", "noparams");
  EXPECT_EQ(Cond(ac, "Active"), "False/BadParametersRef");
  Provisioning({{"provisioningClassName", "queued-provisioning.gke.io"}});
  ac = Get("admissionchecks", "", "prov");
  EXPECT_EQ(Cond(ac, "Active"), "False/UnsupportedParameters");
  EXPECT_THAT(CondMessage(ac, "Active"), HasSubstr("queued-provisioning.gke.io"));
  // Fixing the config activates it.
  Patch("provisioningrequestconfigs", "", "prc",
        {{"spec", {{"provisioningClassName", kCheckCapacityClass},
                   {"parameters", {{"unknown", "x"}}}}}});
  Settle();
  EXPECT_THAT(CondMessage(Get("admissionchecks", "", "prov"), "Active"), HasSubstr("unknown"));
  Patch("provisioningrequestconfigs", "", "prc", {{"spec", {{"parameters", nullptr}}}});
  Settle();
  EXPECT_EQ(Cond(Get("admissionchecks", "", "prov"), "Active"), "True/Active");
}

TEST_F(AdmissionCheckTest, ProvisioningHoldsUntilTheNodePoolHasRoom) {
  StartAll();
  Provisioning({{"provisioningClassName", kCheckCapacityClass},
                {"parameters", {{kNodeSelectorParameter, "pool=p1"}, {kTimeoutParameter, "10m"}}}});
  Basic(Rules({"prov"}));
  Workload("w", "lq", "1", 0, /*count=*/2);
  Settle();
  ASSERT_TRUE(Reserved("w"));
  EXPECT_EQ(State("w", "prov"), "Pending");
  Node("other", "8", {{"pool", "p2"}});  // Wrong pool.
  Node("small", "1", {{"pool", "p1"}});  // Room for one pod of two.
  EXPECT_EQ(State("w", "prov"), "Pending");
  EXPECT_THAT(FindCheckState(Wl("w"), "prov")->value("message", ""),
              HasSubstr("1 of 2 pod(s) fit"));
  Advance(absl::Minutes(5));
  EXPECT_EQ(State("w", "prov"), "Pending");
  Node("big", "4", {{"pool", "p1"}});
  Json w = Wl("w");
  EXPECT_EQ(State("w", "prov"), "Ready");
  EXPECT_EQ(Cond(w, "Admitted"), "True/Admitted");
  const Json& u = (*FindCheckState(w, "prov"))["podSetUpdates"][0];
  EXPECT_EQ(u["name"], "main");
  EXPECT_EQ(u["nodeSelector"]["pool"], "p1");
  EXPECT_EQ(u["annotations"]["autoscaling.x-k8s.io/consume-provisioning-request"], "w-prov-1");
}

TEST_F(AdmissionCheckTest, ProvisioningRetriesWithBackoffThenRejects) {
  StartAll();
  Provisioning({{"provisioningClassName", kCheckCapacityClass},
                {"parameters", {{kTimeoutParameter, "60s"}}},
                {"retryStrategy",
                 {{"backoffLimitCount", 1}, {"backoffBaseSeconds", 10}, {"backoffMaxSeconds", 100}}}});
  Basic(Rules({"prov"}));
  Workload("w", "lq", "1");
  Settle();
  ASSERT_TRUE(Reserved("w"));
  Advance(absl::Seconds(59));
  EXPECT_EQ(State("w", "prov"), "Pending");
  Advance(absl::Seconds(1));  // The attempt's timeout.
  Json w = Wl("w");
  EXPECT_EQ(State("w", "prov"), "Retry");
  EXPECT_EQ((*FindCheckState(w, "prov"))["requeueAfterSeconds"], 10);
  EXPECT_EQ(Cond(w, "Evicted"), "True/AdmissionCheck");
  ClearAdmission("w");
  EXPECT_FALSE(Reserved("w"));
  Advance(absl::Seconds(10));
  ASSERT_TRUE(Reserved("w"));  // Second attempt.
  EXPECT_EQ((*FindCheckState(Wl("w"), "prov"))["retryCount"], 1);
  Advance(absl::Seconds(60));
  w = Wl("w");
  EXPECT_EQ(State("w", "prov"), "Rejected");
  EXPECT_EQ(w["spec"]["active"], false);
  EXPECT_EQ(Cond(w, "Evicted"), "True/DeactivatedDueToAdmissionCheck");
}

TEST_F(AdmissionCheckTest, ProvisioningIsReadyAtOnceWithoutManagedResources) {
  StartAll();
  Provisioning({{"provisioningClassName", kCheckCapacityClass},
                {"managedResources", {"nvidia.com/gpu"}}});
  Basic(Rules({"prov"}));
  Workload("w", "lq", "1");
  Settle();
  EXPECT_EQ(State("w", "prov"), "Ready");
  EXPECT_TRUE(Admitted("w"));
}

// --- resource-in-use finalizers ---------------------------------------------

TEST_F(AdmissionCheckTest, QueueObjectsGetTheFinalizer) {
  StartAll();
  Check("ac", true);
  Basic(Rules({"ac"}));
  Settle();
  for (auto [plural, name] : {std::pair{"clusterqueues", "cq"}, {"resourceflavors", "default"},
                              {"admissionchecks", "ac"}}) {
    EXPECT_EQ(Get(plural, "", name)["metadata"]["finalizers"],
              Json::array({kResourceInUseFinalizer}))
        << plural;
  }
  // A flavor or check in use by a ClusterQueue stays until the queue lets go.
  Delete("resourceflavors", "default");
  Delete("admissionchecks", "ac");
  EXPECT_TRUE(Exists("resourceflavors", "default"));
  EXPECT_TRUE(Exists("admissionchecks", "ac"));
  Delete("clusterqueues", "cq");  // Nothing holds quota in it: goes at once.
  EXPECT_FALSE(Exists("clusterqueues", "cq"));
  EXPECT_FALSE(Exists("resourceflavors", "default"));
  EXPECT_FALSE(Exists("admissionchecks", "ac"));
}

TEST_F(AdmissionCheckTest, DeletingABusyClusterQueueNeverOverCommitsTheCohort) {
  StartAll();
  Namespace("ns");
  Flavor("default");
  ClusterQueue("a", "2", {{"cohortName", "co"}});
  ClusterQueue("b", "2", {{"cohortName", "co"}});
  LocalQueue("ns", "lqa", "a");
  LocalQueue("ns", "lqb", "b");
  Workload("big", "lqb", "4");  // Borrows all of a's quota.
  Settle();
  ASSERT_TRUE(Admitted("big"));
  Delete("clusterqueues", "b");
  Json b = Get("clusterqueues", "", "b");
  ASSERT_TRUE(b["metadata"].contains("deletionTimestamp"));  // Held by its workload.
  EXPECT_EQ(Cond(b, "Active"), "False/Terminating");
  Workload("small", "lqa", "2");
  Workload("late", "lqb", "1");
  Settle();
  // b's usage still counts: a's nominal is lent out, nothing fits.
  EXPECT_FALSE(Reserved("small"));
  EXPECT_FALSE(Reserved("late"));
  Advance(absl::Minutes(1));
  EXPECT_FALSE(Reserved("small"));
  Finish("big");
  EXPECT_FALSE(Exists("clusterqueues", "b"));
  EXPECT_TRUE(Admitted("small"));
  EXPECT_FALSE(Reserved("late"));  // Its ClusterQueue is gone.
}

}  // namespace
}  // namespace batchd::controllers::admissioncheck

namespace batchd::controllers::admissioncheck {
namespace {

// Randomized: ClusterQueues of one cohort are deleted and re-created while
// workloads come and finish (20 seeds x 150 steps). After every step:
//  - a ClusterQueue never goes while a workload holds quota in it;
//  - a step that reserved quota leaves the cohort within what it has: the
//    nominal quota of its live ClusterQueues covers their usage plus what
//    terminating ones use beyond their own nominal (a terminating queue
//    lends nothing, so its going never strands a borrower).
class ClusterQueueChurnTest : public AdmissionCheckTest,
                              public ::testing::WithParamInterface<int> {};

TEST_P(ClusterQueueChurnTest, CohortNeverOverCommits) {
  std::mt19937 rng(GetParam());
  StartAll();
  Namespace("ns");
  Flavor("default");
  const std::vector<std::string> names = {"q0", "q1", "q2", "q3"};
  std::map<std::string, int> nominal;
  for (const std::string& q : names) {
    nominal[q] = 1 + static_cast<int>(rng() % 4);
    ClusterQueue(q, std::to_string(nominal[q]), {{"cohortName", "co"}});
    LocalQueue("ns", "lq-" + q, q);
  }
  Settle();
  int next = 0;
  std::set<std::string> held_before;
  for (int step = 0; step < 150; ++step) {
    const int op = static_cast<int>(rng() % 10);
    const std::string q = names[rng() % names.size()];
    if (op < 5) {
      Workload("w" + std::to_string(next++), "lq-" + q, std::to_string(1 + rng() % 3));
    } else if (op < 8) {
      std::vector<std::string> held;
      auto list = client_.List(Kind("workloads"), "ns");
      ASSERT_TRUE(list.ok());
      for (const Json& w : list->items) {
        if (w["status"].contains("admission") && Cond(w, "Finished").empty()) {
          held.push_back(w["metadata"]["name"]);
        }
      }
      if (!held.empty()) Finish(held[rng() % held.size()]);
    } else if (op == 8) {
      if (Exists("clusterqueues", q)) Delete("clusterqueues", q);
    } else if (!Exists("clusterqueues", q)) {
      nominal[q] = 1 + static_cast<int>(rng() % 4);
      ClusterQueue(q, std::to_string(nominal[q]), {{"cohortName", "co"}});
    }
    clock_.Advance(absl::Seconds(1));
    Settle();
    // The invariants, read from the objects.
    std::set<std::string> live;
    for (const std::string& n : names) {
      if (Exists("clusterqueues", n)) live.insert(n);
    }
    std::map<std::string, int> usage;
    std::set<std::string> reserved;
    auto list = client_.List(Kind("workloads"), "ns");
    ASSERT_TRUE(list.ok());
    for (const Json& w : list->items) {
      if (!w["status"].contains("admission") || !Cond(w, "Finished").empty()) continue;
      const std::string cq = w["status"]["admission"]["clusterQueue"];
      ASSERT_TRUE(live.count(cq)) << "step " << step << ": " << cq
                                  << " went while a workload holds quota in it";
      std::string cpu = w["status"]["admission"]["podSetAssignments"][0]["resourceUsage"]["cpu"];
      usage[cq] += std::stoi(cpu);
      reserved.insert(w["metadata"]["name"]);
    }
    bool admitted_now = false;
    for (const std::string& w : reserved) admitted_now |= !held_before.count(w);
    held_before = reserved;
    if (!admitted_now) continue;
    int capacity = 0, used = 0;
    for (const std::string& n : live) {
      if (Get("clusterqueues", "", n)["metadata"].contains("deletionTimestamp")) {
        used += std::max(0, usage[n] - nominal[n]);
      } else {
        capacity += nominal[n];
        used += usage[n];
      }
    }
    ASSERT_LE(used, capacity) << "step " << step << ": quota reserved in an over-committed cohort";
  }
}

INSTANTIATE_TEST_SUITE_P(Seeds, ClusterQueueChurnTest, ::testing::Range(1, 21));

}  // namespace
}  // namespace batchd::controllers::admissioncheck
